"""Which policy acts for which agent: the three mappings resolved, and every mistake refused
before anything runs, naming the field."""

from __future__ import annotations

import pytest

from reactorfed.errors import ValidationError
from reactorfed.rl import PolicyMapping
from reactorfed.rl.plans.policy_mapping import PolicySlot

AGENTS = ("agent_0", "agent_1", "agent_2")


def test_shared_per_agent_and_groups() -> None:
    assert PolicyMapping().resolve(AGENTS) == (PolicySlot("shared", (0, 1, 2)),)
    assert PolicyMapping("per_agent").resolve(AGENTS) == (
        PolicySlot("agent_0", (0,)), PolicySlot("agent_1", (1,)), PolicySlot("agent_2", (2,)))
    groups = PolicyMapping.of_groups({"blue": ["agent_2", "agent_0"], "red": ["agent_1"]})
    assert groups.groups == ("blue:agent_2+agent_0", "red:agent_1")
    # a group's agents in the environment's order, the policies in the mapping's
    assert groups.resolve(AGENTS) == (PolicySlot("blue", (0, 2)), PolicySlot("red", (1,)))


@pytest.mark.parametrize(("mapping", "message"), [
    (PolicyMapping("groups", ("a:agent_0+agent_1",)), r"mapping\.groups: no group places 'agent_2'"),
    (PolicyMapping("groups", ("a:agent_0+agent_1+agent_2", "b:")), r"mapping\.groups: group 'b' names no agent"),
    (PolicyMapping("groups", ("a:agent_0+agent_1+agent_9",)), r"mapping\.groups: group 'a' names 'agent_9', which is no agent"),
    (PolicyMapping("groups", ("a:agent_0+agent_1", "b:agent_1+agent_2")), r"mapping\.groups: agent 'agent_1' is in group 'a' and in 'b'"),
    (PolicyMapping("groups", ("a:agent_0", "a:agent_1+agent_2")), r"mapping\.groups: policy 'a' is named twice"),
    (PolicyMapping("groups", ("agent_0+agent_1+agent_2",)), r"mapping\.groups: 'agent_0\+agent_1\+agent_2' is not POLICY:AGENT"),
    (PolicyMapping("groups", ("a/b:agent_0+agent_1+agent_2",)), r"mapping\.groups: policy name 'a/b' must be"),
    (PolicyMapping("groups"), r"mapping\.groups: no group given"),
    (PolicyMapping("shared", ("a:agent_0",)), r"mapping\.groups is only read when mapping\.kind is groups"),
    (PolicyMapping("everyone"), r"mapping\.kind must be one of shared, per_agent, groups"),  # type: ignore[arg-type]
])
def test_mistakes_are_refused_naming_the_field(mapping: PolicyMapping, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        mapping.resolve(AGENTS)


def test_a_policy_cannot_act_for_unlike_agents() -> None:
    spaces = ("obs 3, 3 actions", "obs 11, 5 actions")
    with pytest.raises(ValidationError, match=r"mapping: policy 'shared' acts for agents whose observations or "
                                              r"actions differ \(speaker_0, listener_0"):
        PolicyMapping().resolve(("speaker_0", "listener_0"), spaces)
    assert len(PolicyMapping("per_agent").resolve(("speaker_0", "listener_0"), spaces)) == 2
