"""ProtobufSerializer on its own: a message's bytes parsed back into its own type, typed
(the class given) or untyped (the type's name travels with the bytes)."""

from __future__ import annotations

from types import ModuleType

import pytest

from reactorfed import ProtobufSerializer, Serializer, ValidationError, compile_proto


@pytest.fixture(scope="module")
def msgs(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    d = tmp_path_factory.mktemp("proto")
    (d / "SerProbe.proto").write_text(
        'syntax = "proto3";\npackage probe;\n'
        "message Point { int32 x = 1; int32 y = 2; }\n"
        "message Label { string text = 1; repeated string tags = 2; }\n"
    )
    return compile_proto(d / "SerProbe.proto", cache_dir=d / "cache")


def test_untyped_round_trip_keeps_the_type(msgs: ModuleType) -> None:
    ser = ProtobufSerializer()
    assert isinstance(ser, Serializer)
    p, lab = msgs.Point(x=3, y=-4), msgs.Label(text="hi", tags=["a", "b"])
    for value in (p, lab):
        back = ser.deserialize(ser.serialize(value))
        assert type(back) is type(value) and back == value
    assert ser.serialize(p).endswith(p.SerializeToString()) and b"probe.Point" in ser.serialize(p)


def test_typed_sends_the_message_bytes_alone(msgs: ModuleType) -> None:
    ser = ProtobufSerializer(msgs.Point)
    p = msgs.Point(x=1, y=2)
    assert ser.serialize(p) == p.SerializeToString()
    assert ser.deserialize(ser.serialize(p)) == p
    with pytest.raises(TypeError, match=r"carries probe\.Point messages, not probe\.Label"):
        ser.serialize(msgs.Label(text="x"))


def test_refusals(msgs: ModuleType) -> None:
    with pytest.raises(TypeError, match="not a dict"):
        ProtobufSerializer().serialize({"x": 1})
    with pytest.raises(
        ValidationError, match="ProtobufSerializer: <class 'int'> is not a protobuf message class"
    ):
        ProtobufSerializer(int)
    with pytest.raises(LookupError, match=r"no protobuf message type 'probe\.Nowhere' is loaded"):
        ProtobufSerializer().deserialize(b"\x00\x0dprobe.Nowhere")
    with pytest.raises(ValueError, match="too few"):
        ProtobufSerializer().deserialize(b"\x00")
