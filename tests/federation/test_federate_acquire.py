"""When a federate's driver looks for messages before a tag (``FederateCoordinator.acquire``).

It asks its core first. A federate that must wait reads as it waits, so it does not look
first: on a closed loop, where every tag waits for a peer, that look (a poll that waits
for nothing) would find nothing at every tag. Before a tag its core grants at once, it
looks at most every millisecond, and asks again with what arrived."""

from __future__ import annotations

from typing import Any

from reactorfed import Environment, VirtualClock
from reactorfed.federation import FederateConfig
from reactorfed.federation.coordination.layout import Layout
from reactorfed.federation.process.federate import FederateCoordinator
from reactorfed.time.tag import FOREVER_T

from .programs import Pipeline


def _driver(federate: str) -> tuple[FederateCoordinator, Any, VirtualClock, list[int]]:
    """``federate``'s driver of :class:`Pipeline` (src -> relay -> sink), set up as
    run_federate does (not joined), and the list its pump is to record each wait's
    timeout in (0: a look)."""
    clock = VirtualClock()
    env = Environment(fast=True, clock=clock)
    main = Pipeline()
    sched = env.assemble(main, federate=federate)
    if federate == "src":
        sched.post_remote((clock.now(), 1), sched.program.slot_of(main.src.tick), None)  # an event to grant
    assert sched.program.partition is not None
    coord = FederateCoordinator(sched.program, Layout.of(sched.program.partition),
                                FederateConfig("x", b"s" * 16, "tcp://127.0.0.1:1"), clock)
    sched.coordinator = coord
    coord.install(sched)
    timeouts: list[int] = []
    return coord, sched, clock, timeouts


def test_a_federate_that_must_wait_reads_as_it_waits_without_looking_first() -> None:
    coord, sched, _, timeouts = _driver("sink")

    def pump(sched: Any, timeout_ms: int, now: int) -> None:
        timeouts.append(timeout_ms)
        coord.core.grant = FOREVER_T  # what the wait brought: everything granted, nothing left

    coord._pump = pump
    assert coord.acquire(sched, None) is None  # nothing left anywhere, after one wait
    assert len(timeouts) == 1 and timeouts[0] > 0  # the wait, and no look before it


def test_a_granted_tag_is_preceded_by_a_look_at_most_every_millisecond() -> None:
    coord, sched, clock, timeouts = _driver("src")
    coord._pump = lambda sched, timeout_ms, now: timeouts.append(timeout_ms)
    head = sched.next_event_tag()
    assert head is not None
    assert coord.acquire(sched, head) == head  # granted: no upstream
    assert timeouts == [0]  # one look, then asked again
    assert coord.acquire(sched, head) == head
    assert timeouts == [0]  # within the millisecond: no look
    clock.advance(1_000_000)
    assert coord.acquire(sched, head) == head
    assert timeouts == [0, 0]
