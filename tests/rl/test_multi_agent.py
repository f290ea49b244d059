"""Multi-agent training (IPPO and MAPPO) as a reactor program: the environment's copies and
their rollouts, the three policy mappings, MAPPO's rows, checkpoints and resume, and one
seed giving bit-identical weights for every policy in one process and federated (a
federate per agent's policy, or per group)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from reactorfed import Environment
from reactorfed.errors import ValidationError
from reactorfed.federation.process.threads import run_threads
from reactorfed.rl import MAPPOConfig, MultiAgentPlan, PolicyMapping, PPOConfig, RunConfig
from reactorfed.rl.algos.mappo import MAPPOLearner
from reactorfed.rl.algos.ppo.learner import PPOLearner
from reactorfed.rl.envs import MultiAgentRunner, MultiAgentSpec
from reactorfed.rl.plans import central_rows

PPO = PPOConfig(minibatch_size=40, update_epochs=2, total_timesteps=10_000)
MAPPO = MAPPOConfig(minibatch_size=40, update_epochs=2)
GROUPS = PolicyMapping.of_groups({"pair": ["agent_0", "agent_1"], "solo": ["agent_2"]})


def _plan(algo: Any = PPO, mapping: PolicyMapping | None = None, iterations: int = 2, seed: int = 0,
          num_samplers: int = 1, **kw: Any) -> MultiAgentPlan:
    """Episodes of 8 steps: 2 copies x 10 rows a round."""
    return MultiAgentPlan(algo, "simple_spread", mapping=mapping, num_samplers=num_samplers, num_envs=2,
                          fragment_len=10, max_cycles=8, run=RunConfig(iterations=iterations, **kw), seed=seed)


def _results(summary_results: Any) -> dict[str, dict[str, Any]]:
    return {name.split(".", 1)[1]: dict(r) for name, r in summary_results.items()}


def _single(**kw: Any) -> dict[str, dict[str, Any]]:
    return _results(Environment(fast=True).run(_plan(**kw)).results)


def _random_act(rng: np.random.Generator, n: int) -> Any:
    def act(obs: Any) -> tuple[list[np.ndarray], list[np.ndarray]]:
        acts = [rng.integers(0, 5, size=len(o)) for o in obs]
        return acts, [np.full(len(o), -np.log(5), np.float32) for o in obs]
    return act


def test_runner_rollouts_keep_next_step_autoreset() -> None:
    """Copies of a 4-step task over 12 rows: episodes end at rows 3 and 8 (the rows after are
    reset rows), every agent's rollout has the same ends, and the runs repeat with a seed."""
    def run() -> tuple[MultiAgentRunner, list[Any]]:
        runner = MultiAgentRunner("simple_spread", 2, seed=3, max_cycles=4)
        return runner, runner.rollout(12, _random_act(np.random.default_rng(0), 2))
    runner, rollouts = run()
    assert len(rollouts) == 3 and rollouts[0].obs.shape == (13, 2, 18) and rollouts[0].actions.shape == (12, 2)
    assert np.flatnonzero(rollouts[0].resets[:, 0]).tolist() == [4, 9]
    assert np.flatnonzero(rollouts[0].truncated[:, 0]).tolist() == [3, 8]
    assert all((r.truncated == rollouts[0].truncated).all() for r in rollouts)
    assert runner.steps == 2 * 10 and runner.episodes == 4 and len(runner.team_returns) == 4
    for a in range(3):  # an agent's returns: its rewards, episode by episode (row, then copy)
        r = rollouts[a]
        first = [float(r.rewards[:4, j].astype(np.float64).sum()) for j in range(2)]
        assert np.allclose(r.episode_returns[:2], first, atol=1e-4)
    assert np.allclose(runner.team_returns[0], sum(rollouts[a].episode_returns[0] for a in range(3)))
    _, again = run()
    assert all((a.obs == b.obs).all() and a.episode_returns == b.episode_returns for a, b in zip(rollouts, again, strict=True))


