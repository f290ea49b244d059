"""The program of the live-rescaling tests (issue 19): a learner fed by an elastic bank of
samplers (``samplers``, min 1, max 3, 2 at first), weights back to every slot over a
delay. Its federates run in threads (test_live_membership.py) or, run as a module, one in
a process of its own (test_elastic_failures.py):

    python -m tests.federation.elastic_programs NAME FEDERATION_ID SECRET_HEX RTI TIMEOUT_NS
"""

from __future__ import annotations

import sys
from typing import Any

from reactorfed import Environment, Input, Output, Reactor, Timer, VirtualClock, ms, reaction
from reactorfed.model.elastic import Elastic, MemberChange, elastic_bank, members

PERIOD = ms(10)

Step = tuple[int, int, list[tuple[int, int]], tuple[int, ...]]


class Sampler(Reactor):
    out = Output(int)
    inp = Input(int)
    tick = Timer(0, PERIOD)

    def __init__(self) -> None:
        self.n = 0
        self.weights: list[int] = []

    @reaction(triggers=[tick], effects=[out])
    def step(self, out: Any) -> None:
        self.n += 1
        out.set(1000 * (self.bank_index or 0) + self.n)

    @reaction(triggers=[inp])
    def learn(self, inp: Any) -> None:
        self.weights.append(inp.get())


class Trainer(Reactor):
    ins = Input(int, width=3)
    out = Output(int)

    def __init__(self) -> None:
        #: per tag: (time after the start, microstep, the values by bank index, the members)
        self.trace: list[Step] = []

    @reaction(triggers=[ins], effects=[out])
    def learn(self, ins: Any, out: Any) -> None:
        t = self.elapsed_tag()
        self.trace.append((t.time, t.microstep, ins.present(), members(self, "samplers")))
        out.set(len(self.trace))


class Main(Reactor):
    #: the samples' delay to the learner (None: at the same tag)
    SAMPLE_DELAY: int | None = None

    def __init__(self) -> None:
        self.learner = Trainer()
        self.samplers = elastic_bank(Sampler, Elastic(min=1, max=3, initial=2))
        self.connect(self.samplers.out, self.learner.ins, after=self.SAMPLE_DELAY)
        # weights back to every slot (to the absent one too: its link carries nothing)
        self.connect(self.learner.out, self.samplers.inp, broadcast=True, after=ms(3))


class DelayedMain(Main):
    """Samples reach the learner 5 ms after they are taken: the learner may run a joiner's
    first tags before the joiner is there."""

    SAMPLE_DELAY = ms(5)


def replayed(changes: list[MemberChange], timeout: int, program: type[Main] = Main) -> Main:
    """The same program in one process, with ``changes`` (a federated run's record) as its
    membership schedule."""
    replay = program()
    env = Environment(fast=True, clock=VirtualClock(), timeout=timeout)
    env.assemble(replay).set_membership(changes)
    env.run()
    return replay


def _run(argv: list[str]) -> None:
    """One federate of :class:`Main` in this process (its own, as a pod's)."""
    from reactorfed.federation import FederateConfig, run_federate

    name, fid, secret, rti, timeout = argv
    cfg = FederateConfig(fid, bytes.fromhex(secret), rti)
    run_federate(Main(), name, cfg, fast=False, timeout=int(timeout))


if __name__ == "__main__":
    _run(sys.argv[1:])
