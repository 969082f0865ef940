#!/usr/bin/env bash
# `roomchat export` as a person sees it:
#   1. the progress bar in a real terminal (tmux): its screen captured mid-export and checked
#      (room, bar, done/total, rate, ETA), then the summary once it is over;
#   2. the HTML transcript opened in headless Chromium: a screenshot in light and in dark
#      (prefers-color-scheme), and the rendered DOM searched for the messages, authors,
#      channel, file and bot buttons, with the hostile text shown as text, never run.
# Needs tmux, chromium, curl, python3; builds the debug binaries (a no-op when fresh).
# Usage: bash cli/tests/export_ui.sh   (from the repository's root; about 15 s once built)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
target=${CARGO_TARGET_DIR:-$root/target}
# Skipped in scripts/test-all.sh, which built the workspace (ROOMCHAT_DEBUG_BUILT=1): there
# even a build with nothing to do waits for the lock the background's builds may hold.
if [ "${ROOMCHAT_DEBUG_BUILT:-}" != 1 ]; then
  # shellcheck disable=SC2086 # a list of options
  cargo build --locked -q ${ROOMCHAT_DEBUG_PACKAGES:--p roomchat-cli -p roomchat-emulator}
fi
rc=$target/debug/roomchat
emu_bin=$target/debug/roomchat-emulator
for tool in tmux chromium curl python3; do
  command -v "$tool" >/dev/null || { echo "export_ui: $tool is missing" >&2; exit 1; }
done

work=$(mktemp -d /tmp/roomchat-export-ui.XXXXXX)
session="rcx-$$"
emu_pid=
cleanup() {
  tmux kill-session -t "$session" 2>/dev/null || true
  [ -n "$emu_pid" ] && kill "$emu_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "export_ui: FAIL: $*" >&2; exit 1; }

# The emulator, its first line read for the address.
"$emu_bin" --rate-limit 1000000/60s --ignore-stdin >"$work/emu.json" 2>"$work/emu.err" &
emu_pid=$!
for _ in $(seq 100); do [ -s "$work/emu.json" ] && break; sleep 0.05; done
base=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["base_url"])' "$work/emu.json")
key=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["private_key"])' "$work/emu.json")
admin() { curl -sf -X "$1" "$base/_emulator/$2" -H 'content-type: application/json' -d "${3:-}"; }

admin POST rooms '{"roomId": "webinar", "name": "Webinar <Q&A> night"}' >/dev/null
admin POST messages '{"roomId": "webinar", "count": 3000, "text": "transcript line", "attachmentEvery": 500}' >/dev/null
bot=$(admin POST bots '{"name": "Helper", "webhookURL": "https://bot.example/hook"}' \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["_id"])')
admin POST messages "$(cat <<EOF
{"roomId": "webinar", "messages": [
  {"message": "<script>document.title='pwned'</script> & <b>not bold</b>", "user": {"username": "Mallory <img src=x onerror=alert(1)>"}},
  {"message": "Pick one, please", "botId": "$bot", "actionButtons": [
    {"type": "url", "displayText": "Read the docs", "url": "https://docs.example/start"},
    {"type": "postback", "displayText": "Yes, go", "payload": "yes"}]},
  {"message": "Welcome, everyone", "system": true}
]}
EOF
)" >/dev/null
channel=$(admin POST channels '{"roomId": "webinar", "channelName": "backstage"}' \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["_id"])')
admin POST messages "{\"roomId\": \"webinar\", \"channelId\": \"$channel\", \"messages\": [{\"message\": \"Mics are live\", \"user\": {\"username\": \"Stage manager\"}}]}" >/dev/null

# 1. The progress bar in tmux. The first 16 pages are held 400 ms each: a few seconds of bar.
admin POST faults '{"method": "GET", "path": "/consumer/api/v1/chatRoom/webinar/messages", "times": 16, "action": {"kind": "delay", "ms": 400}}' >/dev/null
mkdir -p "$work/out"
tmux new-session -d -s "$session" -x 110 -y 12 \
  "cd '$work' && ROOMCHAT_PRIVATE_KEY='$key' ROOMCHAT_BASE_URL='$base' '$rc' export webinar -o out/ --page-size 100; echo EXIT=\$?; sleep 60"
