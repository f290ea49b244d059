"""The parameter-server plan: the same weights as the data-parallel plan after every step
(same seed, widths and settings), the same weights in one process and federated,
checkpoints resume, and the plan's mistakes are named."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from reactorfed import Environment
from reactorfed.errors import ValidationError
from reactorfed.federation.process.threads import run_threads
from reactorfed.rl import ParamServerPlan, PPOConfig, RunConfig
from reactorfed.rl.algos.ppo.learner import PPOLearner

from .conftest import EXAMPLES, load_example
from .test_data_parallel_plan import SMALL, _single, launched

SERVER = "ParamServerPlan.server"


def _plan(iterations: int = 3, seed: int = 0, checkpoint: str = "", resume: bool = False,
          config: PPOConfig = SMALL, colocate: bool = False) -> ParamServerPlan:
    run = RunConfig(iterations=iterations, checkpoint=checkpoint, resume=resume)
    return ParamServerPlan(config, "CartPole-v1", num_workers=2, samplers_per_worker=1, num_envs=2, fragment_len=16,
                           run=run, seed=seed, trace=True, colocate=colocate)


def _server(**kw: Any) -> dict[str, Any]:
    return dict(Environment(fast=True).run(_plan(**kw)).results[SERVER])


def test_same_weights_as_the_data_parallel_plan_after_every_step(tmp_path: Path) -> None:
    ckpt = tmp_path / "ps.pt"
    ps = _server(iterations=3, seed=4, checkpoint=str(ckpt))
    dp = _single(iterations=3, seed=4)
    assert ps["iterations"] == 3 and ps["updates"] == dp[0]["updates"] == 3 * 2 * 2
    assert ps["env_steps"] == dp[0]["env_steps"] and ps["episodes"] == dp[0]["episodes"]
    assert ps["step_digests_sha256"] == dp[0]["step_digests_sha256"]
    assert ps["weights_sha256"] == dp[0]["weights_sha256"] == PPOLearner.load(ckpt).digest()


def test_the_kl_early_stop_is_decided_alike() -> None:
    """With a tiny ``target_kl`` rounds end before their last step, on the averaged KL:
    both plans stop at the same step."""
    config = PPOConfig(minibatch_size=16, update_epochs=4, total_timesteps=2_000, target_kl=1e-4,
                       learning_rate=3e-3)
    run = RunConfig(iterations=3)
    from reactorfed.rl import DataParallelPlan

    dp_main = DataParallelPlan(config, "CartPole-v1", num_learners=2, num_envs=2, fragment_len=16, run=run, seed=2,
                               trace=True)
    dp = Environment(fast=True).run(dp_main).results["DataParallelPlan.learners[0]"]
    ps = dict(Environment(fast=True).run(_plan(seed=2, config=config)).results[SERVER])
    assert ps["updates"] == dp["updates"] < 3 * 4 * 2  # some steps were not taken
    assert ps["step_digests_sha256"] == dp["step_digests_sha256"] and ps["weights_sha256"] == dp["weights_sha256"]


def test_one_seed_same_weights_in_one_process_and_federated() -> None:
    single = _server(iterations=3, seed=7)
    run = run_threads(lambda: _plan(iterations=3, seed=7))
    run.raise_errors()
    assert sorted(run.summaries) == ["samplers[0]", "samplers[1]", "server", "workers[0]", "workers[1]"]
    fed = run.summaries["server"].results[SERVER]
    assert fed["env_steps"] == single["env_steps"]
    assert fed["weights_sha256"] == single["weights_sha256"]
    assert fed["step_digests_sha256"] == single["step_digests_sha256"]


def test_workers_with_their_samplers_in_one_federate_compute_the_same() -> None:
    """``colocate``: a worker and its samplers make one federate (the operator's shape: a
    bank and the server); the same shares, the same steps, the same weights."""
    flat = _server(iterations=2, seed=3)
    assert _server(iterations=2, seed=3, colocate=True)["step_digests_sha256"] == flat["step_digests_sha256"]
    run = run_threads(lambda: _plan(iterations=2, seed=3, colocate=True))
    run.raise_errors()
    assert sorted(run.summaries) == ["server", "workers[0]", "workers[1]"]
    assert run.summaries["server"].results[SERVER]["step_digests_sha256"] == flat["step_digests_sha256"]


def test_the_kubernetes_manifest_places_every_federate() -> None:
    """examples/k8s/ppo-param-server-cartpole.yaml, 3 workers wide: the operator makes a pod
    per worker and one for the server; those must be the program's federates, all of them."""
    import yaml

    from reactorfed.cli.loader import load_program
    from reactorfed_operator.manifests import Federation
    from reactorfed_operator.pods import federation_pods
    from reactorfed_operator.spec import parse_spec

    manifest = EXAMPLES.parent / "k8s" / "ppo-param-server-cartpole.yaml"
    doc = yaml.safe_load(manifest.read_text())
    doc["spec"]["samplers"]["replicas"] = 3
    spec = parse_spec(doc["spec"])
    pods = federation_pods(Federation("ps", "ns", "uid", spec), 1)[1:]
    commands = [p["spec"]["containers"][0]["command"] for p in pods]
    federates = [cmd[cmd.index("--federate") + 1] for cmd in commands]
    params = dict(a.split("=", 1) for i, a in enumerate(commands[0]) if commands[0][i - 1] == "--param")
    entry = str(EXAMPLES / spec.program.entrypoint.split("/examples/rl/")[1])
    main = load_program(entry, {**params, "checkpoint": ""})
    assert sorted(c.name for c in main._children) == sorted(federates) == ["server", *(f"workers[{i}]" for i in range(3))]


