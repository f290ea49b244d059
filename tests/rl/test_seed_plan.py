"""SEED RL's plan (central batched inference): every sampler's observations of a step in one
forward pass, each sampler's actions back to it and its copies, the trajectories as the
samplers stepped them, one result per seed in one process and federated (a sampler slowed
down included), learning, checkpoints and resume, and the mistakes a user can make."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from reactorfed import Environment
from reactorfed.errors import ValidationError
from reactorfed.federation.process.threads import run_threads
from reactorfed.rl import PPOConfig, Rollout, RunConfig, SeedPlan, SpaceInfo
from reactorfed.rl.algos.appo.config import APPOConfig
from reactorfed.rl.algos.ppo.learner import PPOLearner
from reactorfed.rl.plans import SeedTrainer, step_dtype
from reactorfed.rl.plans.sampler import sampler_seed
from reactorfed.rl.plans.seed_inference import BatchedInference, central_policy
from reactorfed.rl.rollout import PolicyRunner

from .conftest import EXAMPLES, load_example
from .seed_programs import SMALL, SlowSeed

ROOT = Path(__file__).resolve().parents[2]
CARTPOLE = SpaceInfo((4,), 2)


def _sign_policy() -> tuple[PPOLearner, torch.nn.Module]:
    """A PPO learner whose policy picks action 1 when an observation's first element is
    positive and 0 otherwise, with probability 1 to float32's precision."""
    learner = PPOLearner(CARTPOLE, PPOConfig(hidden=(8, 8)), seed=0)
    policy, _ = central_policy(learner, "cpu")
    layers = [m for m in policy.modules() if isinstance(m, torch.nn.Linear)]
    with torch.no_grad():
        for lin in layers:
            lin.weight.zero_()
            lin.bias.zero_()
        layers[0].weight[0, 0] = 100.0  # tanh(100 x0): the sign of x0
        layers[1].weight[0, 0] = 100.0
        layers[2].weight[:, 0] = torch.tensor([-60.0, 60.0])
    return learner, policy


def _records(obs: np.ndarray, reward: float = 0.0, done: np.ndarray | None = None) -> list[np.ndarray]:
    """One step record per sampler from observations shaped ``(n, k, 4)``."""
    out = []
    for i in range(len(obs)):
        rec = np.zeros(obs.shape[1], dtype=step_dtype((4,), np.dtype(np.float32)))
        rec["obs"] = obs[i]
        rec["reward"] = reward
        if done is not None:
            rec["terminated"] = done[i]
        out.append(rec)
    return out


def test_every_samplers_observations_in_one_forward_pass_and_actions_routed_back() -> None:
    _, policy = _sign_policy()
    batches: list[tuple[int, ...]] = []
    policy.register_forward_hook(lambda _m, inp, _out: batches.append(tuple(inp[0].shape)))
    n, k, T = 3, 5, 4
    inference = BatchedInference(policy, torch.device("cpu"), n, k, T, seed=1)
    rng = np.random.default_rng(0)
    for step in range(T):
        obs = rng.normal(size=(n, k, 4)).astype(np.float32)
        done = np.zeros((n, k), dtype=np.bool_)
        done[step % n, step % k] = True  # one copy of one sampler ends each step
        assert inference.observe(_records(obs, 1.0, done if step else None)) is None
        actions = inference.act()
        # one sampler's actions each, its copies in order, decided by that copy's observation
        assert [a.shape for a in actions] == [(k,)] * n
        assert np.array_equal(np.stack(actions), (obs[..., 0] > 0).astype(np.int64))
    assert batches == [(n * k, 4)] * T and inference.forward_passes == T
    last = rng.normal(size=(n, k, 4)).astype(np.float32)
    rollouts = inference.observe(_records(last, 1.0))
    assert rollouts is not None and len(rollouts) == n
    for i, r in enumerate(rollouts):
        assert isinstance(r, Rollout) and r.obs.shape == (T + 1, k, 4) and np.array_equal(r.obs[T], last[i])
        assert np.array_equal(r.actions, (r.obs[:T, :, 0] > 0).astype(np.int64))
        assert np.all(r.logp > -1e-5)  # every action had probability ~1
    # the copy that ended at step s (its record at s + 1) is marked reset in row s + 1
    ended = [(s % n, s % k, s) for s in range(1, T)]
    for i, j, s in ended:
        assert rollouts[i].terminated[s - 1, j] and rollouts[i].resets[s, j]
    assert sum(r.resets.sum() for r in rollouts) == len(ended)
    # returns counted per copy from its start, 1 a step: the copies ended after 1, 2 and 3 steps
    assert [r.episode_returns for r in rollouts] == [(3.0,), (1.0,), (2.0,)]
    with pytest.raises(ValueError, match="sampler 1 sent 4 copies' steps, 5 expected"):
        inference.observe([_records(last)[0], _records(last[:, :4])[1], _records(last)[2]])


