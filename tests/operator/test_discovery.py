"""The contract of `reactorfed federates PROGRAM --json` and the check of the groups against it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reactorfed_operator.discovery import (
    CONDITION,
    DiscoveryError,
    ProgramBank,
    check_groups,
    condition,
    discovery_command,
    parse_federates,
)
from reactorfed_operator.spec import parse_spec

from .helpers import make_fed, minimal_spec


def answer(banks: list[dict[str, Any]] | None = None, singles: tuple[str, ...] = ("learner",)) -> dict[str, Any]:
    banks = [{"name": "samplers", "width": 2, "width_param": "num_samplers", "elastic": None}] if banks is None else banks
    feds: list[dict[str, Any]] = [{"name": n, "bank": None} for n in singles]
    for b in banks:
        feds += [{"name": f"{b['name']}[{i}]", "bank": b["name"], "index": i} for i in range(b["width"])]
    return {"program": "pkg.mod:Main", "federates": feds, "banks": banks}


def test_parse_the_documented_example() -> None:
    text = json.dumps({"program": "pkg.mod:Main",
                       "federates": [{"name": "learner", "bank": None},
                                     {"name": "samplers[0]", "bank": "samplers", "index": 0},
                                     {"name": "samplers[1]", "bank": "samplers", "index": 1}],
                       "banks": [{"name": "samplers", "width": 2, "width_param": "num_samplers",
                                  "elastic": {"min": 1, "max": 8}}]})  # fmt: skip
    p = parse_federates(text)
    assert p.program == "pkg.mod:Main" and p.singles == ("learner",)
    assert p.banks == (ProgramBank("samplers", 2, "num_samplers", (1, 8)),)


@pytest.mark.parametrize(
    ("mutate", "fragment"),
    [
        (lambda a: "not json", "not JSON"),
        (lambda a: [], "JSON object"),
        (lambda a: {**a, "program": 3}, "'program'"),
        (lambda a: {**a, "banks": {}}, "must be lists"),
        (lambda a: {**a, "federates": [*a["federates"], {"name": "learner", "bank": None}]}, "listed twice"),
        (lambda a: {**a, "federates": a["federates"][:-1]}, "2 wide but lists 1"),
        (lambda a: {**a, "federates": [*a["federates"], {"name": "x[0]", "bank": "x", "index": 0}]}, "does not list"),
        (lambda a: {**a, "federates": [*a["federates"], {"name": "y[3]", "bank": None}]}, "has no bank"),
        (lambda a: {**a, "banks": [{**a["banks"][0], "elastic": {"min": 3, "max": 1}}]}, "elastic"),
        (lambda a: {**a, "banks": [{**a["banks"][0], "width": "2"}]}, "width"),
        (lambda a: {**a, "federates": [a["federates"][0], {"name": "samplers[0]", "bank": "samplers", "index": 1},
                                       a["federates"][2]]}, "with its index"),
    ],
)  # fmt: skip
def test_malformed_answers(mutate: Any, fragment: str) -> None:
    raw = mutate(answer())
    with pytest.raises(DiscoveryError) as err:
        parse_federates(raw if isinstance(raw, str) else json.dumps(raw))
    assert fragment in str(err.value)


def test_the_shorthand_matches_its_program() -> None:
    fed = make_fed()
    findings = check_groups(fed.spec.groups, parse_federates(answer()))
    assert findings == []
    assert condition(findings)["status"] == "True" and condition(findings)["type"] == CONDITION


GROUPS = [{"name": "env", "federate": "env"},
          {"name": "agents", "bank": "agents", "widthParam": "num_agents", "scale": True}]  # fmt: skip


def _check(groups: list[dict[str, Any]], program: dict[str, Any]) -> list[tuple[str, str, str]]:
    spec = parse_spec(minimal_spec(federateGroups=groups))
    return [(f.field, f.federate, f.message) for f in check_groups(spec.groups, parse_federates(program))]


def test_groups_match() -> None:
    program = answer([{"name": "agents", "width": 2, "width_param": "num_agents", "elastic": None}], ("env",))
    assert _check(GROUPS, program) == []


def test_a_group_that_names_no_federate_of_the_program() -> None:
    program = answer([{"name": "agents", "width": 2, "width_param": "num_agents", "elastic": None}], ("world",))
    found = _check(GROUPS, program)
    assert ("spec.federateGroups[0].federate", "env",
            "the program has no federate 'env' (its federates: world, agents[*])") in found  # fmt: skip
    assert any(f[0] == "spec.federateGroups" and f[1] == "world" and "no group places" in f[2] for f in found)


def test_a_bank_named_as_federate_and_a_federate_as_bank() -> None:
    program = answer([{"name": "env", "width": 1, "width_param": None, "elastic": None}], ("agents",))
    found = {f[0]: f[2] for f in _check(GROUPS, program)}
    assert "is a bank of the program" in found["spec.federateGroups[0].federate"]
    assert "a federate, not a bank" in found["spec.federateGroups[1].bank"]


def test_a_bank_no_group_places() -> None:
    program = answer([{"name": "agents", "width": 2, "width_param": "num_agents", "elastic": None},
                      {"name": "shards", "width": 4, "width_param": "num_shards", "elastic": None}], ("env",))  # fmt: skip
    assert _check(GROUPS, program) == [("spec.federateGroups", "shards[*]", "no group places the program's bank "
                                        "'shards': add a group with bank: shards")]  # fmt: skip


def test_a_bank_whose_width_parameter_the_group_does_not_set() -> None:
    program = answer([{"name": "agents", "width": 2, "width_param": "n_agents", "elastic": None}], ("env",))
    (found,) = _check(GROUPS, program)
    assert found[0] == "spec.federateGroups[1].widthParam" and found[1] == "agents[*]"
    assert "'n_agents'" in found[2] and "num_agents" in found[2]
    groups = [GROUPS[0], {"name": "agents", "bank": "agents", "replicas": 2}]
    (found,) = _check(groups, program)
    assert "the group sets none" in found[2]


def test_a_fixed_width_bank() -> None:
    program = answer([{"name": "agents", "width": 3, "width_param": None, "elastic": None}], ("env",))
    groups = [GROUPS[0], {"name": "agents", "bank": "agents", "replicas": 2}]
    (found,) = _check(groups, program)
    assert found[0] == "spec.federateGroups[1].replicas" and "3 wide" in found[2]


def test_elastic_on_one_side_only() -> None:
    program = answer([{"name": "agents", "width": 2, "width_param": "num_agents", "elastic": {"min": 1, "max": 4}}],
                     ("env",))  # fmt: skip
    (found,) = _check(GROUPS, program)
    assert found[0] == "spec.federateGroups[1].maxReplicas" and "elastic in the program" in found[2]
    cond = condition(check_groups(parse_spec(minimal_spec(federateGroups=GROUPS)).groups, parse_federates(program)))
    assert cond["status"] == "False" and cond["reason"] == "GroupsDoNotMatchProgram"
    assert cond["message"].startswith("spec.federateGroups[1].maxReplicas: bank 'agents'")


def test_discovery_command_passes_every_pods_params() -> None:
    fed = make_fed(program={"image": "i", "entrypoint": "m:Main", "params": {"seed": "1"}},
                   samplers={"replicas": 3, "maxReplicas": 5})  # fmt: skip
    assert discovery_command(fed.spec) == ["reactorfed", "federates", "m:Main", "--param", "max_samplers=5",
                                           "--param", "num_samplers=3", "--param", "seed=1", "--json"]  # fmt: skip


def test_a_bank_that_follows_another_groups_width() -> None:
    """The data-parallel shape: each learner has its samplers; the program's sampler bank
    takes its width from the learners' width parameter (or from follows.param)."""
    program = answer([{"name": "learners", "width": 2, "width_param": "num_learners", "elastic": None},
                      {"name": "samplers", "width": 2, "width_param": "num_learners", "elastic": None}], ())  # fmt: skip
    learners = {"name": "learners", "bank": "learners", "widthParam": "num_learners", "replicas": 2}
    follower = {"name": "samplers", "bank": "samplers",
                "follows": {"group": "learners", "perMember": 1, "param": "samplers_per_learner"}}  # fmt: skip
    assert _check([learners, follower], program) == []
    per_member = answer([{"name": "learners", "width": 2, "width_param": "num_learners", "elastic": None},
                         {"name": "samplers", "width": 2, "width_param": "samplers_per_learner", "elastic": None}], ())  # fmt: skip
    assert _check([learners, follower], per_member) == []
    other = answer([{"name": "learners", "width": 2, "width_param": "num_learners", "elastic": None},
                    {"name": "samplers", "width": 2, "width_param": "num_samplers", "elastic": None}], ())  # fmt: skip
    (found,) = _check([learners, follower], other)
    assert found[0] == "spec.federateGroups[1].follows.param" and found[1] == "samplers[*]"
    assert "'num_samplers'" in found[2] and "num_learners and samplers_per_learner" in found[2]
    fixed = answer([{"name": "learners", "width": 2, "width_param": "num_learners", "elastic": None},
                    {"name": "samplers", "width": 3, "width_param": None, "elastic": None}], ())  # fmt: skip
    (found,) = _check([learners, follower], fixed)
    assert found[0] == "spec.federateGroups[1].follows.perMember" and "2 x 1" in found[2]
