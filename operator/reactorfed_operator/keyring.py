"""The operator as the issuer of its federations' keys: one reconcile pass's keys made
(Curve25519, from the operating system's random source, by libzmq), written and withdrawn.

What to issue and withdraw is :mod:`.key_plan`'s decision, the objects :mod:`.member_keys`'
manifests; this part draws the keys and talks to the API server, in an order that a pass
cut short anywhere leaves right for the next: a member's Secret before the table that
admits its key, the table before the Secret of a member it no longer names is deleted.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import zmq

from .cluster import Cluster
from .key_plan import ANNOTATION_PUBLIC_KEY, key_step, layout_members, observe_table, released_slots
from .manifests import Federation
from .member_keys import (
    MEMBER_KEYS_FILE,
    IssuedKey,
    member_key_secret,
    member_key_secret_name,
    member_table,
    member_table_name,
    rti_key_secret,
    rti_key_secret_name,
)
from .observed import Event, ObservedPod
from .phase import Role

__all__ = ["ANNOTATION_TABLE", "issue_key", "reconcile_keys"]

#: on the RTI's pod, a digest of the member table it should read: changed with the table,
#: it makes kubelet sync the pod at once, and with it the table's volume (else up to a
#: minute later)
ANNOTATION_TABLE = "reactorfed.io/member-keys"


def issue_key() -> IssuedKey:
    pk, sk = zmq.curve_keypair()
    return IssuedKey(pk.decode(), sk.decode())


def reconcile_keys(fed: Federation, cluster: Cluster, pods: list[ObservedPod], creating: Iterable[str]) -> list[Event]:
    """Issue the keys ``fed``'s members lack, withdraw those of released slots and of members
    gone, and bring the member table up to date; ``creating``: the federates whose pods this
    pass makes (their keys are recorded as held). The events to post."""
    events: list[Event] = []
    rti_secret = cluster.read("Secret", rti_key_secret_name(fed))
    rti_public = ((rti_secret or {}).get("metadata", {}).get("annotations") or {}).get(ANNOTATION_PUBLIC_KEY)
    if not rti_public:
        key = issue_key()
        cluster.put(rti_key_secret(fed, key))
        rti_public = key.public
        events.append(Event("Normal", "KeyIssued", f"issued the RTI's key (Secret {rti_key_secret_name(fed)})"))
    old = cluster.read("ConfigMap", member_table_name(fed))
    _, existing = observe_table(old)
    making = list(creating)
    released = released_slots(fed.spec, pods)
    step = key_step(layout_members(fed.spec), existing, rti_public, released, making)
    issued: dict[str, str] = {}
    for member in step.issue:  # (each Secret before the table that admits its key)
        key = issue_key()
        cluster.put(member_key_secret(fed, member, key, rti_public))
        issued[member] = key.public
    publics = step.table(existing, issued)
    held = {m for m, k in existing.items() if k.held and m not in step.issue} | set(making)
    table = member_table(fed, publics, rti_public, held)
    text = table["data"][MEMBER_KEYS_FILE]
    if old is None or (old.get("data") or {}).get(MEMBER_KEYS_FILE) != text or (
            (old["metadata"].get("annotations") or {}) != table["metadata"]["annotations"]):
        cluster.put(table)
    if old is not None and (old.get("data") or {}).get(MEMBER_KEYS_FILE) != text:
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        for p in pods:
            if p.role == Role.RTI and not p.deleting:
                cluster.annotate_pod(p.name, {ANNOTATION_TABLE: digest})
    for member in step.withdraw:  # (after the table: their keys are refused already)
        cluster.delete_secret(member_key_secret_name(fed, member))
    rotated = [m for m in step.issue if m in existing and m in released]
    fresh = [m for m in step.issue if m not in rotated]
    if fresh:
        events.append(Event("Normal", "KeyIssued", f"issued the keys of {_names(fresh)} (a Secret <pod>-key each)"))
    if rotated:
        events.append(Event("Normal", "KeyWithdrawn", f"withdrew the keys of released slots {_names(rotated)}; "
                            "fresh ones wait for the slots to open again"))  # fmt: skip
    if step.withdraw:
        events.append(Event("Normal", "KeyWithdrawn", f"withdrew the keys of {_names(step.withdraw)}: no longer "
                            "members of the federation"))  # fmt: skip
    return events


def _names(members: list[str]) -> str:
    return ", ".join(members[:8]) + (f" and {len(members) - 8} more" if len(members) > 8 else "")
