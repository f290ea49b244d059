"""A credential per member, as manifests: each federate's pod gets a Secret of its own
holding its key file, the RTI's pod its own key file and the member table, as
``reactorfed launch`` gives them locally (``--key-file``, ``--member-keys``; the runtime's
``federation/process/member_keys.py`` reads the same JSON).

Pure functions from the federation and the keys issued to manifests and pod changes: the
keys (Curve25519, Z85 text) are made by the caller (:class:`IssuedKey`), so that nothing
here draws randomness or talks to a cluster.

- :func:`member_key_secret`: ``<pod>-key``, the member's key file: its secret key and the
  RTI's public key. Mounted into that member's pod alone (:func:`with_member_key`).
- :func:`rti_key_secret`: ``<federation>-rti-key``, the RTI's secret key.
- :func:`member_table`: ``<federation>-member-keys``, a ConfigMap of every member's public
  key (no secret: a ConfigMap is enough). Mounted into the RTI's pod (:func:`with_rti_keys`)
  as a directory, not a subPath, so that kubelet's updates reach the file and the RTI,
  which reads it again when it changes, refuses a withdrawn key.
- Which keys are issued, kept and withdrawn (an elastic slot's when it is released, a fresh
  one put in its place): :mod:`.key_plan`; drawn and written by :mod:`.keyring`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .key_plan import (
    ANNOTATION_HELD,
    ANNOTATION_PUBLIC_KEY,
    ANNOTATION_RTI_PUBLIC_KEY,
    MEMBER_KEYS_FILE,
)
from .manifests import ANNOTATION_FEDERATE, Federation, labels, owner_reference, pod_name
from .schema_parts import KEY_FILE_ENV, MEMBER_KEYS_ENV, SECRET_ENV

__all__ = [
    "KEY_DIR",
    "KEY_FILE",
    "KEY_ROLE",
    "MEMBER_KEYS_DIR",
    "MEMBER_KEYS_FILE",
    "RTI_MEMBER",
    "IssuedKey",
    "key_file",
    "member_key_secret",
    "member_key_secret_name",
    "member_table",
    "member_table_name",
    "rti_key_secret",
    "rti_key_secret_name",
    "with_member_key",
    "with_rti_keys",
]

#: where a pod finds its own key file (REACTORFED_KEY_FILE); not under another mount (the RTI's
#: layout, read-only, is at /var/run/reactorfed: a mount point inside it cannot be made)
KEY_DIR = "/etc/reactorfed/key"
KEY_FILE = "key.json"
#: where the RTI's pod finds the member table (REACTORFED_MEMBER_KEYS)
MEMBER_KEYS_DIR = "/etc/reactorfed/members"
#: the RTI's name in its key file (no federate is called so)
RTI_MEMBER = "rti"
#: the role label of the key Secrets and the member table
KEY_ROLE = "key"
#: a key file is read by the pod's user only through its group (fsGroup): owner and group read
_KEY_MODE = 0o440
_Z85_LEN = 40


@dataclass(frozen=True)
class IssuedKey:
    """A member's Curve25519 keypair, Z85 text (40 characters each), as libzmq makes them."""

    public: str
    secret: str

    def __post_init__(self) -> None:
        if len(self.public) != _Z85_LEN or len(self.secret) != _Z85_LEN:
            raise ValueError("a Curve25519 key is 40 characters of Z85")

    def __repr__(self) -> str:  # never print the secret key
        return f"IssuedKey(public={self.public!r})"


def member_key_secret_name(fed: Federation, member: str) -> str:
    """``samplers[3]`` of ``pong`` -> ``pong-samplers-3-key``."""
    return f"{pod_name(fed, member)}-key"


def rti_key_secret_name(fed: Federation) -> str:
    return f"{fed.name}-rti-key"


def member_table_name(fed: Federation) -> str:
    return f"{fed.name}-member-keys"


def key_file(member: str, key: IssuedKey, rti_public: str | None = None) -> str:
    """A key file's text: ``member``'s secret key and (a federate's) the RTI's public key."""
    data = {"member": member, "secret_key": key.secret}
    if rti_public is not None:
        data["rti_public_key"] = rti_public
    return json.dumps(data, sort_keys=True)


def _meta(fed: Federation, name: str, member: str, notes: Mapping[str, str] | None = None) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": fed.namespace,
        "labels": labels(fed, KEY_ROLE),
        "annotations": {ANNOTATION_FEDERATE: member, **(notes or {})},
        "ownerReferences": [owner_reference(fed)],
    }


