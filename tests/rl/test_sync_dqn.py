"""DQN on the synchronous plan (:class:`~reactorfed.rl.SyncDQNConfig`: Ape-X's loss with the
prioritized replay in the learner): one seed gives bit-identical weights, the replay fills
with the samplers' n-step transitions and gates the first update, and a checkpoint carries
the replay."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from reactorfed import Environment
from reactorfed.rl import RunConfig, SyncDQNConfig, SyncPlan
from reactorfed.rl.algos.apex.sync_learner import SyncDQNLearner

CONFIG = SyncDQNConfig(learning_starts=200, batch_size=32, capacity=1000, updates_per_iteration=2)


def run(iterations: int, checkpoint: Path | None = None) -> dict[str, Any]:
    plan = SyncPlan(
        CONFIG,
        "CartPole-v1",
        num_samplers=2,
        num_envs=2,
        fragment_len=16,
        seed=2,
        run=RunConfig(iterations=iterations, checkpoint=str(checkpoint or "")),
    )
    return dict(Environment(fast=True).run(plan).results)["SyncPlan.learner"]


def test_sync_dqn_repeats_and_keeps_its_replay_in_its_checkpoint(tmp_path: Path) -> None:
    a = run(12, tmp_path / "a.pt")
    b = run(12)
    assert a["weights_sha256"] == b["weights_sha256"]
    learner = SyncDQNLearner.load(tmp_path / "a.pt")
    assert learner.digest() == a["weights_sha256"]
    # 12 rounds of 2 x 2 x 16 rows, less the resets and the n-step returns still open
    held = len(learner.replay)
    assert 600 < held <= 12 * 64 and learner.replay.added == held
    rows = learner.replay.rows
    assert rows is not None and np.all(rows["discount"][:held] <= 1.0)
    # no update before the replay holds learning_starts (3 rounds hold at most 192), 2 a round after
    assert 0 < learner.updates <= 2 * (12 - 3) and learner.updates % 2 == 0
