"""Known gaps of federated stop agreement, kept as expected failures until fixed (found
while moving the federate's logic into FederateCore; see the reasons).

The program: ``stopper`` requests a stop at 3 ms; ``src`` is idle until its timer at 1 s
and sends 99 from its shutdown reaction; ``sink`` records what arrives. In one process
the program stops at (3 ms, 1) and ``sink`` gets the 99 there.
"""

from __future__ import annotations

from typing import Any

import pytest

from reactorfed import SHUTDOWN, Input, Output, Reactor, Timer, ms, reaction, sec

from .harness import Federation, reference

pytestmark = pytest.mark.timeout(60)


class _Stopper(Reactor):
    t = Timer(0, ms(1))

    @reaction(triggers=[t])
    def tick(self) -> None:
        if self.elapsed() >= ms(3):
            self.request_stop()


class _Src(Reactor):
    out = Output(int)
    t = Timer(sec(1))

    @reaction(triggers=[t], effects=[out])
    def late(self, out: Any) -> None:
        out.set(1)

    @reaction(triggers=[SHUTDOWN], effects=[out])
    def bye(self, out: Any) -> None:
        out.set(99)


class _Sink(Reactor):
    inp = Input(int)

    def __init__(self) -> None:
        self.got: list[tuple[int, int, int]] = []

    @reaction(triggers=[inp])
    def on(self, inp: Any) -> None:
        tag = self.elapsed_tag()
        self.got.append((tag.time, tag.microstep, inp.get()))


class _Main(Reactor):
    def __init__(self) -> None:
        self.stopper = _Stopper()
        self.src = _Src()
        self.sink = _Sink()
        self.connect(self.src.out, self.sink.inp)


@pytest.mark.xfail(strict=False, reason=(
    "federation gap (1): a federate waiting for physical time (real-time mode) waits in the "
    "scheduler (Clock.wait_until), not on its sockets, so it answers a stop request only after "
    "its next tag: src, idle until 1 s, answers (1 s, 1) and the federation stops there, not "
    "at (3 ms, 1). (2): promises and grants made before a stop is agreed may cover the stop "
    "tag: src completes 1 s with nothing queued and promises FOREVER before it reads the stop "
    "request, so sink processes the stop tag (1 s, 1) without waiting for src's shutdown "
    "output, and the 99 is lost (about half the runs). Fixing (2) needs a marker on the data "
    "link at the agreement (promises before it no longer count for the stop tag) and the "
    "RTI's grants recomputed from the agreement on"))
def test_a_stop_agreed_while_a_federate_is_idle_keeps_its_shutdown_output() -> None:
    want = reference(_Main).sink.got  # type: ignore[attr-defined]
    assert want == [(ms(3), 1, 99)]
    fed = Federation(_Main)
    fed.start_all(fast=False)
    fed.wait(30)
    assert not fed.errors, fed.errors
    assert fed.programs["sink"].sink.got == want  # type: ignore[attr-defined]
