"""Port of LF's ``federated/failing/TopLevelArtifacts.lf``: reactions, ports, an action, a
timer and state in the federated (top-level) reactor, which LF replicates in every
federate (reactorfed.assembly.toplevel). LF lists the program as failing (its code
generator emits none of the top-level ports into a federate, and the reactions name
them); its checks are ported as they read: each federate's copy of the top-level reactor
runs its startup, timer and action reactions once each (3 successes by shutdown), its
input is never present, and what its reaction writes to its output reads back as 1."""

from __future__ import annotations

from typing import Any

import pytest

from reactorfed import (
    SHUTDOWN,
    STARTUP,
    Input,
    LogicalAction,
    Output,
    Reactor,
    Timer,
    ms,
    reaction,
    sec,
)
from tests.conformance.harness import lf_test, run_federated, run_local
from tests.conformance.test_fed_count import TestCount, count

pytestmark = pytest.mark.timeout(60)


class _TopLevelArtifacts(Reactor):
    inp = Input(int)
    out = Output(int)
    t = Timer(0, sec(1))
    act = LogicalAction(min_delay=0)

    def __init__(self) -> None:
        self.successes = 0
        self.shut = False
        self.c = count()
        self.tc = TestCount()
        self.connect(self.c.out, self.tc.inp)

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        self.successes += 1

    @reaction(triggers=[t], effects=[act])
    def tick(self, act: Any) -> None:
        self.successes += 1
        act.schedule()

    @reaction(triggers=[act], sources=[inp], effects=[out])
    def react(self, act: Any, inp: Any, out: Any) -> None:
        self.successes += 1
        assert not inp.is_present, "Input is present in the top-level reactor!"
        out.set(1)
        assert out.get() == 1, f"Ouput has unexpected value {out.get()}!"

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.successes == 3, "Failed to properly execute top-level reactions"
        self.shut = True


def _check(main: Any) -> None:
    assert main.shut and main.successes == 3
    assert main.tc.shutdown_checked and main.tc.inputs_received == 1


@lf_test("federated/failing/TopLevelArtifacts.lf", federated=True)
def test_top_level_artifacts() -> None:
    main = _TopLevelArtifacts()
    run_local(main, timeout=ms(1))
    _check(main)
    progs = run_federated(_TopLevelArtifacts, timeout=ms(1))
    assert set(progs) == {"c", "tc"}
    for prog in progs.values():  # each federate ran its own copy of the top-level reactor
        assert prog.shut and prog.successes == 3  # type: ignore[attr-defined]
    _check(progs["tc"])