screen=""
for _ in $(seq 60); do
  sleep 0.1
  screen=$(tmux capture-pane -p -t "$session")
  if grep -qE 'webinar \[[=> ]+\] [0-9,]+/3,003 messages +[0-9]+ msg/s +ETA [0-9]+(s|m)' <<<"$screen" \
     && grep -qE '\] ([1-9],[0-9]{3}|[1-9][0-9]{2,})/' <<<"$screen"; then
    break
  fi
done
echo "--- the terminal during the export ---"; echo "$screen"
grep -qE 'webinar \[[=> ]+\] [0-9,]+/3,003 messages +[0-9]+ msg/s +ETA [0-9]+(s|m)' <<<"$screen" \
  || fail "no progress bar (room, bar, done/total, rate, ETA) on the screen"
grep -q '\[=' <<<"$screen" || fail "the bar has not advanced"
for _ in $(seq 100); do
  screen=$(tmux capture-pane -p -t "$session")
  grep -q 'EXIT=' <<<"$screen" && break
  sleep 0.1
done
echo "--- the terminal at the end ---"; echo "$screen"
grep -q 'EXIT=0' <<<"$screen" || fail "the export did not succeed"
grep -qE 'roomchat export: 1 room\(s\) exported, 3003 messages, [0-9]+ bytes, [0-9.]+ s .*0 429\(s\) met' <<<"$screen" \
  || fail "no summary"
if grep -q '\[=' <<<"$screen"; then fail "the bar was left on the screen"; fi
[ "$(wc -l <"$work/out/webinar.jsonl")" -eq 3003 ] || fail "jsonl count"

# 2. The HTML transcript in headless Chromium.
( cd "$work" && ROOMCHAT_PRIVATE_KEY=$key ROOMCHAT_BASE_URL=$base "$rc" export webinar "webinar/$channel" -f html -o html/ --quiet )
page="$work/html/webinar.html"
side="$work/html/webinar--$channel.html"
chrome=(chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run
  --hide-scrollbars --window-size=1000,1400)
"${chrome[@]}" --screenshot="$work/light.png" "file://$page" >/dev/null 2>&1
"${chrome[@]}" --force-dark-mode --blink-settings=preferredColorScheme=0 --screenshot="$work/dark.png" "file://$page" >/dev/null 2>&1
"${chrome[@]}" --dump-dom "file://$page" 2>/dev/null >"$work/dom.html"
cp "$side" "$work/side.html"  # the channel's page: its file is enough
python3 - "$work" <<'PY'
import sys, zlib, struct, re, html
work = sys.argv[1]
def first_pixel(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path + ": not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width = struct.unpack(">I", body[:4])[0]
        if kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    # Whatever row 0's filter, its first pixel is stored as it is.
    return tuple(raw[1:4]), width, len(data)
light, width, light_size = first_pixel(f"{work}/light.png")
dark, _, _ = first_pixel(f"{work}/dark.png")
print(f"screenshots: {width} px wide, {light_size} bytes; background light {light}, dark {dark}")
assert width == 1000 and light_size > 20000, "a blank screenshot"
assert sum(light) > 700, f"the light page is not light: {light}"
assert sum(dark) < 150, f"the dark page is not dark: {dark}"

dom = open(f"{work}/dom.html", encoding="utf-8").read()
side = open(f"{work}/side.html", encoding="utf-8").read()
articles = len(re.findall(r'<article class="msg"', dom))
assert articles == 3003, f"{articles} messages rendered"
# The hostile message is text: escaped in the DOM, no element made of it, no script run.
assert "&lt;script&gt;document.title='pwned'&lt;/script&gt; &amp; &lt;b&gt;not bold&lt;/b&gt;" in dom
assert "<script" not in dom and "<img" not in dom and "<b>not" not in dom
title = re.search(r"<title>(.*?)</title>", dom).group(1)
assert html.unescape(title) == "Room Webinar <Q&A> night (webinar)", title
assert "Mallory &lt;img src=x onerror=alert(1)&gt;" in dom
assert "transcript line 1</div>" in dom and "transcript line 3000</div>" in dom
assert '<span class="author">Helper</span><span class="badge">bot</span>' in dom
assert 'href="https://docs.example/start"' in dom and ">Read the docs</a>" in dom
assert '<span class="button">Yes, go</span>' in dom
assert '<span class="badge">system</span>' in dom
assert dom.count('<div class="file">') == 6
assert "Mics are live" in side and '<span class="badge">#' in side
print("the transcript: 3003 messages rendered, authors, times, bot buttons, files, the channel; hostile text inert")
PY
echo "export_ui: OK (progress bar in tmux, HTML in Chromium light and dark)"
