"""Ports of the reactors of LF's C-target test library (``test/C/src/lib/``) that the C
ports import; their checks raise in reactions as the originals exit with an error."""

from __future__ import annotations

from typing import Any

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


class Count(Reactor):
    """``lib/Count.lf``: 1, 2, 3, ... at ``offset``, then every ``period``."""

    out = Output(int)
    t = Timer(offset="offset", period="period")

    def __init__(self, offset: int = 0, period: int = sec(1)) -> None:
        self.offset = offset
        self.period = period
        self.count = 1

    @reaction(triggers=[t], effects=[out])
    def emit(self, out: Any) -> None:
        out.set(self.count)
        self.count += 1


class TestCount(Reactor):
    """``lib/TestCount.lf``: the inputs count from ``start`` by ``stride``, ``num_inputs``
    of them."""

    __test__ = False  # not a pytest class

    inp = Input(int)

    def __init__(self, start: int = 1, stride: int = 1, num_inputs: int = 1) -> None:
        self.start = start
        self.stride = stride
        self.num_inputs = num_inputs
        self.count = start
        self.inputs_received = 0

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        assert inp.get() == self.count, f"Received {inp.get()}. Expected {self.count}."
        self.count += self.stride
        self.inputs_received += 1

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.inputs_received == self.num_inputs, (
            f"Expected to receive {self.num_inputs} inputs, but got {self.inputs_received}.")


class TestCountMultiport(Reactor):
    """``lib/TestCountMultiport.lf``: every channel present, the values counting on across
    the channels."""

    __test__ = False

    inp = Input(int, width="width")

    def __init__(self, start: int = 1, stride: int = 1, num_inputs: int = 1, width: int = 2) -> None:
        self.start = start
        self.stride = stride
        self.num_inputs = num_inputs
        self.width = width
        self.count = start
        self.inputs_received = 0

    @reaction(triggers=[inp])
    def check(self, inp: Any) -> None:
        for i, p in enumerate(inp):
            assert p.is_present, f"No input on channel {i}."
            assert p.get() == self.count, f"Received {p.get()} on channel {i}. Expected {self.count}."
            self.count += self.stride
        self.inputs_received += 1

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        assert self.inputs_received == self.num_inputs, (
            f"Expected to receive {self.num_inputs} inputs, but only got {self.inputs_received}.")


class LoopedActionSender(Reactor):
    """``lib/LoopedActionSender.lf``'s Sender: ``take_a_break_after`` messages in
    consecutive microsteps, then a break of ``break_interval``."""

    out = Output(int)
    act = LogicalAction()

    def __init__(self, take_a_break_after: int = 10, break_interval: int = ms(400)) -> None:
        self.take_a_break_after = take_a_break_after
        self.break_interval = break_interval
        self.sent_messages = 0

    @reaction(triggers=[STARTUP, act], effects=[act, out])
    def send(self, act: Any, out: Any) -> None:
        out.set(self.sent_messages)
        self.sent_messages += 1
        if self.sent_messages < self.take_a_break_after:
            act.schedule(delay=0)
        else:
            self.sent_messages = 0  # take a break
            act.schedule(delay=self.break_interval)


class ImportedAgain(Reactor):
    """``lib/ImportedAgain.lf``."""

    x = Input(int)

    def __init__(self) -> None:
        self.received: list[int] = []

    @reaction(triggers=[x])
    def got(self, x: Any) -> None:
        assert x.get() == 42, f"ERROR: Expected input to be 42. Got: {x.get()}."
        self.received.append(x.get())


class Imported(Reactor):
    """``lib/Imported.lf``: forwards its input to an ImportedAgain it contains."""

    x = Input(int)

    def __init__(self) -> None:
        self.a = ImportedAgain()

    @reaction(triggers=[x], effects=["a.x"])
    def forward(self, x: Any, a: Any) -> None:
        a.x.set(x.get())


class PassThrough(Reactor):
    """``lib/PassThrough.lf``."""

    inp = Input(int)
    out = Output(int)

    @reaction(triggers=[inp], effects=[out])
    def through(self, inp: Any, out: Any) -> None:
        out.set(inp.get())
