"""A serializer for one connection between federates (LF's ``-> ... serializer "name"``).

By default the federation chooses how a value crosses the network from its type (numpy
and torch buffers raw, plain data as msgpack, anything else pickled only when the
federation trusts pickle: :mod:`reactorfed.federation.wire.codec`). A connection may name
its own serializer instead: an object with ``serialize(value) -> bytes`` and
``deserialize(data: bytes) -> value`` (the interface of LF's Python serializer packages,
e.g. its test suite's ``pickle_serializer.Serializer``). Every value on that connection
then goes through it, whatever its type; it is the program's own code on both ends, so it
needs no opt-in (a pickling serializer is the program's choice to trust its peers). Within
one process values are not serialized, as in LF: the serializer applies only where the
connection joins two federates.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from ..errors import ValidationError

__all__ = ["Serializer", "check_serializer"]


@runtime_checkable
class Serializer(Protocol):
    """What ``connect(..., serializer=...)`` takes."""

    def serialize(self, value: Any) -> bytes: ...

    def deserialize(self, data: bytes) -> Any: ...


def check_serializer(serializer: Any, where: str) -> None:
    """Refuse, naming the connection (``where``), a serializer without the two methods."""
    if serializer is None:
        return
    missing = [m for m in ("serialize", "deserialize") if not callable(getattr(serializer, m, None))]
    if missing:
        raise ValidationError(
            f"{where}: the serializer {serializer!r} has no {' or '.join(f'{m}()' for m in missing)}; a "
            "connection's serializer needs serialize(value) -> bytes and deserialize(bytes) -> value")
