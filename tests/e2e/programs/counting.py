"""A tiny federated program for the e2e local run: a bank of samplers feeding a learner.

Federates: ``samplers[0..num_samplers-1]`` and ``learner`` (the main reactor's children).
"""

from __future__ import annotations

from typing import Any

from reactorfed import Input, Output, Reactor, Timer, ms, reaction
from reactorfed import bank as make_bank


class Sampler(Reactor):
    out = Output(int)
    tick = Timer(0, ms(10))

    def __init__(self) -> None:
        self.k = 0

    @reaction(triggers=[tick], effects=[out])
    def emit(self, out: Any) -> None:
        out.set(1000 * (self.bank_index or 0) + self.k)
        self.k += 1


class Trainer(Reactor):
    """Sums what arrives; reports its progress as the RL learners do (one iteration a
    tag, of the 400 tags of a 4 s run; a figure named as theirs)."""

    inp = Input(int, width=lambda self: self.n)

    def __init__(self, n: int) -> None:
        self.n = n
        self.total = 0
        self.iterations = 0

    @reaction(triggers=[inp])
    def learn(self, inp: Any) -> None:
        self.total += sum(v for v in inp.values() if v is not None)
        self.iterations += 1
        self.report_progress(done=self.iterations, total=400, mean_return=self.total / self.iterations)


class Main(Reactor):
    def __init__(self, num_samplers: int = 2) -> None:
        self.samplers = make_bank(Sampler, num_samplers)
        self.learner = Trainer(num_samplers)
        self.connect(self.samplers.out, self.learner.inp)
