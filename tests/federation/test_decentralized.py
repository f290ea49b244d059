"""Decentralized coordination, federated over real sockets: with maxwait forever (LF's
default) no RTI grant is sent, none is needed, and every program of the determinism suite
gives exactly its one-process output; a zero-delay cycle without a finite maxwait is
refused at the start, never left to hang."""

from __future__ import annotations

import pytest

from reactorfed import Environment, ms
from reactorfed.federation import run_threads

from .test_determinism import PROGRAMS, ZERO_DELAY_CYCLES, _federated_traces, _traces

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize("name", [n for n in PROGRAMS if n not in ZERO_DELAY_CYCLES])
def test_decentralized_run_equals_single_process_without_any_grant(name: str) -> None:
    factory = PROGRAMS[name]
    single = factory()
    Environment(fast=True, timeout=ms(40)).run(single)
    run = run_threads(factory, fast=True, timeout=ms(40), join_timeout_s=60, coordination="decentralized")
    run.raise_errors()
    assert _federated_traces(run) == _traces(single)
    assert run.rti is not None and run.rti.grants == 0


def test_a_zero_delay_cycle_without_maxwait_is_refused() -> None:
    run = run_threads(PROGRAMS["zero-delay cycle"], fast=True, timeout=ms(40), join_timeout_s=20,
                      coordination="decentralized")
    assert "rti" in run.errors and "no maxwait" in str(run.errors["rti"])