def test_resume_carries_on_where_the_checkpoint_stopped(tmp_path: Path) -> None:
    ckpt = str(tmp_path / "ps.pt")
    first = _server(iterations=2, checkpoint=ckpt, resume=True)
    second = _server(iterations=4, checkpoint=ckpt, resume=True)
    assert second["resumed_from_iteration"] == 2 and second["iterations"] == 4
    assert second["env_steps"] > first["env_steps"] and second["weights_sha256"] != first["weights_sha256"]
    # the workers took their schedule (round, env steps) from the server: the data-parallel
    # plan resumed from the same point ends alike
    dp_ckpt = str(tmp_path / "dp.pt")
    _single(iterations=2, checkpoint=dp_ckpt, resume=True)
    dp = _single(iterations=4, checkpoint=dp_ckpt, resume=True)
    assert dp[0]["weights_sha256"] == second["weights_sha256"]


def test_layout_mistakes_are_named() -> None:
    for name, kw in (("num_workers", {"num_workers": 0}), ("samplers_per_worker", {"samplers_per_worker": -1}),
                     ("fragment_len", {"fragment_len": "8"})):
        with pytest.raises(ValidationError, match=f"{name} must be an int >= 1"):
            ParamServerPlan(SMALL, "CartPole-v1", **kw)


def test_example_short_run(tmp_path: Path) -> None:
    dp = load_example("ppo_data_parallel_cartpole")
    main = dp.ParamServer(dp.Args(ppo=replace(dp.Args().ppo, total_timesteps=512), checkpoint=str(tmp_path / "p.pt"), progress=False))
    Environment(fast=True).run(main)
    assert main.server.result["iterations"] == 2
    assert PPOLearner.load(tmp_path / "p.pt").digest() == main.server.result["weights_sha256"]


@pytest.mark.slow
def test_example_launched_matches_single_process_and_data_parallel(tmp_path: Path) -> None:
    params = {"seed": 5, "progress": False, "trace": True}
    fed = launched("ParamServer", {**params, "ppo.total_timesteps": 768, "checkpoint": tmp_path / "fed.pt"})
    assert sorted(fed) == ["ParamServer.server"], fed
    r = fed["ParamServer.server"]
    dp = load_example("ppo_data_parallel_cartpole")
    params["ppo"] = replace(dp.Args().ppo, total_timesteps=768)
    single = Environment(fast=True).run(dp.ParamServer(dp.Args(**params, checkpoint=str(tmp_path / "s.pt"))))
    s = single.results["ParamServer.server"]
    assert r["iterations"] == 3 and r["env_steps"] == s["env_steps"]
    assert r["weights_sha256"] == s["weights_sha256"] == PPOLearner.load(tmp_path / "fed.pt").digest()
    assert r["step_digests_sha256"] == s["step_digests_sha256"]
    data_parallel = Environment(fast=True).run(dp.Main(dp.Args(**params, checkpoint=""))).results
    assert data_parallel["Main.learners[0]"]["weights_sha256"] == r["weights_sha256"]
