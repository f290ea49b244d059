"""A credential per member: issuing the keys, the files that carry them, and the RTI's
table of public keys, read again when its issuer changes it.

The issuer (``reactorfed launch``; in Kubernetes, the operator) makes a keypair for the
RTI and one per federate name (each slot of an elastic bank included) and gives:

- each federate a **key file** of its own (``--key-file``): its name, its secret key and
  the RTI's public key. Nothing else: no other member's secret, no shared secret;
- the RTI its key file (its secret key) and the **member table** (``--member-keys``):
  member -> public key. The RTI reads the table again whenever the file changes: a member
  removed from it, or given a new key, is refused from then on (its key is *withdrawn*;
  an elastic slot released, a member removed), a new one admitted.

Files are JSON, written whole (a temporary file renamed) and readable by their owner only.
The decisions are :mod:`..coordination.credentials`' (sans-IO); the keys are
:mod:`..io.curve`'s.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..coordination.credentials import KeyTable
from ..io.curve import CurveKeys, keys_of, new_keys, raw_key
from .defaults import KEY_FILE_ENV, MEMBER_KEYS_ENV

__all__ = ["KEY_FILE_ENV", "MEMBER_KEYS_ENV", "MemberCredentials", "RtiCredentials", "issue", "issue_key_files",
           "read_key_file", "write_key_file", "write_member_table"]

log = logging.getLogger("reactorfed.security")

#: the RTI's name in key files (no federate is called so: names are reactor paths)
RTI = "rti"


@dataclass(frozen=True)
class MemberCredentials:
    """A federate's credential: its own keypair and the RTI's public key (raw)."""

    keys: CurveKeys
    rti_key: bytes

    def __repr__(self) -> str:  # never print the secret key
        return f"MemberCredentials(public={self.keys.public.decode()!r})"


@dataclass
class RtiCredentials:
    """The RTI's credential: its own keypair, and the member table, given (``table``) or
    read from ``path`` and read again whenever the file changes (a table that cannot be
    read keeps the last one, saying why)."""

    keys: CurveKeys
    table: KeyTable | None = None
    path: Path | None = None
    _stamp: tuple[int, int] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        if (self.table is None) == (self.path is None):
            raise ValueError("the RTI's credentials need a member table or its file (one of the two)")
        if self.path is not None:
            self.current()
            if self.table is None:
                raise ValueError(f"--member-keys {self.path}: no member table could be read")

    def current(self) -> KeyTable:
        """The member table now (the file read again if it changed since the last look)."""
        with self._lock:
            if self.path is not None:
                try:
                    st = self.path.stat()
                    stamp = (st.st_mtime_ns, st.st_size)
                    if stamp != self._stamp:
                        newer = read_member_table(self.path)
                        if self.table is not None:
                            for name in self.table.withdrawn(newer):
                                log.warning("the key of member %s was withdrawn (%s): it is refused from now on",
                                            name, "given a new one" if newer.key(name) else "removed from the table")
                        self.table, self._stamp = newer, stamp
                except (OSError, ValueError) as e:
                    log.error("the member table %s could not be read (%s): the last one stays", self.path, e)
            assert self.table is not None
            return self.table

    def warn_missing(self, names: Iterable[str]) -> None:
        """Say which of the federates ``names`` have no key (they cannot join)."""
        missing = self.current().missing(names)
        if missing:
            log.warning("no key was issued to %s: %s cannot join", ", ".join(missing),
                        "it" if len(missing) == 1 else "they")

    def admit(self, key: bytes) -> str | None:
        """The ZAP handler's question: the member ``key`` was issued to (None: refused)."""
        return self.current().member(key)


def issue(names: Iterable[str]) -> tuple[CurveKeys, dict[str, CurveKeys]]:
    """Fresh keypairs: the RTI's and one per member of ``names``."""
    return new_keys(), {n: new_keys() for n in names}


def _write_private(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(data, f)
    os.replace(tmp, path)


def write_key_file(path: Path, name: str, keys: CurveKeys, rti: CurveKeys | None = None) -> None:
    """``name``'s key file: its secret key, and (a federate's) the RTI's public key."""
    data = {"member": name, "secret_key": keys.secret.decode()}
    if rti is not None:
        data["rti_public_key"] = rti.public.decode()
    _write_private(path, data)


def write_member_table(path: Path, members: Mapping[str, CurveKeys]) -> None:
    """The RTI's member table: each member's public key (Z85)."""
    _write_private(path, {"members": {n: k.public.decode() for n, k in members.items()}})


def issue_key_files(folder: Path, federates: Sequence[str]) -> tuple[list[str], dict[str, list[str]]]:
    """A keypair for the RTI and one per federate (an elastic slot's later processes keep
    its key), each in a file of its own (mode 0600) in ``folder/keys`` (a new folder, 0700),
    the RTI's member table beside. Returns the flags that point each process at its files
    (paths, not keys: nothing secret on a command line): the RTI's, and each federate's."""
    rti, members = issue(dict.fromkeys(federates))
    keys = folder / "keys"
    keys.mkdir(mode=0o700)
    write_key_file(keys / "rti.key", RTI, rti)
    write_member_table(keys / "members.json", members)
    flags: dict[str, list[str]] = {}
    for i, (name, k) in enumerate(members.items()):
        path = keys / f"federate-{i}.key"
        write_key_file(path, name, k, rti)
        flags[name] = ["--key-file", str(path)]
    return ["--key-file", str(keys / "rti.key"), "--member-keys", str(keys / "members.json")], flags


def read_member_table(path: Path) -> KeyTable:
    data = json.loads(path.read_text())
    members = data.get("members") if isinstance(data, dict) else None
    if not isinstance(members, dict):
        raise ValueError(f"{path}: expected {{\"members\": {{name: public key}}}}")
    return KeyTable({str(n): raw_key(str(k)) for n, k in members.items()})


def read_key_file(path: Path) -> tuple[str, CurveKeys, bytes | None]:
    """A key file's member name, keypair and (a federate's) RTI public key (raw)."""
    try:
        data = json.loads(path.read_text())
        name, sk = data["member"], data["secret_key"]
        rti = data.get("rti_public_key")
        return str(name), keys_of(str(sk)), None if rti is None else raw_key(str(rti))
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ValueError(f"key file {path}: {e}") from None
