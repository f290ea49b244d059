"""What a reconcile pass starts from: the federation's pods as observed, the parts of its
previous status that carry memory between passes, and the events a pass posts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .phase import Phase, PodPhase, Role

__all__ = ["Event", "ObservedPod", "PriorStatus"]


@dataclass(frozen=True)
class ObservedPod:
    """What the operator sees of one of its pods."""

    name: str
    role: Role | str  # a pod of ours has a Role; anything else is not one of ours
    incarnation: int
    width: int  # the sampler width its incarnation started with (the same on all its pods)
    phase: PodPhase = PodPhase.PENDING
    ready: bool = False
    deleting: bool = False
    node: str | None = None
    ip: str | None = None
    message: str | None = None  # e.g. why the pod is unschedulable or failed
    slot: int | None = None  # a sampler's bank index (federate ``samplers[slot]``)
    max_width: int = 0  # its incarnation's elastic maximum; 0 for a fixed bank
    shape: str = ""  # its incarnation's group shape (spec.federateGroups only; FederationSpec.shape)
    gated: bool = False  # it still has the gang's scheduling gate (placement.GATE): not scheduled, nothing runs


@dataclass(frozen=True)
class PriorStatus:
    """The parts of the previous status the planner needs."""

    phase: Phase | None = None
    reason: str | None = None
    message: str = ""
    incarnation: int = 0
    restarts: int = 0
    observed_generation: int | None = None
    conditions: tuple[Mapping[str, Any], ...] = ()
    #: sampler pods replaced live (elastic banks), over the federation's life
    replaced: int = 0
    #: the sampler slots the operator keeps filled in ``incarnation`` (elastic banks, once
    #: the incarnation ran): a slot below it without a pod lost its pod, one above is new
    slots: int | None = None
    #: the membership changes shown so far (each with its incarnation)
    membership: tuple[Mapping[str, Any], ...] = ()
    #: when the scheduler last refused a pod of a released incarnation (status.placement), and why
    refused_at: str | None = None
    refused_message: str = ""
    refusals: int = 0  # refusals in a row (each doubles the wait before the next release)

    @classmethod
    def from_status(cls, status: Mapping[str, Any] | None) -> PriorStatus:
        status = status or {}
        samplers = status.get("samplers") or {}
        placement = status.get("placement") or {}
        slots = samplers.get("slots")
        return cls(
            phase=Phase.parse(status.get("phase")),
            reason=status.get("reason"),
            message=str(status.get("message") or ""),
            incarnation=int(status.get("incarnation") or 0),
            restarts=int(status.get("restarts") or 0),
            observed_generation=status.get("observedGeneration"),
            conditions=tuple(status.get("conditions") or ()),
            replaced=int(samplers.get("replaced") or 0),
            slots=slots if isinstance(slots, int) and not isinstance(slots, bool) else None,
            membership=tuple(m for m in status.get("membership") or () if isinstance(m, Mapping)),
            refused_at=placement.get("refusedAt") or None,
            refused_message=str(placement.get("message") or ""),
            refusals=int(placement.get("refusals") or 0),
        )


@dataclass(frozen=True)
class Event:
    type: str  # Normal | Warning
    reason: str
    message: str
