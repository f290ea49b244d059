"""The program says what its federates are: ``reactorfed federates PROGRAM --json``.

The runtime's command (run with the same ``--param`` pairs every pod gets, see
:func:`discovery_command`) prints one JSON object::

    {"program": "pkg.mod:Main",
     "federates": [{"name": "learner", "bank": null},
                   {"name": "samplers[0]", "bank": "samplers", "index": 0}, ...],
     "banks": [{"name": "samplers", "width": 2, "width_param": "num_samplers",
                "elastic": {"min": 1, "max": 8} | null}]}

:func:`parse_federates` reads it (refusing anything else with a message),
:func:`check_groups` compares the federate groups with it and returns what does not
match, each finding naming the spec's field and the federate, and :func:`condition` turns
the findings into the status condition ``GroupsMatchProgram``. All pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .groups import FederateGroup
from .spec import FederationSpec, program_params

__all__ = [
    "CONDITION",
    "DiscoveryError",
    "Finding",
    "ProgramBank",
    "ProgramFederates",
    "check_groups",
    "condition",
    "discovery_command",
    "parse_federates",
]

CONDITION = "GroupsMatchProgram"
_MEMBER = re.compile(r"^([a-z_][a-z0-9_]*)\[([0-9]+)\]$")


class DiscoveryError(ValueError):
    """The command's output is not the agreed JSON."""


@dataclass(frozen=True)
class ProgramBank:
    name: str
    width: int
    width_param: str | None
    elastic: tuple[int, int] | None  # (min, max)


@dataclass(frozen=True)
class ProgramFederates:
    program: str
    #: top-level federates that are not bank members
    singles: tuple[str, ...]
    banks: tuple[ProgramBank, ...]


def discovery_command(spec: FederationSpec) -> list[str]:
    """The command the operator runs in a short-lived pod of the program's image."""
    params = program_params(spec, spec.replicas, spec.max_replicas)
    return ["reactorfed", "federates", spec.program.entrypoint,
            *[a for k, v in params for a in ("--param", f"{k}={v}")], "--json"]  # fmt: skip


def _need(cond: bool, message: str) -> None:
    if not cond:
        raise DiscoveryError(message)


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_federates(answer: str | Mapping[str, Any]) -> ProgramFederates:
    """The command's JSON (text or already decoded) -> :class:`ProgramFederates`."""
    try:
        raw = json.loads(answer) if isinstance(answer, str) else answer
    except json.JSONDecodeError as exc:
        raise DiscoveryError(f"not JSON: {exc}") from None
    _need(isinstance(raw, Mapping), "the answer must be a JSON object")
    _need(isinstance(raw.get("program"), str), "'program' must be a string")
    feds, banks_raw = raw.get("federates"), raw.get("banks")
    if not isinstance(feds, list) or not isinstance(banks_raw, list):
        raise DiscoveryError("'federates' and 'banks' must be lists")
    banks: dict[str, ProgramBank] = {}
    for i, b in enumerate(banks_raw):
        _need(isinstance(b, Mapping) and isinstance(b.get("name"), str), f"banks[{i}] needs a name")
        _need(_int(b.get("width")) and b["width"] >= 0, f"banks[{i}].width must be an integer >= 0")
        param = b.get("width_param")
        _need(param is None or isinstance(param, str), f"banks[{i}].width_param must be a string or null")
        el = b.get("elastic")
        _need(el is None or (isinstance(el, Mapping) and _int(el.get("min")) and _int(el.get("max"))
                             and 0 <= el["min"] <= el["max"]), f"banks[{i}].elastic must be null or {{min, max}}")  # fmt: skip
        _need(b["name"] not in banks, f"bank {b['name']!r} listed twice")
        banks[b["name"]] = ProgramBank(b["name"], b["width"], param, (el["min"], el["max"]) if el else None)
    singles: list[str] = []
    seen: set[str] = set()
    for i, f in enumerate(feds):
        _need(isinstance(f, Mapping) and isinstance(f.get("name"), str), f"federates[{i}] needs a name")
        name, bank = f["name"], f.get("bank")
        _need(name not in seen, f"federate {name!r} listed twice")
        seen.add(name)
        if bank is None:
            _need(_MEMBER.match(name) is None, f"federates[{i}] {name!r} looks like a bank member but has no bank")
            singles.append(name)
            continue
        m = _MEMBER.match(name)
        _need(bank in banks, f"federates[{i}] names bank {bank!r}, which 'banks' does not list")
        _need(m is not None and m[1] == bank and _int(f.get("index")) and int(m[2]) == f["index"],
              f"federates[{i}] must be named {bank}[index] with its index")  # fmt: skip
    for b in banks.values():
        members = sum(1 for n in seen if n.startswith(f"{b.name}["))
        _need(members == b.width, f"bank {b.name!r} is {b.width} wide but lists {members} members")
    return ProgramFederates(raw["program"], tuple(singles), tuple(banks.values()))


