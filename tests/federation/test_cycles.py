"""Zero-delay cycles between federates never hang: a whole federation of the pure cores
(:mod:`.coresim`) over random layouts, messages handed over in random orders, ends as the
same model does in one process, with the same trace at every federate."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reactorfed import Environment, ms
from reactorfed.federation import run_threads

from .coresim import Federation, Model, acyclic_late, one_process
from .programs import MicrostepCycle

TAGS = [(0, 0), (0, 1), (0, 2), (5, 0), (5, 1), (10, 0), (12, 2), (20, 0)]


@st.composite
def models(draw: st.DrawFn) -> Model:
    n = draw(st.integers(2, 4))
    links: list[tuple[int, int, int | None]] = []
    late: list[bool] = []
    # a zero-delay cycle through every federate, most of the time: the case that can hang
    edges: list[tuple[int, int, int | None]] = []
    if draw(st.booleans()) or n == 2:
        edges += [(f, (f + 1) % n, None) for f in range(n)]
    for _ in range(draw(st.integers(0, 4))):
        s = draw(st.integers(0, n - 1))
        d = draw(st.integers(0, n - 2))
        edges.append((s, d + 1 if d >= s else d, draw(st.sampled_from([None, None, 0, 5]))))
    for e in edges:
        links.append(e)
        late.append(draw(st.booleans()))
        if not acyclic_late(n, links, late):
            late[-1] = False  # a causality loop: assembly would refuse the program
    events = tuple(frozenset(draw(st.sets(st.sampled_from(TAGS), max_size=4))) for _ in range(n))
    return Model(n, tuple(links), tuple(late), events, stop=(15, 0), salt=draw(st.integers(0, 3)))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models(), st.lists(st.integers(0, 1000), min_size=1, max_size=64), st.booleans())
def test_a_federation_of_cores_ends_with_the_one_process_trace(m: Model, choices: list[int], peer_grants: bool) -> None:
    want = one_process(m)
    got = Federation(m, peer_grants=peer_grants).run(choices)
    assert got == want


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models(), st.lists(st.integers(0, 1000), min_size=1, max_size=64), st.booleans(), st.sampled_from([0, 1, 4, 9]))
def test_a_lead_window_changes_no_trace_and_never_hangs(m: Model, choices: list[int], peer_grants: bool,
                                                        window: int) -> None:
    """With a lead window however narrow (0: no federate ahead of a downstream one's
    earliest possible tag), the federation of cores still ends, with the same traces; no
    federate begins a tag past its window (Federation._begin checks)."""
    want = one_process(m)
    got = Federation(m, peer_grants=peer_grants, window=window).run(choices)
    assert got == want


def test_the_hang_of_a_microstep_event_in_a_zero_delay_cycle() -> None:
    # a -> b and b -> a without delay; b has an event a microstep after the start, a none:
    # a must still process (0, 1) to announce its output absent there, or b waits for ever.
    m = Model(2, ((0, 1, None), (1, 0, None)), (False, True),
              (frozenset({(0, 0), (10, 0)}), frozenset({(0, 0), (0, 1)})), stop=(20, 0))
    want = one_process(m)
    assert want[1][:2] == [((0, 0), True, (0,)), ((0, 1), True, ())]
    for order in ([0], [1], [3, 1, 4, 1, 5, 9, 2, 6]):
        assert Federation(m).run(order) == want


def test_an_idle_federate_answers_a_watch_as_it_reports_and_the_federation_ends() -> None:
    # Under a lead window, idle federates (no event before the stop tag) were asked by the
    # RTI to WATCH for a tag past the stop; each answered with no next event at all, the
    # next report said the stop tag again, and the RTI watched again: messages for ever,
    # while the federate the others waited for (3, mid-tag) was never stepped.
    m = Model(4, ((0, 1, None), (1, 2, None), (2, 3, None), (3, 0, None), (0, 1, None), (0, 1, None)),
              (False, False, True, False, False, False),
              (frozenset(), frozenset(), frozenset({(0, 1)}), frozenset()), stop=(15, 0))
    want = one_process(m)
    for window in (0, 1, 4):
        assert Federation(m, peer_grants=False, window=window).run([958, 0, 392]) == want


# -- the same on real federates ----------------------------------------------------------------
ONE_PROCESS = [(0, 0, True, False), (0, 1, False, True), (10, 0, True, False), (20, 0, True, False)]


@pytest.mark.parametrize("loop", [True, False])
def test_a_microstep_event_in_a_zero_delay_cycle_in_threads(loop: bool) -> None:
    one = MicrostepCycle(loop)
    Environment(fast=True, timeout=ms(20)).run(one)
    assert one.b.log == ONE_PROCESS
    run = run_threads(lambda: MicrostepCycle(loop), fast=True, timeout=ms(20), join_timeout_s=20)
    assert not run.errors, run.errors
    assert run.programs["b"].b.log == ONE_PROCESS  # type: ignore[attr-defined]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("fast", [True, False])
def test_a_microstep_event_in_a_zero_delay_cycle_launched(fast: bool) -> None:
    prog = f"{Path(__file__).with_name('programs.py')}:MicrostepCycle"
    args = ["--fast"] if fast else []
    proc = subprocess.run([sys.executable, "-m", "reactorfed", "launch", prog, "--timeout", "20ms", "--no-progress",
                           *args], capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"CYCLE LOG {ONE_PROCESS}" in proc.stdout, proc.stdout


def test_promises_around_a_microstep_cycle_do_not_keep_the_rti_away() -> None:
    # f0 -> f2 after 0 and f2 -> f0 without delay: their promises advance each other one
    # microstep per exchange; the RTI's grant (its report due after 50 ms) ends it.
    m = Model(3, ((0, 1, None), (2, 0, None), (0, 2, 0)), (False, False, False),
              (frozenset(), frozenset(), frozenset({(0, 0)})), stop=(15, 0))
    assert Federation(m, peer_grants=True).run([0]) == one_process(m)
