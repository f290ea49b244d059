"""The ReactorFederation spec as typed, defaulted Python values.

The API server already applies the CRD's defaults and validation; :func:`parse_spec`
applies the same defaults again (so the pure functions can be used on partial specs,
e.g. in tests) and reports semantic errors the schema cannot express as
:class:`SpecError` with a message naming the field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .errors import SpecError
from .fields import cpu_cores, placement
from .fields import int_ as _int
from .fields import obj as _obj
from .fields import str_ as _str
from .group_spec import env_pairs, group_width, parse_groups, shorthand_groups
from .groups import FederateGroup
from .schema import DEFAULTS, DURATION, ENTRYPOINT, IDENT, LEAD_WINDOW, MEMBER, PARAM

__all__ = [
    "CheckpointSpec",
    "FederationSpec",
    "GroupSpec",
    "ProgramSpec",
    "SpecError",
    "cpu_cores",
    "parse_spec",
    "program_params",
]

_IDENT = re.compile(IDENT)
_PARAM = re.compile(PARAM)
_ENTRYPOINT = re.compile(ENTRYPOINT)
_MEMBER = re.compile(MEMBER)
_DURATION = re.compile(DURATION)
_LEAD_WINDOW = re.compile(LEAD_WINDOW)

D = DEFAULTS
GPU_RESOURCE = "nvidia.com/gpu"
GPU_NODE_LABEL = "reactorfed.io/accelerator"
GPU_NODE_VALUE = "nvidia"


@dataclass(frozen=True)
class ProgramSpec:
    image: str
    entrypoint: str
    image_pull_policy: str = DEFAULTS["program.imagePullPolicy"]
    image_pull_secrets: tuple[str, ...] = ()
    config_map: str | None = None
    config_map_key: str = DEFAULTS["program.configMap.key"]
    params: tuple[tuple[str, str], ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    #: torch's threads in every pod (the runtime's --threads)
    threads: int = DEFAULTS["program.threads"]
    #: a resume may change them (the runtime's --allow-thread-change)
    allow_thread_change: bool = DEFAULTS["program.allowThreadChange"]


@dataclass(frozen=True)
class GroupSpec:
    """Placement and resources of one kind of pod (the RTI, the samplers, the learner)."""

    name: str
    image: str | None = None
    resources: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True)
class CheckpointSpec:
    claim_name: str | None = None
    size: str | None = None
    storage_class: str | None = None
    mount_path: str = DEFAULTS["checkpoint.mountPath"]


@dataclass(frozen=True)
class ObservabilitySpec:
    """spec.observability: where the pods send their trace records."""

    otlp_endpoint: str | None = None
    trace_claim: str | None = None
    trace_mount: str = DEFAULTS["observability.trace.mountPath"]


@dataclass(frozen=True)
class FederationSpec:
    program: ProgramSpec
    rti: GroupSpec
    samplers: GroupSpec
    learner: GroupSpec
    replicas: int = DEFAULTS["samplers.replicas"]
    sampler_param: str = DEFAULTS["samplers.param"]
    #: spec.samplers.maxReplicas: 0 for a fixed bank (a change of width restarts the
    #: federation); N > 0 for an elastic bank of at most N members, rescaled live
    max_replicas: int = 0
    #: the program parameter that receives max_replicas (elastic banks only)
    max_param: str = DEFAULTS["samplers.maxParam"]
    gpus: int = DEFAULTS["learner.gpus"]
    rti_port: int = DEFAULTS["rti.port"]
    metrics_port: int = DEFAULTS["rti.metricsPort"]
    federate_metrics_port: int = 9101
    #: every federate pod's data port (where its upstream peers connect): fixed, so that
    #: the federation's NetworkPolicy can name it
    data_port: int = 15046
    timeout: str | None = None
    join_timeout: str | None = None
    #: spec.coordination.advanceMessageInterval (None: the runtime's default)
    advance_message_interval: str | None = None
    fast: bool = DEFAULTS["coordination.fast"]
    #: "centralized" or "decentralized" (spec.coordination.mode: the runtime's --coordination)
    coordination: str = DEFAULTS["coordination.mode"]
    #: a duration or "none" (spec.coordination.leadWindow: the runtime's --lead-window)
    lead_window: str = DEFAULTS["coordination.leadWindow"]
    secret_name: str | None = None
    secret_key: str = DEFAULTS["secretRef.key"]
    checkpoint: CheckpointSpec | None = None
    observability: ObservabilitySpec = ObservabilitySpec()
    max_restarts: int = DEFAULTS["failurePolicy.maxRestarts"]
    grace_seconds: int = DEFAULTS["terminationGracePeriodSeconds"]
    suspend: bool = DEFAULTS["suspend"]
    #: the federate groups: spec.federateGroups, or the samplers/learner shorthand converted
    groups: tuple[FederateGroup, ...] = ()

    @property
    def shared_secret(self) -> bool:
        """The compatibility mode: the federation's members share one secret (``spec.secretRef``
        names it), instead of a key per member issued by the operator."""
        return self.secret_name is not None

    @property
    def scale_group(self) -> FederateGroup | None:
        """The group ``kubectl scale`` acts on (the shorthand's samplers), if any."""
        return next((g for g in self.groups if g.scale), None)

    def width_of(self, group: FederateGroup, scale_width: int | None = None) -> int:
        """``group``'s width in an incarnation whose scale group is ``scale_width`` wide
        (default: as the spec asks); a follower's follows the group it follows."""
        return group_width(self.groups, group, self.replicas if scale_width is None else scale_width)

    @property
    def shape(self) -> str:
        """What the groups place and how wide (the scale group's width aside): a change of
        it changes the federation's members, so it restarts the federation. Empty for the
        shorthand, whose shape is its width and bounds alone."""
        if all(g.role in ("sampler", "learner") for g in self.groups) and len(self.groups) == 2:
            return ""
        return ";".join(f"{g.name}={g.placed}" + ("" if g.scale or g.federate else
                                                  f"x{g.per_member}/{g.follows}" if g.follows else f"x{g.replicas}")
                        + (f"<={g.max_replicas}" if g.max_replicas and not g.scale else "") for g in self.groups)

    @property
    def elastic(self) -> bool:
        """Whether the sampler bank is elastic: pods join and leave the running federation."""
        return self.max_replicas > 0

    def sampler_names(self, width: int | None = None) -> list[str]:
        """The bank members' federate names, ``samplers[0]`` ... ``samplers[width-1]``."""
        n = self.replicas if width is None else width
        return [f"{self.samplers.name}[{i}]" for i in range(n)]


_UNIT_NS = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9, "sec": 10**9, "m": 60 * 10**9, "min": 60 * 10**9,
            "h": 3600 * 10**9, "hour": 3600 * 10**9, "hours": 3600 * 10**9}


