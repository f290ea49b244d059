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
own priority by ``nice`` and, in runs as fast as possible, moves to another scheduling
policy (``--reaction-sched``): ``batch`` (``SCHED_BATCH``, the default), ``idle``
(``SCHED_IDLE``) or ``normal`` (unchanged). Either of the first two keeps a woken
federate from preempting the one that sent to it mid-batch. ``idle`` also lets every
normal thread of the host run first, at once; in a pod that host is the pod's own
cgroup, on a shared host a launched federation's reactions then get only the CPU that
nothing else wants. It was the default for a day: at 256 federates busy in numpy on 2
cores it lost a healthy worker in 4 of 17 runs, ``batch`` plus nice 10 in 2 of 10, so
it is an option, not the default. The threads it
starts later (a pool of reaction workers) inherit both. Threads created before it keep
the defaults. Only lowering: no privilege needed, and the federation's relative shares
are unchanged, since every federate does the same.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading

__all__ = ["DEFAULT_REACTION_NICE", "REACTION_POLICIES", "yield_reactions"]

log = logging.getLogger("reactorfed.federate")

#: how much lower than its other threads a federate runs its reactions (nice 10 weighs
#: 110 against 1024 for nice 0: a woken I/O thread runs ahead of a busy reaction thread)
DEFAULT_REACTION_NICE = 10


#: the scheduling policies a fast federate's reaction thread may take (``--reaction-sched``)
REACTION_POLICIES = ("idle", "batch", "normal")


def yield_reactions(nice: int, policy: str = "normal") -> None:
    """Lower the calling thread (the one that runs reactions) by ``nice`` and move it to
    ``policy`` (one of :data:`REACTION_POLICIES`; ``normal`` keeps the thread's). Where
    the platform cannot, the thread is left as it is (logged at debug level). Under
    ``SCHED_IDLE`` nice has no effect; it is set anyway, for a later return to normal."""
    assert policy in REACTION_POLICIES, policy
    tid = threading.get_native_id()
    name = {"idle": "SCHED_IDLE", "batch": "SCHED_BATCH"}.get(policy)
    if name is not None and hasattr(os, "sched_setscheduler") and hasattr(os, name):
        try:
            os.sched_setscheduler(tid, getattr(os, name), os.sched_param(0))
        except OSError as e:
            log.debug("could not use %s: %s", name, e)
    if nice > 0 and hasattr(os, "setpriority"):
        with contextlib.suppress(OSError):
            now = os.getpriority(os.PRIO_PROCESS, tid)
            os.setpriority(os.PRIO_PROCESS, tid, min(19, now + nice))
