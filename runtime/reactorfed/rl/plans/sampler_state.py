"""A sampler's state, carried in its learner's checkpoint, so that a resumed run is the run
that would have happened.

A fragment depends on the weights, and on the sampler: its environments (their physical
state and their generators), the observation each copy is at, the episodes under way (their
returns so far, which copies reset next) and the actor's generator (the actions' draws).
A sampler of a plan whose learner checkpoints sends, with each fragment, its state as it is
after the fragment (:func:`snapshot`); the learner keeps the latest of every sampler and
writes them into each checkpoint. A run resumed from it sends each sampler its state before
the first weights, and the sampler carries on from it (:func:`restore`): the same
observations, the same draws, the same episodes. Nothing changes what an undisturbed run
computes: a sampler only reads its state.

Saved rather than made a function of the checkpoint's tag (every sampler resetting its
environments with seeds derived from the round at each checkpoint): resetting would cut
every episode under way at every checkpoint, in the undisturbed run too, and change the
weights of every existing run. gymnasium's environments pickle (CartPole's vector
environment: about 4 KB and 0.25 ms for 4 copies); EnvPool's engine does not: its sampler
sends no state (a warning says so) and a resumed run's environments start afresh.

The state crosses the federation as the bytes of a pickle, from the sampler to its learner
(which only stores them) and back to the same sampler on a resume: the program's own code on
both ends, as a checkpoint (a ``torch.save``) already is.
"""

from __future__ import annotations

import logging
import pickle
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from reactorfed import MultiWriter

from ..contracts import Actor
from ..rollout import PolicyRunner

log = logging.getLogger("reactorfed.rl")

__all__ = ["NO_STATE", "CarriedStates", "pack", "restore", "snapshot", "unpack"]

#: what a sampler sends when its state cannot be saved (its environments do not pickle)
NO_STATE = np.zeros(0, dtype=np.uint8)

_warned: set[str] = set()  # the samplers whose state could not be saved, said once each


def pack(who: str, state: dict[str, Any]) -> np.ndarray:
    """A sampler's state as the bytes of a pickle (``uint8``); :data:`NO_STATE` (said once
    for ``who``) when it cannot be pickled."""
    try:
        data = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        if who not in _warned:
            _warned.add(who)
            log.warning("%s: the sampler's environments cannot be saved (%s); a run resumed from a checkpoint "
                        "starts them afresh", who, exc)
        return NO_STATE
    return np.frombuffer(data, dtype=np.uint8)


def unpack(data: np.ndarray) -> dict[str, Any]:
    """:func:`pack`'s state."""
    state: dict[str, Any] = pickle.loads(np.ascontiguousarray(data, dtype=np.uint8).tobytes())
    return state


def _generator(actor: Actor) -> np.random.Generator | None:
    """The generator an actor draws its actions from (an actor's ``rng``), if it has one."""
    rng = getattr(actor, "rng", None)
    return rng if isinstance(rng, np.random.Generator) else None


def snapshot(runner: PolicyRunner, actor: Actor, transitions: int) -> np.ndarray:
    """A plan sampler's state after its last fragment (:func:`pack`)."""
    rng = _generator(actor)
    return pack(f"{runner.name} ({runner.backend})", {
        "runner": runner.state(), "transitions": transitions,
        "actor_rng": rng.bit_generator.state if rng is not None else None})


def restore(data: np.ndarray, runner: PolicyRunner, actor: Actor) -> int:
    """Carry on from :func:`snapshot`'s state: the environments, the episodes under way and
    the actor's generator. The sampler's count of transitions sent, to carry on."""
    state = unpack(data)
    runner.restore(state["runner"])
    rng = _generator(actor)
    if rng is not None and state["actor_rng"] is not None:
        rng.bit_generator.state = state["actor_rng"]
    return int(state["transitions"])


class CarriedStates:
    """The samplers' states a learner carries into its checkpoints: those of each update's
    fragments (:meth:`arrived` as they come, :meth:`round_over` once it is learned from), in
    each checkpoint (:meth:`checkpoint_part`), and back from one on a resume
    (:meth:`from_checkpoint`, :meth:`send` before the first weights). ``n`` samplers, by
    channel."""

    def __init__(self, n: int) -> None:
        self.n = n
        self._incoming: dict[int, bytes] = {}  # this update's, by channel
        #: the samplers' states after the fragments of the last update (None: not every one's)
        self.latest: list[bytes] | None = None

    def arrived(self, present: Iterable[tuple[int, np.ndarray | None]]) -> None:
        """States of this tag (channel, :func:`pack`'s bytes)."""
        for i, data in present:
            self._incoming[i] = np.asarray(data, dtype=np.uint8).tobytes()

    def round_over(self) -> None:
        """The update that took the fragments these states follow is done."""
        incoming, self._incoming = self._incoming, {}
        every = len(incoming) == self.n and all(incoming.values())
        self.latest = [incoming[i] for i in range(self.n)] if every else None

    def checkpoint_part(self, iteration: int) -> dict[str, Any]:
        """What a checkpoint at ``iteration`` holds of the samplers (nothing without every one's state)."""
        return {} if self.latest is None else {"samplers": {"iteration": iteration, "states": self.latest}}

    def from_checkpoint(self, state: Mapping[str, Any], iteration: int, where: str) -> None:
        """The states a checkpoint (``where``) holds for its ``iteration``; none: said (the
        samplers start afresh, and the resumed run is not the one that would have happened)."""
        saved = state.get("samplers") or {}
        states = saved.get("states") or []
        if saved.get("iteration") == iteration and len(states) == self.n:
            self.latest = [bytes(s) for s in states]
            return
        self.latest = None
        log.warning("%s holds no state of the %d samplers at iteration %d: their environments start afresh, and "
                    "the resumed run is not the one that would have happened", where, self.n, iteration)

    def send(self, restore: MultiWriter[np.ndarray]) -> None:
        """Each sampler's state, from a checkpoint, to its channel (nothing when there are none)."""
        for i, data in enumerate(self.latest or ()):
            restore[i].set(np.frombuffer(data, dtype=np.uint8))