def _ns(text: str) -> int:
    """A duration that matched ``_DURATION``, in integer nanoseconds (time is never a float)."""
    m = re.match(r"^([0-9]+) ?([a-z]+)$", text)
    assert m is not None and m.group(2) in _UNIT_NS, text
    return int(m.group(1)) * _UNIT_NS[m.group(2)]


def _group(raw: Mapping[str, Any], path: str, name: str) -> GroupSpec:
    resources, selector, tolerations = placement(raw, path)
    return GroupSpec(name=name, image=_str(raw.get("image"), f"{path}.image") or None, resources=resources,
                     node_selector=selector, tolerations=tolerations)


def _member(raw: Mapping[str, Any], path: str, default: str) -> str:
    name = _str(raw.get("name"), path, default) or default
    if not _MEMBER.match(name):
        raise SpecError(path, f"{name!r} must match {_MEMBER.pattern}")
    return name


def _program(raw: Mapping[str, Any]) -> ProgramSpec:
    image = _str(raw.get("image"), "spec.program.image")
    if not image:
        raise SpecError("spec.program.image", "is required")
    entrypoint = _str(raw.get("entrypoint"), "spec.program.entrypoint")
    if not entrypoint or not _ENTRYPOINT.match(entrypoint):
        raise SpecError("spec.program.entrypoint", f"must be module:Attr or /path/file.py:Attr, got {entrypoint!r}")
    cm = _obj(raw.get("configMap"), "spec.program.configMap")
    cm_name = _str(cm.get("name"), "spec.program.configMap.name")
    cm_key = _str(cm.get("key"), "spec.program.configMap.key", D["program.configMap.key"]) or D["program.configMap.key"]
    if cm and not cm_name:
        raise SpecError("spec.program.configMap.name", "is required")
    if cm_name:
        if not cm_key.endswith(".py") or not _IDENT.match(cm_key[:-3]):
            raise SpecError("spec.program.configMap.key", f"must be a Python file name, got {cm_key!r}")
        if entrypoint.split(":")[0] != cm_key[:-3]:
            raise SpecError(
                "spec.program.entrypoint",
                f"the module must be {cm_key[:-3]!r} (the ConfigMap key without .py), got {entrypoint!r}",
            )
    params = _obj(raw.get("params"), "spec.program.params")
    for key in params:
        if not _PARAM.match(str(key)):
            raise SpecError("spec.program.params",
                            f"parameter names must be identifiers or dotted paths of them (ppo.lr), got {key!r}")
    pairs = env_pairs(raw.get("env"), "spec.program.env")
    pull_secrets = tuple(
        str(_obj(s, "spec.program.imagePullSecrets").get("name", ""))
        for s in raw.get("imagePullSecrets") or []
    )
    allow = raw.get("allowThreadChange", D["program.allowThreadChange"])
    if not isinstance(allow, bool):
        raise SpecError("spec.program.allowThreadChange", f"must be a boolean, got {allow!r}")
    policy = _str(raw.get("imagePullPolicy"), "spec.program.imagePullPolicy", D["program.imagePullPolicy"])
    if policy not in ("Always", "IfNotPresent", "Never"):
        raise SpecError("spec.program.imagePullPolicy", f"must be Always, IfNotPresent or Never, got {policy!r}")
    return ProgramSpec(
        image=image,
        entrypoint=entrypoint,
        image_pull_policy=policy or D["program.imagePullPolicy"],
        image_pull_secrets=tuple(s for s in pull_secrets if s),
        config_map=cm_name,
        config_map_key=cm_key,
        params=tuple(sorted((str(k), str(v)) for k, v in params.items())),
        env=tuple(pairs),
        threads=_int(raw.get("threads"), "spec.program.threads", D["program.threads"], 1, 256),
        allow_thread_change=allow,
    )


