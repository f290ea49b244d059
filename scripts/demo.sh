#!/usr/bin/env bash
# Set up ./.venv and run the main job: a federation on this machine (an RTI and one
# process per federate), no cluster needed. Extra arguments go to `reactorfed launch`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
PROGRAM=${REACTORFED_DEMO:-examples/pipeline.py:Main}
if [ "$#" -eq 0 ]; then set -- --fast --timeout 1s; fi
exec .venv/bin/reactorfed launch "$PROGRAM" "$@"
