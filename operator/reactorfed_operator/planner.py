"""Decide what to do next: observed pods + spec + previous status -> a :class:`Plan`.

The reconcile loop is level-triggered and idempotent: every pass lists the pods that
exist, calls :func:`plan` and carries out the returned actions. One *incarnation* of the
federation is one set of pods (RTI, samplers, learner) started together. A federation
with a fixed bank of samplers is restarted as a whole (a new incarnation) because its
federates are fixed when it starts. Restarts happen:

* on **rescaling** a fixed bank (spec.samplers.replicas differs from the running width),
  or changing an elastic bank's bounds (spec.samplers.maxReplicas): the learner is
  stopped first (SIGTERM, its grace period to write a checkpoint at a safe point), then
  the RTI and samplers; the new incarnation starts at the new width and the learner
  resumes from the checkpoint volume;
* on **failure** (a pod Failed or vanished; for an elastic bank that has run, only the
  RTI or the learner): the federation restarts from its checkpoint up to
  ``spec.failurePolicy.maxRestarts`` times, then the phase is ``Failed`` with the reason;
* on **suspend**: every pod is stopped (learner first); unsuspending starts a new one.

All or nothing: every pod of an incarnation is created with a scheduling gate, and the
gates are lifted together (largest pod first) only when :func:`.placement.check` finds room
for all of them; until then nothing of the incarnation is scheduled or runs, the phase is
``Pending`` (reason ``Unschedulable``, naming the pod and why) and nothing counts as a
restart. A spec edit while every pod is still gated makes them anew. If the scheduler then
finds no node for one of them (what the check could not see), the incarnation is stopped and
the next one gated, without counting a restart, and its gates wait :func:`retry_wait`.

An elastic bank (spec.samplers.maxReplicas) is rescaled without a restart once its
incarnation has run, and its failed sampler pods are replaced in place: see :mod:`.elastic`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import elastic, placement
from .manifests import Federation, pod_name, sampler_selector
from .observed import Event, ObservedPod, PriorStatus
from .phase import TERMINAL, Phase, PodPhase, Role
from .pods import federation_pods
from .progress import Progress

__all__ = ["ELASTIC_KEYS", "RETRY_SECONDS", "Event", "ObservedPod", "Plan", "PriorStatus", "plan", "retry_wait"]

#: status.samplers keys only an elastic bank has
ELASTIC_KEYS = ("initial", "maxReplicas", "replaced", "slots", "members")
#: after the scheduler refused a pod of a released incarnation, its successor's gates wait this
#: long, doubled for each refusal in a row, at most RETRY_MAX_SECONDS
RETRY_SECONDS = 30.0
RETRY_MAX_SECONDS = 600.0


def retry_wait(refusals: int) -> float:
    """How long the gates wait after the ``refusals``-th refusal in a row (1: the first)."""
    return min(RETRY_MAX_SECONDS, RETRY_SECONDS * 2.0 ** max(0, refusals - 1))


@dataclass
class Plan:
    """Actions for this pass and the status to write."""

    phase: Phase
    reason: str
    message: str
    incarnation: int
    restarts: int
    create: list[dict[str, Any]] = field(default_factory=list)
    delete: list[str] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    replaced: int = 0  # sampler pods replaced live (elastic banks)
    slots: int | None = None  # the sampler slots kept filled (elastic banks, once run)
    ungate: list[str] = field(default_factory=list)  # pods whose gang gate to lift, in this order
    placed: tuple[bool, str, str] | None = None  # the Placed condition, when this pass decides it
    refused: bool = False  # the scheduler refused a pod: record when (status.placement)

    def status(
        self,
        fed: Federation,
        pods: Sequence[ObservedPod],
        generation: int | None,
        prior: PriorStatus,
        now: str,
        progress: Progress | None = None,
    ) -> dict[str, Any]:
        """The full status object for this pass (conditions keep their transition times)."""
        current = [p for p in pods if p.incarnation == self.incarnation and not p.deleting]
        scaled = fed.spec.scale_group
        samplers = [p for p in current if scaled is not None and p.role == scaled.role]
        ready = sum(1 for p in samplers if p.ready and p.phase == PodPhase.RUNNING)
        fed_ready = sum(1 for p in current if p.ready and p.phase == PodPhase.RUNNING)
        desired = fed.spec.replicas
        widths = {g.name: fed.spec.width_of(g, desired) for g in fed.spec.groups}
        out: dict[str, Any] = {
            "phase": self.phase,
            "reason": self.reason,
            "message": self.message,
            "observedGeneration": generation,
            "incarnation": self.incarnation,
            "restarts": self.restarts,
            "secretName": fed.spec.secret_name,  # (the compatibility mode's; None: a key per member)
            "samplers": {
                "desired": desired,
                "replicas": len(samplers),
                "ready": ready,
                "readyText": f"{ready}/{desired}",
                "selector": sampler_selector(fed),
            },
            "groups": [{
                "name": g.name,
                "role": g.role,
                "desired": widths[g.name],
                "ready": sum(1 for p in current if p.role == g.role and p.ready and p.phase == PodPhase.RUNNING),
            } for g in fed.spec.groups],
            "federates": {
                "desired": 1 + sum(widths.values()),
                "ready": fed_ready,
                "succeeded": sum(1 for p in current if p.phase == PodPhase.SUCCEEDED),
                "failed": sum(1 for p in current if p.phase == PodPhase.FAILED),
            },
        }
        shape = current[0] if current else None
        if fed.spec.elastic or (shape is not None and shape.max_width > 0):
            out["samplers"].update(self._elastic_status(fed, shape, progress))
        if fed.spec.elastic or prior.membership:
            out["membership"] = elastic.membership(prior.membership, progress, self.incarnation)
        rti = next((p for p in current if p.role == Role.RTI and p.ip), None)
        if rti is not None:
            out["rtiAddress"] = f"{rti.ip}:{fed.spec.rti_port}"
        if progress is not None:
            out["progress"] = progress.as_status(now)
        ready_cond = self.phase in (Phase.RUNNING, Phase.SUCCEEDED)
        conditions = [
            _condition(prior, "Ready", ready_cond, self.reason, self.message, generation, now),
            _condition(
                prior, "Progressing", self.phase in (Phase.STARTING, Phase.SCALING, Phase.RESTARTING, Phase.RUNNING),
                self.reason, self.message, generation, now,
            ),
            _condition(
                prior, "Degraded", self.phase == Phase.FAILED or self.reason in _DEGRADED,
                self.reason, self.message, generation, now,
            ),
        ]
        if progress is not None or rti is not None:
            reachable = progress is not None and progress.reachable
            conditions.append(
                _condition(
                    prior, "ProgressReported", reachable,
                    "RTIStatusOK" if reachable else "RTIUnreachable",
                    "the RTI's /status answered" if reachable else (progress.error if progress else "no RTI"),
                    generation, now,
                )
            )
        placed = self.placed
        if placed is None and current and all(p.node for p in current):
            placed = (True, "AllPodsPlaced", f"every pod of incarnation {self.incarnation} is on a node")
        if placed is not None:
            conditions.append(_condition(prior, "Placed", placed[0], placed[1], placed[2], generation, now))
        else:
            conditions += [dict(c) for c in prior.conditions if c.get("type") == "Placed"]
        out["conditions"] = conditions
        if self.refused:
            out["placement"] = {"refusedAt": now, "message": self.message, "refusals": prior.refusals + 1}
        elif prior.refused_at and not (placed is not None and placed[0]):
            out["placement"] = {"refusedAt": prior.refused_at, "message": prior.refused_message,
                                "refusals": prior.refusals}  # fmt: skip
        return out

    def _elastic_status(self, fed: Federation, shape: ObservedPod | None, progress: Progress | None) -> dict[str, Any]:
        """An elastic bank's part of status.samplers: its bounds in this incarnation, the
        pods replaced, and how many members the RTI counts present."""
        out: dict[str, Any] = {
            "initial": shape.width if shape is not None else fed.spec.replicas,
            "maxReplicas": shape.max_width if shape is not None else fed.spec.max_replicas,
            "replaced": self.replaced,
            "slots": self.slots,
        }
        if progress is not None and progress.reachable and progress.membership is not None:
            out["members"] = sum(1 for name in progress.present if name.startswith(f"{fed.spec.samplers.name}["))
        return out


_DEGRADED = ("InvalidSpec", "MissingDependency", "FederateFailed", "Unschedulable", "SchedulerRefused", elastic.REPLACING)
#: the scheduler's word for a pod waiting for its volume to be provisioned (not a lack of room)
_VOLUME_WAIT = "unbound immediate PersistentVolumeClaims"
#: the reasons of a stop under way (the next passes finish it, learner first)
_STOPS = ("Rescaling", "FederateFailed", "Stopping", "SpecChanged", "SchedulerRefused", "Regating")


def _condition(
    prior: PriorStatus, ctype: str, value: bool, reason: str, message: str, generation: int | None, now: str
) -> dict[str, Any]:
    status = "True" if value else "False"
    old = next((c for c in prior.conditions if c.get("type") == ctype), None)
    since = old.get("lastTransitionTime") if old and old.get("status") == status else None
    return {
        "type": ctype,
        "status": status,
        "reason": reason,
        "message": message,
        "observedGeneration": generation,
        "lastTransitionTime": since or now,
    }


def _stop(fed: Federation, pods: Sequence[ObservedPod]) -> list[str]:
    """Names to delete to stop a federation at a safe point: the groups that hold state
    (the learner) first."""
    first = {g.role for g in fed.spec.groups if g.holds_state}
    live = [p for p in pods if not p.deleting]
    learner = [p.name for p in live if p.role in first]
    if learner:
        return learner
    if any(p.role in first for p in pods):  # learner still writing its checkpoint
        return []
    return [p.name for p in live]


def _hold(
    manifests: Sequence[dict[str, Any]], nodes: Sequence[placement.Node] | None, prior: PriorStatus, now: float | None
) -> tuple[str, str] | None:
    """Whether a gated incarnation's gates stay: None to lift them now, else (reason, message)."""
    if nodes is not None:
        verdict = placement.check(manifests, nodes)
        if not verdict.fits:
            return "Unschedulable", f"not every pod can be placed, so none is started: {verdict.message}"
    if prior.refused_at and now is not None:
        try:
            since = dt.datetime.fromisoformat(prior.refused_at.replace("Z", "+00:00")).timestamp()
        except ValueError:
            since = 0.0
        wait = retry_wait(prior.refusals) - (now - since)
        if wait > 0:
            return "SchedulerRefused", f"{prior.refused_message}; placing the pods again in {wait:.0f}s"
    return None


