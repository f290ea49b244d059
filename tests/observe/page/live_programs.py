"""The program the live page's test runs federated: a learner fed by an elastic bank of
samplers (1 to 3 slots, 2 at the start), reporting its progress at each value (done of
:data:`TOTAL`, env steps, a return that grows). Real time: a value from each sampler
every 20 ms.

Loaded by file path by ``reactorfed rti``/``reactorfed federate``, so this module imports
nothing from the test package.
"""

from __future__ import annotations

from typing import Any

from reactorfed import Input, Output, Reactor, Timer, ms, reaction
from reactorfed.model.elastic import Elastic, elastic_bank

#: the learner's ``total``
TOTAL = 100_000


class Sampler(Reactor):
    out = Output(int)
    tick = Timer(0, ms(20))

    @reaction(triggers=[tick], effects=[out])
    def step(self, out: Any) -> None:
        out.set(1)


class Learner(Reactor):
    ins = Input(int, width=3)

    def __init__(self) -> None:
        self.done = 0
        self.steps = 0

    @reaction(triggers=[ins])
    def learn(self, ins: Any) -> None:
        self.done += 1
        self.steps += len(ins.present())
        self.report_progress(done=self.done, total=TOTAL, env_steps=self.steps, mean_return=self.done ** 0.5)


class Main(Reactor):
    def __init__(self) -> None:
        self.learner = Learner()
        self.samplers = elastic_bank(Sampler, Elastic(min=1, max=3, initial=2))
        self.connect(self.samplers.out, self.learner.ins)
