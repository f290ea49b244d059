"""Asking the program what its federates are: the discovery pod, and each pass's step with it.

Before the first pod of an incarnation is made, the operator runs ``reactorfed federates
PROGRAM --json`` (:func:`.discovery.discovery_command`) in one short-lived pod: the
program's image (``spec.program.image``, the one the RTI runs: the RTI builds the same
program on a CPU node, so whatever runs the RTI runs this; a GPU group's image is never
needed), its ConfigMap mounted as the federates get it, its parameters and environment,
placed like the RTI, hardened like every pod of ours, ``restartPolicy: Never`` and an
``activeDeadlineSeconds``. The answer comes back as the container's termination message
(``--output /dev/termination-log``; the log when it does not fit in the kubelet's 4 KiB,
a bank some 60 members wide) and is kept in ``status.program`` with the digest of what it
was computed from (:func:`inputs_key`): it is asked again only when those change, never on
a restart or a rescale (a bank's width is not an input: the command finds the parameter that
sets it). A program that fails to build is refused with its exit code and its last lines
(``terminationMessagePolicy: FallbackToLogsOnError``), kept for those inputs too.

All pure: :func:`step` turns the known answer, the observed pod and the inputs' digest into
what to create, delete and record, and whether pods may be made (:func:`hold`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .discovery import (
    CONDITION,
    DiscoveryError,
    Finding,
    ProgramBank,
    ProgramFederates,
    check_groups,
    discovery_command,
    parse_federates,
)
from .discovery import condition as match_condition
from .manifests import PROGRAM_DIR, Federation, labels, owner_reference
from .observed import Event
from .phase import Phase, PodPhase
from .pods import container_security, pod_security, program_volumes, thread_env
from .spec import FederationSpec, program_params

__all__ = [
    "ANNOTATION_INPUTS",
    "DEADLINE_SECONDS",
    "REFUSALS",
    "ROLE",
    "DiscoveryPod",
    "DiscoveryStep",
    "Known",
    "discovery_pod",
    "hold",
    "inputs_key",
    "needs_log",
    "observe_discovery",
    "pod_name",
    "step",
]

ROLE = "discovery"
#: the digest of the inputs a discovery pod was made for
ANNOTATION_INPUTS = "reactorfed.io/program-inputs"
#: the pod's whole life, image pull included: a program that takes longer to build is refused
DEADLINE_SECONDS = 300
TERMINATION_LOG = "/dev/termination-log"
#: the status reasons of a refusal (phase Failed): lifted once the cause is gone, whatever lifted it
REFUSALS = ("GroupsDoNotMatchProgram", "DiscoveryFailed")
_TAIL_LINES = 12
_TAIL_CHARS = 900


def pod_name(fed: Federation) -> str:
    return f"{fed.name}-{ROLE}"


def inputs_key(spec: FederationSpec, program_text: str | None = None) -> str:
    """The digest of what the program's answer depends on: the image, the entrypoint, the
    parameters (but the scale group's width: a rescale never asks again), the environment
    and the ConfigMap's program text (``program_text``) when the program comes from one."""
    scaled = {g.width_param for g in spec.groups if g.scale and g.width_param}
    params = [(k, v) for k, v in discovery_params(spec) if k not in scaled]
    what = {
        "image": spec.program.image,
        "entrypoint": spec.program.entrypoint,
        "params": params,
        "env": list(spec.program.env),
        "configMap": [spec.program.config_map, spec.program.config_map_key,
                      hashlib.sha256((program_text or "").encode()).hexdigest()] if spec.program.config_map else None,
    }  # fmt: skip
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:20]


def discovery_params(spec: FederationSpec) -> list[tuple[str, str]]:
    """The ``--param`` pairs the discovery command gets: every pod's, at the spec's width."""
    return program_params(spec, spec.replicas, spec.max_replicas)


