#!/usr/bin/env bash
# Create ./.venv and install reactorfed with every extra the tests need.
# Uses uv (installed from PyPI if missing) for speed; its cache makes re-runs take seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if ! command -v uv >/dev/null 2>&1; then
  "$PY" -m pip install --quiet --disable-pip-version-check uv
fi
UV=$(command -v uv || echo "$PY -m uv")
[ -x .venv/bin/python ] || $UV venv --quiet --python "$PY" .venv
EXTRAS=${REACTORFED_EXTRAS:-rl,operator,dev}
# Byte-compile at install time: every federate is a fresh process, and environments
# with PYTHONDONTWRITEBYTECODE=1 would otherwise compile numpy & co. at each start (~1 s).
VIRTUAL_ENV="$PWD/.venv" $UV pip install --quiet --compile-bytecode -e ".[${EXTRAS}]"
.venv/bin/python -m compileall -q -j 0 runtime operator >/dev/null
echo "reactorfed installed in $PWD/.venv (extras: ${EXTRAS})" >&2