def test_mappo_rows_carry_the_agent_specific_global_state() -> None:
    runner = MultiAgentRunner("simple_speaker_listener", 2, seed=1, max_cycles=5)
    rollouts = runner.rollout(3, lambda obs: ([np.zeros(len(o), np.int64) for o in obs],
                                              [np.zeros(len(o), np.float32) for o in obs]))
    rows = central_rows(rollouts)
    spec = MultiAgentSpec.of_task("simple_speaker_listener")
    assert spec.agents == ("speaker_0", "listener_0") and spec.state_dim == 3 + 11
    assert rows[0].obs.shape == (4, 2, 3 + 14 + 2) and rows[1].obs.shape == (4, 2, 11 + 14 + 2)
    assert (rows[1].obs[..., :11] == rollouts[1].obs).all()  # the observation first
    assert (rows[0].obs[..., 3:17] == rows[1].obs[..., 11:25]).all()  # the same joint observation
    assert (rows[0].obs[..., -2:] == [1, 0]).all() and (rows[1].obs[..., -2:] == [0, 1]).all()


@pytest.mark.parametrize(("mapping", "learners"), [
    (None, {"shared": 3}), (PolicyMapping("per_agent"), {"agent_0": 1, "agent_1": 1, "agent_2": 1}),
    (GROUPS, {"pair": 2, "solo": 1})])
def test_the_three_mappings(mapping: PolicyMapping | None, learners: dict[str, int]) -> None:
    """A learner per policy, fed its agents' rollouts: its env steps are its agents' transitions."""
    plan = _plan(mapping=mapping)
    assert [s.name for s in plan.slots] == list(learners)
    r = _results(Environment(fast=True).run(plan).results)
    env_steps = r["samplers[0]"]["env_steps"]
    assert env_steps == 2 * 18  # 20 rows a copy, 2 of them reset rows (after the episodes that end at rows 7, 16)
    assert r["samplers[0]"]["episodes"] == 4 and r["samplers[0]"]["team_return_100"] < 0
    for p, agents in enumerate(learners.values()):
        assert r[f"policies[{p}]"]["iterations"] == 2
        assert r[f"policies[{p}]"]["env_steps"] == agents * env_steps
        # each episode counted once, as its agents' mean return
        assert r[f"policies[{p}]"]["episodes"] == 4
    if mapping is None:
        assert r["policies[0]"]["mean_return_100"] == pytest.approx(r["samplers[0]"]["team_return_100"] / 3, rel=1e-5)
    digests = {r[f"policies[{p}]"]["weights_sha256"] for p in range(len(learners))}
    assert len(digests) == len(learners)  # (policies seeded apart)


def test_unlike_agents_need_their_own_policies() -> None:
    """simple_speaker_listener's speaker and listener see and do different things: one shared
    policy is refused, a policy each trains (MAPPO here)."""
    with pytest.raises(ValidationError, match=r"mapping: policy 'shared' acts for agents whose observations"):
        MultiAgentPlan(MAPPO, "simple_speaker_listener")
    plan = MultiAgentPlan(MAPPO, "simple_speaker_listener", mapping=PolicyMapping("per_agent"), num_envs=2,
                          fragment_len=10, run=RunConfig(iterations=1))
    r = _results(Environment(fast=True).run(plan).results)
    assert r["policies[0]"]["iterations"] == r["policies[1]"]["iterations"] == 1


def test_layout_mistakes_are_named() -> None:
    with pytest.raises(ValidationError, match="num_envs must be an int >= 1"):
        MultiAgentPlan(PPO, num_envs=0)
    with pytest.raises(ValidationError, match="task must be one of simple_spread"):
        MultiAgentPlan(PPO, "simple_tag")
    with pytest.raises(ValidationError, match=r"mapping\.groups: no group places 'agent_2'"):
        MultiAgentPlan(PPO, mapping=PolicyMapping.of_groups({"a": ["agent_0", "agent_1"]}))
    with pytest.raises(ValidationError, match=r"mapping\.groups: group 'b' names no agent"):
        MultiAgentPlan(PPO, mapping=PolicyMapping("groups", ("a:agent_0+agent_1+agent_2", "b:")))


