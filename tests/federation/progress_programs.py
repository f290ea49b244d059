"""A program whose learner reports its progress (``Reactor.report_progress``) and whose
source reports nothing: for the test that the report reaches the RTI's ``/status``.

Loaded by file path by ``reactorfed rti``/``reactorfed federate`` in the test, so this
module imports nothing from the test package.
"""

from __future__ import annotations

from typing import Any

from reactorfed import Input, Output, Reactor, Timer, ms, reaction

#: the learner's ``total``
TOTAL = 1000


class Source(Reactor):
    """A value every 20 ms (real time unless run fast)."""

    out = Output(int)
    tick = Timer(offset=0, period=ms(20))

    def __init__(self) -> None:
        self.i = 0

    @reaction(triggers=[tick], effects=[out])
    def emit(self, out: Any) -> None:
        self.i += 1
        out.set(self.i)


class Learner(Reactor):
    """Counts what arrives and reports it: ``done`` of :data:`TOTAL`, env steps (ten per
    value) and a return (half the count)."""

    inp = Input(int)

    def __init__(self) -> None:
        self.done = 0

    @reaction(triggers=[inp])
    def learn(self, inp: Any) -> None:
        self.done += 1
        self.report_progress(done=self.done, total=TOTAL, env_steps=10 * self.done, mean_return=self.done / 2)


class Main(Reactor):
    def __init__(self) -> None:
        self.src = Source()
        self.learner = Learner()
        self.connect(self.src.out, self.learner.inp)