def _held(out: Plan, hold: tuple[str, str], prior: PriorStatus) -> Plan:
    out.phase, (out.reason, out.message) = Phase.PENDING, hold
    out.placed = (False, out.reason, out.message)
    if out.reason == "Unschedulable" and (prior.reason != "Unschedulable" or prior.phase != Phase.PENDING):
        out.events.append(Event("Warning", "Unschedulable", out.message))
    return out


def plan(
    fed: Federation,
    pods: Sequence[ObservedPod],
    prior: PriorStatus,
    generation: int | None = None,
    missing: Sequence[str] = (),
    nodes: Sequence[placement.Node] | None = None,
    now: float | None = None,
) -> Plan:
    """What to do now. ``missing`` lists referenced objects that do not exist
    (e.g. ``Secret/foo``): a semantic error the schema cannot catch. ``nodes`` are the
    cluster's nodes for the all-or-nothing check (None: the scheduler alone judges);
    ``now`` (seconds since the epoch) times the wait after the scheduler refused a pod."""
    s = fed.spec
    inc = max([prior.incarnation, *(p.incarnation for p in pods)])
    restarts, replaced = prior.restarts, prior.replaced
    edited_terminal = prior.phase in TERMINAL and prior.observed_generation is not None
    if edited_terminal and generation is not None and generation != prior.observed_generation:
        restarts = replaced = 0  # an edit after Succeeded/Failed starts afresh
    stale = [p for p in pods if p.incarnation != inc and not p.deleting]
    current = [p for p in pods if p.incarnation == inc]
    live = [p for p in current if not p.deleting]
    slots = prior.slots if prior.incarnation == inc else None

    def result(phase: Phase, reason: str, message: str, **kw: Any) -> Plan:
        out = Plan(phase, reason, message, inc, restarts, replaced=replaced, slots=slots, **kw)
        out.delete = [p.name for p in stale] + out.delete
        return out

    def failure(what: str) -> Plan:
        """A pod the federation cannot lose failed: restart from the checkpoint, or give up."""
        if restarts >= s.max_restarts:
            return result(Phase.FAILED, "RestartLimitExceeded",
                          f"{what}; restarted {restarts} times (spec.failurePolicy.maxRestarts={s.max_restarts})",
                          delete=[p.name for p in live if p.phase not in (PodPhase.SUCCEEDED, PodPhase.FAILED)],
                          events=[Event("Warning", "RestartLimitExceeded", what)])  # fmt: skip
        out = result(Phase.RESTARTING, "FederateFailed", f"{what}; restart {restarts + 1}/{s.max_restarts} from checkpoint",
                     delete=_stop(fed, current), events=[Event("Warning", "FederateFailed", what)])  # fmt: skip
        out.restarts += 1
        return out

    if s.suspend:
        if pods:
            return result(Phase.SUSPENDED, "Suspending", "stopping every pod (learner first)", delete=_stop(fed, current),
                          events=[Event("Normal", "Suspending", "spec.suspend is true")] if prior.phase != Phase.SUSPENDED else [])  # fmt: skip
        return result(Phase.SUSPENDED, "Suspended", "spec.suspend is true; no pods run")

    edited = generation is not None and generation != prior.observed_generation
    if prior.phase in TERMINAL and not edited:
        leftovers = [p.name for p in live if p.phase not in (PodPhase.SUCCEEDED, PodPhase.FAILED)] if prior.phase == Phase.FAILED else []
        return result(prior.phase, _reason(prior, "Finished"), _message(prior), delete=leftovers)
    if prior.phase in TERMINAL and current:
        msg = f"spec changed after {prior.phase}: starting a new incarnation"
        return result(Phase.RESTARTING, "SpecChanged", msg, delete=_stop(fed, current), events=[Event("Normal", "SpecChanged", msg)])

    if missing:
        text = "referenced objects do not exist: " + ", ".join(missing)
        ev = [Event("Warning", "MissingDependency", text)] if _reason(prior, "") != "MissingDependency" else []
        return result(Phase.PENDING, "MissingDependency", text, events=ev)

    if not current:
        if any(p.deleting for p in pods):
            return result(prior.phase or Phase.PENDING, _reason(prior, "Stopping"), "waiting for old pods to terminate")
        new = inc + 1
        width = s.replicas
        bank = f"{width} samplers" + (f" (elastic, at most {s.max_replicas})" if s.elastic else "")
        what = f"{bank}, learner" if not s.shape else ", ".join(
            f"{g.name} ({s.width_of(g, width)})" for g in s.groups)
        out = Plan(Phase.STARTING, "Creating", f"incarnation {new}: RTI, {what}", new, restarts, replaced=replaced)
        manifests = federation_pods(fed, new, width, s.max_replicas)
        out.create = [placement.gate(m) for m in manifests]  # nothing is scheduled before all exist
        out.delete = [p.name for p in stale]
        out.events.append(Event("Normal", "Creating", f"starting incarnation {new} with {what}"))
        hold = _hold(manifests, nodes, prior, now)
        if hold is not None:
            return _held(out, hold, prior)
        out.ungate = placement.release_order(manifests)
        out.placed = (False, "Placing", f"all {len(manifests)} pods of incarnation {new} released to the scheduler together")
        return out

    width, most = current[0].width, current[0].max_width
    scaled = s.scale_group
    core = [p for p in current if scaled is None or p.role != scaled.role]
    never_ran = all(p.gated for p in current)  # every pod still gated: nothing of it was scheduled
    # (a Pending federation stops only the released incarnation the scheduler refused; the
    # gated one after it waits)
    stopping = (prior.phase in (Phase.SCALING, Phase.RESTARTING) or (prior.phase == Phase.PENDING and not never_ran)) \
        and _stopping(prior)  # fmt: skip
    reshaped = current[0].shape != s.shape
    if most > 0 and most == s.max_replicas and elastic.established(prior, inc) and not stopping and not reshaped \
            and not any(p.deleting for p in core):  # fmt: skip
        return _elastic(fed, inc, current, prior, result, failure)

    if any(p.deleting for p in current) or stopping:
        # A stop is under way (rescale, restart or suspend): finish it, learner first
        # (all at once when nothing ran).
        return result(prior.phase if prior.phase in (Phase.SCALING, Phase.RESTARTING, Phase.PENDING) else Phase.RESTARTING,
                      _reason(prior, "Stopping"), _message(prior) or "stopping the federation",
                      delete=[p.name for p in live] if never_ran else _stop(fed, current))  # fmt: skip

    manifests = federation_pods(fed, inc, width, most)
    if never_ran:
        # The gang waits: nothing of it runs, so a spec edit makes its pods anew (their
        # requests and placement are fixed once made), and no pod of it counts as failed.
        if edited:
            msg = "the spec changed while the pods waited to be placed: making them anew (not a restart)"
            return result(Phase.PENDING, "Regating", msg, delete=[p.name for p in live])
        have = {p.name for p in current}
        out = result(Phase.STARTING, "Placing", f"all {len(manifests)} pods of incarnation {inc} released to the "
                     "scheduler together", create=[placement.gate(m) for m in manifests if m["metadata"]["name"] not in have])  # fmt: skip
        hold = _hold(manifests, nodes, prior, now)
        if hold is not None:
            return _held(out, hold, prior)
        out.ungate = placement.release_order(manifests)
        out.placed = (False, "Placing", out.message)
        if prior.reason in ("Unschedulable", "SchedulerRefused"):
            out.events.append(Event("Normal", "Placing", f"every pod of incarnation {inc} fits now: {out.message}"))
        return out

    if current[0].shape != s.shape:
        msg = ("the federate groups changed (what they place, their widths or bounds): the federation's members are "
               "fixed when it starts, so it restarts at a safe point (groups that hold state checkpoint first)")
        return result(Phase.SCALING, "Rescaling", msg, delete=_stop(fed, current), events=[Event("Normal", "Rescaling", msg)])
    failed = [p for p in live if p.phase == PodPhase.FAILED]
    vanished = sorted({m["metadata"]["name"] for m in manifests} - {p.name for p in current})
    if vanished and inc > prior.incarnation and not failed:
        # The pass that created this incarnation was interrupted before it recorded it:
        # finish creating it rather than calling the missing pods a failure.
        out = result(Phase.STARTING, "Creating", f"incarnation {inc}: creating {len(vanished)} remaining pods")
        out.create = [m for m in manifests if m["metadata"]["name"] in vanished]
        return out
    unschedulable = [p for p in live if p.phase == PodPhase.PENDING and p.message and not p.node]
    volumes = [p for p in unschedulable if _VOLUME_WAIT in (p.message or "")]
    unschedulable = [p for p in unschedulable if p not in volumes]
    if unschedulable:
        # Released, and the scheduler found no node for a pod: the incarnation cannot run as
        # a whole. Stop it and gate the next: nothing of it ran for long, not a restart.
        why = "; ".join(f"{p.name}: {p.message}" for p in unschedulable)
        msg = f"the scheduler found no node for {why}: stopping this incarnation's pods (not a restart)"
        out = result(Phase.PENDING, "SchedulerRefused", msg, delete=_stop(fed, current),
                     events=[Event("Warning", "SchedulerRefused", msg)])  # fmt: skip
        out.placed, out.refused = (False, "SchedulerRefused", msg), True
        return out
    if any(p.gated for p in live):  # a release that was interrupted: finish it
        return result(Phase.STARTING, "Placing", f"releasing the remaining pods of incarnation {inc} to the scheduler",
                      ungate=[p.name for p in live if p.gated])  # fmt: skip
    if all(p.phase == PodPhase.SUCCEEDED for p in live) and not vanished:
        return result(Phase.SUCCEEDED, "Completed", f"incarnation {inc} finished",
                      events=[Event("Normal", "Completed", "the federation finished")])  # fmt: skip
    if failed or vanished:
        return failure(", ".join([f"{p.name} failed" + (f" ({p.message})" if p.message else "") for p in failed]
                                 + [f"{n} vanished" for n in vanished]))  # fmt: skip

    if most != s.max_replicas:
        msg = (f"spec.samplers.maxReplicas {most or 'unset'} -> {s.max_replicas or 'unset'}: the bank's bounds are part "
               "of the program, so the federation restarts at a safe point (learner checkpoints first)")  # fmt: skip
        return result(Phase.SCALING, "Rescaling", msg, delete=_stop(fed, current), events=[Event("Normal", "Rescaling", msg)])
    if width != s.replicas:
        msg = f"rescaling samplers {width} -> {s.replicas}: stopping at a safe point (learner checkpoints first)"
        return result(Phase.SCALING, "Rescaling", msg, delete=_stop(fed, current), events=[Event("Normal", "Rescaling", msg)])

    if all(p.phase in (PodPhase.RUNNING, PodPhase.SUCCEEDED) and (p.ready or p.phase == PodPhase.SUCCEEDED) for p in live):
        ev = [Event("Normal", "Running", f"all {len(live)} pods of incarnation {inc} are running")] \
            if prior.phase != Phase.RUNNING else []  # fmt: skip
        running = f"{width} samplers, learner" if not s.shape else ", ".join(g.name for g in s.groups)
        return result(Phase.RUNNING, "AllPodsReady", f"{running} and RTI running", events=ev)
    waiting = sum(1 for p in live if not p.ready)
    why = "".join(f"; {p.name}: {p.message}" for p in volumes)  # a volume being provisioned: it passes
    return result(Phase.STARTING, "PodsStarting", f"{waiting} of {len(live)} pods not ready yet{why}")


