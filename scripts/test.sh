#!/usr/bin/env bash
# The project's test command: set up from scratch, lint, type-check, run the tests.
# Extra arguments go to pytest (e.g. scripts/test.sh -m "not e2e" -x).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# Kubernetes control-plane binaries for the e2e tests (cached outside the repo).
if [ -x scripts/k8s-tools.sh ] && command -v go >/dev/null 2>&1; then
  scripts/k8s-tools.sh >&2 || echo "warning: building the test control plane failed; e2e tests will skip (and fail under CI=true)" >&2
fi
# Toxiproxy for the tests that put a federation's links through a proxy (cached outside the repo).
if [ -x scripts/tools.sh ] && command -v go >/dev/null 2>&1; then
  scripts/tools.sh >/dev/null || echo "warning: building Toxiproxy failed; the proxy tests will skip (and fail under CI=true)" >&2
else
  echo "warning: Go is not installed; Toxiproxy cannot be built, the proxy tests will skip (and fail under CI=true)" >&2
fi
# Prometheus for the test that sends the chart's dashboard queries to a real one (cached outside
# the repo; from empty caches ~170 MB of modules and ~4.6 CPU-minutes: scripts/prometheus.sh).
if [ -x scripts/prometheus.sh ] && command -v go >/dev/null 2>&1; then
  scripts/prometheus.sh >/dev/null || echo "warning: building Prometheus failed; the dashboard test will skip (and fail under CI=true)" >&2
else
  echo "warning: Go is not installed; Prometheus cannot be built, the dashboard test will skip (and fail under CI=true)" >&2
fi
# Headless Chromium for the browser tests (the live page, the diagrams rendered).
scripts/chromium.sh >/dev/null || echo "warning: no chromium; the browser tests will skip (and fail under CI=true)" >&2
.venv/bin/ruff check .
.venv/bin/mypy
.venv/bin/mypy examples/*.py examples/rl/*.py examples/dataflow/*.py   # the examples teach the API: their types must hold too
[ ! -f scripts/check-chart-crds.sh ] || scripts/check-chart-crds.sh
# The kind suite (real containers and a kind cluster) runs on its own: scripts/kind-test.sh.
# A later -m given as an argument replaces this one. The slowest tests are listed at the end:
# CI's time budget is spent there first. The tests run in one worker process per core
# (pytest-xdist): measured on 2 cores, 42 min serially and 30 min so, every test passing both
# ways. `-n 0` as an argument runs them in this process (for -s, pdb, or one test).
exec .venv/bin/python -m pytest -n auto -m "not kind and not collector and not plans and not peers" --durations=30 "$@"
