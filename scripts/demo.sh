#!/usr/bin/env bash
# Set up ./.venv and run the main job: DQN learning CartPole-v1 as a federation on this
# machine (an RTI, two sampler processes and a learner process), no cluster needed. It
# prints the learner's progress and ends with the greedy policy's evaluation (about a
# minute). Extra arguments go to `reactorfed launch`; REACTORFED_DEMO picks another program.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
PROGRAM=${REACTORFED_DEMO:-examples/rl/dqn_cartpole.py:Main}
if [ "$#" -eq 0 ]; then set -- --fast; fi
exec .venv/bin/reactorfed launch "$PROGRAM" "$@"
