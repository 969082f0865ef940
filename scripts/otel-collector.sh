#!/usr/bin/env bash
# A real OpenTelemetry Collector for the end-to-end tests of every language: OTLP
# in (gRPC and HTTP) on free loopback ports, every span, metric and log it receives
# written to a file as OTLP JSON (one line per batch received).
#
#   otel-collector.sh build        builds it (once: again only when the manifest
#                                  or OCB_VERSION changes) from the manifest
#                                  tests/otel/collector/builder-config.yaml with
#                                  the OpenTelemetry Collector Builder, pinned
#   otel-collector.sh start DIR    starts it, its files in DIR (made if missing),
#                                  and prints, once it listens, for `eval`:
#       ROOMCHAT_OTELCOL_HTTP_ENDPOINT=http://127.0.0.1:PORT  (OTLP/HTTP: /v1/traces, /v1/metrics)
#       ROOMCHAT_OTELCOL_GRPC_ENDPOINT=http://127.0.0.1:PORT  (OTLP/gRPC)
#       ROOMCHAT_OTELCOL_OUTPUT=DIR/received.jsonl            (what it received)
#       ROOMCHAT_OTELCOL_PID=PID
#   otel-collector.sh stop DIR     stops it (SIGTERM, then waits): once this
#                                  returns, everything it accepted is in the file
#
# A test starts it, points its SDK's OTLP exporter at an endpoint (for the SDKs'
# own variables: OTEL_EXPORTER_OTLP_ENDPOINT=$ROOMCHAT_OTELCOL_HTTP_ENDPOINT, or the
# gRPC one with OTEL_EXPORTER_OTLP_PROTOCOL=grpc), flushes its providers, stops the
# collector and reads the file (resourceSpans / resourceMetrics, OTLP's JSON
# mapping). Several may run at once, each in its own DIR.
#
# The tests that do (scripts/test-all.sh runs them in its step "OpenTelemetry end to
# end", after the background job otel-collector built this; tests/otel/README.md):
#   Rust  cargo test --workspace --features roomchat/opentelemetry,roomchat-otel-collector-test/collector --test collector
#         (opentelemetry-otlp, OTLP/HTTP protobuf)
#   Node  node --test bindings/node/test/otel-collector.e2e.js
#         (@opentelemetry/exporter-{trace,metrics}-otlp-http, OTLP/HTTP JSON)
#   Python cd bindings/python/tests && ROOMCHAT_EMULATOR=… python -m pytest -s otel_collector_e2e.py
#         (opentelemetry-exporter-otlp-proto-http, OTLP/HTTP protobuf)
#   Go    cd tests/otel/go && ROOMCHAT_OTELCOL_GO_E2E=1 GOWORK=off go test -count=1 -v ./...
#         (otlptracehttp, otlpmetrichttp, OTLP/HTTP protobuf)
#   JVM   cd bindings/jvm && mvn -Dtest=OtelCollectorE2E org.apache.maven.plugins:maven-surefire-plugin:3.5.4:test
#         (opentelemetry-exporter-otlp, OTLP/HTTP protobuf; after the JVM package's build)
# Each fails when the collector is missing: nothing skips.
#
# The build needs Go (the version of the machine: GOTOOLCHAIN=local) and the Go
# module proxy; its module and build caches are kept in the target folder
# (target/otel-collector/), so a second build is quick; cold, it takes minutes,
# which is why the test command builds it in its background phase
# (scripts/background-builds.sh, job otel-collector).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
# The builder's release: it fixes the collector's core modules, and every module of
# the manifest is of the same release.
OCB_VERSION=v0.161.0
manifest=$root/tests/otel/collector/builder-config.yaml
dir=$target/otel-collector
collector=${ROOMCHAT_OTELCOL:-$dir/otelcol-roomchat}

go_env() {
  export GOMODCACHE=$dir/gomod GOCACHE=$dir/gocache GOTOOLCHAIN=local GOFLAGS="-modcacherw -buildvcs=false"
}

