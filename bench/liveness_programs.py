"""Programs for ``bench/liveness.py`` and the liveness tests: many federates, healthy but
busy or starved, and a way to find each one's process.

* :class:`Busy`: a driver and N - 1 workers in rounds; in each round every worker keeps
  its core busy in numpy for ``busy_ms`` of its own CPU time (BLAS holds the interpreter
  lock for long stretches, and with more federates than cores each one is starved for
  seconds), then answers. A false alarm ends the run; a healthy one completes its rounds.
* :class:`Steady`: N - 1 sources ticking every ``period_ms`` of real time into one sink,
  for ``seconds``: the federation a test kills or stops a member of. Every member prints
  ``PID <pid>`` at startup, so the caller knows which process is which (forked federates
  all carry the fork server's command line).
"""

from __future__ import annotations

import os
import time

import numpy as np

from reactorfed import (
    STARTUP,
    Input,
    MultiReader,
    Output,
    PortReader,
    PortWriter,
    Reactor,
    Timer,
    bank,
    ms,
    reaction,
)


def burn(cpu_ms: int, seed: int) -> float:
    """Keep this process's core busy in numpy for ``cpu_ms`` of its own CPU time."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((160, 160))
    acc = 0.0
    until = time.process_time_ns() + cpu_ms * 1_000_000
    while time.process_time_ns() < until:
        a = np.tanh(a @ a.T / 160.0)
        acc += float(a[0, 0])
    return acc


class _Driver(Reactor):
    go = Output(int)
    answers = Input(float, width="n")

    def __init__(self, n: int, rounds: int) -> None:
        self.n = n
        self.rounds = rounds
        self.done = 0

    @reaction(triggers=[STARTUP], effects=[go])
    def start(self, go: PortWriter[int]) -> None:
        print(f"PID {os.getpid()}", flush=True)
        go.set(0)

    @reaction(triggers=[answers], effects=[go])
    def gather(self, answers: MultiReader[float], go: PortWriter[int]) -> None:
        assert len(answers.present()) == self.n, "a round without every worker's answer"
        self.done += 1
        print(f"round {self.done} of {self.rounds} done", flush=True)
        if self.done < self.rounds:
            go.set(self.done)
        else:
            self.report_result({"rounds": self.done, "workers": self.n})
            self.request_stop()


class _Worker(Reactor):
    go = Input(int)
    answer = Output(float)

    def __init__(self, busy_ms: int = 1000) -> None:
        self.busy_ms = busy_ms

    @reaction(triggers=[STARTUP])
    def hello(self) -> None:
        print(f"PID {os.getpid()}", flush=True)

    @reaction(triggers=[go], effects=[answer])
    def work(self, go: PortReader[int], answer: PortWriter[float]) -> None:
        r = go.get()
        assert r is not None
        answer.set(burn(self.busy_ms, seed=(self.bank_index or 0) * 1000 + r))


class Busy(Reactor):
    """A driver and ``federates`` - 1 workers, ``rounds`` rounds of ``busy_ms`` each."""

    def __init__(self, federates: int = 8, rounds: int = 2, busy_ms: int = 1000) -> None:
        n = federates - 1
        self.driver = _Driver(n, rounds)
        self.workers = bank(_Worker, n, busy_ms=busy_ms)
        self.connect(self.driver.go, self.workers.go, broadcast=True)
        self.connect(self.workers.answer, self.driver.answers, after=0)


class _Source(Reactor):
    out = Output(int)
    tick = Timer(offset=0, period="period")

    def __init__(self, period_ms: int = 100) -> None:
        self.period = ms(period_ms)
        self.count = 0

    @reaction(triggers=[STARTUP])
    def hello(self) -> None:
        print(f"PID {os.getpid()}", flush=True)

    @reaction(triggers=[tick], effects=[out])
    def send(self, out: PortWriter[int]) -> None:
        self.count += 1
        out.set(self.count)


class _Sink(Reactor):
    inp = Input(int, width="n")

    def __init__(self, n: int) -> None:
        self.n = n
        self.seen = 0

    @reaction(triggers=[STARTUP])
    def hello(self) -> None:
        print(f"PID {os.getpid()}", flush=True)

    @reaction(triggers=[inp])
    def take(self, inp: MultiReader[int]) -> None:
        self.seen += 1
        if self.seen % 10 == 0:
            print(f"tick {self.seen}", flush=True)


class Steady(Reactor):
    """``federates`` - 1 sources ticking every ``period_ms`` into one sink."""

    def __init__(self, federates: int = 8, period_ms: int = 100) -> None:
        n = federates - 1
        self.sources = bank(_Source, n, period_ms=period_ms)
        self.sink = _Sink(n)
        self.connect(self.sources.out, self.sink.inp)


__all__ = ["Busy", "Steady", "burn"]
