"""Which policy acts for which agent of a multi-agent environment (RLlib's
``policy_mapping_fn`` and its set of policies, as data): one policy ``shared`` by every
agent (parameter sharing), a policy ``per_agent``, or ``groups`` of agents, each group a
policy of its own.

A mapping is resolved against the environment's agents (:meth:`PolicyMapping.resolve`):
every agent is placed exactly once, every group names at least one agent, and the agents of
one policy see the same observation shape and have the same actions. A mistake is a
:class:`~reactorfed.ValidationError` naming the field (``mapping.groups``, ``mapping.kind``)
before anything runs.

On the command line a recipe's ``mapping`` field takes ``--param mapping.kind=groups
--param mapping.groups=red:agent_0+agent_1,blue:agent_2`` (a group is ``POLICY:AGENT+AGENT``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from ...errors import ValidationError

__all__ = ["MappingKind", "PolicyMapping", "PolicySlot"]

MappingKind = Literal["shared", "per_agent", "groups"]
_KINDS: tuple[str, ...] = ("shared", "per_agent", "groups")
_SAFE_NAME = re.compile(r"[A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class PolicySlot:
    """One policy of a resolved mapping: its name and its agents (indices into the
    environment's agents, in the environment's order)."""

    name: str
    agents: tuple[int, ...]


@dataclass(frozen=True)
class PolicyMapping:
    """``kind``: ``shared`` (one policy, named ``shared``), ``per_agent`` (a policy per agent,
    named as the agent) or ``groups`` (``groups``: ``POLICY:AGENT+AGENT+...`` items)."""

    kind: MappingKind = "shared"
    groups: tuple[str, ...] = ()

    @classmethod
    def of_groups(cls, groups: Mapping[str, Sequence[str]]) -> PolicyMapping:
        """A ``groups`` mapping from ``{policy: [agent, ...]}``."""
        return cls("groups", tuple(f"{name}:{'+'.join(agents)}" for name, agents in groups.items()))

    def resolve(self, agents: Sequence[str], spaces: Sequence[object] | None = None,
                field: str = "mapping") -> tuple[PolicySlot, ...]:
        """The policies, in order, for the environment's ``agents``. ``spaces[i]`` (any value
        with ``==``) is agent ``i``'s observation and action space: agents of one policy must
        share it. ``field`` names the mapping in the messages."""
        if self.kind not in _KINDS:
            raise ValidationError(f"{field}.kind must be one of {', '.join(_KINDS)}, got {self.kind!r}")
        if self.kind != "groups" and self.groups:
            raise ValidationError(f"{field}.groups is only read when {field}.kind is groups, not {self.kind}")
        if self.kind == "shared":
            slots: tuple[PolicySlot, ...] = (PolicySlot("shared", tuple(range(len(agents)))),)
        elif self.kind == "per_agent":
            slots = tuple(PolicySlot(a, (i,)) for i, a in enumerate(agents))
        else:
            slots = self._groups(agents, f"{field}.groups")
        if spaces is not None:
            for slot in slots:
                kinds = {repr(spaces[i]) for i in slot.agents}
                if len(kinds) > 1:
                    names = ", ".join(agents[i] for i in slot.agents)
                    raise ValidationError(
                        f"{field}: policy {slot.name!r} acts for agents whose observations or actions differ "
                        f"({names}: {'; '.join(sorted(kinds))}); give them policies of their own "
                        f"({field}.kind=per_agent, or groups)")
        return slots

    def _groups(self, agents: Sequence[str], field: str) -> tuple[PolicySlot, ...]:
        if not self.groups:
            raise ValidationError(f"{field}: no group given (items POLICY:AGENT+AGENT, e.g. team:{'+'.join(agents)})")
        index = {a: i for i, a in enumerate(agents)}
        placed: dict[str, str] = {}
        slots: list[PolicySlot] = []
        for item in self.groups:
            name, colon, members = (s.strip() for s in item.partition(":"))
            if not colon or not name:
                raise ValidationError(f"{field}: {item!r} is not POLICY:AGENT+AGENT")
            if not _SAFE_NAME.fullmatch(name):
                raise ValidationError(f"{field}: policy name {name!r} must be letters, digits, '_', '-' or '.' "
                                      "(it names the policy's checkpoint file)")
            if any(s.name == name for s in slots):
                raise ValidationError(f"{field}: policy {name!r} is named twice")
            names = [m.strip() for m in members.split("+") if m.strip()]
            if not names:
                raise ValidationError(f"{field}: group {name!r} names no agent")
            for a in names:
                if a not in index:
                    raise ValidationError(f"{field}: group {name!r} names {a!r}, which is no agent of the "
                                          f"environment ({', '.join(agents)})")
                if a in placed:
                    raise ValidationError(f"{field}: agent {a!r} is in group {placed[a]!r} and in {name!r}")
                placed[a] = name
            slots.append(PolicySlot(name, tuple(sorted(index[a] for a in names))))
        missing = [a for a in agents if a not in placed]
        if missing:
            raise ValidationError(f"{field}: no group places {', '.join(map(repr, missing))}: every agent needs a policy")
        return tuple(slots)