def _elastic(
    fed: Federation,
    inc: int,
    current: Sequence[ObservedPod],
    prior: PriorStatus,
    result: Callable[..., Plan],
    failure: Callable[[str], Plan],
) -> Plan:
    """An elastic incarnation that has run: the RTI's or the learner's end decides for the
    federation; the samplers are rescaled and replaced live (:func:`.elastic.elastic_step`)."""
    scaled = fed.spec.scale_group
    core = {p.name: p for p in current if scaled is None or p.role != scaled.role}
    expected = {pod_name(fed, n) for g in fed.spec.groups if not g.scale for n in g.federates()}
    gone = sorted(({f"{fed.name}-rti"} | expected) - set(core))
    failed = [p for p in core.values() if p.phase == PodPhase.FAILED]
    if failed or gone:
        return failure(", ".join([f"{p.name} failed" + (f" ({p.message})" if p.message else "") for p in failed]
                                 + [f"{n} vanished" for n in gone]))  # fmt: skip
    if any(p.phase == PodPhase.SUCCEEDED for p in core.values()):
        # The federation is ending: nothing is replaced or added any more; wait for the rest.
        left = [p.name for p in current if not p.deleting and p.phase not in (PodPhase.SUCCEEDED, PodPhase.FAILED)]
        if left:
            return result(Phase.RUNNING, "Finishing", f"the federation is ending; waiting for {', '.join(left)}")
        return result(Phase.SUCCEEDED, "Completed", f"incarnation {inc} finished",
                      events=[Event("Normal", "Completed", "the federation finished")])  # fmt: skip
    step = elastic.elastic_step(fed, inc, current, prior)
    out = result(step.phase, step.reason, step.message, create=step.create, delete=step.delete, events=step.events)
    out.replaced, out.slots = step.replaced, step.slots
    return out


def _stopping(prior: PriorStatus) -> bool:
    return _reason(prior, "") in _STOPS


def _reason(prior: PriorStatus, default: str) -> str:
    ready = next((c for c in prior.conditions if c.get("type") == "Ready"), None)
    return str(ready.get("reason")) if ready and ready.get("reason") else default


def _message(prior: PriorStatus) -> str:
    ready = next((c for c in prior.conditions if c.get("type") == "Ready"), None)
    return str(ready.get("message") or "") if ready else ""
