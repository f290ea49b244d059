"""A replay shard of the asynchronous-replay plan (:mod:`reactorfed.rl.plans.apex`): a
reactor around a :class:`~reactorfed.rl.replay.prioritized.PrioritizedReplay`, one process
of its own when federated.

At a tag, in this order (its reactions' declaration order): it adds the transitions its
samplers sent (in channel order: sampler order), applies the priority updates the
learner sent, then answers the learner's request: ``k`` transitions drawn with
probability proportional to ``p^alpha``, stratified, from its own seeded generator. So
what it answers is a function of what reached it at tags up to this one, however fast
each process runs.

The answer is one structured array (one buffer on the wire): row 0 is a header (``id``:
the transitions held, ``p``: their total mass ``sum_k p_k^alpha``), rows 1.. the sampled
transitions with their ``id`` and mass ``p`` (:func:`pack_reply`, :func:`unpack_reply`).
The learner needs the total and the count to weigh the samples of every shard alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from reactorfed import (
    SHUTDOWN,
    STARTUP,
    Input,
    MultiReader,
    Output,
    PortReader,
    PortWriter,
    Reactor,
    reaction,
)

from .prioritized import PrioritizedReplay

__all__ = ["ReplayShard", "ShardReply", "pack_priorities", "pack_reply", "shard_seed", "unpack_reply"]

_HEADER = np.dtype([("id", np.int64), ("p", np.float64)])
_PRIORITIES = np.dtype([("id", np.int64), ("priority", np.float32)])


def shard_seed(seed: int, s: int) -> int:
    """Shard ``s``'s sampling seed in a run seeded ``seed`` (apart from the samplers')."""
    return seed * 1000 + 500 + s


@dataclass(frozen=True, slots=True)
class ShardReply:
    """What a shard answered: how many transitions it held and their total mass when it
    drew, and the draws (``rows`` holds the transitions' fields; empty when it drew none)."""

    held: int
    total: float
    ids: np.ndarray
    masses: np.ndarray
    rows: np.ndarray


def pack_reply(held: int, total: float, ids: np.ndarray, masses: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
    """A shard's answer as one array: the header row, then one row per draw."""
    if rows is None or len(ids) == 0:
        out = np.zeros(1, dtype=_HEADER)
    else:
        descr = rows.dtype.descr
        out = np.zeros(len(ids) + 1, dtype=np.dtype(_HEADER.descr + descr))
        for name in rows.dtype.names or ():
            out[name][1:] = rows[name]
        out["id"][1:] = ids
        out["p"][1:] = masses
    out["id"][0], out["p"][0] = held, total
    return out


def unpack_reply(rec: np.ndarray) -> ShardReply:
    """Inverse of :func:`pack_reply`; the arrays are aligned copies."""
    body = np.array(rec[1:])
    return ShardReply(int(rec["id"][0]), float(rec["p"][0]), np.array(body["id"], dtype=np.int64),
                      np.array(body["p"], dtype=np.float64), body)


def pack_priorities(ids: np.ndarray, priorities: np.ndarray) -> np.ndarray:
    """The learner's priority update for one shard: (id, raw priority) rows."""
    out = np.zeros(len(ids), dtype=_PRIORITIES)
    out["id"], out["priority"] = ids, priorities
    return out


class ReplayShard(Reactor):
    """Holds ``capacity`` transitions from ``num_inputs`` samplers; draws from a generator
    seeded ``seed``."""

    transitions: Input[np.ndarray] = Input(np.ndarray, width="num_inputs")
    priorities: Input[np.ndarray] = Input(np.ndarray)
    request: Input[np.ndarray] = Input(np.ndarray)
    batch: Output[np.ndarray] = Output(np.ndarray)

    def __init__(self, num_inputs: int, capacity: int, alpha: float, eps: float, seed: int) -> None:
        self.num_inputs, self.capacity, self.alpha, self.eps, self.seed = num_inputs, capacity, alpha, eps, seed
        self.replay: PrioritizedReplay | None = None
        self.rng = np.random.default_rng(seed)
        self.served = 0

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        # built here, so that only the shard's own process holds its memory
        self.replay = PrioritizedReplay(self.capacity, self.alpha, self.eps)
        self.rng = np.random.default_rng(self.seed)
        self.served = 0

    @reaction(triggers=[transitions])
    def add(self, transitions: MultiReader[np.ndarray]) -> None:
        assert self.replay is not None
        for _, rec in transitions.present():
            if len(rec):
                rows = np.array(rec)  # aligned and writable (a received buffer may be neither)
                self.replay.add(rows, rows["priority"])

    @reaction(triggers=[priorities])
    def update(self, priorities: PortReader[np.ndarray]) -> None:
        assert self.replay is not None
        rec = priorities.get()
        assert rec is not None
        self.replay.update(np.array(rec["id"]), np.array(rec["priority"]))

    @reaction(triggers=[request], effects=[batch])
    def sample(self, request: PortReader[np.ndarray], batch: PortWriter[np.ndarray]) -> None:
        replay = self.replay
        assert replay is not None
        ask = request.get()
        assert ask is not None
        k = int(ask[0])
        if k < 0:
            raise ValueError(f"{self.fqn}: asked for {k} transitions")
        if k == 0 or len(replay) == 0:
            batch.set(pack_reply(len(replay), replay.total, np.zeros(0, np.int64), np.zeros(0), None))
            return
        ids, masses = replay.sample(k, self.rng)
        self.served += k
        batch.set(pack_reply(len(replay), replay.total, ids, masses, replay.get(ids)))

    @reaction(triggers=[SHUTDOWN])
    def finish(self) -> None:
        replay = self.replay
        assert replay is not None
        result: dict[str, Any] = {"added": replay.added, "held": len(replay), "served": self.served,
                                  "stale_priority_updates": replay.stale_updates}
        self.report_result(result)
