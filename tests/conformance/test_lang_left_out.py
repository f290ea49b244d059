"""LF programs of the top level (F to Z), serialization/ and failing/ that are not ported,
each with the reason: a feature reactorfed does not have, or a matter of LF's C runtime
or code generator rather than of reactor semantics. None is left out today: the protobuf
programs are ported (test_lang_protobufs.py, test_fed_serializer.py)."""

from __future__ import annotations

LEFT_OUT: dict[str, str] = {}
