#!/usr/bin/env bash
# The test network: a service host in a network namespace of its own, reached
# over a veth link, for the tests that must cross a real network path (a CONNECT
# proxy, NO_PROXY by address and range, a host that is not loopback).
#
#   scripts/testnet.sh run -- COMMAND...   sets the network up, runs COMMAND with
#                                          the ROOMCHAT_NET_* variables below, and
#                                          takes everything down again
#
# The service host (namespace roomchat-svc, 10.77.0.2) runs the emulator over TLS
# (its certificate names 10.77.0.2; idle connections closed after 1 s, as its answers
# say: Keep-Alive: timeout=1, while a handshake or a request may take the default
# 10 s, so that a client slowed down by a busy machine is not cut off mid-handshake;
# answers of 1 KiB and more gzipped when asked) behind a
# relay that delays each direction by ROOMCHAT_NET_DELAY_MS (default 12, ±2 ms:
# ~25 ms round trips) and holds ROOMCHAT_NET_LOSS_PERCENT of the chunks (default 1)
# one retransmission timeout longer, as a lost segment would be (the stand-in for
# `tc netem`, which this machine's kernel lacks: scripts/latency_relay.py). The
# client side (this namespace, 10.77.0.1) has tinyproxy on loopback with basic auth.
#
# Variables given to COMMAND:
#   ROOMCHAT_NET_BASE_URL, ROOMCHAT_NET_ADMIN_URL, ROOMCHAT_NET_CA_FILE,
#   ROOMCHAT_NET_PRIVATE_KEY, ROOMCHAT_NET_PROXY (with its password),
#   ROOMCHAT_NET_PROXY_PASSWORD, ROOMCHAT_NET_PROXY_LOG, ROOMCHAT_NET_DIRECT_URL
#   (the emulator without the relay, same namespace and certificate),
#   ROOMCHAT_NET_RELAY_STATS (host:port: a connection there reads one line, the
#   bytes the relay has carried from the emulator to clients so far).
#
# Needs root and iproute2 (ip netns), tinyproxy and python3. Where namespaces
# cannot be made, it says so in one line and exits 77 (skipped), unless CI=true,
# where that is a failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
emulator=${ROOMCHAT_EMULATOR:-$target/debug/roomchat-emulator}
ns=roomchat-svc
host_if=rc-host
svc_if=rc-svc
host_ip=10.77.0.1
svc_ip=10.77.0.2
delay=${ROOMCHAT_NET_DELAY_MS:-12}
loss=${ROOMCHAT_NET_LOSS_PERCENT:-1}

[ "${1:-}" = run ] && [ "${2:-}" = -- ] || { echo "usage: $0 run -- COMMAND..." >&2; exit 2; }
shift 2

# One test network at a time on a machine: its names and addresses are fixed.
exec 9>"${TMPDIR:-/tmp}/roomchat-testnet.lock"
flock 9

work=$(mktemp -d)
pids=()
down() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  ip link del "$host_if" 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$work"
}
trap down EXIT

# A namespace left behind by a run that was killed.
ip netns del "$ns" 2>/dev/null || true
ip link del "$host_if" 2>/dev/null || true
if ! ip netns add "$ns" 2>"$work/netns.err"; then
  echo "testnet: network namespaces cannot be made here ($(head -n 1 "$work/netns.err")): skipped"
  [ -n "${CI:-}" ] && exit 1
  exit 77
fi
ip link add "$host_if" type veth peer name "$svc_if"
ip link set "$svc_if" netns "$ns"
ip addr add "$host_ip/24" dev "$host_if"
ip link set "$host_if" up
ip netns exec "$ns" ip addr add "$svc_ip/24" dev "$svc_if"
ip netns exec "$ns" ip link set "$svc_if" up
ip netns exec "$ns" ip link set lo up

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# The emulator in the service namespace, on its loopback and on the link.
key="sk_live_testnet_$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')"
mkfifo "$work/emulator.in"
ip netns exec "$ns" "$emulator" --host 0.0.0.0 --port 0 --tls --tls-name "$svc_ip" \
  --private-key "$key" --journal-capacity 100000 --idle-timeout 1s --gzip-min-bytes 1024 --max-body-bytes 16777216 <"$work/emulator.in" >"$work/emulator.out" &
pids+=($!)
exec 7>"$work/emulator.in" # held open: the emulator stops when it closes
for _ in $(seq 100); do [ -s "$work/emulator.out" ] && break; sleep 0.1; done
ready=$(head -n 1 "$work/emulator.out")
port=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["base_url"].rsplit(":", 1)[1])' "$ready")
ca_file=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["ca_file"])' "$ready")

# The delaying relay on the link address, in front of the emulator.
relay_port=$(free_port)
relay_stats_port=$(free_port)
ip netns exec "$ns" python3 "$root/scripts/latency_relay.py" "$svc_ip" "$relay_port" 127.0.0.1 "$port" \
  "$delay" 2 "$loss" "$relay_stats_port" >"$work/relay.out" &
pids+=($!)
for _ in $(seq 100); do grep -q ready "$work/relay.out" 2>/dev/null && break; sleep 0.1; done

# tinyproxy on the client side's loopback, with basic auth.
proxy_port=$(free_port)
proxy_password="tp-$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')"
cat >"$work/tinyproxy.conf" <<EOF
Port $proxy_port
Listen 127.0.0.1
Timeout 60
MaxClients 64
Allow 127.0.0.1
BasicAuth roomchat $proxy_password
ConnectPort $relay_port
ConnectPort $port
LogFile "$work/tinyproxy.log"
LogLevel Connect
EOF
tinyproxy -d -c "$work/tinyproxy.conf" >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2)' "$proxy_port" 2>/dev/null && break
  sleep 0.1
done

export ROOMCHAT_NET_BASE_URL="https://$svc_ip:$relay_port"
export ROOMCHAT_NET_DIRECT_URL="https://$svc_ip:$port"
export ROOMCHAT_NET_ADMIN_URL="https://$svc_ip:$port/_emulator"
export ROOMCHAT_NET_CA_FILE=$ca_file
export ROOMCHAT_NET_RELAY_STATS="$svc_ip:$relay_stats_port"
export ROOMCHAT_NET_PRIVATE_KEY=$key
export ROOMCHAT_NET_PROXY="http://roomchat:$proxy_password@127.0.0.1:$proxy_port"
export ROOMCHAT_NET_PROXY_PASSWORD=$proxy_password
export ROOMCHAT_NET_PROXY_LOG=$work/tinyproxy.log
echo "testnet: emulator at $ROOMCHAT_NET_BASE_URL (namespace $ns, ${delay} ms each way, ${loss}% of chunks a retransmission late), tinyproxy on 127.0.0.1:$proxy_port"
"$@"
