#!/usr/bin/env bash
# The kind suite in one command: a Docker engine (started if needed), the project's images
# (built here on a local Debian base, or reused), kind and its node image (built from Go
# modules and Debian packages, or reused from ~/.cache/reactorfed), then
# `pytest -m kind tests/kind`, which creates the cluster from kind-config.yaml and deletes
# it at the end. Extra arguments go to pytest (e.g. -k images, -x).
#   scripts/kind-test.sh
# REACTORFED_KIND_KEEP=1 keeps the cluster after the run (delete it: KIND_CLUSTER=rf-kind-test scripts/kind.sh delete).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || scripts/setup.sh
t0=$(date +%s)
scripts/docker-engine.sh --kind
t1=$(date +%s)
scripts/images.sh --local >&2
t2=$(date +%s)
scripts/kind.sh build
t3=$(date +%s)
echo "kind-test: docker $((t1 - t0)) s, images $((t2 - t1)) s, kind binaries and node image $((t3 - t2)) s" >&2
# The plans CI leaves out (-m plans) and the cross-node measurement (-m bench) run on request.
# Every test's time is listed at the end (the suite's minutes are CI's scarcest).
exec .venv/bin/python -m pytest -m "kind and not plans and not bench" --durations=0 tests/kind "$@"