def _checkpoint(raw: Mapping[str, Any] | None) -> CheckpointSpec | None:
    if not raw:
        return None
    claim = _str(raw.get("claimName"), "spec.checkpoint.claimName")
    size = raw.get("size")
    if (claim is None) == (size is None):
        raise SpecError("spec.checkpoint", "needs exactly one of claimName or size")
    mount = _str(raw.get("mountPath"), "spec.checkpoint.mountPath", D["checkpoint.mountPath"]) or D["checkpoint.mountPath"]
    if not mount.startswith("/"):
        raise SpecError("spec.checkpoint.mountPath", f"must be absolute, got {mount!r}")
    return CheckpointSpec(
        claim_name=claim,
        size=None if size is None else str(size),
        storage_class=_str(raw.get("storageClassName"), "spec.checkpoint.storageClassName"),
        mount_path=mount,
    )


def _observability(raw: Mapping[str, Any] | None) -> ObservabilitySpec:
    if not raw:
        return ObservabilitySpec()
    endpoint = _str(raw.get("otlpEndpoint"), "spec.observability.otlpEndpoint")
    if endpoint is not None and not endpoint.startswith(("http://", "https://")):
        raise SpecError("spec.observability.otlpEndpoint", f"must be an http(s) URL, got {endpoint!r}")
    trace = _obj(raw.get("trace"), "spec.observability.trace")
    claim = _str(trace.get("claimName"), "spec.observability.trace.claimName") if trace else None
    if trace and claim is None:
        raise SpecError("spec.observability.trace.claimName", "names the PVC the trace files go to")
    mount = D["observability.trace.mountPath"]
    if trace:
        mount = _str(trace.get("mountPath"), "spec.observability.trace.mountPath", mount) or mount
        if not mount.startswith("/"):
            raise SpecError("spec.observability.trace.mountPath", f"must be absolute, got {mount!r}")
    return ObservabilitySpec(otlp_endpoint=endpoint, trace_claim=claim, trace_mount=mount)


def _elastic(samplers: Mapping[str, Any], program: ProgramSpec, param: str, shorthand: bool) -> tuple[int, int, str]:
    """``(replicas, maxReplicas, maxParam)`` of the sampler bank; maxReplicas 0 when fixed.
    ``shorthand``: the spec has no groups, so the program's parameters must leave maxParam
    to the operator."""
    replicas = _int(samplers.get("replicas"), "spec.samplers.replicas", D["samplers.replicas"], 1, 512)
    max_param = _str(samplers.get("maxParam"), "spec.samplers.maxParam", D["samplers.maxParam"]) or D["samplers.maxParam"]
    if samplers.get("maxReplicas") is None:
        return replicas, 0, max_param
    most = _int(samplers.get("maxReplicas"), "spec.samplers.maxReplicas", 0, 1, 512)
    if replicas > most:
        raise SpecError("spec.samplers.replicas", f"must be between 1 and spec.samplers.maxReplicas ({most}) "
                        f"for an elastic bank, got {replicas}")  # fmt: skip
    if not _IDENT.match(max_param):
        raise SpecError("spec.samplers.maxParam", f"must be an identifier, got {max_param!r}")
    if max_param == param:
        raise SpecError("spec.samplers.maxParam", f"must differ from spec.samplers.param ({param!r})")
    if shorthand and any(k == max_param for k, _ in program.params):
        raise SpecError("spec.program.params",
                        f"must not set {max_param!r}: the operator sets it from spec.samplers.maxReplicas")  # fmt: skip
    return replicas, most, max_param


