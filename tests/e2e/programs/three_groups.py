"""The e2e test of federate groups' program: a bank of learners, a bank of actors, an env.

Federates: ``learners[0..num_learners-1]``, ``actors[0..num_actors-1]`` and ``env`` (what the
operator finds with ``reactorfed federates`` before it makes a pod). Never run: kwok runs no
containers; it is only asked what its federates are.
"""

from __future__ import annotations

from typing import Any

from reactorfed import Input, Output, Reactor, Timer, ms, reaction
from reactorfed import bank as make_bank


class Actor(Reactor):
    out = Output(int)
    tick = Timer(0, ms(10))

    @reaction(triggers=[tick], effects=[out])
    def act(self, out: Any) -> None:
        out.set(self.bank_index or 0)


class Env(Reactor):
    inp = Input(int, width=lambda self: self.n)
    out = Output(int)

    def __init__(self, n: int) -> None:
        self.n = n

    @reaction(triggers=[inp], effects=[out])
    def step(self, inp: Any, out: Any) -> None:
        out.set(sum(v for v in inp.values() if v is not None))


class Learner(Reactor):
    inp = Input(int)

    @reaction(triggers=[inp])
    def learn(self, inp: Any) -> None:
        pass


class Main(Reactor):
    def __init__(self, num_learners: int = 2, num_actors: int = 3) -> None:
        self.learners = make_bank(Learner, num_learners)
        self.actors = make_bank(Actor, num_actors)
        self.env = Env(num_actors)
        self.connect(self.actors.out, self.env.inp)
        for learner in self.learners:
            self.connect(self.env.out, learner.inp)
