"""A learner's state as bytes, for PBT's exploit: what one trial sends the controller and
the controller hands a worse trial. The network and the optimizer (and any other tensor
state the learner keeps: a target network), with the counters (a DQN learner's count of
updates places its next target copy and its importance weights' annealing); not the
config (the receiver explores its own), not the seed nor the minibatch generator (the
receiver keeps drawing its own stream, or two trials would train on the same minibatch
orders).

Nor a replay buffer (``replay``: a DQN learner's transitions and their priorities): the
receiver keeps its own, and its n-step returns still open. Its transitions are of the
receiver's own environments, whose episodes its samplers go on stepping (the open n-step
returns belong to those episodes); Q-learning learns from transitions of any behaviour policy, so
the donor's network trains on them as well as on the donor's; and a replay is far larger
than the networks (50,000 transitions against two small MLPs here, gigabytes on Atari)
and would cross the controller every round. (RLlib's exploit restores a checkpoint, which
leaves the buffer out: a DQN restored from one starts with an empty buffer, ray#53878.)
A trial's own checkpoint, by contrast, keeps its replay: resuming it loses nothing.

The bytes are torch's format, read back with ``weights_only=True``: tensors and plain data
only, no code runs when another federate's state is loaded.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

from ..contracts import EPISODES_UNDER_WAY
from .contracts import TunableLearner

__all__ = ["EXCLUDED", "dump_state", "load_state", "state_bytes"]

#: what a learner's state keeps that an exploit does not copy
EXCLUDED = frozenset({"config", "config_object", "space", "seed", "rng", "replay", EPISODES_UNDER_WAY})


def dump_state(state: Mapping[str, Any]) -> bytes:
    import torch

    buf = io.BytesIO()
    torch.save({k: v for k, v in state.items() if k not in EXCLUDED}, buf)
    return buf.getvalue()


def state_bytes(learner: TunableLearner, extra: Mapping[str, Any] | None = None) -> bytes:
    """``learner``'s state to copy into another trial (and ``extra``: a trial's training
    log, which describes these weights' recent episodes)."""
    return dump_state({**learner.state(), **(extra or {})})


def load_state(learner: TunableLearner, data: bytes) -> dict[str, Any]:
    """Take ``data`` (:func:`state_bytes`') into ``learner``; returns the whole dict (the
    extra parts in it)."""
    import torch

    state: dict[str, Any] = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    learner.load_state(state)
    return state
