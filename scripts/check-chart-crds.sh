#!/usr/bin/env bash
# crds/ is the single source of truth for the CRDs; the Helm chart ships a copy.
# Fail (with the diff) when the copy has drifted. Fix: cp crds/*.yaml charts/reactorfed-operator/crds/
set -euo pipefail
cd "$(dirname "$0")/.."
if ! diff -r crds charts/reactorfed-operator/crds; then
  echo "charts/reactorfed-operator/crds differs from crds/ (the source of truth)." >&2
  echo "Run: cp crds/*.yaml charts/reactorfed-operator/crds/" >&2
  exit 1
fi
