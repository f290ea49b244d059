"""``spec.federateGroups`` -> :class:`~.groups.FederateGroup` values, the shorthand's
conversion, and the checks the schema cannot make (each a SpecError naming the field)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from .errors import SpecError
from .fields import int_, obj, placement, str_
from .groups import FederateGroup, is_cpu_runtime_image
from .schema import GROUP_NAME, IDENT, MEMBER, PARAM
from .schema_parts import OPERATOR_ENV_VARS, THREAD_ENV_VARS

__all__ = ["ROLE_LEARNER", "ROLE_SAMPLER", "env_pairs", "group_width", "parse_groups", "shorthand_groups"]

ROLE_SAMPLER = "sampler"  # the shorthand's role labels, kept: selectors and policies name them
ROLE_LEARNER = "learner"
_GROUP = re.compile(GROUP_NAME)
_IDENT = re.compile(IDENT)
_MEMBER = re.compile(MEMBER)
_PARAM = re.compile(PARAM)


def shorthand_groups(
    samplers: Mapping[str, Any],
    learner: Mapping[str, Any],
    *,
    bank: str,
    replicas: int,
    param: str,
    max_replicas: int,
    max_param: str,
    learner_name: str,
    gpus: int,
) -> tuple[FederateGroup, ...]:
    """The ``samplers``/``learner`` form as two groups: the scaled bank (role ``sampler``)
    and the learner (role ``learner``; it holds the state, so it is stopped first and
    mounts the checkpoint volume). Pure: the same pods as before groups existed."""
    s_res, s_sel, s_tol = placement(samplers, "spec.samplers")
    l_res, l_sel, l_tol = placement(learner, "spec.learner")
    return (
        FederateGroup(
            name=bank, role=ROLE_SAMPLER, bank=bank, width_param=param, replicas=replicas,
            max_replicas=max_replicas, max_param=max_param if max_replicas else None, scale=True,
            resources=s_res, node_selector=s_sel, tolerations=s_tol,
        ),
        FederateGroup(
            name=learner_name, role=ROLE_LEARNER, federate=learner_name,
            image=str_(learner.get("image"), "spec.learner.image") or None, gpus=gpus,
            resources=l_res, node_selector=l_sel, tolerations=l_tol, holds_state=True,
        ),
    )  # fmt: skip


def _param(value: Any, path: str) -> str | None:
    """A program parameter's name: an identifier or a dotted path to a nested field (pbt.population)."""
    text = str_(value, path)
    if text is not None and not _PARAM.match(text):
        raise SpecError(path, f"must be a parameter name (an identifier or a dotted path), got {text!r}")
    return text


