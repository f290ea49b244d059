"""A plan's sampler reactor, whatever the plan: it builds its environments and its actor at
startup (so a sampler process never imports torch), loads the weights that reach it, and
packs a fragment of ``fragment_len`` rows from each of its ``num_envs`` environment copies,
stepped by ``backend`` (gymnasium's vector environments or EnvPool: :mod:`~reactorfed.rl.envs.backends`).
The plans differ only in when a fragment is sampled: the synchronous plan's sampler
(:class:`~reactorfed.rl.plans.sync.SyncSampler`) samples as soon as weights arrive; the
asynchronous one's (:class:`~reactorfed.rl.plans.async_.AsyncSampler`) on its own timer,
with the newest weights it holds.
"""

from __future__ import annotations

import numpy as np

from reactorfed import STARTUP, Input, Output, PortReader, PortWriter, Reactor, reaction

from ..contracts import Actor, Algorithm, SpaceInfo
from ..envs.backends import resolve_backend
from ..rollout import PolicyRunner, pack_rollout
from . import sampler_state

__all__ = ["PlanSampler", "actor_seed", "sampler_seed"]


def sampler_seed(seed: int, i: int) -> int:
    """Sampler ``i``'s environment seed in a run seeded ``seed``."""
    return seed * 1000 + 100 + i


def actor_seed(env_seed: int) -> int:
    """The seed of the actor of the sampler whose environments are seeded ``env_seed``:
    apart from it, so that action sampling and environment resets draw unrelated streams."""
    return env_seed + 7919


class PlanSampler(Reactor):
    """Steps ``num_envs`` copies of ``env`` with ``algo``'s actor; a subclass says when.

    With ``snapshots`` (a plan whose learner checkpoints) it sends its state after each
    fragment on :attr:`state` (:mod:`~reactorfed.rl.plans.sampler_state`), and a state that
    reaches :attr:`restore` (a resumed run's, before its first weights) is carried on from."""

    weights: Input[np.ndarray] = Input(np.ndarray)
    restore: Input[np.ndarray] = Input(np.ndarray)
    fragment: Output[np.ndarray] = Output(np.ndarray)
    state: Output[np.ndarray] = Output(np.ndarray)

    def __init__(self, algo: Algorithm, env: str, space: SpaceInfo, num_envs: int, fragment_len: int,
                 seed: int, backend: str = "gymnasium", snapshots: bool = False) -> None:
        # a wrong backend, or EnvPool where it cannot, said now; and EnvPool imported here, once
        # before a launch's fork server forks the federates, not in each sampler's first fragment
        resolve_backend(env, backend)
        self.algo, self.env, self.space = algo, env, space
        self.num_envs, self.fragment_len, self.seed, self.backend = num_envs, fragment_len, seed, backend
        self.snapshots = snapshots
        self.runner: PolicyRunner | None = None
        self.actor: Actor | None = None
        self.policy_tag: tuple[int, int] | None = None  # when the weights acting now arrived
        self.transitions = 0  # env steps sampled (and sent) by this process, as a learner counts them

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        self.runner = PolicyRunner(self.env, self.num_envs, seed=self.seed, backend=self.backend)
        self.actor = self.algo.make_actor(self.space, actor_seed(self.seed))

    @reaction(triggers=[restore])
    def carry_on(self, restore: PortReader[np.ndarray]) -> None:
        """A resumed run's state for this sampler (before the weights of the same tag: a
        subclass's reactions come after this one)."""
        assert self.runner is not None and self.actor is not None
        data = restore.get()
        if data is not None and data.size:
            self.transitions = sampler_state.restore(data, self.runner, self.actor)

    def load(self, payload: np.ndarray | None) -> None:
        """Take the learner's payload as the actor's weights (noting the tag they came at)."""
        assert payload is not None and self.actor is not None
        self.actor.load(payload)
        t = self.elapsed_tag()
        self.policy_tag = (t.time, t.microstep)

    def sample(self) -> np.ndarray:
        """One fragment with the weights loaded last, packed for the wire."""
        assert self.runner is not None and self.actor is not None
        rollout = self.runner.rollout(self.fragment_len, self.actor)
        rollout.policy_tag = self.policy_tag
        self.transitions += rollout.transitions
        return pack_rollout(rollout)

    def send_state(self, state: PortWriter[np.ndarray]) -> None:
        """With ``snapshots``, the sampler's state after the fragment just sampled."""
        if self.snapshots:
            assert self.runner is not None and self.actor is not None
            state.set(sampler_state.snapshot(self.runner, self.actor, self.transitions))
