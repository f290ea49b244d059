"""A learner restarted with ``resume`` carries on from its checkpoint: the iteration count,
the counters and the weights continue where the run that wrote it stopped (what a
ReactorFederation's learner needs when it is restarted, rescaled or resumed)."""

from __future__ import annotations

from pathlib import Path

from reactorfed import Environment
from reactorfed.rl import DQNLearner
from reactorfed.rl.plans.qlearning import weights_digest

from .conftest import load_example


def _run(checkpoint: Path, iterations: int, resume: bool) -> dict[str, object]:
    qlearning = load_example("qlearning")
    args = qlearning.Args(num_samplers=2, iterations=iterations, seed=3, checkpoint=str(checkpoint), resume=resume)
    main = qlearning.Main(args)
    start = weights_digest(main.learner.learner)
    summary = Environment(fast=True).run(main)
    return {**summary.results["Main.learner"], "start_digest": start}


def test_resume_continues_iterations_counters_and_weights(tmp_path: Path) -> None:
    ckpt = tmp_path / "q.pt"
    first = _run(ckpt, iterations=6, resume=True)  # no checkpoint yet: starts fresh
    assert first["iterations"] == 6 and first["resumed_from_iteration"] == 0
    assert weights_digest(DQNLearner.load(ckpt)) == first["weights_sha256"]
    second = _run(ckpt, iterations=10, resume=True)
    assert second["resumed_from_iteration"] == 6
    assert second["iterations"] == 10
    assert second["start_digest"] == first["weights_sha256"], "the weights start where the first run stopped"
    assert int(second["env_steps"]) > int(first["env_steps"])
    assert int(second["updates"]) > int(first["updates"])
    # restarted once more after it had finished (a rescale on Kubernetes as the run ends):
    # nothing is left to do, and nothing more is done
    third = _run(ckpt, iterations=10, resume=True)
    assert third["resumed_from_iteration"] == 10 and third["iterations"] == 10
    assert third["weights_sha256"] == second["weights_sha256"]
    assert third["env_steps"] == second["env_steps"] and third["updates"] == second["updates"]


def test_without_resume_a_checkpoint_is_only_written(tmp_path: Path) -> None:
    ckpt = tmp_path / "q.pt"
    first = _run(ckpt, iterations=4, resume=False)
    again = _run(ckpt, iterations=4, resume=False)
    assert again["resumed_from_iteration"] == 0
    assert again["weights_sha256"] == first["weights_sha256"], "same seed, fresh start: same weights"