def parse_spec(spec: Mapping[str, Any]) -> FederationSpec:
    """Turn a ReactorFederation ``spec`` into a :class:`FederationSpec` or raise SpecError."""
    spec = _obj(spec, "spec")
    program = _program(_obj(spec.get("program"), "spec.program"))
    rti = _obj(spec.get("rti"), "spec.rti")
    samplers = _obj(spec.get("samplers"), "spec.samplers")
    learner = _obj(spec.get("learner"), "spec.learner")
    coord = _obj(spec.get("coordination"), "spec.coordination")
    secret = _obj(spec.get("secretRef"), "spec.secretRef")
    policy = _obj(spec.get("failurePolicy"), "spec.failurePolicy")

    port = _int(rti.get("port"), "spec.rti.port", D["rti.port"], 1024, 65535)
    metrics = _int(rti.get("metricsPort"), "spec.rti.metricsPort", D["rti.metricsPort"], 1024, 65535)
    if port == metrics:
        raise SpecError("spec.rti.metricsPort", "must differ from spec.rti.port")
    fed_metrics = metrics + 1 if metrics + 1 != port else metrics + 2
    sampler_name = _member(samplers, "spec.samplers.name", D["samplers.name"])
    learner_name = _member(learner, "spec.learner.name", D["learner.name"])
    if sampler_name == learner_name:
        raise SpecError("spec.learner.name", f"must differ from spec.samplers.name ({sampler_name!r})")
    if learner_name == "rti":
        raise SpecError("spec.learner.name", "must not be 'rti'")
    param = _str(samplers.get("param"), "spec.samplers.param", D["samplers.param"]) or D["samplers.param"]
    if not _IDENT.match(param):
        raise SpecError("spec.samplers.param", f"must be an identifier, got {param!r}")
    # (with groups the shorthand's parameters name nothing: each group's are checked with it)
    shorthand = spec.get("federateGroups") is None
    if shorthand and any(k == param for k, _ in program.params):
        raise SpecError("spec.program.params", f"must not set {param!r}: the operator sets it from spec.samplers.replicas")
    replicas, max_replicas, max_param = _elastic(samplers, program, param, shorthand)
    sampler_group = _group(samplers, "spec.samplers", sampler_name)
    if GPU_RESOURCE in sampler_group.resources.get("limits", {}):
        raise SpecError("spec.samplers.resources", "samplers run on CPU nodes; request GPUs for the learner")
    timeout = _str(coord.get("timeout"), "spec.coordination.timeout")
    if timeout is not None and not _DURATION.match(timeout):
        raise SpecError("spec.coordination.timeout", f"must look like '10 s' or '500ms', got {timeout!r}")
    join_timeout = _str(coord.get("joinTimeout"), "spec.coordination.joinTimeout")
    if join_timeout is not None and not _DURATION.match(join_timeout):
        raise SpecError("spec.coordination.joinTimeout", f"must look like '120 s' or '5m', got {join_timeout!r}")
    if join_timeout is not None and _ns(join_timeout) < 10**9:
        raise SpecError("spec.coordination.joinTimeout", f"must be at least 1 s, got {join_timeout!r}")
    interval = _str(coord.get("advanceMessageInterval"), "spec.coordination.advanceMessageInterval")
    if interval is not None and (not _DURATION.match(interval) or _ns(interval) < 10**6):
        raise SpecError("spec.coordination.advanceMessageInterval", f"must be a duration of at least 1 ms, like "
                        f"'10ms', got {interval!r}")
    fast = coord.get("fast", D["coordination.fast"])
    if not isinstance(fast, bool):
        raise SpecError("spec.coordination.fast", f"must be a boolean, got {fast!r}")
    mode = coord.get("mode", D["coordination.mode"])
    if mode not in ("centralized", "decentralized"):
        raise SpecError("spec.coordination.mode", f"must be 'centralized' or 'decentralized', got {mode!r}")
    lead_window = _str(coord.get("leadWindow"), "spec.coordination.leadWindow", D["coordination.leadWindow"])
    if lead_window is None or not _LEAD_WINDOW.match(lead_window):
        raise SpecError("spec.coordination.leadWindow", f"must look like '1s', '250ms' or be 'none', got {lead_window!r}")
    secret_name = _str(secret.get("name"), "spec.secretRef.name")
    if secret and not secret_name:
        raise SpecError("spec.secretRef.name", "is required")
    suspend = spec.get("suspend", D["suspend"])
    if not isinstance(suspend, bool):
        raise SpecError("spec.suspend", f"must be a boolean, got {suspend!r}")
    out = FederationSpec(
        program=program,
        rti=_group(rti, "spec.rti", "rti"),
        samplers=sampler_group,
        learner=_group(learner, "spec.learner", learner_name),
        replicas=replicas,
        sampler_param=param,
        max_replicas=max_replicas,
        max_param=max_param,
        gpus=_int(learner.get("gpus"), "spec.learner.gpus", D["learner.gpus"], 0, 16),
        rti_port=port,
        metrics_port=metrics,
        federate_metrics_port=fed_metrics,
        data_port=next(p for p in range(15046, 15056) if p not in (port, metrics, fed_metrics)),
        timeout=timeout,
        join_timeout=join_timeout,
        advance_message_interval=interval,
        fast=fast,
        coordination=mode,
        lead_window=lead_window,
        secret_name=secret_name,
        secret_key=_str(secret.get("key"), "spec.secretRef.key", D["secretRef.key"]) or D["secretRef.key"],
        checkpoint=_checkpoint(_obj(spec.get("checkpoint"), "spec.checkpoint")),
        observability=_observability(_obj(spec.get("observability"), "spec.observability")),
        max_restarts=_int(policy.get("maxRestarts"), "spec.failurePolicy.maxRestarts", D["failurePolicy.maxRestarts"], 0, 100),
        grace_seconds=_int(spec.get("terminationGracePeriodSeconds"), "spec.terminationGracePeriodSeconds",
                            D["terminationGracePeriodSeconds"], 0, 3600),
        suspend=suspend,
    )
    if spec.get("federateGroups") is None:
        return replace(out, groups=shorthand_groups(
            samplers, learner, bank=sampler_name, replicas=replicas, param=param, max_replicas=max_replicas,
            max_param=max_param, learner_name=learner_name, gpus=out.gpus))  # fmt: skip
    return _group_form(out, spec["federateGroups"], samplers, learner)


