"""spec.federateGroups: parsing, the checks refused before any pod starts (each naming the
field), and the pods planned for groups."""

from __future__ import annotations

from typing import Any

import pytest

from reactorfed_operator.cluster import observe_pod
from reactorfed_operator.manifests import ANNOTATION_SHAPE, sampler_selector
from reactorfed_operator.pods import federation_pods, sampler_pod
from reactorfed_operator.spec import SpecError, parse_spec, program_params

from .helpers import FakeCluster, make_fed, minimal_spec

CPU = "reactorfed-runtime:0.1.0"
GPU = "reactorfed-runtime-gpu:0.1.0"


def three_groups(**extra: Any) -> list[dict[str, Any]]:
    return [
        {"name": "env", "federate": "env", "resources": {"requests": {"cpu": "1"}},
         "env": [{"name": "RENDER", "value": "0"}]},
        {"name": "agents", "bank": "agents", "widthParam": "num_agents", "scale": True, "maxReplicas": 6,
         "maxParam": "max_agents"},
        {"name": "shards", "bank": "shards", "widthParam": "num_shards", "replicas": 2,
         "nodeSelector": {"example.com/pool": "memory"}, "checkpoint": True, **extra},
    ]  # fmt: skip


def groups_spec(groups: list[dict[str, Any]] | None = None, **overrides: Any) -> dict[str, Any]:
    return minimal_spec(federateGroups=three_groups() if groups is None else groups, **overrides)


def test_groups_parse() -> None:
    s = parse_spec(groups_spec(samplers={"replicas": 3}))
    env, agents, shards = s.groups
    assert (env.role, env.federates(), env.env) == ("env", ["env"], (("RENDER", "0"),))
    assert agents.scale and agents.replicas == 3 and agents.max_replicas == 6 and s.scale_group is agents
    assert (s.replicas, s.sampler_param, s.max_replicas, s.max_param, s.samplers.name) == (
        3, "num_agents", 6, "max_agents", "agents")
    assert shards.federates() == ["shards[0]", "shards[1]"] and shards.holds_state
    assert s.shape == "env=env;agents=agents[*];shards=shards[*]x2"


def test_group_pods() -> None:
    fed = make_fed(federateGroups=three_groups(), samplers={"replicas": 3}, checkpoint={"size": "1Gi"})
    pods = {p["metadata"]["name"]: p for p in federation_pods(fed, 1)}
    assert list(pods) == ["pong-rti", "pong-env", "pong-agents-0", "pong-agents-1", "pong-agents-2",
                          "pong-shards-0", "pong-shards-1"]  # fmt: skip
    roles = {n: p["metadata"]["labels"]["reactorfed.io/role"] for n, p in pods.items()}
    assert roles["pong-env"] == "env" and roles["pong-agents-2"] == "agents" and roles["pong-shards-0"] == "shards"
    cmd = pods["pong-shards-1"]["spec"]["containers"][0]["command"]
    assert cmd[cmd.index("--federate") + 1] == "shards[1]"
    params = [cmd[i + 1] for i, a in enumerate(cmd) if a == "--param"]
    assert params == ["max_agents=6", "num_agents=3", "num_shards=2"]
    assert "--checkpoint-dir" in cmd and "--checkpoint-dir" not in pods["pong-env"]["spec"]["containers"][0]["command"]
    assert pods["pong-shards-0"]["spec"]["nodeSelector"] == {"example.com/pool": "memory"}
    env = {e["name"]: e.get("value") for e in pods["pong-env"]["spec"]["containers"][0]["env"]}
    assert env["RENDER"] == "0" and env["OMP_NUM_THREADS"] == "1"
    assert pods["pong-env"]["metadata"]["annotations"][ANNOTATION_SHAPE] == fed.spec.shape
    assert sampler_selector(fed) == "reactorfed.io/federation=pong,reactorfed.io/role=agents"
    late = sampler_pod(fed, 4, 1, 3, 6)
    assert late["metadata"]["name"] == "pong-agents-4" and late["metadata"]["labels"]["reactorfed.io/role"] == "agents"


