"""The CPU priority of a federate's threads: the thread that runs reactions yields to the
threads that keep the federation alive.

A federate's liveness is answered by threads that need little CPU but need it on time:
ZeroMQ's I/O thread (the ZMTP heartbeats the RTI watches, the CurveZMQ handshakes), the
heartbeat thread, the RTI's own threads. A reaction may keep a core busy for seconds. With
hundreds of such federates on a few cores, a woken I/O thread waited its turn behind
every busy reaction thread of the machine, and a healthy federate was declared dead
(issue: 256 federates busy in numpy on 2 cores lost their RTI connections). So, once a
federate has joined and its other threads exist, the thread that runs reactions (the
main thread: Linux keeps the nice value and the scheduling policy per thread) lowers its
own priority by ``nice`` and, with ``batch``, moves to ``SCHED_BATCH``. The threads it
starts later (a pool of reaction workers) inherit both. Threads created before it keep
the defaults. Only lowering: no privilege needed, and the federation's relative shares
are unchanged, since every federate does the same.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading

__all__ = ["DEFAULT_REACTION_NICE", "yield_reactions"]

log = logging.getLogger("reactorfed.federate")

#: how much lower than its other threads a federate runs its reactions (nice 10 weighs
#: 110 against 1024 for nice 0: a woken I/O thread runs ahead of a busy reaction thread)
DEFAULT_REACTION_NICE = 10


def yield_reactions(nice: int, batch: bool) -> None:
    """Lower the calling thread (the one that runs reactions) by ``nice`` and, with
    ``batch``, put it under ``SCHED_BATCH`` (a woken federate does not preempt the one that
    sent to it mid-batch: for runs as fast as possible). Where the platform cannot, the
    thread is left as it is (logged at debug level)."""
    tid = threading.get_native_id()
    if batch and hasattr(os, "sched_setscheduler") and hasattr(os, "SCHED_BATCH"):
        try:
            os.sched_setscheduler(tid, os.SCHED_BATCH, os.sched_param(0))
        except OSError as e:
            log.debug("could not use SCHED_BATCH: %s", e)
    if nice > 0 and hasattr(os, "setpriority"):
        with contextlib.suppress(OSError):
            now = os.getpriority(os.PRIO_PROCESS, tid)
            os.setpriority(os.PRIO_PROCESS, tid, min(19, now + nice))
