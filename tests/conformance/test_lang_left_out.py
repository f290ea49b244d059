"""LF programs of the top level (F to Z), serialization/ and failing/ that are not ported,
each with the reason: a feature reactorfed does not have, or a matter of LF's C runtime
or code generator rather than of reactor semantics."""

from __future__ import annotations

_PROTOBUFS = (
    "the target property `protobufs: {}` has lfc run protoc on a .proto file and import "
    "the generated Python module; reactorfed has no protobuf support (its federation sends "
    "msgpack, numpy/torch buffers, or pickle when trusted), and the program's subject is that "
    "generated code"
)

LEFT_OUT: dict[str, str] = {
    "serialization/CustomSerializer.lf": (
        "a per-connection custom serializer (`after 100 ms serializer \"pickle_serializer\"`, a "
        "Python package pip-installed by the program's preamble) under decentralized "
        "coordination: reactorfed's federation chooses the codec by the value's type (msgpack, "
        "numpy/torch buffers, pickle with trusted_pickle) and has no serializer hook per "
        "connection, nor decentralized coordination"
    ),
    "serialization/PersonProtocolBuffers.lf": _PROTOBUFS.format("Person.proto"),
    "serialization/ProtoBuiltInSerialization.lf": _PROTOBUFS.format("ProtoHelloWorld.proto")
    + "; it is also a federated program whose connection names `serializer \"proto\"`",
    "serialization/ProtoNoPacking.lf": _PROTOBUFS.format("ProtoHelloWorld.proto"),
}
