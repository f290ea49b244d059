#!/usr/bin/env bash
# Build (once) and cache a Prometheus server from its Go module, for the test that scrapes a
# running federation and sends the chart's dashboard queries to Prometheus's HTTP API
# (tests/observe/test_dashboard.py). A sibling of scripts/tools.sh, same cache directory.
#
# Kept as small as the build can be, because CI runs it from empty caches:
#   - only cmd/prometheus (no promtool);
#   - no `builtinassets` tag: the web UI's npm assets are not embedded (the HTTP API, all
#     the test needs, works without them; the UI pages answer with an error instead);
#   - `remove_all_sd`: no cloud or Kubernetes service discovery (static and file configs
#     stay), which drops the AWS/Azure/GCE/Kubernetes SDKs from the build;
#   - -trimpath -ldflags '-s -w', GOFLAGS=-p=2 (a 2-core machine shared with tests).
# Measured from empty Go caches (November 2026, v0.316.0, Go 1.26.8): 172 modules, 167 MB of
# zips from the module proxy; 223 s user + 52 s system CPU; a 52 MB binary. (Wall time was
# 20.6 min on 2 cores shared with a load average of ~20; on 2 idle cores the CPU time above
# suggests ~2.5-3 min plus the download: an estimate, not measured.)
#
# Usage: scripts/prometheus.sh            build if needed; print the binary's path
#        scripts/prometheus.sh --bin-dir  only print the bin dir (no build)
#        scripts/prometheus.sh --check    exit 0 iff prometheus is cached at its version
# Cache: ${REACTORFED_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/reactorfed/tools}/bin/prometheus
#        (and prometheus.version, holding PROMETHEUS_VERSION)
# Idempotent; takes a few milliseconds once cached.
set -euo pipefail

# The Go module's version: v0.316.0 is Prometheus 3.16.0 (Prometheus 3 tags its module v0.3xx).
PROMETHEUS_VERSION=${PROMETHEUS_VERSION:-v0.316.0}

ROOT=${REACTORFED_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/reactorfed/tools}
BIN="$ROOT/bin"

cached() { [ -x "$BIN/prometheus" ] && [ "$(cat "$BIN/prometheus.version" 2>/dev/null)" = "$PROMETHEUS_VERSION" ]; }

case "${1:-}" in
  --bin-dir) echo "$BIN"; exit 0 ;;
  --check) cached; exit $? ;;
  "") ;;
  *) echo "usage: $0 [--bin-dir|--check]" >&2; exit 2 ;;
esac

if cached; then echo "$BIN/prometheus"; exit 0; fi

command -v go >/dev/null 2>&1 || { echo "prometheus: Go is not installed; cannot build Prometheus" >&2; exit 1; }
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS="${GOFLAGS:--p=2} -trimpath" CGO_ENABLED=0
mkdir -p "$BIN"
log() { echo "prometheus: $*" >&2; }
# Serialise concurrent invocations, and with scripts/tools.sh (one Go build at a time on 2 cores).
exec 9>"$ROOT/.lock"
flock 9
if cached; then echo "$BIN/prometheus"; exit 0; fi

# A wrapper module that requires Prometheus's (as scripts/tools.sh does for Toxiproxy: not
# `go install pkg@version`, which probes every path prefix on the proxy). -mod=mod resolves
# only the packages this build imports, so the SDKs the tags leave out are never downloaded.
src="$ROOT/src/prometheus-$PROMETHEUS_VERSION"; mkdir -p "$src"
printf 'module reactorfed.local/prometheus\n\ngo 1.26.7\n\nrequire github.com/prometheus/prometheus %s\n' \
  "$PROMETHEUS_VERSION" > "$src/go.mod"
log "building prometheus $PROMETHEUS_VERSION (minutes from an empty Go cache)"
rm -f "$src/prometheus"
(cd "$src" && go build -mod=mod -tags remove_all_sd -ldflags "-s -w" -o "$src/prometheus" \
  github.com/prometheus/prometheus/cmd/prometheus >&2)
mv "$src/prometheus" "$BIN/prometheus"
echo "$PROMETHEUS_VERSION" > "$BIN/prometheus.version"
cached || { log "prometheus is missing in $BIN"; exit 1; }
log "cached in $BIN"
echo "$BIN/prometheus"
