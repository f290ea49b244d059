"""Who holds which key: the sans-IO side of a credential per member.

Each member of a federation (the RTI, each federate, each slot of an elastic bank) holds a
Curve25519 keypair of its own, issued by whoever starts the federation (``reactorfed
launch``, :func:`reactorfed.federation.process.launch.launch`; in Kubernetes, the
operator). The issuer gives the RTI the :class:`KeyTable`: member -> public key. From it:

- the RTI admits a connection's key only as the member it was issued to
  (:meth:`KeyTable.member`, then :func:`claim_refusal` against the name its HELLO
  claims); a key not in the table (a stranger's, another federation's, or *withdrawn*:
  the issuer removed or replaced it) is refused at the handshake;
- each federate learns its peers' public keys from the RTI (its CHALLENGE), and its data port
  admits only the keys of the federates that send to it (:func:`data_admission`), each
  as the member it was issued to; a federate connecting to a peer names the peer's key,
  so only that peer can answer.

So a member's key opens its own links and no other member's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .layout import Layout

__all__ = ["KEY_BYTES", "KeyTable", "claim_refusal", "data_admission", "keys_by_index"]

#: a Curve25519 public key's length (raw bytes)
KEY_BYTES = 32


class KeyTable:
    """The public keys issued to a federation's members: member name -> key (32 raw
    bytes). A key issued to two members is refused: each member's key is its own."""

    def __init__(self, keys: Mapping[str, bytes]) -> None:
        seen: dict[bytes, str] = {}
        for name, key in keys.items():
            if not isinstance(name, str) or not name:
                raise ValueError(f"member keys: a member's name must be a non-empty string, got {name!r}")
            if not isinstance(key, bytes) or len(key) != KEY_BYTES:
                raise ValueError(f"member keys: the key of {name!r} is not {KEY_BYTES} bytes")
            if key in seen:
                raise ValueError(f"member keys: {seen[key]!r} and {name!r} hold the same key (each member's is its own)")
            seen[key] = name
        self._keys = dict(keys)
        self._members = seen

    def member(self, key: bytes) -> str | None:
        """The member ``key`` was issued to; None: no member (a stranger, or withdrawn)."""
        return self._members.get(key)

    def key(self, name: str) -> bytes | None:
        """The key issued to ``name`` (None: none, or withdrawn)."""
        return self._keys.get(name)

    @property
    def names(self) -> list[str]:
        return list(self._keys)

    def withdrawn(self, newer: KeyTable) -> list[str]:
        """The members whose key ``newer`` no longer holds (removed, or replaced by a new
        one): their old keys are refused from then on."""
        return [n for n, k in self._keys.items() if newer.key(n) != k]

    def missing(self, names: Iterable[str]) -> list[str]:
        """Of ``names``, those without a key (they could not join)."""
        return [n for n in names if n not in self._keys]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KeyTable) and self._keys == other._keys

    def __hash__(self) -> int:
        return hash(frozenset(self._keys.items()))

    def __repr__(self) -> str:
        return f"KeyTable({len(self._keys)} members)"


def claim_refusal(authenticated: str | None, claimed: str) -> str | None:
    """Why a connection whose key was issued to ``authenticated`` may not be federate
    ``claimed`` (None: it may). ``authenticated`` None: the connection's key is no member's
    now (withdrawn since the connection opened: the ZAP handler admitted it then)."""
    if authenticated == claimed:
        return None
    if authenticated is None:
        return (f"federate {claimed!r} refused: its connection's key is no member's now (withdrawn since the "
                f"connection opened)")
    return (f"federate {claimed!r} refused: the connection's key was issued to {authenticated!r}, "
            f"not to {claimed!r} (a member's key joins only as that member)")


def keys_by_index(layout: Layout, table: KeyTable) -> dict[int, bytes]:
    """The members' public keys by federate index (what the RTI's CHALLENGE carries), for the
    federates of ``layout`` that have one."""
    return {i: k for i, n in enumerate(layout.names) if (k := table.key(n)) is not None}


def data_admission(layout: Layout, f: int, keys: Mapping[int, bytes]) -> dict[bytes, str]:
    """Which keys federate ``f``'s data port admits, and as whom (the sender's index, as
    text: the connection's User-Id): the keys of the federates that send ``f`` data, and no
    other member's."""
    return {keys[u]: str(u) for u in sorted(layout.data_upstream(f)) if u in keys}