def env_pairs(raw: Any, path: str) -> tuple[tuple[str, str], ...]:
    """An ``env`` list (spec.program.env, a group's env) as (name, value) pairs; a name the
    operator sets itself is refused, naming the element."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise SpecError(path, "must be a list")
    out = []
    for i, item in enumerate(raw):
        item = obj(item, f"{path}[{i}]")
        name = str_(item.get("name"), f"{path}[{i}].name")
        if not name or not _IDENT.match(name):
            raise SpecError(f"{path}[{i}].name", f"invalid name {name!r}")
        if name in OPERATOR_ENV_VARS:
            raise SpecError(f"{path}[{i}].name", f"{name} is set by the operator in every pod (the member's "
                            "credentials and the pod's address)")
        if name in THREAD_ENV_VARS:
            raise SpecError(f"{path}[{i}].name", f"{name} is set by the operator from spec.program.threads")
        out.append((name, str_(item.get("value"), f"{path}[{i}].value", "") or ""))
    return tuple(out)


def _volumes(raw: Mapping[str, Any], path: str) -> tuple[tuple[dict[str, Any], ...], tuple[dict[str, Any], ...]]:
    volumes = tuple(dict(obj(v, f"{path}.volumes[{i}]")) for i, v in enumerate(raw.get("volumes") or []))
    names = [str(v.get("name") or "") for v in volumes]
    for i, name in enumerate(names):
        if not name or name in ("tmp", "program", "checkpoint") or names.index(name) != i:
            raise SpecError(f"{path}.volumes[{i}].name", f"missing, reserved or repeated volume name {name!r}")
    mounts = tuple(dict(obj(m, f"{path}.volumeMounts[{i}]")) for i, m in enumerate(raw.get("volumeMounts") or []))
    for i, m in enumerate(mounts):
        if m.get("name") not in names:
            raise SpecError(f"{path}.volumeMounts[{i}].name", f"{m.get('name')!r} names no volume of the group ({names})")
        if not str(m.get("mountPath") or "").startswith("/"):
            raise SpecError(f"{path}.volumeMounts[{i}].mountPath", f"must be absolute, got {m.get('mountPath')!r}")
    return volumes, mounts


def _one(raw: Mapping[str, Any], path: str, scale_width: int, program_image: str) -> FederateGroup:
    name = str_(raw.get("name"), f"{path}.name")
    if not name or not _GROUP.match(name) or name == "rti":
        raise SpecError(f"{path}.name", f"must match {GROUP_NAME} and not be 'rti', got {name!r}")
    federate, bank = str_(raw.get("federate"), f"{path}.federate"), str_(raw.get("bank"), f"{path}.bank")
    if (federate is None) == (bank is None):
        raise SpecError(path, "needs exactly one of federate (one federate of the program) or bank (a bank of it)")
    for key, value in (("federate", federate), ("bank", bank)):
        if value is not None and not _MEMBER.match(value):
            raise SpecError(f"{path}.{key}", f"must match {MEMBER}, got {value!r}")
    scale = raw.get("scale", False)
    if not isinstance(scale, bool):
        raise SpecError(f"{path}.scale", f"must be a boolean, got {scale!r}")
    bank_keys = [k for k in ("widthParam", "replicas", "minReplicas", "maxReplicas", "maxParam") if k in raw]
    if federate is not None and (bank_keys or scale):
        raise SpecError(f"{path}.{bank_keys[0] if bank_keys else 'scale'}", "only a bank group has a width")
    if scale and "replicas" in raw:
        raise SpecError(f"{path}.replicas", "the scale group's width is spec.samplers.replicas (what kubectl scale sets)")
    replicas = scale_width if scale else int_(raw.get("replicas"), f"{path}.replicas", 1, 1, 512)
    most = 0 if raw.get("maxReplicas") is None else int_(raw.get("maxReplicas"), f"{path}.maxReplicas", 0, 1, 512)
    least = int_(raw.get("minReplicas"), f"{path}.minReplicas", 1, 1, 512)
    where = "spec.samplers.replicas" if scale else f"{path}.replicas"
    if most and not least <= replicas <= most:
        raise SpecError(where, f"must be between {path}.minReplicas ({least}) and {path}.maxReplicas ({most}) "
                               f"for an elastic bank, got {replicas}")  # fmt: skip
    if "minReplicas" in raw and not most:
        raise SpecError(f"{path}.minReplicas", "needs maxReplicas (an elastic bank's bounds)")
    max_param = _param(raw.get("maxParam"), f"{path}.maxParam")
    if bool(most) != (max_param is not None):
        raise SpecError(f"{path}.maxParam", "is set exactly when maxReplicas is (the parameter that receives it)")
    resources, selector, tolerations = placement(raw, path)
    gpus = int_(raw.get("gpus"), f"{path}.gpus", 0, 0, 16)
    image = str_(raw.get("image"), f"{path}.image") or None
    if gpus and is_cpu_runtime_image(image or program_image):
        raise SpecError(f"{path}.gpus", f"asks for {gpus} GPU(s) but the group runs the CPU runtime image "
                                        f"{image or program_image!r}: use reactorfed-runtime-gpu, or gpus: 0")  # fmt: skip
    if "nvidia.com/gpu" in (resources.get("limits") or {}) or "nvidia.com/gpu" in (resources.get("requests") or {}):
        raise SpecError(f"{path}.resources", "request GPUs with gpus, not as a resource")
    affinity = raw.get("affinity")
    volumes, mounts = _volumes(raw, path)
    holds = raw.get("checkpoint", False)
    if not isinstance(holds, bool):
        raise SpecError(f"{path}.checkpoint", f"must be a boolean, got {holds!r}")
    follows, per_member, per_param = None, 1, None
    if raw.get("follows") is not None:
        f = obj(raw.get("follows"), f"{path}.follows")
        if bank is None or bank_keys or scale:
            raise SpecError(f"{path}.follows", "only a bank without replicas, minReplicas, maxReplicas, widthParam "
                                               "or scale of its own follows another group's width")  # fmt: skip
        follows = str_(f.get("group"), f"{path}.follows.group")
        if not follows or follows == name:
            raise SpecError(f"{path}.follows.group", f"must name another group, got {follows!r}")
        per_member = int_(f.get("perMember"), f"{path}.follows.perMember", 1, 1, 64)
        per_param = _param(f.get("param"), f"{path}.follows.param")
    return FederateGroup(
        name=name, role=name, federate=federate, bank=bank,
        width_param=_param(raw.get("widthParam"), f"{path}.widthParam"), replicas=1 if federate else replicas,
        min_replicas=least, max_replicas=most, max_param=max_param, scale=scale, image=image, gpus=gpus,
        resources=resources, node_selector=selector, tolerations=tolerations,
        affinity=dict(obj(affinity, f"{path}.affinity")) if affinity else None,
        env=env_pairs(raw.get("env"), f"{path}.env"), volumes=volumes, volume_mounts=mounts, holds_state=holds,
        follows=follows, per_member=per_member, per_member_param=per_param,
    )  # fmt: skip


def parse_groups(raw: Any, scale_width: int, program_image: str, program_params: Sequence[str]) -> tuple[FederateGroup, ...]:
    """``spec.federateGroups``: every group checked alone, then together (names, what
    each places, parameters, the one scale group)."""
    path = "spec.federateGroups"
    if not isinstance(raw, list) or not raw:
        raise SpecError(path, "must be a non-empty list")
    groups = [_one(obj(g, f"{path}[{i}]"), f"{path}[{i}]", scale_width, program_image) for i, g in enumerate(raw)]
    names: dict[str, int] = {}
    placed: dict[str, int] = {}
    params: dict[str, str] = {}
    for i, g in enumerate(groups):
        if g.name in names:
            raise SpecError(f"{path}[{i}].name", f"duplicate group name {g.name!r} (also {path}[{names[g.name]}])")
        names[g.name] = i
        what = g.federate or g.bank or ""
        if what in placed:
            raise SpecError(f"{path}[{i}]", f"places {what!r} twice (also {path}[{placed[what]}]): a federate "
                                            "belongs to exactly one group")  # fmt: skip
        placed[what] = i
        for key, param in (("widthParam", g.width_param), ("maxParam", g.max_param),
                           ("follows.param", g.per_member_param)):
            if param is None:
                continue
            if param in program_params:
                raise SpecError("spec.program.params", f"must not set {param!r}: the operator sets it from "
                                                       f"{path}[{i}] ({g.name})")  # fmt: skip
            if param in params:
                raise SpecError(f"{path}[{i}].{key}", f"{param!r} is already {params[param]}")
            params[param] = f"{path}[{i}].{key}"
    scaled = [i for i, g in enumerate(groups) if g.scale]
    if len(scaled) > 1:
        raise SpecError(f"{path}[{scaled[1]}].scale", f"only one group is scaled (also {path}[{scaled[0]}])")
    for i, g in enumerate(groups):
        if g.follows is None:
            continue
        led = groups[names[g.follows]] if g.follows in names else None
        if led is None or led.bank is None or led.follows is not None or led.elastic:
            raise SpecError(f"{path}[{i}].follows.group", f"{g.follows!r} must name a bank group of {path} that is "
                                                          "neither elastic nor a follower itself")  # fmt: skip
        groups[i] = replace(g, replicas=(scale_width if led.scale else led.replicas) * g.per_member)
    return tuple(groups)


def group_width(groups: Sequence[FederateGroup], group: FederateGroup, scale_width: int) -> int:
    """A group's width in an incarnation whose scale group is ``scale_width`` wide: a
    follower's is the width of the group it follows times its ``per_member``."""
    if group.scale:
        return scale_width
    if group.follows is not None:
        led = next(g for g in groups if g.name == group.follows)
        return group_width(groups, led, scale_width) * group.per_member
    return group.replicas
