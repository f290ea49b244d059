"""Defaults the federation's processes and the command line share, written once here (a
module that imports nothing, so that the command line's help loads nothing heavy)."""

from __future__ import annotations

__all__ = ["DEFAULT_HEARTBEAT_TIMEOUT_NS"]

#: a connection that answers nothing, not even ZeroMQ's heartbeats, for this long is dead
#: (``--heartbeat-timeout``; ``RtiConfig.liveness_ns``, ``FederateConfig.liveness_ns``)
DEFAULT_HEARTBEAT_TIMEOUT_NS = 3_000_000_000
