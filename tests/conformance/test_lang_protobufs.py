"""Ports of LF's programs that use protocol buffers within one process:
``serialization/PersonProtocolBuffers.lf`` and ``serialization/ProtoNoPacking.lf``.

LF's target property ``protobufs: Person.proto`` has its compiler run protoc and import
the generated module under the file's name; here the program compiles the .proto when it
loads, with :func:`reactorfed.compile_proto`, and names the module the same way. The
.proto files are LF's, checked in next to this file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reactorfed import STARTUP, Input, Output, Reactor, compile_proto, reaction
from tests.conformance.harness import lf_test, run

HERE = Path(__file__).resolve().parent
Person = compile_proto(HERE / "Person.proto")
ProtoHelloWorld = compile_proto(HERE / "ProtoHelloWorld.proto")


# -- PersonProtocolBuffers.lf ---------------------------------------------------------


class _PersonProtocolBuffers(Reactor):
    def __init__(self) -> None:
        self.printed: list[str] = []
        self.unpacked: Any = None

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        person = Person.Person()
        person.name = "Lingua Franca"
        person.id = 1
        person.email = "eal@berkeley.edu"
        # Pack the message into buffer.
        serialized_msg = person.SerializeToString()
        # Now unpack the message from buffer.
        unpacked = Person.Person()
        unpacked.ParseFromString(serialized_msg)
        self.unpacked = unpacked
        self.printed.append(f"Name:  {unpacked.name}")


@lf_test("serialization/PersonProtocolBuffers.lf")
def test_person_protocol_buffers() -> None:
    """A message packed and unpacked within a reaction comes back whole."""
    main = _PersonProtocolBuffers()
    run(main)
    assert main.printed == ["Name:  Lingua Franca"]
    assert isinstance(main.unpacked, Person.Person)
    assert (main.unpacked.name, main.unpacked.id, main.unpacked.email) == (
        "Lingua Franca",
        1,
        "eal@berkeley.edu",
    )


# -- ProtoNoPacking.lf ----------------------------------------------------------------


class _SourceProto(Reactor):
    out = Output(object)

    def __init__(self) -> None:
        self.sent: Any = None

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        message = ProtoHelloWorld.ProtoHelloWorld()
        message.name = "Hello World"
        message.number = 42
        self.sent = message
        out.set(message)


class _SinkProto(Reactor):
    inp = Input(object)

    def __init__(self) -> None:
        self.printed: list[str] = []
        self.got: Any = None

    @reaction(triggers=[inp])
    def show(self, inp: Any) -> None:
        self.got = inp.value
        self.printed.append(f"Received: name='{inp.value.name:s}', number={inp.value.number:d}.")


class _ProtoNoPacking(Reactor):
    def __init__(self) -> None:
        self.s = _SourceProto()
        self.d = _SinkProto()
        self.connect(self.s.out, self.d.inp)


@lf_test("serialization/ProtoNoPacking.lf")
def test_proto_no_packing() -> None:
    """Within one process the message itself is passed on, never packed and unpacked."""
    main = _ProtoNoPacking()
    run(main)
    assert main.d.printed == ["Received: name='Hello World', number=42."]
    assert main.d.got is main.s.sent