class _KeepsRollouts(SeedTrainer):
    """Keeps a copy of every fragment it learns from."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.kept: list[list[Rollout]] = []

    def learn(self, rollouts: list[Rollout]) -> None:
        self.kept.append(rollouts)
        super().learn(rollouts)


class _Recorded(SeedPlan):
    Learner = _KeepsRollouts


def test_the_fragments_are_what_each_samplers_copies_did() -> None:
    """Replaying each sampler's environments (seeded as the sampler seeds them) with the
    actions its fragments record gives back the observations, rewards and ends recorded:
    every action reached its sampler and copy, every outcome came back to its row."""
    n, k, T, iters = 3, 2, 24, 3
    main = _Recorded(SMALL, "CartPole-v1", num_samplers=n, num_envs=k, fragment_len=T,
                     run=RunConfig(iterations=iters), seed=4, device="cpu")
    Environment(fast=True).run(main)
    learner = main.learner
    assert isinstance(learner, _KeepsRollouts) and len(learner.kept) == iters
    r = learner.result
    assert r["iterations"] == iters and r["device"] == "cpu" and r["forward_passes"] == iters * T
    assert r["env_steps"] == sum(ro.transitions for rs in learner.kept for ro in rs)
    for i in range(n):
        runner = PolicyRunner("CartPole-v1", k, seed=sampler_seed(4, i))
        returns: list[float] = []
        assert np.array_equal(learner.kept[0][i].obs[0], runner.obs)
        for rs in learner.kept:
            ro = rs[i]
            for t in range(T):
                obs, reward, term, trunc, _ = runner.env.step(ro.actions[t])
                assert np.array_equal(ro.obs[t + 1], obs) and np.array_equal(ro.rewards[t], reward)
                assert np.array_equal(ro.terminated[t], term) and np.array_equal(ro.truncated[t], trunc)
            returns += ro.episode_returns
        assert returns and all(x >= 8 for x in returns)
    assert main.samplers[0].steps == iters * T * k


def _single(**kw: Any) -> dict[str, Any]:
    main = SlowSeed(**kw)
    Environment(fast=True).run(main)
    return dict(main.learner.result)


def test_one_seed_same_weights_in_one_process_and_federated() -> None:
    single = [_single(iterations=3, seed=7) for _ in range(2)]
    run = run_threads(lambda: SlowSeed(iterations=3, seed=7, slow_ms=2))
    run.raise_errors()
    assert sorted(run.summaries) == ["learner", "samplers[0]", "samplers[1]"]
    fed = run.summaries["learner"].results["SlowSeed.learner"]
    assert fed["iterations"] == 3 and fed["env_steps"] == single[0]["env_steps"]
    assert single[0]["weights_sha256"] == single[1]["weights_sha256"] == fed["weights_sha256"]
    assert _single(iterations=3, seed=8)["weights_sha256"] != fed["weights_sha256"]


@pytest.mark.slow
def test_launched_with_a_slowed_sampler_equals_one_process() -> None:
    """Under ``reactorfed launch`` (a process per sampler, one for the learner), sampler 0
    sleeps 5 ms before each of its steps: the learner ends with the one-process weights."""
    cmd = [sys.executable, "-m", "reactorfed", "launch", "tests/rl/seed_programs.py:SlowSeed", "--fast",
           "--no-progress", "-p", "iterations=4", "-p", "slow_ms=5", "-p", "num_samplers=3"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    found = re.findall(r"^\[learner\] reactorfed: result of SlowSeed\.learner: (\{.*\})$", proc.stdout, re.MULTILINE)
    assert len(found) == 1, proc.stdout[-3000:]
    fed = json.loads(found[0])
    single = _single(iterations=4, num_samplers=3)
    assert fed["iterations"] == single["iterations"] == 4 and fed["forward_passes"] == 4 * 16
    assert fed["weights_sha256"] == single["weights_sha256"]


def test_appo_learns_under_the_plan_too() -> None:
    main = SeedPlan(APPOConfig(minibatch_size=32), "CartPole-v1", num_samplers=2, num_envs=2, fragment_len=8,
                    run=RunConfig(iterations=2), seed=1, device="cpu")
    Environment(fast=True).run(main)
    r = main.learner.result
    assert r["iterations"] == 2 and r["updates"] == 2 and 0 < r["env_steps"] <= 2 * 2 * 2 * 8


def test_layout_mistakes_are_named() -> None:
    for kw, said in (({"num_envs": 0}, "num_envs must be an int >= 1, got 0"),
                     ({"num_samplers": True}, "num_samplers must be an int >= 1, got True"),
                     ({"fragment_len": 2.5}, "fragment_len must be an int >= 1, got 2.5"),
                     ({"backend": "cuda"}, "backend must be one of"),
                     ({"device": "gpu"}, "device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got 'gpu'")):
        with pytest.raises(ValidationError, match=re.escape(said)):
            SeedPlan(SMALL, "CartPole-v1", **kw)


class _NoPolicyNetwork(PPOConfig):
    """An algorithm whose learner acts through no network of its own."""

    def make_learner(self, space: SpaceInfo, seed: int) -> Any:
        learner = super().make_learner(space, seed)
        learner.model = None  # type: ignore[assignment]
        return learner


def test_a_learner_without_a_policy_network_is_named() -> None:
    main = SeedPlan(_NoPolicyNetwork(), "CartPole-v1", num_samplers=1, num_envs=1, run=RunConfig(iterations=1))
    with pytest.raises(ValidationError, match=r"SeedPlan\.learner: central inference needs a learner with a policy "
                                              r"network \(model\.actor\), as PPO's and APPO's have; PPOLearner has none"):
        Environment(fast=True).run(main)


def test_the_example_shows_progress_and_resumes_from_its_checkpoint(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    seed = load_example("seed_ppo_cartpole")
    ckpt = tmp_path / "seed.pt"
    first = seed.Main(seed.Args(ppo=PPOConfig(total_timesteps=3 * 256, update_epochs=2), checkpoint=str(ckpt),
                                progress_every=1))
    Environment(fast=True).run(first)
    r = first.learner.result
    assert r["iterations"] == 3 and PPOLearner.load(ckpt).digest() == r["weights_sha256"]
    err = capsys.readouterr().err
    assert "iter     3/3" in err and "return(100)" in err and "result: not solved" in err
    more = seed.Main(seed.Args(ppo=PPOConfig(total_timesteps=5 * 256, update_epochs=2), checkpoint=str(ckpt), resume=True,
                               progress=False))
    Environment(fast=True).run(more)
    r2 = more.learner.result
    assert r2["resumed_from_iteration"] == 3 and r2["iterations"] == 5 and r2["forward_passes"] == 2 * 32
    assert r2["env_steps"] > r["env_steps"] and r2["weights_sha256"] != r["weights_sha256"]


@pytest.mark.slow
def test_ppo_learns_cartpole_under_central_inference() -> None:
    """rl-zoo's settings under SEED's plan (at most 160 updates, 41k steps) lift the mean
    return of the last 100 training episodes from about 22 (random actions) past 200."""
    run = RunConfig(iterations=160, target_return=200.0)
    main = SeedPlan(PPOConfig(), "CartPole-v1", num_samplers=2, num_envs=4, fragment_len=32, run=run, seed=2,
                    device="cpu")
    Environment(fast=True).run(main)
    r = main.learner.result
    assert r["reached"], r
    assert r["mean_return_100"] >= 200 and r["iterations"] < 160


def test_a_sampler_never_imports_torch() -> None:
    """Building the example program (every federate builds all of it) and samplers'
    steps, answered by a reactor of zero actions, leave torch unimported: the learner
    builds its network in its own startup reaction."""
    code = f"""
