"""A stop agreed while a federate is idle (in real time) keeps what the federates' shutdown
reactions send at the stop tag: formerly two gaps of federated stop agreement.

The program (``stop_programs.py``): ``stopper`` requests a stop at 3 ms; ``src`` is idle
until its timer at 1 s and sends 99 from its shutdown reaction; ``sink`` records what
arrives. In one process the program stops at (3 ms, 1) and ``sink`` gets the 99 there.

(1) A federate waiting for physical time waits on its sockets too
(``FederateCoordinator.wait_until``): ``src`` answers the stop request at once, so the
federation stops at (3 ms, 1), not after ``src``'s next tag at 1 s. (2) Promises and RTI
grants made before the stop was known do not cover the stop tag: ``src`` promised
``sink`` nothing before 1 s (then FOREVER) before it knew of the stop; ``sink`` waits at
(3 ms, 1) for a promise ``src`` made knowing of it (after its STOP_MARK), or for a grant
the RTI computed after the agreement, and so for the 99.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from reactorfed import ms

from .harness import Federation, reference
from .stop_programs import Main

pytestmark = pytest.mark.timeout(120)

PROGRAM = f"{Path(__file__).with_name('stop_programs.py')}:Main"
MODES = {
    "peer-grants": {},
    "rti-grants-only": {"peer_grants": False},
    "peer-grants-tcp": {"unix_sockets": False},
    "promises-alone": {},  # the RTI's grants withheld
}


@pytest.mark.parametrize("after", [None, 0], ids=["no delay", "after 0"])
@pytest.mark.parametrize("mode", list(MODES))
def test_a_stop_agreed_while_a_federate_is_idle_keeps_its_shutdown_output(
        mode: str, after: int | None, monkeypatch: pytest.MonkeyPatch) -> None:
    want = reference(lambda: Main(after)).sink.got  # type: ignore[attr-defined]
    assert want == ([(ms(3), 1, 99)] if after is None else [])  # after 0: (3 ms, 2), past the stop
    if mode == "promises-alone":
        from reactorfed.federation.process import rti_grants

        monkeypatch.setattr(rti_grants.RtiGrants, "send_grant", lambda self, g: None)
    fed = Federation(lambda: Main(after))
    fed.start_all(fast=False, **MODES[mode])
    fed.wait(30)
    assert not fed.errors, fed.errors
    assert fed.programs["sink"].sink.got == want  # type: ignore[attr-defined]
    # every federate stopped at the tag one process stops at: src answered at once
    stops = {n: (r.last_tag.time, r.last_tag.microstep) for n, r in fed.results.items()}
    assert stops == dict.fromkeys(("stopper", "src", "sink"), (ms(3), 1)), stops


@pytest.mark.parametrize("flags", [[], ["--no-peer-grants"], ["--no-unix-sockets"]],
                         ids=["peer-grants", "rti-grants-only", "tcp"])
def test_the_same_in_launched_processes(flags: list[str]) -> None:
    """Through ``reactorfed launch`` (real time): one process per federate and the RTI."""
    proc = subprocess.run([sys.executable, "-m", "reactorfed", "launch", PROGRAM, "--no-progress", *flags],
                          capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = re.findall(r"^\[sink\] GOT (\d+) (\d+) (\d+)$", proc.stdout, re.MULTILINE)
    assert got == [(str(ms(3)), "1", "99")], proc.stdout
    stops = re.findall(r"^\[(\w+)\] reactorfed: .* stopped at (.*?) \(", proc.stdout, re.MULTILINE)
    assert sorted(stops) == [(n, "3 ms +1 microsteps") for n in ("sink", "src", "stopper")], proc.stdout


def test_a_physical_action_wakes_a_federate_waiting_for_physical_time() -> None:
    """The wait on the sockets also watches the scheduler's wakeup: a physical action
    scheduled from another thread while the federate waits for a timer at 5 s is processed
    when it comes, and its reaction's stop request ends the federation there."""
    import threading
    import time
    from typing import Any

    from reactorfed import STARTUP, Input, Output, PhysicalAction, Reactor, Timer, reaction, sec

    class Ext(Reactor):
        out = Output(int)
        act: PhysicalAction[int] = PhysicalAction(int)
        late = Timer(sec(5))

        @reaction(triggers=[STARTUP])
        def start(self) -> None:
            def feed() -> None:
                time.sleep(0.2)
                self.act.schedule(value=7)

            threading.Thread(target=feed, daemon=True).start()

        @reaction(triggers=[act], effects=[out])
        def got(self, act: Any, out: Any) -> None:
            out.set(act.get())
            self.request_stop()

        @reaction(triggers=[late])
        def never(self) -> None:
            raise AssertionError("the timer at 5 s fired: the stop came too late")

    class Rec(Reactor):
        inp = Input(int)

        def __init__(self) -> None:
            self.got: list[int] = []

        @reaction(triggers=[inp])
        def on(self, inp: Any) -> None:
            self.got.append(inp.get())

    class Two(Reactor):
        def __init__(self) -> None:
            self.ext = Ext()
            self.rec = Rec()
            self.connect(self.ext.out, self.rec.inp)

    fed = Federation(Two)
    fed.start_all(fast=False)
    fed.wait(30)
    assert not fed.errors, fed.errors
    assert fed.programs["rec"].rec.got == [7]  # type: ignore[attr-defined]
    stops = [r.last_tag.time for r in fed.results.values()]
    assert len(set(stops)) == 1 and ms(200) <= stops[0] < sec(2), stops
