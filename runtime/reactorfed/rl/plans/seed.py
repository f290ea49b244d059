"""SEED RL's execution plan, as a reactor program: samplers only step environments, one
central reactor batches every sampler's observations into one forward pass, returns each
its actions, assembles the trajectories and learns from them (Espeholt et al. 2020,
"SEED RL: scalable and efficient deep-RL with accelerated central inference").

::

    samplers[i].step -------------------------> learner.steps[i]
    learner.actions[i] --(after 0)------------> samplers[i].actions

Every tag, each of ``num_samplers`` samplers sends one step record of its ``num_envs``
copies (:func:`step_dtype`: the observations to act on, and the rewards and ends of the
step that led to them); they all arrive at that tag. The learner stacks them, takes one
forward pass of its own policy network over the ``num_samplers * num_envs`` observations
on its device (CUDA when present: ``device="auto"``), draws the actions, and sends sampler
``i`` its ``num_envs`` actions one microstep later; the samplers step their copies and
answer at that microstep. Every ``fragment_len`` steps the learner holds a complete
fragment of each sampler's copies (the rows of
:class:`~reactorfed.rl.rollout.Rollout`, built as :class:`~reactorfed.rl.rollout.PolicyRunner`
builds them) and learns from them, in sampler order, before it acts on the next step. So
the policy lags by nothing, as under the synchronous plan, but no weights travel: the
samplers hold no policy, import no torch, and a step costs one round trip instead of a
sampler's own inference.

**Why the learner is the inference reactor**, as in SEED: the forward pass needs the
newest weights, and they are the learner's. A separate inference federate would need the
weights sent over after every update (the broadcast this plan exists to remove) and the
trajectories sent back for learning (every step's data twice over the wire); at each
fragment's end it would wait for the learner anyway, since the next action must come from
the updated policy. One reactor keeps the weights, the batch and the trajectories where
the accelerator is, and a federated run has the layout the operator deploys: a bank of
samplers and one learner on the GPU node. The price: while the learner learns, no one
steps (SEED's learner overlaps the two; here logical time orders them, which is what makes
the result one per seed).

Logical time fixes everything that varies: the observations of a tag come in sampler
order, the actions are drawn from one seeded generator, the learner learns at fixed
steps. So a seed gives bit-identical weights in one process and federated, a slow sampler
included: the others only wait for it at each step. The learner stops after
``run.iterations`` updates, or once the last 100 training episodes average
``run.target_return``, by sending no more actions.

**Elastic samplers.** With ``max_samplers`` the samplers are an elastic bank of 1 to
``max_samplers`` members (``num_samplers`` at the start) that join and leave while it
trains (:class:`~reactorfed.rl.plans.seed_trainer.ElasticSeedTrainer`). The unit that
changes width is the fragment: each acts for the members present when the learner learned
from the last, its first actions reach them ``period`` later (0: the next microstep), and
its steps run in microsteps of that logical time, so fragments are ``period`` apart (without ``--fast``, where a join lands at its request's physical time, that is
what lets logical time follow physical time). A joiner's first record (its startup's)
waits for the next fragment; a member that leaves during one is dropped from it, its rows
unlearned. Which members each step acts for is the membership's at its tag, and the
actions are drawn for them in bank order from the one generator: the RTI's record replayed
gives the same weights. Without changes it trains as the fixed bank does (the same
draws, the same updates; only the fragments' tags differ).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from reactorfed import (
    STARTUP,
    Bank,
    Elastic,
    Input,
    Output,
    PortReader,
    PortWriter,
    Reactor,
    ValidationError,
    bank,
    each,
    elastic_bank,
    reaction,
)

from ..contracts import Algorithm, SpaceInfo
from ..envs.backends import BACKENDS, resolve_backend
from ..rollout import PolicyRunner
from ..training import RunConfig
from . import sampler_state
from .sampler import sampler_seed
from .seed_trainer import ElasticSeedTrainer, SeedTrainer

__all__ = ["ElasticSeedSampler", "SeedPlan", "SeedSampler", "step_dtype"]

_DEVICE = re.compile(r"^(auto|cpu|cuda(:[0-9]+)?)$")


def step_dtype(obs_shape: tuple[int, ...], obs_dtype: np.dtype[Any]) -> np.dtype[Any]:
    """One copy's step record: the observation to act on, and the reward and the ends of
    the step that led to it (zero and false in a sampler's first record). The reward stays
    float64, as the environment gives it, so that episode returns add up as a sampler's own
    would."""
    return np.dtype([("obs", obs_dtype, obs_shape), ("reward", np.float64), ("terminated", np.bool_),
                     ("truncated", np.bool_)])


class SeedSampler(Reactor):
    """Steps ``num_envs`` copies of ``env`` with the actions that reach it, and sends what
    they give back. It holds no policy: no weights, no torch."""

    actions: Input[np.ndarray] = Input(np.ndarray)
    restore: Input[np.ndarray] = Input(np.ndarray)
    step: Output[np.ndarray] = Output(np.ndarray)
    state: Output[np.ndarray] = Output(np.ndarray)

    def __init__(self, env: str, num_envs: int, seed: int, backend: str = "gymnasium", snapshots: int = 0) -> None:
        """``snapshots`` (a plan whose learner checkpoints: its ``fragment_len``): the
        sampler's state goes out with the step record that ends each fragment
        (:mod:`~reactorfed.rl.plans.sampler_state`), and a state that reaches
        :attr:`restore` (a resumed run's) is carried on from."""
        resolve_backend(env, backend)  # a wrong backend said now, as the other plans' samplers do
        self.env, self.num_envs, self.seed, self.backend = env, num_envs, seed, backend
        self.snapshots = snapshots
        self.runner: PolicyRunner | None = None
        self.dtype: np.dtype[Any] | None = None
        self.steps = 0
        self.stepped = 0  # steps of the copies (the fragments' ends: every ``snapshots``)

    @reaction(triggers=[STARTUP], effects=[step])
    def start(self, step: PortWriter[np.ndarray]) -> None:
        # seeded and stepped as every plan's sampler (copy j reset with seed + j)
        self.runner = runner = PolicyRunner(self.env, self.num_envs, seed=self.seed, backend=self.backend)
        self.dtype = step_dtype(runner.obs_shape, runner.obs_dtype)
        rec = np.zeros(self.num_envs, dtype=self.dtype)
        rec["obs"] = runner.obs
        step.set(rec)

    @reaction(triggers=[restore])
    def carry_on(self, restore: PortReader[np.ndarray]) -> None:
        """A resumed run's state for this sampler (before the actions of the same tag)."""
        assert self.runner is not None
        data = restore.get()
        if data is not None and data.size:
            state = sampler_state.unpack(data)
            self.runner.restore(state["runner"])
            self.steps, self.stepped = int(state["steps"]), int(state["stepped"])

    @reaction(triggers=[actions], effects=[step, state])
    def act(self, actions: PortReader[np.ndarray], step: PortWriter[np.ndarray],
            state: PortWriter[np.ndarray]) -> None:
        step.set(self.step_copies(actions.get()))
        self.stepped += 1
        if self.snapshots and self.stepped % self.snapshots == 0:
            assert self.runner is not None
            state.set(sampler_state.pack(f"{self.fqn} ({self.runner.name})", {
                "runner": self.runner.state(), "steps": self.steps, "stepped": self.stepped}))

    def step_copies(self, actions: np.ndarray | None) -> np.ndarray:
        """Step the copies with ``actions``: the step record they give."""
        runner = self.runner
        assert runner is not None and self.dtype is not None and actions is not None
        a = np.array(actions, dtype=np.int64)  # (a received buffer may be read-only)
        obs, reward, terminated, truncated, _ = runner.env.step(a)
        rec = np.empty(self.num_envs, dtype=self.dtype)
        rec["obs"] = obs
        rec["reward"] = reward
        rec["terminated"] = terminated
        rec["truncated"] = truncated
        self.steps += self.num_envs
        return rec


class ElasticSeedSampler(SeedSampler):
    """A :class:`SeedSampler` that is a member of an elastic bank: after each step it
    reports the transitions it has sent (``samples``: its steps less its copies' automatic
    resets, as the learner counts what it learns from; a member that leaves runs no
    shutdown reaction)."""

    #: a fragment's first actions (sent ahead by the learner: see ElasticSeedTrainer)
    first: Input[np.ndarray] = Input(np.ndarray)

    def __init__(self, env: str, num_envs: int, seed: int, backend: str = "gymnasium") -> None:
        super().__init__(env, num_envs, seed, backend)
        self.transitions = 0
        self.resetting = np.zeros(num_envs, dtype=np.bool_)  # the copies the next step resets

    @reaction(triggers=[SeedSampler.actions, first], effects=[SeedSampler.step])
    def act(self, actions: PortReader[np.ndarray], first: PortReader[np.ndarray], step: PortWriter[np.ndarray]) -> None:
        rec = self.step_copies(actions.get() if actions.is_present else first.get())
        self.transitions += self.num_envs - int(np.count_nonzero(self.resetting))
        self.resetting = rec["terminated"] | rec["truncated"]
        step.set(rec)
        self.report_result({"samples": self.transitions})


class SeedPlan(Reactor):
    """SEED's plan for ``algo`` on ``env``: ``num_samplers`` samplers of ``num_envs``
    copies, one learner that acts for all of them in one forward pass a step on ``device``
    (``"auto"``: CUDA when the learner's process has it, else the CPU; ``"cpu"``,
    ``"cuda"``, ``"cuda:N"``) and learns every ``fragment_len`` steps. A federated run puts
    each sampler and the learner in its own process. ``backend`` steps the samplers'
    copies (:mod:`~reactorfed.rl.envs.backends`). ``algo``'s learner must act through a policy
    network (``learner.model.actor``: PPO's and APPO's do).

    Subclass it for a program with its own settings (``super().__init__(...)``); set
    :attr:`Sampler` or :attr:`Learner` for reactors of your own (subclasses of
    :class:`SeedSampler`, :class:`~reactorfed.rl.plans.seed_trainer.SeedTrainer`).

    With ``max_samplers`` (> 0) the samplers are an elastic bank of 1 to ``max_samplers``
    (:attr:`ElasticSampler` s), ``num_samplers`` at the start, fragments ``period`` ns apart
    (see the module)."""

    Sampler: type[SeedSampler] = SeedSampler
    Learner: type[SeedTrainer] = SeedTrainer
    ElasticSampler: type[SeedSampler] = ElasticSeedSampler

    def __init__(self, algo: Algorithm, env: str, *, num_samplers: int = 2, num_envs: int = 4,
                 fragment_len: int = 32, run: RunConfig | None = None, seed: int = 0,
                 backend: str = "gymnasium", device: str = "auto", max_samplers: int = 0, period: int = 0) -> None:
        for name, value in (("num_samplers", num_samplers), ("num_envs", num_envs), ("fragment_len", fragment_len)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValidationError(f"{self.fqn}: {name} must be an int >= 1, got {value!r}")
        if backend not in BACKENDS:
            raise ValidationError(f"{self.fqn}: backend must be one of {BACKENDS}, got {backend!r}")
        if not isinstance(device, str) or not _DEVICE.match(device):
            raise ValidationError(f"{self.fqn}: device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got {device!r}")
        space = SpaceInfo.of_env(env)
        self.samplers: Bank[SeedSampler]
        self.learner: SeedTrainer
        if max_samplers:
            self._elastic(algo, env, space, num_samplers, num_envs, fragment_len, run, seed, backend, device,
                          max_samplers, period)
            return
        # with checkpoints, each sampler's state goes to the learner at each fragment's end,
        # and back on a resume (with the first actions, before them)
        carried = bool(run is not None and run.checkpoint)
        self.samplers = bank(self.Sampler, num_samplers, env, num_envs, seed=each(lambda i: sampler_seed(seed, i)),
                             backend=backend, **({"snapshots": fragment_len} if carried else {}))
        self.learner = self.Learner(num_samplers, num_envs, fragment_len, algo, space, run=run, seed=seed,
                                    device=device, **({"carries_samplers": True} if carried else {}))
        self.connect(self.samplers.step, self.learner.steps)
        self.connect(self.learner.actions, self.samplers.actions, after=0)
        if carried:
            self.connect(self.samplers.state, self.learner.sampler_states)
            self.connect(self.learner.restore, self.samplers.restore, after=0)

    def _elastic(self, algo: Algorithm, env: str, space: SpaceInfo, num_samplers: int, num_envs: int,
                 fragment_len: int, run: RunConfig | None, seed: int, backend: str, device: str, max_samplers: int,
                 period: int) -> None:
        """The samplers an elastic bank (see the module)."""
        if not isinstance(max_samplers, int) or isinstance(max_samplers, bool) or max_samplers < num_samplers:
            raise ValidationError(
                f"{self.fqn}: max_samplers must be an int >= num_samplers ({num_samplers}), got {max_samplers!r}")
        if not isinstance(period, int) or isinstance(period, bool) or period < 0:
            raise ValidationError(f"{self.fqn}: period must be an int >= 0 (ns), got {period!r}")
        width = Elastic(min=1, max=max_samplers, initial=num_samplers)
        self.samplers = elastic_bank(self.ElasticSampler, width, env, num_envs,
                                     seed=each(lambda i: sampler_seed(seed, i)), backend=backend)
        self.learner = learner = ElasticSeedTrainer("samplers", max_samplers, num_envs, fragment_len, algo, space,
                                                    run=run, seed=seed, device=device, period=period)
        self.connect(self.samplers.step, learner.steps)
        self.connect(learner.actions, self.samplers.actions, after=0)
        self.connect(learner.first, self.samplers.first, after=period)