def test_gpu_group_and_volumes() -> None:
    groups = [{"name": "learners", "bank": "learners", "widthParam": "k", "replicas": 2, "gpus": 1, "image": GPU,
               "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
               "volumes": [{"name": "data", "emptyDir": {}}],
               "volumeMounts": [{"name": "data", "mountPath": "/data"}]},
              {"name": "env", "federate": "env", "affinity": {"nodeAffinity": {}}}]  # fmt: skip
    pods = federation_pods(make_fed(federateGroups=groups), 1)
    learner = pods[1]
    c = learner["spec"]["containers"][0]
    assert c["image"] == GPU and c["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert learner["spec"]["nodeSelector"] == {"reactorfed.io/accelerator": "nvidia"}
    assert len(learner["spec"]["tolerations"]) == 1 and "affinity" not in learner["spec"]
    assert {"name": "data", "emptyDir": {}} in learner["spec"]["volumes"]
    assert {"name": "data", "mountPath": "/data"} in c["volumeMounts"]
    assert pods[3]["spec"]["affinity"] == {"nodeAffinity": {}}


@pytest.mark.parametrize(
    ("groups", "overrides", "field", "fragment"),
    [
        ([*three_groups()[:2], {"name": "env", "federate": "judge"}], {}, "spec.federateGroups[2].name",
         "duplicate group name 'env'"),
        ([*three_groups()[:2], {"name": "env2", "federate": "env"}], {}, "spec.federateGroups[2]", "places 'env' twice"),
        ([*three_groups()[:2], {"name": "more", "bank": "env", "widthParam": "n"}], {}, "spec.federateGroups[2]",
         "places 'env' twice"),
        (three_groups(), {"samplers": {"replicas": 7}}, "spec.samplers.replicas", "maxReplicas (6)"),
        ([{"name": "b", "bank": "b", "widthParam": "n", "replicas": 9, "maxReplicas": 4, "maxParam": "m"}], {},
         "spec.federateGroups[0].replicas", "maxReplicas (4)"),
        ([{"name": "b", "bank": "b", "widthParam": "n", "replicas": 1, "minReplicas": 2, "maxReplicas": 4,
           "maxParam": "m"}], {}, "spec.federateGroups[0].replicas", "minReplicas (2)"),
        ([{"name": "l", "federate": "l", "gpus": 1}], {"program": {"image": CPU, "entrypoint": "m:Main"}},
         "spec.federateGroups[0].gpus", "CPU runtime image"),
        ([{"name": "l", "federate": "l", "gpus": 1, "image": "ghcr.io/x/reactorfed-runtime@sha256:ab"}], {},
         "spec.federateGroups[0].gpus", "CPU runtime image"),
        ([{"name": "l", "federate": "l", "nodeSelector": {"bad key": "x"}}], {},
         "spec.federateGroups[0].nodeSelector['bad key']", "not a label key"),
        ([{"name": "l", "federate": "l", "tolerations": [{"key": "bad key", "operator": "Exists"}]}], {},
         "spec.federateGroups[0].tolerations[0].key", "not a label key"),
        ([{"name": "l", "federate": "l", "nodeSelector": {"pool": "not a value"}}], {},
         "spec.federateGroups[0].nodeSelector['pool']", "not a label value"),
        ([{"name": "l", "federate": "l", "tolerations": [{"operator": "Equal", "value": "x"}]}], {},
         "spec.federateGroups[0].tolerations[0].operator", "must be Exists"),
        ([{"name": "l", "federate": "l", "tolerations": [{"key": "k", "operator": "Sometimes"}]}], {},
         "spec.federateGroups[0].tolerations[0].operator", "Exists or Equal"),
        ([{"name": "l", "federate": "l", "tolerations": [{"key": "k", "operator": "Exists", "effect": "Never"}]}],
         {}, "spec.federateGroups[0].tolerations[0].effect", "NoSchedule"),
        ([{"name": "l", "federate": "l", "bank": "b"}], {}, "spec.federateGroups[0]", "exactly one of federate"),
        ([{"name": "l", "federate": "l", "replicas": 2}], {}, "spec.federateGroups[0].replicas", "only a bank"),
        ([{"name": "b", "bank": "b", "widthParam": "n", "scale": True, "replicas": 2}], {},
         "spec.federateGroups[0].replicas", "spec.samplers.replicas"),
        ([{"name": "b", "bank": "b", "scale": True}], {}, "spec.federateGroups[0].widthParam", "must reach"),
        ([{"name": "a", "bank": "a", "widthParam": "n", "scale": True},
          {"name": "b", "bank": "b", "widthParam": "m", "scale": True}], {}, "spec.federateGroups[1].scale", "only one"),
        ([{"name": "a", "bank": "a", "widthParam": "n"}, {"name": "b", "bank": "b", "widthParam": "n"}], {},
         "spec.federateGroups[1].widthParam", "already"),
        ([{"name": "a", "bank": "a", "widthParam": "n"}], {"program": {"image": "i", "entrypoint": "m:M",
                                                                        "params": {"n": "3"}}},
         "spec.program.params", "must not set 'n'"),
        ([{"name": "a", "bank": "a", "widthParam": "pbt..population"}], {}, "spec.federateGroups[0].widthParam",
         "a parameter name"),
        ([{"name": "a", "bank": "a", "widthParam": "n", "scale": True, "maxReplicas": 4, "maxParam": "max-n"}], {},
         "spec.federateGroups[0].maxParam", "a parameter name"),
        ([{"name": "rti", "federate": "x"}], {}, "spec.federateGroups[0].name", "not be 'rti'"),
        ([{"name": "l", "federate": "l", "volumeMounts": [{"name": "nope", "mountPath": "/x"}]}], {},
         "spec.federateGroups[0].volumeMounts[0].name", "names no volume"),
        ([{"name": "l", "federate": "l"}], {"samplers": {"maxReplicas": 4}}, "spec.samplers.maxReplicas",
         "only spec.samplers.replicas"),
        ([{"name": "l", "federate": "l"}], {"learner": {"gpus": 0}}, "spec.learner.gpus", "the learner is a group"),
        ([], {}, "spec.federateGroups", "non-empty"),
    ],
)  # fmt: skip
def test_invalid_groups(groups: list[dict[str, Any]], overrides: dict[str, Any], field: str, fragment: str) -> None:
    with pytest.raises(SpecError) as err:
        parse_spec(groups_spec(groups, **overrides))
    assert err.value.field == field, str(err.value)
    assert fragment in err.value.message, str(err.value)


def test_a_width_parameter_may_be_a_nested_field() -> None:
    """A tuner's trials take their width from its scheduler's config (pbt.population)."""
    s = parse_spec(groups_spec([{"name": "controller", "federate": "controller"},
                                {"name": "trials", "bank": "trials", "widthParam": "pbt.population", "scale": True}],
                               samplers={"replicas": 3}))  # fmt: skip
    assert s.sampler_param == "pbt.population"
    assert ("pbt.population", "3") in program_params(s, 3, 0)


def test_with_groups_the_shorthands_parameter_names_are_the_programs_own() -> None:
    """A tuner's trials each have samplers: with groups, num_samplers and max_samplers are
    the program's to set (the shorthand alone gives them to the operator)."""
    trials: list[dict[str, Any]] = [{"name": "controller", "federate": "controller"},
              {"name": "trials", "bank": "trials", "widthParam": "pbt.population", "scale": True}]
    s = parse_spec(groups_spec(trials, samplers={"replicas": 2}, program={
        "image": CPU, "entrypoint": "p.py:Main", "params": {"num_samplers": "3", "max_samplers": "3"}}))  # fmt: skip
    assert {("num_samplers", "3"), ("max_samplers", "3"), ("pbt.population", "2")} <= set(program_params(s, 2, 0))
    with pytest.raises(SpecError, match="must not set 'num_samplers'"):
        parse_spec(minimal_spec(program={"image": CPU, "entrypoint": "p.py:Main", "params": {"num_samplers": "3"}}))
    with pytest.raises(SpecError, match=r"must not set 'pbt\.population'"):  # a group's own parameter still is not
        parse_spec(groups_spec(trials, program={"image": CPU, "entrypoint": "p.py:Main",
                                                "params": {"pbt.population": "3"}}))  # fmt: skip


def test_defaults_written_by_the_api_server_are_accepted() -> None:
    s = parse_spec(groups_spec(samplers={"replicas": 2, "name": "samplers", "param": "num_samplers",
                                         "maxParam": "max_samplers"}, learner={"name": "learner", "gpus": 1}))  # fmt: skip
    assert [g.name for g in s.groups] == ["env", "agents", "shards"]


def test_no_scale_group() -> None:
    s = parse_spec(groups_spec([{"name": "a", "federate": "a"}, {"name": "b", "bank": "b", "widthParam": "n",
                                                                   "replicas": 3}]))  # fmt: skip
    assert s.scale_group is None and s.replicas == 0
    fed = make_fed(federateGroups=[{"name": "a", "federate": "a"}])
    assert [p["metadata"]["name"] for p in federation_pods(fed, 1)] == ["pong-rti", "pong-a"]


def test_planner_runs_groups_and_stops_state_first() -> None:
    c = FakeCluster(make_fed(federateGroups=three_groups(), samplers={"replicas": 2}))
    c.settle()
    assert c.status["phase"] == "Running"
    assert c.status["groups"] == [
        {"name": "env", "role": "env", "desired": 1, "ready": 1},
        {"name": "agents", "role": "agents", "desired": 2, "ready": 2},
        {"name": "shards", "role": "shards", "desired": 2, "ready": 2},
    ]
    assert c.status["samplers"]["readyText"] == "2/2" and c.status["federates"]["desired"] == 6
    assert "env, agents, shards and RTI running" in c.status["message"]
    # a non-scaled group's width changes: the members change, so the federation restarts,
    # the group that holds state stopped first
    c.set_spec(federateGroups=three_groups(replicas=3), samplers={"replicas": 2})
    c.step()
    assert c.status["reason"] == "Rescaling" and c.deleted == ["pong-shards-0", "pong-shards-1"]
    c.settle()
    assert c.status["incarnation"] == 2 and "pong-shards-2" in c.pods
    assert c.status["restarts"] == 0


def test_observed_pod_reads_the_shape() -> None:
    fed = make_fed(federateGroups=three_groups())
    pod = observe_pod(federation_pods(fed, 1)[1])
    assert pod is not None and pod.shape == fed.spec.shape and pod.role == "env"


def data_parallel(learners: dict[str, Any] | None = None, per_member: int = 2) -> list[dict[str, Any]]:
    """A data-parallel program's shape: a bank of learners, and a bank of samplers with
    per_member of its own for each learner."""
    return [
        {"name": "learners", "bank": "learners", "widthParam": "num_learners", "gpus": 1, "image": GPU,
         "checkpoint": True, **(learners if learners is not None else {"replicas": 2})},
        {"name": "samplers", "bank": "samplers",
         "follows": {"group": "learners", "perMember": per_member, "param": "samplers_per_learner"}},
    ]  # fmt: skip


def test_a_bank_follows_another_groups_width() -> None:
    fed = make_fed(federateGroups=data_parallel())
    _learners, samplers = fed.spec.groups
    assert (samplers.follows, samplers.per_member, samplers.replicas) == ("learners", 2, 4)
    assert fed.spec.shape == "learners=learners[*]x2;samplers=samplers[*]x2/learners"
    pods = {p["metadata"]["name"]: p for p in federation_pods(fed, 1)}
    assert list(pods) == ["pong-rti", "pong-learners-0", "pong-learners-1",
                          *(f"pong-samplers-{i}" for i in range(4))]  # fmt: skip
    cmd = pods["pong-samplers-3"]["spec"]["containers"][0]["command"]
    params = [cmd[i + 1] for i, a in enumerate(cmd) if a == "--param"]
    assert "num_learners=2" in params and "samplers_per_learner=2" in params
    assert pods["pong-learners-1"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert "nvidia.com/gpu" not in pods["pong-samplers-0"]["spec"]["containers"][0]["resources"].get("limits", {})


def test_a_follower_of_the_scale_group_is_rescaled_with_it() -> None:
    fed = make_fed(federateGroups=data_parallel({"scale": True}, per_member=1), samplers={"replicas": 3})
    names = [p["metadata"]["name"] for p in federation_pods(fed, 1)]
    assert names.count("pong-rti") == 1 and sum("-learners-" in n for n in names) == 3
    assert sum("-samplers-" in n for n in names) == 3
    # an incarnation started 2 wide (kubectl scale since): its pods are made at 2, followers too
    names = [p["metadata"]["name"] for p in federation_pods(fed, 2, 2)]
    assert sum("-samplers-" in n for n in names) == 2 and sum("-learners-" in n for n in names) == 2
    # the shape does not hold the scaled width: a rescale is a rescale, not a new shape
    assert fed.spec.shape == "learners=learners[*];samplers=samplers[*]x1/learners"


@pytest.mark.parametrize(("groups", "field", "fragment"), [
    ([{"name": "a", "bank": "a", "follows": {"group": "a"}}], "spec.federateGroups[0].follows.group", "another group"),
    ([{"name": "a", "bank": "a", "replicas": 2, "follows": {"group": "b"}}, {"name": "b", "bank": "b"}],
     "spec.federateGroups[0].follows", "without replicas"),
    ([{"name": "a", "federate": "a", "follows": {"group": "b"}}, {"name": "b", "bank": "b"}],
     "spec.federateGroups[0].follows", "only a bank"),
    ([{"name": "a", "bank": "a", "follows": {"group": "b"}}, {"name": "b", "federate": "b"}],
     "spec.federateGroups[0].follows.group", "neither elastic"),
    ([{"name": "a", "bank": "a", "follows": {"group": "c"}}, {"name": "b", "bank": "b"}],
     "spec.federateGroups[0].follows.group", "neither elastic"),
    ([{"name": "a", "bank": "a", "follows": {"group": "b"}},
      {"name": "b", "bank": "b", "replicas": 2, "maxReplicas": 4, "maxParam": "max_b"}],
     "spec.federateGroups[0].follows.group", "neither elastic"),
    ([{"name": "a", "bank": "a", "follows": {"group": "b", "param": "n"}},
      {"name": "b", "bank": "b", "widthParam": "n"}], "spec.federateGroups[1].widthParam", "already"),
])  # fmt: skip
def test_invalid_followers(groups: list[dict[str, Any]], field: str, fragment: str) -> None:
    with pytest.raises(SpecError) as err:
        parse_spec(minimal_spec(federateGroups=groups))
    assert err.value.field == field and fragment in str(err.value), str(err.value)