def test_checkpoints_and_resume(tmp_path: Path) -> None:
    ckpt = tmp_path / "run"
    first = _single(mapping=GROUPS, iterations=2, checkpoint=str(ckpt), resume=True)
    assert sorted(p.name for p in ckpt.iterdir()) == ["pair.pt", "solo.pt"]
    assert PPOLearner.load(ckpt / "pair.pt").digest() == first["policies[0]"]["weights_sha256"]
    second = _single(mapping=GROUPS, iterations=3, checkpoint=str(ckpt), resume=True)
    for p in range(2):
        assert second[f"policies[{p}]"]["resumed_from_iteration"] == 2
        assert second[f"policies[{p}]"]["iterations"] == 3
        assert second[f"policies[{p}]"]["env_steps"] > first[f"policies[{p}]"]["env_steps"]
    assert second["samplers[0]"]["rounds"] == 1


def test_mappo_checkpoint_loads_as_its_learner(tmp_path: Path) -> None:
    r = _single(algo=MAPPO, iterations=1, checkpoint=str(tmp_path))
    learner = MAPPOLearner.load(tmp_path / "shared.pt")
    assert learner.space.state_dim == 3 * 18 + 3
    assert learner.digest() == r["policies[0]"]["weights_sha256"]


@pytest.mark.parametrize(("algo", "mapping", "federates"), [
    (PPO, PolicyMapping("per_agent"), ["policies[0]", "policies[1]", "policies[2]", "samplers[0]", "samplers[1]"]),
    (MAPPO, GROUPS, ["policies[0]", "policies[1]", "samplers[0]", "samplers[1]"]),
], ids=["ippo-per-agent", "mappo-groups"])
def test_one_seed_same_weights_in_one_process_and_federated(algo: Any, mapping: PolicyMapping,
                                                              federates: list[str]) -> None:
    """A federate per agent's policy (the paper's layout) or per group, two environment
    federates: every policy's weights as in one process, bit for bit."""
    kw = {"algo": algo, "mapping": mapping, "num_samplers": 2, "iterations": 2, "seed": 4}
    single = _single(**kw)
    run = run_threads(lambda: _plan(**kw))
    run.raise_errors()
    assert sorted(run.summaries) == federates
    for name in federates:
        fed = _results(run.summaries[name].results)[name]
        if name.startswith("policies"):
            assert fed["iterations"] == 2 and fed["weights_sha256"] == single[name]["weights_sha256"]
        else:
            assert fed["env_steps"] == single[name]["env_steps"]
            assert fed["episodes"] == 4 and fed["team_return_100"] == single[name]["team_return_100"]
    assert _single(**{**kw, "seed": 5})["policies[0]"]["weights_sha256"] != single["policies[0]"]["weights_sha256"]


def test_mappo_critic_reads_the_state_and_the_actor_the_observation() -> None:
    """The critic's value depends on the state columns only, the policy on the observation
    only, and the environment federate's numpy actor computes the torch actor's logits."""
    import torch

    from reactorfed.rl import SpaceInfo
    from reactorfed.rl.algos import MLPActor

    space = SpaceInfo((4,), 3, state_dim=6)
    learner = MAPPOLearner(space, MAPPO, seed=2)
    rows = torch.from_numpy(np.random.default_rng(0).standard_normal((5, 10)).astype(np.float32))
    other_obs, other_state = rows.clone(), rows.clone()
    other_obs[:, :4] += 1.0
    other_state[:, 4:] += 1.0
    model = learner.model
    actions = torch.zeros(5, dtype=torch.int64)
    with torch.no_grad():
        logp, _, v = model.evaluate(rows, actions)
        logp_o, _, v_o = model.evaluate(other_obs, actions)
        logp_s, _, v_s = model.evaluate(other_state, actions)
        assert torch.equal(v, v_o) and not torch.equal(v, v_s)
        assert torch.equal(logp, logp_s) and not torch.equal(logp, logp_o)
        logits = model.actor(rows[:, :4]).numpy()
    actor = MLPActor(4, 3, MAPPO.hidden, seed=0)
    actor.load(learner.payload())
    assert np.allclose(actor.logits(rows[:, :4].numpy()), logits, atol=1e-6)
    with pytest.raises(ValueError, match="MAPPO's learner needs the global state's size"):
        MAPPOLearner(SpaceInfo((4,), 3), MAPPO)
