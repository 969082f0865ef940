#!/usr/bin/env bash
# actionlint over .github/workflows/, with shellcheck over every `run:` script.
# actionlint is pinned (ACTIONLINT_VERSION) and built once with `go install`
# from its Go module (the checksum database vouches for it) into the cache;
# and shellcheck comes from Debian.
set -euo pipefail
# shellcheck source=scripts/dist/env.sh
source "$(dirname "$0")/env.sh"
ACTIONLINT_VERSION=1.7.12
bin=$cache/actionlint-$ACTIONLINT_VERSION
if [ ! -x "$bin/actionlint" ]; then
  command -v go >/dev/null || { echo "actionlint.sh needs Go to build actionlint" >&2; exit 1; }
  GOBIN=$bin GOFLAGS=-mod=mod go install "github.com/rhysd/actionlint/cmd/actionlint@v$ACTIONLINT_VERSION"
fi
if ! command -v shellcheck >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq shellcheck >/dev/null
fi
cd "$root"
"$bin/actionlint" -shellcheck "$(command -v shellcheck)" -no-color .github/workflows/*.yml
echo "actionlint $("$bin/actionlint" --version | head -n 1) (shellcheck $(shellcheck --version | sed -n 's/^version: //p')): $(ls .github/workflows/*.yml | tr '\n' ' ')clean"
