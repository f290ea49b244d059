"""Protobuf messages between federates (ProtobufSerializer) over real sockets: a typed
link carries one message class; a value that is not a message ends the run naming the
link instead of being dropped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reactorfed import (
    Input,
    Output,
    ProtobufSerializer,
    Reactor,
    Timer,
    compile_proto,
    ms,
    reaction,
)
from reactorfed.federation import run_threads

pytestmark = pytest.mark.timeout(60)

Msgs = compile_proto(Path(__file__).resolve().with_name("FedProbe.proto"))


class _Src(Reactor):
    out = Output(object)
    t = Timer(0, ms(10))

    def __init__(self, bad: bool = False) -> None:
        self.bad = bad
        self.n = 0

    @reaction(triggers=[t], effects=[out])
    def tick(self, out: Any) -> None:
        self.n += 1
        out.set(
            {"n": self.n} if self.bad else Msgs.Reading(seq=self.n, values=[0.5 * self.n, -1.0])
        )


class _Dst(Reactor):
    inp = Input(object)

    def __init__(self) -> None:
        self.got: list[Any] = []

    @reaction(triggers=[inp])
    def got_one(self, inp: Any) -> None:
        self.got.append(inp.value)


class _Typed(Reactor):
    def __init__(self, bad: bool = False) -> None:
        self.src = _Src(bad=bad)
        self.dst = _Dst()
        self.connect(self.src.out, self.dst.inp, serializer=ProtobufSerializer(Msgs.Reading))


def test_a_typed_link_carries_its_messages() -> None:
    run = run_threads(_Typed, fast=True, timeout=ms(30), join_timeout_s=30)
    assert not run.errors, run.errors
    got = run.programs["dst"].dst.got  # type: ignore[attr-defined]
    assert [type(g) for g in got] == [Msgs.Reading] * 4
    assert [(g.seq, list(g.values)) for g in got] == [(n, [0.5 * n, -1.0]) for n in range(1, 5)]


def test_a_value_that_is_no_message_ends_the_run_naming_the_link() -> None:
    run = run_threads(lambda: _Typed(bad=True), fast=True, timeout=ms(30), join_timeout_s=30)
    assert "src" in run.errors, run.errors
    text = str(run.errors["src"])
    assert (
        "_Typed.src.out -> _Typed.dst.inp" in text
        and "protobuf connection carries protobuf messages, not a dict" in text
    )
