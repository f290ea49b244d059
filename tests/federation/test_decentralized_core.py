"""Decentralized coordination in the pure federate core: no grant from the RTI; a federate
processes a tag once its upstream peers' promises cover it, or once physical time passes
the tag's time + its maxwait, an input with an absent_after waited for to + that (see
:mod:`reactorfed.federation.coordination.federate_maxwait`)."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from reactorfed.federation.coordination.federate_core import WAIT, FederateCore
from reactorfed.federation.coordination.federate_maxwait import MaxWait
from reactorfed.federation.wire.protocol import Promise
from reactorfed.time.tag import FOREVER, succ

from .test_layout import lay

MS = 1_000_000
START = 1_000 * MS


def at(dt: int, m: int = 0) -> tuple[int, int]:
    return (START + dt, m)


def decentral(maxwait: int = FOREVER, absent_after: int = 0, *, fast: bool = False) -> FederateCore:
    """f0 -> f1 (zero delay), f1 decentralized with ``maxwait``."""
    layout = lay(2, (0, 1, None))
    layout.links[0] = replace(layout.links[0], absent_after=absent_after)
    layout.maxwait = [FOREVER, maxwait]
    c = FederateCore(layout, 1, fast=fast)
    c.begin(START)
    c.decentralize(layout)
    return c


def test_maxwait_forever_waits_for_the_upstream_promise_however_late() -> None:
    c = decentral()
    assert c.acquire(at(0), (FOREVER, 0), START + 10_000 * MS) is WAIT
    c.promises.on_promise(0, at(5 * MS))
    c.grant_from_promises()
    assert c.acquire(at(0), (FOREVER, 0), START) == at(0)
    assert c.acquire(at(5 * MS), (FOREVER, 0), START) is WAIT


def test_a_tag_is_begun_once_its_maxwait_has_passed_and_an_input_waited_for_to_its_absent_after() -> None:
    """As in LF: the tag begins at its time + maxwait; the input with an absent_after is
    waited for before its first reader until + that absent_after (a checkpoint)."""
    c = decentral(maxwait=2 * MS, absent_after=3 * MS)
    assert c.acquire(at(10 * MS), (FOREVER, 0), START + 11 * MS) is WAIT
    assert 1 <= c.wait_ms <= 1  # wakes when the 2 ms have passed
    assert c.acquire(at(10 * MS), (FOREVER, 0), START + 12 * MS) == at(10 * MS)
    c.checkpoints([], [(1, 0)])
    assert not c.inputs_ready(at(10 * MS), 1, START + 14 * MS)
    assert c.inputs_ready(at(10 * MS), 0, START + 14 * MS)  # (the reactions before its reader)
    assert c.inputs_ready(at(10 * MS), 1, START + 15 * MS)
    c.on_data(0, 0, at(20 * MS))
    assert c.inputs_ready(at(20 * MS), 1, START + 20 * MS)  # (it came)


def test_fast_mode_does_not_wait_out_a_finite_maxwait_but_forever_still_waits() -> None:
    assert decentral(maxwait=50 * MS, fast=True).acquire(at(10 * MS), (FOREVER, 0), START) == at(10 * MS)
    assert decentral(fast=True).acquire(at(10 * MS), (FOREVER, 0), START) is WAIT


def test_maxwait_changed_at_run_time_applies_to_the_next_tag() -> None:
    c = decentral(maxwait=0)
    assert c.maxwait is not None
    c.maxwait.set(20 * MS)
    assert c.acquire(at(10 * MS), (FOREVER, 0), START + 25 * MS) is WAIT
    assert c.acquire(at(10 * MS), (FOREVER, 0), START + 30 * MS) == at(10 * MS)


def test_a_federate_past_its_upstream_promises_still_promises_the_tag_after_its_last() -> None:
    # f0 -> f1 -> f2: f1 advanced on maxwait past what f0 promised; a tardy message from f0
    # is processed after f1's last tag, so f1 promises f2 nothing before that.
    layout = lay(3, (0, 1, None), (1, 2, None))
    layout.maxwait = [FOREVER, 0, FOREVER]
    c = FederateCore(layout, 1)
    c.begin(START)
    c.decentralize(layout)
    assert c.acquire(at(10 * MS), (FOREVER, 0), START + 10 * MS) == at(10 * MS)
    c.completed(at(10 * MS), at(20 * MS), (FOREVER, 0), START + 200 * MS)
    sent = [m.tag for m in c.outbox if isinstance(m, Promise)]
    assert sent and sent[-1] == succ(at(10 * MS))


def test_centralized_cores_are_unchanged() -> None:
    c = FederateCore(lay(2, (0, 1, None)), 1)
    c.begin(START)
    assert c.maxwait is None
    assert c.acquire(at(0), (FOREVER, 0), START + 10**12) is WAIT


@settings(max_examples=200, deadline=None)
@given(mw=st.integers(0, 10**10), aa=st.integers(0, 10**10), t=st.integers(0, 10**12), now=st.integers(0, 10**13))
def test_passed_is_exactly_the_physical_time_rule(mw: int, aa: int, t: int, now: int) -> None:
    layout = lay(2, (0, 1, None))
    layout.links[0] = replace(layout.links[0], absent_after=aa)
    layout.maxwait = [FOREVER, mw]
    w = MaxWait(layout, 1, fast=False)
    assert w.passed((t, 0), now) == (now >= t + mw)
    assert w.passed((t, 3), now, 0) == (now >= t + mw + aa)
    assert not MaxWait(replace(layout, maxwait=[FOREVER, FOREVER]), 1, fast=True).passed((t, 0), now)


def test_a_delayed_link_grants_the_tags_before_its_delay_from_the_start() -> None:
    # No RTI grant comes: before any promise, the upstream may send at the start tag, so
    # everything before start + 100 ms is already safe here (a cycle through this link
    # would otherwise wait for ever at the start).
    layout = lay(2, (0, 1, 100 * MS))
    c = FederateCore(layout, 1)
    c.begin(START)
    c.decentralize(layout)
    assert c.acquire(at(0), (FOREVER, 0), START) == at(0)
    assert c.acquire(at(100 * MS), (FOREVER, 0), START) is WAIT


def test_a_zero_delay_cycle_without_a_finite_maxwait_is_refused_not_left_to_hang() -> None:
    import pytest

    from reactorfed.errors import ValidationError

    cyc = lay(2, (0, 1, None), (1, 0, None))
    cyc.maxwait = [0, FOREVER]
    c = FederateCore(cyc, 0)
    c.begin(START)
    with pytest.raises(ValidationError, match="f1 has no maxwait"):
        c.decentralize(cyc)
    cyc.maxwait = [0, 5 * MS]
    c.decentralize(cyc)  # finite everywhere: fine
    delayed = lay(2, (0, 1, None), (1, 0, 0))  # a microstep on the cycle: promises go round
    delayed.maxwait = [FOREVER, FOREVER]
    d = FederateCore(delayed, 0)
    d.begin(START)
    d.decentralize(delayed)


def test_decentralized_coordination_needs_the_peers_promises() -> None:
    import pytest

    from reactorfed.errors import ValidationError

    layout = lay(2, (0, 1, None))
    c = FederateCore(layout, 1, peer_grants=False)
    c.begin(START)
    with pytest.raises(ValidationError, match="no-peer-grants"):
        c.decentralize(layout)
