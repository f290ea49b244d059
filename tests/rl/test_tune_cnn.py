"""The tuner's contract holds for another learner: PBT over PPO with MinAtar's CNN
(``ConvPPOConfig``, a ``ConvPPOLearner``) on MinAtar Breakout, the exploit copying the
convolutional network and its Adam state; the same record and weights twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from reactorfed import Environment
from reactorfed.rl import ConvPPOConfig
from reactorfed.rl.tune import PBT, LogUniform, PBTConfig, SearchSpace, TuneProgram

pytest.importorskip("minatar", reason="MinAtar is not installed (pip install 'reactorfed[minatar]')")


def run(folder: Path) -> dict:
    space = SearchSpace({"learning_rate": LogUniform(1e-4, 1e-3)})
    pbt = PBT(PBTConfig(population=2, perturbation_interval=1, iterations=2, quantile_fraction=0.5,
                        metric="env_steps"), space, seed=4)
    algo = ConvPPOConfig(update_epochs=1, minibatch_size=32, total_timesteps=256)
    main = TuneProgram(algo, "MinAtar/Breakout-v1", pbt, space, num_samplers=1, num_envs=2, fragment_len=32, seed=4,
                       checkpoint_dir=str(folder), decisions=str(folder / "decisions.jsonl"))
    return dict(Environment(fast=True).run(main).results)


def test_pbt_over_the_minatar_cnn_exploits_and_repeats(tmp_path: Path) -> None:
    a, b = run(tmp_path / "a"), run(tmp_path / "b")
    rows = (tmp_path / "a" / "decisions.jsonl").read_text()
    assert '"kind": "exploit"' in rows and rows == (tmp_path / "b" / "decisions.jsonl").read_text()
    for s in range(2):
        key = f"TuneProgram.trials[{s}].learner"
        assert a[key]["weights_sha256"] == b[key]["weights_sha256"]
