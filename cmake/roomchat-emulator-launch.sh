#!/bin/sh
# Runs a command with a roomchat emulator started for it (roomchatEmulatorTest.cmake).
#
# usage: roomchat-emulator-launch.sh EMULATOR N [EMULATOR_ARG]... COMMAND [ARG]...
#   EMULATOR  the executable ('' = $ROOMCHAT_EMULATOR, else roomchat-emulator on PATH)
#   N         how many EMULATOR_ARGs follow (e.g. 2 for: --seed-users 10)
#
# The command gets ROOMCHAT_BASE_URL, ROOMCHAT_CHAT_URL, ROOMCHAT_PRIVATE_KEY,
# ROOMCHAT_PUBLIC_KEY, ROOMCHAT_ADMIN_URL (and ROOMCHAT_CA_FILE with --tls) in its
# environment; its exit code is this script's. The emulator stops when the
# command ends, when this script is interrupted, and (Linux) when this script
# dies, as it watches its parent. Nothing is left on disk: the pipe that carries
# its ready line is unlinked as soon as both ends are open.
set -eu

die() {
  echo "roomchat_add_emulator_test: $*" >&2
  exit 1
}

[ $# -ge 3 ] || die "usage: $0 EMULATOR N [EMULATOR_ARG]... COMMAND [ARG]..."
emulator=$1
count=$2
shift 2
case $count in '' | *[!0-9]*) die "N must be a count, not '$count'" ;; esac
[ -n "$emulator" ] || emulator=${ROOMCHAT_EMULATOR:-}
[ -n "$emulator" ] || emulator=$(command -v roomchat-emulator 2>/dev/null || true)
[ -n "$emulator" ] || die "no emulator: set EMULATOR or ROOMCHAT_EMULATOR, or put roomchat-emulator on PATH (pip install roomchat-emulator)"
[ -x "$emulator" ] || die "$emulator is not an executable file"

# The emulator's own arguments, each quoted for the eval below.
emulator_args=
while [ "$count" -gt 0 ]; do
  [ $# -gt 0 ] || die "fewer emulator arguments than N"
  quoted=$(printf '%s\n' "$1" | sed "s/'/'\\\\''/g")
  emulator_args="$emulator_args '$quoted'"
  shift
  count=$((count - 1))
done
[ $# -gt 0 ] || die "no command to run"

work=$(mktemp -d "${TMPDIR:-/tmp}/roomchat-emulator-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkfifo "$work/ready"
# stdin is /dev/null for a background job: --ignore-stdin, and this script stops it.
# exec: the emulator itself is this script's child (no shell between them), so
# $! is its pid and it sees this script die.
eval "exec \"\$emulator\" --port 0 --ignore-stdin $emulator_args" >"$work/ready" &
emulator_pid=$!
exec 8<"$work/ready"
rm -rf "$work"
stop() {
  kill -TERM "$emulator_pid" 2>/dev/null || true
  wait "$emulator_pid" 2>/dev/null || true
}
trap 'stop; exit 130' INT
trap 'stop; exit 143' TERM
trap 'stop; exit 129' HUP
if ! IFS= read -r ready <&8; then
  wait "$emulator_pid" 2>/dev/null || true
  die "the emulator ($emulator) exited before it was ready"
fi
exec 8<&-

field() {
  printf '%s\n' "$ready" | sed -n "s/.*\"$1\": *\"\\([^\"]*\\)\".*/\\1/p"
}
ROOMCHAT_BASE_URL=$(field base_url)
ROOMCHAT_CHAT_URL=$(field chat_url)
ROOMCHAT_ADMIN_URL=$(field admin_url)
ROOMCHAT_PRIVATE_KEY=$(field private_key)
ROOMCHAT_PUBLIC_KEY=$(field public_key)
export ROOMCHAT_BASE_URL ROOMCHAT_CHAT_URL ROOMCHAT_ADMIN_URL ROOMCHAT_PRIVATE_KEY ROOMCHAT_PUBLIC_KEY
ca_file=$(field ca_file)
if [ -n "$ca_file" ]; then
  ROOMCHAT_CA_FILE=$ca_file
  export ROOMCHAT_CA_FILE
fi
if [ -z "$ROOMCHAT_BASE_URL" ] || [ -z "$ROOMCHAT_PRIVATE_KEY" ]; then
  stop
  die "unexpected ready line: $ready"
fi

set +e
"$@"
status=$?
set -e
stop
exit "$status"