def member_key_secret(fed: Federation, member: str, key: IssuedKey, rti_public: str) -> dict[str, Any]:
    """Federate ``member``'s Secret: its key file, and nothing of any other member's."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": _meta(fed, member_key_secret_name(fed, member), member),
        "stringData": {KEY_FILE: key_file(member, key, rti_public)},
    }


def rti_key_secret(fed: Federation, key: IssuedKey) -> dict[str, Any]:
    """The RTI's Secret: its own key file (its public key in an annotation)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": _meta(fed, rti_key_secret_name(fed), RTI_MEMBER, {ANNOTATION_PUBLIC_KEY: key.public}),
        "stringData": {KEY_FILE: key_file(RTI_MEMBER, key)},
    }


def member_table(fed: Federation, publics: Mapping[str, str], rti_public: str | None = None,
                 held: Iterable[str] = ()) -> dict[str, Any]:
    """The member table (member -> public key), a ConfigMap for the RTI's pod. It is also the
    operator's record of what it issued (annotations: the RTI's public key the keys were
    issued with, and the members whose key a pod was made with, ``held``)."""
    if RTI_MEMBER in publics:
        raise ValueError(f"no federate may be called {RTI_MEMBER!r}: the RTI's key is not in the member table")
    if len(set(publics.values())) != len(publics):
        raise ValueError("two members hold the same public key: each member's key is its own")
    notes = {ANNOTATION_HELD: ",".join(sorted(set(held) & set(publics)))}
    if rti_public is not None:
        notes[ANNOTATION_RTI_PUBLIC_KEY] = rti_public
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": _meta(fed, member_table_name(fed), RTI_MEMBER, notes),
        "data": {MEMBER_KEYS_FILE: json.dumps({"members": dict(sorted(publics.items()))}, sort_keys=True)},
    }


def _without_shared_secret(container: dict[str, Any]) -> None:
    container["env"] = [e for e in container.get("env", []) if e.get("name") != SECRET_ENV]


def _mount(pod: dict[str, Any], volume: dict[str, Any], path: str, env: tuple[str, str]) -> None:
    spec = pod["spec"]
    container = spec["containers"][0]
    spec["volumes"] = [*spec.get("volumes", []), volume]
    container["volumeMounts"] = [*container.get("volumeMounts", []),
                                 {"name": volume["name"], "mountPath": path, "readOnly": True}]
    container["env"] = [*container["env"], {"name": env[0], "value": env[1]}]


def with_member_key(pod: dict[str, Any], fed: Federation, member: str) -> dict[str, Any]:
    """``pod`` (federate ``member``'s) with its own key Secret mounted and pointed to by
    ``REACTORFED_KEY_FILE``, and without the shared secret."""
    if pod["metadata"].get("annotations", {}).get(ANNOTATION_FEDERATE) != member:
        raise ValueError(f"pod {pod['metadata']['name']} is not federate {member!r}'s")
    out = copy.deepcopy(pod)
    _without_shared_secret(out["spec"]["containers"][0])
    volume = {"name": "member-key",
              "secret": {"secretName": member_key_secret_name(fed, member), "defaultMode": _KEY_MODE}}
    _mount(out, volume, KEY_DIR, (KEY_FILE_ENV, f"{KEY_DIR}/{KEY_FILE}"))
    return out


def with_rti_keys(pod: dict[str, Any], fed: Federation) -> dict[str, Any]:
    """The RTI's ``pod`` with its key Secret and the member table mounted
    (``REACTORFED_KEY_FILE``, ``REACTORFED_MEMBER_KEYS``), and without the shared secret."""
    out = copy.deepcopy(pod)
    _without_shared_secret(out["spec"]["containers"][0])
    _mount(out, {"name": "rti-key", "secret": {"secretName": rti_key_secret_name(fed), "defaultMode": _KEY_MODE}},
           KEY_DIR, (KEY_FILE_ENV, f"{KEY_DIR}/{KEY_FILE}"))
    _mount(out, {"name": "member-keys", "configMap": {"name": member_table_name(fed)}}, MEMBER_KEYS_DIR,
           (MEMBER_KEYS_ENV, f"{MEMBER_KEYS_DIR}/{MEMBER_KEYS_FILE}"))
    return out
