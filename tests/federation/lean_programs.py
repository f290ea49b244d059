"""A program that imports torch and says where it was imported: for the tests that the
RTI under ``reactorfed launch`` (and ``reactorfed rti --layout``) never imports the
program nor torch. Loaded by file path, so it imports nothing from the test package.

With ``$LEAN_PROGRAM_IMPORTS`` set, each import of this module appends a line to that
file: the importing process's command line."""

from __future__ import annotations

import os
import sys
from typing import Any

import torch

from reactorfed import Input, Output, Reactor, Timer, ms, reaction

if os.environ.get("LEAN_PROGRAM_IMPORTS"):
    with open(os.environ["LEAN_PROGRAM_IMPORTS"], "a") as f:
        f.write(" ".join(sys.argv) + "\n")


class Producer(Reactor):
    out = Output(object)
    tick = Timer(0, ms(10))

    def __init__(self) -> None:
        self.n = 0

    @reaction(triggers=[tick], effects=[out])
    def make(self, out: Any) -> None:
        self.n += 1
        out.set(torch.full((4,), float(self.n)))


class Consumer(Reactor):
    inp = Input(object)

    def __init__(self) -> None:
        self.total = 0.0

    @reaction(triggers=[inp])
    def take(self, inp: Any) -> None:
        self.total += float(inp.get().sum())
        self.report_result({"total": self.total})


class Main(Reactor):
    def __init__(self) -> None:
        self.producer = Producer()
        self.consumer = Consumer()
        self.connect(self.producer.out, self.consumer.inp)
