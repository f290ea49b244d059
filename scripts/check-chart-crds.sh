#!/usr/bin/env bash
# The ReactorFederation CRD is generated from operator/reactorfed_operator/schema.py (the one
# source of its schema and defaults) into crds/ and the Helm chart's crds/. Fail when a
# checked-in file differs from what the generator writes, and when the chart's copy of the
# other CRDs (kopfpeerings, hand-written) has drifted from crds/.
# Fix: .venv/bin/python -m reactorfed_operator.crdgen && cp crds/*.yaml charts/reactorfed-operator/crds/
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
[ -x "$PY" ] || PY=python3
if ! PYTHONPATH=operator "$PY" -m reactorfed_operator.crdgen --check; then
  echo "Run: $PY -m reactorfed_operator.crdgen (from the repository's root)" >&2
  exit 1
fi
if ! diff -r crds charts/reactorfed-operator/crds; then
  echo "charts/reactorfed-operator/crds differs from crds/." >&2
  echo "Run: cp crds/*.yaml charts/reactorfed-operator/crds/" >&2
  exit 1
fi
