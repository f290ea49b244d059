"""The RTI's optional silence backstop (``--silence-timeout``, RtiConfig.silence_ns)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .rti_config import RtiPhase

if TYPE_CHECKING:
    from .rti_server import RtiServer

__all__ = ["check_silence"]


def check_silence(server: RtiServer, now: int, silence_ns: int) -> None:
    """A federate whose program said nothing for ``silence_ns`` ends the federation; an
    elastic member fails instead, as if its connection had closed (the others go on,
    unless its bank would fall below its minimum)."""
    core, layout, members = server.core, server.layout, server.members
    for f, seen in list(server.last_seen.items()):
        if core.feds[f].resigned or now - seen <= silence_ns:
            continue
        why = f"stopped responding (nothing from its program for {(now - seen) // 1_000_000} ms)"
        if members is None or layout.elastic_of(f) is None:
            server.fail(f"federate {layout.names[f]} {why}")
        members.silent(f, why)
        if core.all_resigned():
            server.phase = RtiPhase.DONE
            return