def _group_form(
    out: FederationSpec, raw: Any, samplers: Mapping[str, Any], learner: Mapping[str, Any]
) -> FederationSpec:
    """A spec with ``federateGroups``: the shorthand's fields may hold only their defaults
    (the API server writes those), but spec.samplers.replicas, the scale group's width."""
    for key, value in samplers.items():
        if key != "replicas" and value != D.get(f"samplers.{key}"):
            raise SpecError(f"spec.samplers.{key}", "with spec.federateGroups only spec.samplers.replicas is read "
                                                    "(the width of the group with scale: true): set this on a group")  # fmt: skip
    for key, value in learner.items():
        if value != D.get(f"learner.{key}"):
            raise SpecError(f"spec.learner.{key}", "with spec.federateGroups the learner is a group: set this on it")
    groups = parse_groups(raw, out.replicas, out.program.image, [k for k, _ in out.program.params])
    scaled = next((g for g in groups if g.scale), None)
    if scaled is None:
        return replace(out, groups=groups, replicas=0, max_replicas=0, gpus=0)
    if scaled.width_param is None:
        i = groups.index(scaled)
        raise SpecError(f"spec.federateGroups[{i}].widthParam", "the scale group's width must reach the program: "
                                                                "name the parameter that receives it")  # fmt: skip
    return replace(out, groups=groups, samplers=GroupSpec(name=scaled.bank or ""), sampler_param=scaled.width_param,
                   max_replicas=scaled.max_replicas, max_param=scaled.max_param or out.max_param, gpus=0)


def program_params(s: FederationSpec, width: int, max_width: int) -> list[tuple[str, str]]:
    """Every process's ``--param`` pairs: the program's, every bank's width (the scale
    group's ``width``, the incarnation's) and an elastic bank's maximum."""
    params = list(s.program.params)
    for g in s.groups:
        if g.scale and g.width_param:
            params.append((g.width_param, str(width)))
            if max_width > 0:  # an elastic bank: every pod of the incarnation gets the same bounds
                params.append((g.max_param or s.max_param, str(max_width)))
        elif g.bank is not None:
            if g.per_member_param:
                params.append((g.per_member_param, str(g.per_member)))
            if g.width_param:
                params.append((g.width_param, str(g.replicas)))
            if g.max_param:
                params.append((g.max_param, str(g.max_replicas)))
    return sorted(params)
