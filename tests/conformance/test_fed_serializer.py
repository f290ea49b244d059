"""Ports of LF's programs whose connections between federates name a serializer.

``serialization/CustomSerializer.lf``: connections between federates that
carry their values through the program's own serializer (LF's ``serializer
"pickle_serializer"``: a package with a ``Serializer`` class whose ``serialize`` and
``deserialize`` pickle). Here the serializer is an object given to ``connect``
(``serializer=...``); the package's class is written again below.

LF runs it under decentralized coordination; its checks (the values come in order, each
100 ms after the last) are logical and hold under centralized coordination, which is
what reactorfed's federations have.

``serialization/ProtoBuiltInSerialization.lf``: LF's ``serializer "proto"``, protobuf
messages sent as their bytes and parsed back into their own type, is
``serializer=ProtobufSerializer()`` here; the message module comes from LF's
``ProtoHelloWorld.proto`` (next to this file) through :func:`reactorfed.compile_proto`,
LF's ``protobufs:`` target property.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest

from reactorfed import (
    STARTUP,
    Input,
    Output,
    ProtobufSerializer,
    Reactor,
    Timer,
    compile_proto,
    ms,
    reaction,
    sec,
)
from tests.conformance.harness import lf_test, run_federated, run_local

pytestmark = pytest.mark.timeout(60)


class PickleSerializer:
    """LF's test package ``pickle_serializer.Serializer``, counting its calls."""

    def __init__(self) -> None:
        self.serialized = 0
        self.deserialized = 0

    def serialize(self, obj: Any) -> bytes:
        self.serialized += 1
        return pickle.dumps(obj)

    def deserialize(self, message: bytes) -> Any:
        self.deserialized += 1
        return pickle.loads(message)


class _Client(Reactor):
    server_message = Input(int)
    client_message = Output(int)

    def __init__(self) -> None:
        self.count = 0
        self.last = -1

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        self.count = 0

    @reaction(triggers=[server_message], effects=[client_message])
    def got(self, server_message: Any, client_message: Any) -> None:
        val = server_message.get()
        assert val == self.count, f"client: out of order {val} {self.count}"
        self.count += 2
        val += 1
        self.last = val
        if val == 23:
            self.request_stop()
        if val < 23:
            client_message.set(val)


class _Server(Reactor):
    server_message = Output(int)
    client_message = Input(int)

    def __init__(self) -> None:
        self.count = 1
        self.done = False

    @reaction(triggers=[STARTUP], effects=[server_message])
    def start(self, server_message: Any) -> None:
        self.count = 1
        server_message.set(0)

    @reaction(triggers=[client_message], effects=[server_message])
    def got(self, client_message: Any, server_message: Any) -> None:
        val = client_message.get()
        assert val == self.count, f"server: out of order {val} {self.count}"
        self.count += 2
        val += 1
        if val == 22:
            self.done = True  # "server done"
            server_message.set(val)
            self.request_stop()
        if val < 22:
            server_message.set(val)


class _CustomSerializer(Reactor):
    def __init__(self) -> None:
        self.client = _Client()
        self.server = _Server()
        self.ser = PickleSerializer()
        self.connect(
            self.server.server_message,
            self.client.server_message,
            after=ms(100),
            serializer=self.ser,
        )
        self.connect(
            self.client.client_message,
            self.server.client_message,
            after=ms(100),
            serializer=self.ser,
        )


@lf_test("serialization/CustomSerializer.lf", federated=True)
def test_custom_serializer() -> None:
    """Server and client count up by turns, 100 ms apart, until the server reaches 22 and
    stops (the client's last value is 21). In one process values are not serialized (as
    in LF); federated, each of the 22 messages goes through the connection's serializer."""
    main = _CustomSerializer()
    run_local(main)
    assert main.server.done and main.client.last == 21 and main.ser.serialized == 0
    progs = run_federated(_CustomSerializer)
    server, client = progs["server"], progs["client"]
    assert server.server.done and client.client.last == 21  # type: ignore[attr-defined]
    # the server sends 0, 2, ..., 22 (12 values; 22 is for a tag past the stop: the client
    # may read it or have ended, and drops it), the client 1, 3, ..., 21: each side
    # serializes what it sends and deserializes what it receives
    assert server.ser.serialized == 12 and client.ser.deserialized in (11, 12)  # type: ignore[attr-defined]
    assert client.ser.serialized == 11 and server.ser.deserialized == 11  # type: ignore[attr-defined]


# -- ProtoBuiltInSerialization.lf -----------------------------------------------------

ProtoHelloWorld = compile_proto(Path(__file__).resolve().with_name("ProtoHelloWorld.proto"))


class _Sender(Reactor):
    out = Output(object)
    t = Timer(0, sec(1))

    def __init__(self) -> None:
        self.count = 0
        self.sent: list[Any] = []

    @reaction(triggers=[t], effects=[out])
    def tick(self, out: Any) -> None:
        self.count += 1
        protoHelloWorld = ProtoHelloWorld.ProtoHelloWorld()
        protoHelloWorld.name = "Hello World"
        protoHelloWorld.number = self.count
        self.sent.append(protoHelloWorld)
        out.set(protoHelloWorld)


class _Receiver(Reactor):
    inp = Input(object)

    def __init__(self) -> None:
        self.count = 0
        self.got: list[Any] = []
        self.printed: list[str] = []

    @reaction(triggers=[inp])
    def show(self, inp: Any) -> None:
        self.got.append(inp.value)
        self.printed.append(f'Received: name="{inp.value.name}", number={inp.value.number}.')
        assert inp.value.number == self.count + 1, f"Expected number {self.count + 1}."
        self.count += 1


class _ProtoBuiltInSerialization(Reactor):
    def __init__(self) -> None:
        self.sender = _Sender()
        self.receiver = _Receiver()
        self.connect(
            self.sender.out, self.receiver.inp, after=ms(100), serializer=ProtobufSerializer()
        )


@lf_test("serialization/ProtoBuiltInSerialization.lf", federated=True)
def test_proto_built_in_serialization() -> None:
    """The sender's messages at 0 s and 1 s arrive 100 ms later, in order (the one of 2 s
    would arrive past the 2 s timeout). In one process the receiver gets the sender's own
    message objects; federated, new messages of the same class, parsed from their bytes."""
    expected = [f'Received: name="Hello World", number={n}.' for n in (1, 2)]
    main = _ProtoBuiltInSerialization()
    run_local(main, timeout=sec(2))
    assert main.receiver.printed == expected
    assert all(g is s for g, s in zip(main.receiver.got, main.sender.sent, strict=False))
    progs = run_federated(_ProtoBuiltInSerialization, timeout=sec(2))
    sender, receiver = progs["sender"].sender, progs["receiver"].receiver  # type: ignore[attr-defined]
    assert receiver.printed == expected
    for g, s in zip(receiver.got, sender.sent, strict=False):
        assert type(g) is ProtoHelloWorld.ProtoHelloWorld and g == s and g is not s
