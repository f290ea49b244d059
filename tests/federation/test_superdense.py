"""Superdense time loses nothing across federates (issue 16): a burst sent at (t, 0),
(t, 1), (t, 2) over a link without delay, after 0 or after d > 0 arrives whole, at the
tags one process gives it, over the real transports (ZeroMQ over TCP and Unix sockets,
RTI grants and peer promises), and through ``reactorfed launch`` in real processes.

Where the pile-up happens: at the sender (Outputs.send_at_tag_end, in the federate's
process/outputs.py), which knows its own earlier sends on the link and puts the exact tag
on the wire; a receiver that gets two messages for one link at one tag refuses them
loudly (Inbound._accept)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reactorfed import Environment, Reactor, ms
from reactorfed.federation import run_threads

from .burst_programs import BurstChain, Bursts, expected
from .harness import Federation

pytestmark = pytest.mark.timeout(120)

AFTERS = {"no delay": None, "after 0": 0, "after 3 ms": ms(3)}


def _single(factory: Callable[[], Reactor], timeout: int) -> list[tuple[int, int, int]]:
    main = factory()
    Environment(fast=True, timeout=timeout).run(main)
    return list(main.sink.trace)  # type: ignore[attr-defined]


def _federated(factory: Callable[[], Reactor], timeout: int, **kwargs: Any) -> list[tuple[int, int, int]]:
    run = run_threads(factory, fast=True, timeout=timeout, join_timeout_s=60, **kwargs)
    run.raise_errors()
    return list(run.programs["sink"].sink.trace)  # type: ignore[attr-defined]


@pytest.mark.parametrize(("peer_grants", "unix"), [(True, True), (False, True), (True, False)],
                         ids=["peer-grants", "rti-grants-only", "tcp"])
@pytest.mark.parametrize("name", list(AFTERS))
def test_a_burst_crosses_federates_whole(name: str, peer_grants: bool, unix: bool) -> None:
    after = AFTERS[name]

    def factory() -> Reactor:
        return Bursts(after=after)

    want = expected(after)
    assert len(want) == 9
    assert _single(factory, ms(40)) == want
    assert _federated(factory, ms(40), peer_grants=peer_grants, unix_sockets=unix) == want


@pytest.mark.parametrize("after", [0, ms(3)], ids=["after 0", "after 3 ms"])
def test_a_burst_piles_up_again_on_a_second_link(after: int) -> None:
    def factory() -> Reactor:
        return BurstChain(after=after)

    want = expected(after, hops=2)
    assert len(want) == 9
    assert _single(factory, ms(40)) == want
    assert _federated(factory, ms(40)) == want


def test_a_burst_cut_by_the_stop_tag_keeps_what_is_not_past_it() -> None:
    """The last burst would arrive at (23 ms, 0..2); the last tag is (23 ms, 0): only its
    first value arrives (events past the last tag are dropped: LF's rule), as in one process."""

    def factory() -> Reactor:
        return Bursts(after=ms(3))

    want = expected(ms(3), timeout=ms(23))
    assert len(want) == 7
    assert _single(factory, ms(23)) == want
    assert _federated(factory, ms(23)) == want


def test_the_sender_puts_the_piled_up_tags_on_the_wire_and_counts_every_message() -> None:
    fed = Federation(lambda: Bursts(after=ms(3)))
    fed.start_all(timeout=ms(40))
    fed.wait(60)
    assert not fed.errors, fed.errors
    src, sink = fed.coords["src"], fed.coords["sink"]
    assert src.messages_sent == 9
    assert sink.messages_received == 9
    out = src._outputs._outs[0]
    assert out.last == (src.start + ms(23), 2)  # the last burst's third value
    assert fed.programs["sink"].sink.trace == expected(ms(3))  # type: ignore[attr-defined]


PROGRAM = f"{Path(__file__).with_name('burst_programs.py')}:Bursts"


@pytest.mark.parametrize("after", ["3ms", "0"], ids=["after 3 ms", "after 0"])
def test_a_burst_crosses_launched_processes_whole(after: str) -> None:
    """The same through ``reactorfed launch``: one process per federate and the RTI."""
    proc = subprocess.run([sys.executable, "-m", "reactorfed", "launch", PROGRAM, "-p", f"after={after}", "--timeout",
                           "40ms", "--fast", "--no-progress"], capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = [(int(t), int(m), int(v)) for t, m, v in re.findall(r"^\[sink\] GOT (\d+) (\d+) (\d+)$", proc.stdout, re.MULTILINE)]
    assert got == expected(ms(3) if after == "3ms" else 0), proc.stdout