import sys
sys.path.insert(0, {str(EXAMPLES)!r})
import numpy as np
import seed_ppo_cartpole
from reactorfed import Environment, Input, Output, Reactor, bank, each, reaction
from reactorfed.rl.plans import SeedSampler
seed_ppo_cartpole.Main(seed_ppo_cartpole.Args(checkpoint=""))

class Zeros(Reactor):
    steps = Input(np.ndarray, width="n")
    actions = Output(np.ndarray, width="n")

    def __init__(self, n):
        self.n, self.seen = n, 0

    @reaction(triggers=[steps], effects=[actions])
    def serve(self, steps, actions):
        self.seen += 1
        if self.seen < 5:
            for i, rec in steps.present():
                actions[i].set(np.zeros(len(rec), dtype=np.int64))

class Steps(Reactor):
    def __init__(self):
        self.samplers = bank(SeedSampler, 2, "CartPole-v1", 3, seed=each(lambda i: i))
        self.zeros = Zeros(2)
        self.connect(self.samplers.step, self.zeros.steps)
        self.connect(self.zeros.actions, self.samplers.actions, after=0)

main = Steps()
Environment(fast=True).run(main)
assert main.samplers[0].steps == main.samplers[1].steps == 4 * 3, main.samplers[0].steps
print("torch" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False"
