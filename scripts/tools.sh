#!/usr/bin/env bash
# Build (once) and cache the small Go tools the tests and benchmarks run: Toxiproxy's
# server and CLI (a TCP proxy that adds latency and cuts connections; bench/distance.py
# and tests/federation/test_proxy_faults.py put it on every link of a federation).
# From the Go module proxy only, like scripts/k8s-tools.sh.
#
# Usage: scripts/tools.sh            build if needed; print the bin dir
#        scripts/tools.sh jaeger     also Jaeger v2 (an OpenTelemetry collector with a query API,
#                                    for the `collector` tests: scripts/observability-test.sh);
#                                    ~5-9 min from an empty Go cache, so not in scripts/test.sh
#        scripts/tools.sh --bin-dir  only print the bin dir (no build)
#        scripts/tools.sh --check    exit 0 iff every tool is cached at its version
# Cache: ${REACTORFED_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/reactorfed/tools}/bin
#        (toxiproxy-server, toxiproxy-cli; each answers -version with TOXIPROXY_VERSION)
# Idempotent; takes a few milliseconds once cached.
set -euo pipefail

TOXIPROXY_VERSION=${TOXIPROXY_VERSION:-v2.5.0}
JAEGER_VERSION=${JAEGER_VERSION:-v1.76.0}

ROOT=${REACTORFED_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/reactorfed/tools}
BIN="$ROOT/bin"

cached() {  # the binary exists and says it is the version we want
  [ -x "$BIN/$1" ] && "$BIN/$1" -version 2>/dev/null | grep -qF "$TOXIPROXY_VERSION"
}
all_cached() { cached toxiproxy-server && cached toxiproxy-cli; }

jaeger_cached() { [ -x "$BIN/jaeger" ] && [ "$(cat "$BIN/jaeger.version" 2>/dev/null)" = "$JAEGER_VERSION" ]; }
WANT_JAEGER=0
case "${1:-}" in
  --bin-dir) echo "$BIN"; exit 0 ;;
  --check) all_cached; exit $? ;;
  jaeger) WANT_JAEGER=1 ;;
  "") ;;
  *) echo "usage: $0 [jaeger|--bin-dir|--check]" >&2; exit 2 ;;
esac

if all_cached && { [ "$WANT_JAEGER" = 0 ] || jaeger_cached; }; then echo "$BIN"; exit 0; fi

command -v go >/dev/null 2>&1 || { echo "tools: Go is not installed; cannot build Toxiproxy" >&2; exit 1; }
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS="${GOFLAGS:--p=2} -trimpath" CGO_ENABLED=0
mkdir -p "$BIN"
log() { echo "tools: $*" >&2; }
# Serialise concurrent invocations (two test runs at once).
exec 9>"$ROOT/.lock"
flock 9
if all_cached && { [ "$WANT_JAEGER" = 0 ] || jaeger_cached; }; then echo "$BIN"; exit 0; fi

if [ "$WANT_JAEGER" = 1 ] && ! jaeger_cached; then
  # Jaeger's go.mod replaces a module, so `go install` refuses it: a wrapper module that
  # requires it and repeats that replace builds its v2 binary (cmd/jaeger).
  src="$ROOT/src/jaeger-$JAEGER_VERSION"; mkdir -p "$src"
  printf 'module reactorfed.local/jaeger\n\ngo 1.25\n\nrequire github.com/jaegertracing/jaeger %s\n\nreplace github.com/Shopify/sarama => github.com/Shopify/sarama v1.33.0\n' \
    "$JAEGER_VERSION" > "$src/go.mod"
  printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/jaegertracing/jaeger/cmd/jaeger"\n' > "$src/tools.go"
  log "building jaeger $JAEGER_VERSION (several minutes from an empty Go cache)"
  (cd "$src" && go mod tidy >&2 && go build -ldflags "-s -w" -o "$src/jaeger" github.com/jaegertracing/jaeger/cmd/jaeger >&2)
  mv "$src/jaeger" "$BIN/jaeger"
  echo "$JAEGER_VERSION" > "$BIN/jaeger.version"
  if all_cached; then log "all tools cached in $BIN"; echo "$BIN"; exit 0; fi
fi

# Not `go install pkg@version`: that probes every path prefix on the proxy (see
# k8s-tools.sh). A wrapper module that requires the module asks only for modules.
src="$ROOT/src/toxiproxy-$TOXIPROXY_VERSION"; mkdir -p "$src"
printf 'module reactorfed.local/toxiproxy\n\ngo 1.26.0\n\nrequire github.com/Shopify/toxiproxy/v2 %s\n' \
  "$TOXIPROXY_VERSION" > "$src/go.mod"
log "building toxiproxy-server/toxiproxy-cli $TOXIPROXY_VERSION"
rm -rf "$src/out"
(cd "$src" && go build -mod=mod -ldflags "-s -w -X github.com/Shopify/toxiproxy/v2.Version=$TOXIPROXY_VERSION" \
  -o "$src/out/" github.com/Shopify/toxiproxy/v2/cmd/server github.com/Shopify/toxiproxy/v2/cmd/cli >&2)
mv "$src/out/server" "$BIN/toxiproxy-server"
mv "$src/out/cli" "$BIN/toxiproxy-cli"

all_cached || { log "some tools are missing in $BIN"; exit 1; }
log "all tools cached in $BIN"
echo "$BIN"
