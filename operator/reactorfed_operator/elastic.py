"""Live rescaling of an elastic sampler bank: pure decisions for an incarnation
that runs, given its pods as observed.

An elastic program (``spec.samplers.maxReplicas`` set) declares its bank of samplers with
``Elastic(max=<maxParam>, initial=<param>)``: one federate per *slot*, of which the first
``initial`` are present at the start and the others join and leave while the federation
runs (docs/federation.md, "Live rescaling"). Every pod of one incarnation gets the same
two parameters (its pods' annotations keep them), whenever it is made: a pod made later
for slot ``i`` runs federate ``samplers[i]``, whose process asks the RTI to join; a
sampler pod deleted gets SIGTERM, and its process leaves at a tag the federation agrees
on and exits 0. So the operator rescales by making and deleting sampler pods, and the RTI
and the learner run on, with the learner's state in memory.

Before an incarnation has run (every pod up once), it is treated as a fixed one: a change
of width restarts it, since a federation that has not started cannot yet take changes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .manifests import Federation
from .observed import Event, ObservedPod, PriorStatus
from .phase import Phase, PodPhase
from .pods import sampler_pod
from .progress import Progress

__all__ = ["MEMBERSHIP_KEPT", "ElasticStep", "elastic_step", "established", "membership"]

#: reasons only a live pass gives (an incarnation with one of them has run)
SCALING, REPLACING, STARTING = "ScalingLive", "ReplacingSampler", "SamplersStarting"
LIVE_REASONS = (SCALING, REPLACING, STARTING)
#: membership changes kept in the status (the latest; the RTI's /status has them all)
MEMBERSHIP_KEPT = 20


@dataclass
class ElasticStep:
    """What one live pass does: pods to make and delete, and what the status says."""

    phase: Phase
    reason: str
    message: str
    replaced: int  # sampler pods replaced so far (over the federation's life)
    slots: int  # the slots kept filled from now on
    create: list[dict[str, Any]] = field(default_factory=list)
    delete: list[str] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)


def established(prior: PriorStatus, incarnation: int) -> bool:
    """Whether ``incarnation`` has run with every pod up: from then on its width changes live."""
    if prior.incarnation != incarnation:
        return False
    return prior.slots is not None or prior.phase == Phase.RUNNING or prior.reason in LIVE_REASONS


def _finished(p: ObservedPod) -> bool:
    return p.phase in (PodPhase.SUCCEEDED, PodPhase.FAILED)


def _up(p: ObservedPod) -> bool:
    return (p.phase == PodPhase.RUNNING and p.ready) or p.phase == PodPhase.SUCCEEDED


def _members(fed: Federation, slots: Sequence[int]) -> str:
    return ", ".join(f"{fed.spec.samplers.name}[{i}]" for i in slots)


def elastic_step(fed: Federation, incarnation: int, current: Sequence[ObservedPod], prior: PriorStatus) -> ElasticStep:
    """One pass over an elastic incarnation that has run and whose RTI and learner are alive.

    * Slots at or above ``spec.samplers.replicas`` lose their pods, highest first.
    * A sampler pod that failed is deleted; once it is gone, its slot gets a new pod.
    * Every slot below ``replicas`` without a pod gets one: a new slot if it is at or above
      the slots kept filled so far, else a replacement (counted in ``replaced``).
    * A sampler pod that exited 0 stays: it left the federation, or the federation ends.
    """
    s = fed.spec
    width = current[0].width
    most = current[0].max_width
    desired = s.replicas
    scaled = s.scale_group
    samplers = [p for p in current if scaled is not None and p.role == scaled.role and p.slot is not None]
    live = {p.slot: p for p in samplers if not p.deleting and p.slot is not None}
    leaving = {p.slot for p in samplers if p.deleting and p.slot is not None}
    kept = prior.slots if prior.slots is not None and prior.incarnation == incarnation else width
    running = sum(1 for p in live.values() if not _finished(p))

    removed = sorted((i for i in live if i >= desired), reverse=True)
    failed = sorted(i for i, p in live.items() if i < desired and p.phase == PodPhase.FAILED)
    missing = [i for i in range(desired) if i not in live and i not in leaving]
    refill = [i for i in missing if i < kept]
    added = [i for i in missing if i >= kept]
    # Slots kept filled: all of [0, replicas) once each has a pod; until then no more than
    # before, so that a slot still being vacated is not counted as replaced when refilled.
    whole = not failed and not any(i < desired for i in leaving)
    step = ElasticStep(Phase.RUNNING, "", "", prior.replaced + len(refill), desired if whole else min(kept, desired))
    step.delete = [live[i].name for i in removed + failed]
    step.create = [sampler_pod(fed, i, incarnation, width, most) for i in missing]

    for i in failed:
        p = live[i]
        why = f" ({p.message})" if p.message else ""
        step.events.append(Event("Warning", "SamplerFailed",
                                 f"{p.name} failed{why}: a new pod takes {_members(fed, [i])}; incarnation "
                                 f"{incarnation} runs on"))  # fmt: skip
    if refill:
        step.events.append(Event("Normal", "SamplerReplaced",
                                 f"new pods for {_members(fed, refill)}: they join the running federation"))  # fmt: skip
    if added or removed:
        what = "; ".join(x for x in (f"adding {_members(fed, added)}" if added else "",
                                     f"removing {_members(fed, removed)}" if removed else "") if x)  # fmt: skip
        step.events.append(Event("Normal", SCALING, f"samplers {running} -> {desired} in incarnation {incarnation}: "
                                 f"{what}; the RTI and the learner run on"))  # fmt: skip

    waiting = [p for i, p in sorted(live.items()) if i < desired and not _up(p) and i not in failed]
    up = sum(1 for i, p in live.items() if i < desired and _up(p))
    unschedulable = "".join(f"; {p.name}: {p.message}" for p in waiting if p.phase == PodPhase.PENDING and p.message)
    settled = not (step.create or step.delete or leaving or waiting)
    bounds = f"elastic, started {width} wide, at most {most}"
    if settled:
        step.reason = "AllPodsReady"
        step.message = f"{desired} samplers ({bounds}), learner and RTI running in incarnation {incarnation}"
        if prior.phase != Phase.RUNNING or prior.reason != "AllPodsReady":
            step.events.append(Event("Normal", "Running", f"{desired} samplers, the learner and the RTI are running"))
    elif added or removed or any(i >= desired for i in leaving) or prior.reason == SCALING:
        step.phase, step.reason = Phase.SCALING, SCALING
        step.message = (f"scaling samplers to {desired} in incarnation {incarnation}, {up} up ({bounds}); the RTI "
                        f"and the learner run on{unschedulable}")  # fmt: skip
    elif failed or refill or leaving or prior.reason == REPLACING:
        step.reason = REPLACING
        step.message = (f"replacing sampler pods in incarnation {incarnation} ({step.replaced} replaced so far)"
                        f"{unschedulable}")  # fmt: skip
    else:
        step.reason = STARTING
        step.message = f"{len(waiting)} sampler pods not ready yet{unschedulable}"
    return step


def membership(
    prior: Sequence[Mapping[str, Any]], progress: Progress | None, incarnation: int
) -> list[dict[str, Any]]:
    """The membership changes for the status: the running RTI's record (it has all of its
    incarnation's) after those of earlier incarnations, the latest MEMBERSHIP_KEPT."""
    kept = [dict(e) for e in prior]
    if progress is not None and progress.membership is not None:
        kept = [e for e in kept if e.get("incarnation") != incarnation]
        kept += [c.as_status(incarnation) for c in progress.membership[-MEMBERSHIP_KEPT:]]
    return kept[-MEMBERSHIP_KEPT:]