build() {
  command -v go >/dev/null || { echo "otel-collector.sh: building the collector needs Go" >&2; exit 1; }
  mkdir -p "$dir"
  local stamp started=$SECONDS
  stamp="$OCB_VERSION $(sha256sum <"$manifest" | cut -d' ' -f1)"
  if [ -x "$dir/otelcol-roomchat" ] && [ "$(cat "$dir/built" 2>/dev/null)" = "$stamp" ]; then
    echo "otel collector: $dir/otelcol-roomchat is up to date (ocb $OCB_VERSION, $manifest)"
    return
  fi
  go_env
  if [ "$("$dir/bin/builder" version 2>/dev/null | grep -oE 'v[0-9.]+$')" != "$OCB_VERSION" ]; then
    GOBIN=$dir/bin go install "go.opentelemetry.io/collector/cmd/builder@$OCB_VERSION"
  fi
  # The manifest with the output folder (ocb writes the sources, go.mod and go.sum there).
  rm -rf "$dir/src"
  mkdir -p "$dir/src"
  sed "/^dist:\$/a\\  output_path: $dir/src" "$manifest" >"$dir/builder-config.yaml"
  if ! "$dir/bin/builder" --config "$dir/builder-config.yaml" >"$dir/build.log" 2>&1; then
    grep -vE '^go: downloading ' "$dir/build.log" >&2
    echo "otel-collector.sh: the build failed" >&2
    exit 1
  fi
  mv "$dir/src/otelcol-roomchat" "$dir/otelcol-roomchat"
  echo "$stamp" >"$dir/built"
  components=$("$dir/otelcol-roomchat" components | sed -nE 's|^ *module: .*/([^/ ]+) (v[0-9.]+)$|\1 \2|p' | paste -sd, -)
  echo "otel collector: built $dir/otelcol-roomchat (ocb $OCB_VERSION: $components) in $((SECONDS - started)) s"
}

# Two loopback ports free now.
free_ports() {
  python3 -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))'
}

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start() {
  local run=$1 grpc http pid i
  [ -x "$collector" ] || {
    echo "otel-collector.sh: no collector at $collector: build it first (bash scripts/otel-collector.sh build; needs Go)" >&2
    exit 1
  }
  mkdir -p "$run"
  run=$(cd "$run" && pwd)
  : >"$run/received.jsonl"
  # A port taken between its choice and the collector's bind: chosen again.
  for _ in 1 2 3; do
    read -r grpc http < <(free_ports)
    cat >"$run/config.yaml" <<EOF
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:$grpc
      http:
        endpoint: 127.0.0.1:$http
exporters:
  file:
    path: $run/received.jsonl
    format: json
    flush_interval: 100ms
service:
  telemetry:
    logs:
      level: warn
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [file]
    metrics:
      receivers: [otlp]
      exporters: [file]
    logs:
      receivers: [otlp]
      exporters: [file]
EOF
    "$collector" --config "file:$run/config.yaml" </dev/null >"$run/collector.log" 2>&1 &
    pid=$!
    echo "$pid" >"$run/pid"
    for ((i = 0; i < 300; i++)); do
      if listening "$grpc" && listening "$http"; then
        echo "ROOMCHAT_OTELCOL_HTTP_ENDPOINT=http://127.0.0.1:$http"
        echo "ROOMCHAT_OTELCOL_GRPC_ENDPOINT=http://127.0.0.1:$grpc"
        echo "ROOMCHAT_OTELCOL_OUTPUT=$run/received.jsonl"
        echo "ROOMCHAT_OTELCOL_PID=$pid"
        return
      fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    grep -q 'address already in use' "$run/collector.log" || break
  done
  echo "otel-collector.sh: the collector did not start; its log ($run/collector.log):" >&2
  cat "$run/collector.log" >&2
  exit 1
}

stop() {
  local run=$1 pid i
  pid=$(cat "$run/pid" 2>/dev/null) || { echo "otel-collector.sh: no collector started in $run" >&2; exit 1; }
  rm -f "$run/pid"
  kill -TERM "$pid" 2>/dev/null || return 0
  # Its shutdown writes what the file exporter still buffers.
  for ((i = 0; i < 150; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  echo "otel-collector.sh: the collector did not stop within 15 s (killed): $run/received.jsonl may lack its last batch" >&2
  exit 1
}

case ${1:-} in
  build) build ;;
  start) [ $# -eq 2 ] || { echo "usage: $0 start DIR" >&2; exit 2; }; start "$2" ;;
  stop) [ $# -eq 2 ] || { echo "usage: $0 stop DIR" >&2; exit 2; }; stop "$2" ;;
  *) echo "usage: $0 build | start DIR | stop DIR" >&2; exit 2 ;;
esac