def discovery_pod(fed: Federation, key: str) -> dict[str, Any]:
    """The pod that runs ``reactorfed federates`` once for the inputs ``key``."""
    s = fed.spec
    volumes, mounts = program_volumes(s)
    env = [{"name": k, "value": v} for k, v in s.program.env]
    names = {k for k, _ in s.program.env}
    if s.program.config_map:
        env.append({"name": "PYTHONPATH", "value": PROGRAM_DIR})
    env += [*thread_env(s), *([] if "PYTHONUNBUFFERED" in names else [{"name": "PYTHONUNBUFFERED", "value": "1"}])]
    limits = {k: str(v) for k, v in (s.rti.resources.get("limits") or {}).items()}  # what builds the program in the RTI
    resources: dict[str, Any] = {"requests": {"cpu": "100m", "memory": "128Mi"}}
    if limits:
        resources["limits"] = limits
    container: dict[str, Any] = {
        "name": ROLE,
        "image": s.program.image,
        "imagePullPolicy": s.program.image_pull_policy,
        "command": [*discovery_command(s), "--output", TERMINATION_LOG],
        "env": env,
        "resources": resources,
        "volumeMounts": mounts,
        "terminationMessagePath": TERMINATION_LOG,
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "securityContext": container_security(),
    }
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "activeDeadlineSeconds": DEADLINE_SECONDS,
        "terminationGracePeriodSeconds": 0,
        **pod_security(),
        "containers": [container],
        "volumes": volumes,
    }
    if s.rti.node_selector:
        spec["nodeSelector"] = dict(s.rti.node_selector)
    if s.rti.tolerations:
        spec["tolerations"] = [dict(t) for t in s.rti.tolerations]
    if s.program.image_pull_secrets:
        spec["imagePullSecrets"] = [{"name": n} for n in s.program.image_pull_secrets]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": pod_name(fed),
            "namespace": fed.namespace,
            "labels": labels(fed, ROLE),
            "annotations": {ANNOTATION_INPUTS: key},
            "ownerReferences": [owner_reference(fed)],
        },
        "spec": spec,
    }


@dataclass(frozen=True)
class DiscoveryPod:
    """What the operator sees of its discovery pod."""

    name: str
    inputs: str
    phase: PodPhase = PodPhase.PENDING
    deleting: bool = False
    exit_code: int | None = None  # the container's, once it ended
    #: the termination message (or the log, read when the message cannot hold the answer)
    output: str = ""
    reason: str | None = None  # why the pod failed without its container ending (DeadlineExceeded, Evicted)
    waiting: str | None = None  # why its container has not started (ErrImagePull, ...)