@dataclass(frozen=True)
class Finding:
    field: str
    federate: str
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


def check_groups(groups: Sequence[FederateGroup], program: ProgramFederates, path: str = "spec.federateGroups") -> list[Finding]:
    """What does not match between the groups and the program's own federates: a group
    that names no federate (or bank) of the program, a federate or bank no group places,
    a bank whose width parameter the group does not set, elastic bounds on one side only."""
    out: list[Finding] = []
    banks = {b.name: b for b in program.banks}
    placed: set[str] = set()
    for i, g in enumerate(groups):
        where = f"{path}[{i}]"
        if g.federate is not None:
            placed.add(g.federate)
            if g.federate in banks:
                out.append(Finding(f"{where}.federate", g.federate, f"{g.federate!r} is a bank of the program, "
                                                                    "not one federate: place it with bank:"))  # fmt: skip
            elif g.federate not in program.singles:
                out.append(Finding(f"{where}.federate", g.federate, f"the program has no federate {g.federate!r} "
                                                                    f"(its federates: {_names(program)})"))  # fmt: skip
            continue
        bank = banks.get(g.bank or "")
        placed.add(g.bank or "")
        if bank is None:
            what = "a federate, not a bank: place it with federate:" if g.bank in program.singles else \
                f"the program has no bank {g.bank!r} (its federates: {_names(program)})"  # fmt: skip
            out.append(Finding(f"{where}.bank", g.bank or "", what))
            continue
        if g.follows is not None:
            out += _check_follower(g, where, bank, next((x for x in groups if x.name == g.follows), None))
        elif bank.width_param is not None and g.width_param != bank.width_param:
            out.append(Finding(f"{where}.widthParam", f"{bank.name}[*]",
                               f"the program's bank {bank.name!r} takes its width from parameter "
                               f"{bank.width_param!r}; the group sets {g.width_param or 'none'}"))  # fmt: skip
        elif bank.width_param is None and not g.scale and g.replicas != bank.width:
            out.append(Finding(f"{where}.replicas", f"{bank.name}[*]", f"the program's bank {bank.name!r} is "
                               f"{bank.width} wide (no width parameter); the group asks for {g.replicas}"))  # fmt: skip
        if (bank.elastic is not None) != g.elastic:
            side = "is elastic in the program but not in the group (set maxReplicas and maxParam)" if bank.elastic \
                else "is fixed in the program but the group sets maxReplicas"  # fmt: skip
            out.append(Finding(f"{where}.maxReplicas", f"{bank.name}[*]", f"bank {bank.name!r} {side}"))
    for name in program.singles:
        if name not in placed:
            out.append(Finding(path, name, f"no group places the program's federate {name!r}: add a group with "
                                           f"federate: {name}"))  # fmt: skip
    for bank in program.banks:
        if bank.name not in placed:
            out.append(Finding(path, f"{bank.name}[*]", f"no group places the program's bank {bank.name!r}: add a "
                                                        f"group with bank: {bank.name}"))  # fmt: skip
    return out


def _check_follower(g: FederateGroup, where: str, bank: ProgramBank, leader: FederateGroup | None) -> list[Finding]:
    """A bank group that follows another's width (``follows``): the program's bank width
    must come from the followed group's width parameter or from ``follows.param``, or,
    fixed by the program, equal the followed group's width times ``follows.perMember``."""
    if leader is None:  # (the spec's own check names it)
        return []
    if bank.width_param is not None:
        sets = [p for p in (leader.width_param, g.per_member_param) if p]
        if bank.width_param in sets:
            return []
        return [Finding(f"{where}.follows.param", f"{bank.name}[*]",
                        f"the program's bank {bank.name!r} takes its width from parameter {bank.width_param!r}; "
                        f"the group follows {leader.name!r}, which sets {' and '.join(sets) or 'none'}")]  # fmt: skip
    if leader.replicas * g.per_member != bank.width:
        return [Finding(f"{where}.follows.perMember", f"{bank.name}[*]",
                        f"the program's bank {bank.name!r} is {bank.width} wide (no width parameter); the group "
                        f"follows {leader.name!r} with {leader.replicas} x {g.per_member}")]  # fmt: skip
    return []


def _names(program: ProgramFederates) -> str:
    return ", ".join([*program.singles, *(f"{b.name}[*]" for b in program.banks)]) or "none"


def condition(findings: Sequence[Finding]) -> dict[str, str]:
    """The ``GroupsMatchProgram`` condition (type, status, reason, message) for the findings."""
    if not findings:
        return {"type": CONDITION, "status": "True", "reason": "Matched",
                "message": "every federate of the program is placed by exactly one group"}  # fmt: skip
    return {"type": CONDITION, "status": "False", "reason": "GroupsDoNotMatchProgram",
            "message": "; ".join(str(f) for f in findings)}  # fmt: skip
