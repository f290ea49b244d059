#!/usr/bin/env bash
# The tests that need a real OpenTelemetry collector (marker `collector`): Jaeger v2, built
# from its Go module (scripts/tools.sh jaeger; minutes from an empty Go cache, which is why
# scripts/test.sh, and so CI, leaves them to this command). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/tools.sh jaeger >/dev/null
exec .venv/bin/python -m pytest -m collector "$@"