def observe_discovery(pod: Mapping[str, Any]) -> DiscoveryPod | None:
    """An API pod (as a dict) -> :class:`DiscoveryPod`; None when it is not a discovery pod."""
    meta = pod.get("metadata") or {}
    if (meta.get("labels") or {}).get("reactorfed.io/role") != ROLE:
        return None
    status = pod.get("status") or {}
    exit_code, output, waiting = None, "", None
    for cs in status.get("containerStatuses") or []:
        state = cs.get("state") or {}
        term = state.get("terminated") or {}
        if term:
            exit_code, output = term.get("exitCode"), str(term.get("message") or "")
        wait = state.get("waiting") or {}
        if wait.get("reason") and wait.get("reason") != "ContainerCreating":
            waiting = f"{wait['reason']}" + (f": {wait['message']}" if wait.get("message") else "")
    phase = PodPhase.parse(status.get("phase"))
    reason = None
    if phase is PodPhase.FAILED and exit_code is None:
        reason = " ".join(str(x) for x in (status.get("reason"), status.get("message")) if x) or "the pod failed"
    elif phase is PodPhase.PENDING and not waiting:
        sched: Mapping[str, Any] = next((c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"), {})
        if sched.get("status") == "False" and sched.get("message"):
            waiting = f"{sched.get('reason') or 'Unschedulable'}: {sched['message']}"
    return DiscoveryPod(
        name=str(meta.get("name")),
        inputs=str((meta.get("annotations") or {}).get(ANNOTATION_INPUTS) or ""),
        phase=phase,
        deleting=meta.get("deletionTimestamp") is not None,
        exit_code=exit_code if isinstance(exit_code, int) else None,
        output=output,
        reason=reason,
        waiting=waiting,
    )


def _answer(text: str) -> str | None:
    """The JSON object in the output: all of it, or its last line that is one (a log may
    hold the program's own prints and warnings before it)."""
    for candidate in (text, *reversed(text.splitlines())):
        candidate = candidate.strip()
        if candidate.startswith("{"):
            try:
                if isinstance(json.loads(candidate), dict):
                    return candidate
            except json.JSONDecodeError:
                continue
    return None


def needs_log(pod: DiscoveryPod | None) -> bool:
    """Whether the pod succeeded but its termination message cannot hold the answer (cut at
    4 KiB): then the handler reads its log (``pods/log``) into ``output``."""
    return pod is not None and pod.phase is PodPhase.SUCCEEDED and _answer(pod.output) is None


@dataclass(frozen=True)
class Known:
    """``status.program`` read back: the answer (or the failure) for the inputs ``inputs``."""

    inputs: str = ""
    program: ProgramFederates | None = None
    error: str | None = None

    @classmethod
    def from_status(cls, raw: Any) -> Known:
        if not isinstance(raw, Mapping) or not raw.get("inputs"):
            return cls()
        if raw.get("error"):
            return cls(str(raw["inputs"]), None, str(raw["error"]))
        try:
            banks = tuple(ProgramBank(str(b["name"]), int(b["width"]), b.get("widthParam"),
                                      (int(b["elastic"]["min"]), int(b["elastic"]["max"])) if b.get("elastic") else None)
                          for b in raw.get("banks") or ())  # fmt: skip
            singles = tuple(str(n) for n in raw.get("federates") or ())
        except (KeyError, TypeError, ValueError):
            return cls()  # not ours to trust: ask again
        return cls(str(raw["inputs"]), ProgramFederates(str(raw.get("entrypoint") or ""), singles, banks))


def _status(spec: FederationSpec, key: str, now: str, program: ProgramFederates | None, error: str | None) -> dict[str, Any]:
    """``status.program`` (every key written: a merge patch keeps the ones left out)."""
    banks = None if program is None else [
        {"name": b.name, "width": b.width, **({"widthParam": b.width_param} if b.width_param else {}),
         **({"elastic": {"min": b.elastic[0], "max": b.elastic[1]}} if b.elastic else {})} for b in program.banks]  # fmt: skip
    return {
        "inputs": key,
        "image": spec.program.image,
        "entrypoint": spec.program.entrypoint,
        "discoveredAt": now,
        "federates": None if program is None else list(program.singles),
        "banks": banks,
        "error": error,
    }


@dataclass
class DiscoveryStep:
    """What one pass does about the program's answer, and what it found."""

    #: "ready": the groups match the program; "waiting": no answer yet for these inputs;
    #: "refused": the groups do not match, or the program could not say (the handler posts
    #: the Warning event when the refusal is new)
    state: str
    reason: str
    message: str
    findings: list[Finding] = field(default_factory=list)
    create: dict[str, Any] | None = None
    delete: list[str] = field(default_factory=list)
    program: dict[str, Any] | None = None  # status.program to write, when it changed
    events: list[Event] = field(default_factory=list)

    def condition(self) -> dict[str, str]:
        """The ``GroupsMatchProgram`` condition (type, status, reason, message)."""
        if self.state == "waiting":
            return {"type": CONDITION, "status": "Unknown", "reason": self.reason, "message": self.message}
        if self.reason == "DiscoveryFailed":
            return {"type": CONDITION, "status": "False", "reason": self.reason, "message": self.message}
        return match_condition(self.findings)


def _tail(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()][-_TAIL_LINES:]
    out = "\n".join(lines)
    return out if len(out) <= _TAIL_CHARS else "..." + out[-_TAIL_CHARS:]


def _judge(fed: Federation, known: Known, delete: list[str], program: dict[str, Any] | None = None) -> DiscoveryStep:
    """The step once the answer (or the failure) for the current inputs is known."""
    if known.error is not None:
        return DiscoveryStep("refused", "DiscoveryFailed", known.error, delete=delete, program=program)
    assert known.program is not None
    findings = _findings(fed.spec, known.program)
    if findings:
        text = "the federate groups do not match the program's federates: " + "; ".join(str(f) for f in findings)
        return DiscoveryStep("refused", "GroupsDoNotMatchProgram", text, findings, delete=delete, program=program)
    msg = match_condition(findings)["message"]
    return DiscoveryStep("ready", "Matched", msg, delete=delete, program=program)


#: the shorthand's two groups (its bank, then its learner): a finding names the field the user wrote
_SHORTHAND = {"[0].bank": "spec.samplers.name", "[0].widthParam": "spec.samplers.param",
              "[0].replicas": "spec.samplers.replicas", "[0].maxReplicas": "spec.samplers.maxReplicas",
              "[1].federate": "spec.learner.name"}  # fmt: skip


def _findings(spec: FederationSpec, program: ProgramFederates) -> list[Finding]:
    findings = check_groups(spec.groups, program)
    if spec.shape:  # spec.federateGroups: the fields are the groups'
        return findings
    out = []
    for f in findings:
        suffix = f.field.removeprefix("spec.federateGroups")
        out.append(dataclasses.replace(f, field=_SHORTHAND.get(suffix, f.field)))
    return out


def step(fed: Federation, key: str, known: Known, pod: DiscoveryPod | None, now: str) -> DiscoveryStep:
    """One pass: ``key`` the digest of the current inputs (:func:`inputs_key`), ``known`` the
    recorded answer, ``pod`` the discovery pod if one exists."""
    if known.inputs == key:
        stale = [pod.name] if pod is not None and not pod.deleting else []
        return _judge(fed, known, stale)
    if pod is not None and (pod.deleting or pod.inputs != key):
        # made for other inputs (the spec or the ConfigMap changed since): the next pass asks anew
        return DiscoveryStep("waiting", "Discovering", "asking the program for its federates (the program changed "
                             "while it was being asked)", delete=[] if pod.deleting else [pod.name])  # fmt: skip
    command = " ".join(discovery_command(fed.spec)[:3])
    if pod is None:
        msg = f"asking the program for its federates: `{command}` in a pod of {fed.spec.program.image}"
        return DiscoveryStep("waiting", "Discovering", msg, create=discovery_pod(fed, key),
                             events=[Event("Normal", "Discovering", msg)])  # fmt: skip
    if pod.phase is PodPhase.SUCCEEDED:
        text = _answer(pod.output)
        try:
            if text is None:
                raise DiscoveryError("no JSON object in its output" + (f": {_tail(pod.output)}" if pod.output else ""))
            program = parse_federates(text)
        except DiscoveryError as exc:
            found = Known(key, None, f"spec.program: `{command}` did not answer as agreed ({exc})")
        else:
            found = Known(key, program)
        record = _status(fed.spec, key, now, found.program, found.error)
        return _judge(fed, found, [pod.name], record)
    if pod.phase is PodPhase.FAILED and pod.exit_code is not None:
        # the program's own failure: the same inputs fail the same way, so it is kept
        error = (f"spec.program: `{command}` failed in a pod of {fed.spec.program.image} (exit code {pod.exit_code})"
                 + (f": {_tail(pod.output)}" if pod.output.strip() else ""))  # fmt: skip
        return _judge(fed, Known(key, None, error), [pod.name], _status(fed.spec, key, now, None, error))
    if pod.phase is PodPhase.FAILED:
        # not the program's doing (its deadline, an eviction): not kept, asked again
        error = f"spec.program: the pod asking the program for its federates failed ({pod.reason}); asking again"
        return DiscoveryStep("refused", "DiscoveryFailed", error, delete=[pod.name])
    why = f" ({pod.waiting})" if pod.waiting else ""
    return DiscoveryStep("waiting", "Discovering", f"asking the program for its federates: pod {pod.name} is "
                         f"{pod.phase}{why}")  # fmt: skip


def hold(plan: Any, newest: int, message: str) -> Any:
    """``plan`` (a :class:`.planner.Plan`) without what it would start while the program has
    not answered: no new incarnation is made and no gang gate lifted (the phase is Pending;
    stale pods of an earlier incarnation are still deleted, the pods of a gated incarnation
    still made, behind their gates). Any other plan is kept."""
    new = bool(plan.create) and plan.incarnation > newest
    if not new and not plan.ungate:
        return plan
    return dataclasses.replace(plan, phase=Phase.PENDING, reason="Discovering", message=message,
                               incarnation=newest if new else plan.incarnation, create=[] if new else plan.create,
                               ungate=[], events=[], placed=None)  # fmt: skip
