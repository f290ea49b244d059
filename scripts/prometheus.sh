#!/usr/bin/env bash
# Install (once) and cache a Prometheus server, for the test that scrapes a running
# federation and sends the chart's dashboard queries to Prometheus's HTTP API
# (tests/observe/test_dashboard.py). A sibling of scripts/tools.sh, same cache directory.
#
# Two sources, one cache:
#   - debian (the default where apt knows the package): Debian's own `prometheus` package, downloaded
#     with `apt-get download` and unpacked into the cache (`dpkg-deb -x`): no install, no
#     service started. Prometheus 2.42 in bookworm. 19 MB; about 5 s. The dashboard's
#     queries are plain PromQL (rate, increase, deriv, histogram_quantile), the same in 2.x
#     and 3.x.
#   - go (PROMETHEUS_SOURCE=go, or apt knows no such package): built from its Go module, kept as small as
#     the build can be: only cmd/prometheus; no `builtinassets` tag (the web UI's npm
#     assets are not embedded; the HTTP API works without them); `remove_all_sd` (no cloud
#     or Kubernetes service discovery); -trimpath -ldflags '-s -w', GOFLAGS=-p=2. Measured
#     from empty Go caches (November 2026, v0.316.0, Go 1.26.8): 172 modules, 167 MB of zips
#     from the module proxy; 223 s user + 52 s system CPU; a 52 MB binary. CI took this
#     path before: about 4.6 CPU-minutes of its fresh-machine budget.
#
# Usage: scripts/prometheus.sh            install or build if needed; print the binary's path
#        scripts/prometheus.sh --bin-dir  only print the bin dir (no build)
#        scripts/prometheus.sh --check    exit 0 iff prometheus is cached at its version
# Cache: ${REACTORFED_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/reactorfed/tools}/bin/prometheus
#        (and prometheus.version, holding the source and its version)
# Idempotent; takes a few milliseconds once cached.
set -euo pipefail

# Debian's candidate version of the package (empty: apt knows none; its lists not fetched)
debian_version() {
  command -v apt-cache >/dev/null 2>&1 && command -v dpkg-deb >/dev/null 2>&1 || return 0
  apt-cache policy prometheus 2>/dev/null | awk '/Candidate:/ && $2 != "(none)" {print $2}'
}
if [ -z "${PROMETHEUS_SOURCE:-}" ]; then
  PROMETHEUS_VERSION=${PROMETHEUS_VERSION:-$(debian_version)}
  if [ -n "$PROMETHEUS_VERSION" ]; then PROMETHEUS_SOURCE=debian; else PROMETHEUS_SOURCE=go; fi
fi
case "$PROMETHEUS_SOURCE" in
  # the version apt serves now (2.42 in bookworm), whatever security update it is at
  debian) PROMETHEUS_VERSION=${PROMETHEUS_VERSION:-$(debian_version)} ;;
  # The Go module's version: v0.316.0 is Prometheus 3.16.0 (Prometheus 3 tags its module v0.3xx).
  go) PROMETHEUS_VERSION=${PROMETHEUS_VERSION:-v0.316.0} ;;
  *) echo "prometheus: PROMETHEUS_SOURCE must be debian or go, not $PROMETHEUS_SOURCE" >&2; exit 2 ;;
esac
STAMP="$PROMETHEUS_SOURCE $PROMETHEUS_VERSION"

ROOT=${REACTORFED_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/reactorfed/tools}
BIN="$ROOT/bin"

cached() { [ -x "$BIN/prometheus" ] && [ "$(cat "$BIN/prometheus.version" 2>/dev/null)" = "$STAMP" ]; }

case "${1:-}" in
  --bin-dir) echo "$BIN"; exit 0 ;;
  --check) cached; exit $? ;;
  "") ;;
  *) echo "usage: $0 [--bin-dir|--check]" >&2; exit 2 ;;
esac

if cached; then echo "$BIN/prometheus"; exit 0; fi
mkdir -p "$BIN"
log() { echo "prometheus: $*" >&2; }
# Serialise concurrent invocations, and with scripts/tools.sh (one Go build at a time on 2 cores).
exec 9>"$ROOT/.lock"
flock 9
if cached; then echo "$BIN/prometheus"; exit 0; fi

if [ "$PROMETHEUS_SOURCE" = debian ]; then
  work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
  log "downloading Debian's prometheus $PROMETHEUS_VERSION"
  # (in a directory _apt may write to: apt-get download drops privileges to it when it can)
  chmod 777 "$work"
  (cd "$work" && apt-get download -q "prometheus=$PROMETHEUS_VERSION" >&2) || {
    log "apt-get download failed (run apt-get update, or PROMETHEUS_SOURCE=go to build it)"; exit 1; }
  dpkg-deb -x "$work"/prometheus_*.deb "$work/x"
  install -m 755 "$work/x/usr/bin/prometheus" "$BIN/prometheus"
else
  command -v go >/dev/null 2>&1 || { log "Go is not installed; cannot build Prometheus"; exit 1; }
  export GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS="${GOFLAGS:--p=2} -trimpath" CGO_ENABLED=0
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
fi
echo "$STAMP" > "$BIN/prometheus.version"
cached || { log "prometheus is missing in $BIN"; exit 1; }
log "cached in $BIN"
echo "$BIN/prometheus"
