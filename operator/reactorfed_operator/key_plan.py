"""Which members' keys to issue, keep or withdraw in a reconcile pass: pure decisions from
the spec, the key Secrets that exist and the pods as observed (the manifests are
:mod:`.member_keys`', the randomness and the API calls :mod:`.keyring`'s).

The member table (a ConfigMap the RTI reads) is the record: its members' public keys, and
in annotations the RTI public key they were issued with and the members whose key a pod was
made with; so a pass after an operator restart finds every key it issued and re-issues none
that a pod may hold. (A Secret written but not yet in the table was mounted by no pod: pods
are made after the table. It is simply written again.) The operator reads no Secret's data
and lists no Secrets: it gets, creates, patches and deletes its own by name.

- Every member of the RTI's layout has a key: each federate, and each slot of an elastic
  bank up to its maximum width, so that a scale-up finds its slots' keys in the RTI's table
  already (a ConfigMap reaches the RTI's volume with a lag).
- A released slot's key is withdrawn, and a fresh one issued in its place, once a pod has
  held it (:data:`HELD`): a former incarnation's key never rejoins; the fresh key sits in a
  Secret that no pod mounts until the slot is opened again.
- A key issued with another RTI key (the RTI's Secret was lost and made again) is issued
  anew; a Secret of a member no longer in the layout is deleted.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .observed import ObservedPod
from .phase import PodPhase
from .spec import FederationSpec

__all__ = [
    "ANNOTATION_HELD",
    "ANNOTATION_PUBLIC_KEY",
    "ANNOTATION_RTI_PUBLIC_KEY",
    "MEMBER_KEYS_FILE",
    "KeyStep",
    "ObservedKey",
    "key_step",
    "layout_members",
    "observe_table",
    "released_slots",
]

#: the RTI's public key (Z85): on its Secret, and on the member table (the one the keys were
#: issued with)
ANNOTATION_PUBLIC_KEY = "reactorfed.io/public-key"
ANNOTATION_RTI_PUBLIC_KEY = "reactorfed.io/rti-public-key"
#: on the member table: the members whose key a pod was made with (a released slot's held
#: key is withdrawn)
ANNOTATION_HELD = "reactorfed.io/held"
#: the member table's file (the ConfigMap's key; the RTI's REACTORFED_MEMBER_KEYS names it)
MEMBER_KEYS_FILE = "members.json"


@dataclass(frozen=True)
class ObservedKey:
    """What a pass sees of one key Secret."""

    member: str
    public: str
    rti_public: str
    held: bool = False


def observe_table(config_map: Mapping[str, Any] | None) -> tuple[str | None, dict[str, ObservedKey]]:
    """The member table's ConfigMap (as a dict; None: none yet) -> the RTI public key its
    keys were issued with, and the keys by member (nothing, when it cannot be read: then
    every key is issued anew)."""
    if config_map is None:
        return None, {}
    notes = (config_map.get("metadata") or {}).get("annotations") or {}
    rti = notes.get(ANNOTATION_RTI_PUBLIC_KEY)
    held = set(str(notes.get(ANNOTATION_HELD) or "").split(","))
    try:
        members = json.loads((config_map.get("data") or {})[MEMBER_KEYS_FILE])["members"]
        keys = {str(m): ObservedKey(str(m), str(k), str(rti or ""), str(m) in held) for m, k in members.items()}
    except (KeyError, TypeError, ValueError, AttributeError):
        return None, {}
    return (str(rti) if rti else None), keys


def layout_members(spec: FederationSpec) -> list[str]:
    """The federates of the RTI's layout: every group's, an elastic bank at its maximum width."""
    scale = spec.max_replicas if spec.elastic else spec.replicas
    out: list[str] = []
    for g in spec.groups:
        out += g.federates(g.max_replicas if g.elastic else spec.width_of(g, scale))
    return out


def released_slots(spec: FederationSpec, pods: Iterable[ObservedPod]) -> set[str]:
    """The elastic slots released: at or above their bank's width in the spec, and no pod of
    theirs that runs on (one being deleted leaves at an agreed tag: its key is done)."""
    banks = {g.bank: (g.role, spec.width_of(g)) for g in spec.groups if g.elastic and g.bank is not None}
    taken = {(p.role, p.slot) for p in pods
             if p.slot is not None and not p.deleting and p.phase not in (PodPhase.SUCCEEDED, PodPhase.FAILED)}
    out: set[str] = set()
    for bank, (role, width) in banks.items():
        most = next(g.max_replicas for g in spec.groups if g.bank == bank)
        out |= {f"{bank}[{i}]" for i in range(width, most) if (role, i) not in taken}
    return out


@dataclass
class KeyStep:
    """One pass's keys: members to issue a fresh key to (a Secret made, or replaced), Secrets
    to delete, Secrets to mark held (a pod is about to mount them)."""

    issue: list[str] = field(default_factory=list)
    withdraw: list[str] = field(default_factory=list)
    hold: list[str] = field(default_factory=list)

    def table(self, kept: Mapping[str, ObservedKey], issued: Mapping[str, str]) -> dict[str, str]:
        """The member table once done: the kept keys (not re-issued, not withdrawn) and the
        ``issued`` public keys."""
        gone = set(self.issue) | set(self.withdraw)
        return {**{m: k.public for m, k in kept.items() if m not in gone}, **issued}


def key_step(members: Sequence[str], existing: Mapping[str, ObservedKey], rti_public: str,
             released: Iterable[str] = (), creating: Iterable[str] = ()) -> KeyStep:
    """The keys of one pass. ``members``: the layout's; ``existing``: the key Secrets by
    member; ``rti_public``: the RTI's public key; ``released``: slots released
    (:func:`released_slots`); ``creating``: the members whose pods this pass makes."""
    assert len(set(members)) == len(members), "a member is named once"
    gone = set(released)
    step = KeyStep()
    for m in members:
        k = existing.get(m)
        if k is None or k.rti_public != rti_public or (m in gone and k.held):
            step.issue.append(m)
    step.withdraw = sorted(m for m in existing if m not in set(members))
    wanted = set(members)
    step.hold = [m for m in dict.fromkeys(creating)
                 if m in wanted and m not in step.issue and not existing[m].held]  # fmt: skip
    return step

