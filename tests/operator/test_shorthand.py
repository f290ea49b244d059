"""The samplers/learner shorthand is converted into federate groups, and every manifest in
examples/k8s/ written in the shorthand plans exactly the pods it planned before groups
existed (the examples rewritten with spec.federateGroups left the record when they were).

``data/example_pods.json`` was written by the planner of the commit before groups (names,
labels, env, resources and command of each pod, and a digest of the whole manifest). A
change of an example's manifest rewrites its entries: ``json.dumps({key: [view(p) for p in
federation_pods(FEDS[key], 1)] for key in sorted(FEDS)}, indent=1, sort_keys=True)`` (it
reproduces the file byte for byte where no manifest changed); the diff must show the
manifest's change only (the PPO examples' params renamed to ``ppo.total_timesteps`` and
``ppo.minibatch_size``: their commands and digests; a key per member: each pod's
``REACTORFED_KEY_FILE`` and the RTI's ``REACTORFED_MEMBER_KEYS`` for the shared secret, and
digests)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from reactorfed_operator import KIND
from reactorfed_operator.manifests import Federation
from reactorfed_operator.pods import federation_pods
from reactorfed_operator.spec import parse_spec

from .helpers import make_fed

REPO = Path(__file__).resolve().parents[2]
BEFORE = json.loads((Path(__file__).parent / "data" / "example_pods.json").read_text())


def view(pod: dict[str, Any]) -> dict[str, Any]:
    c = pod["spec"]["containers"][0]
    return {"name": pod["metadata"]["name"], "labels": pod["metadata"]["labels"],
            "env": {e["name"]: e.get("value", "<from>") for e in c["env"]}, "resources": c["resources"],
            "command": " ".join(c["command"]),
            "sha256": hashlib.sha256(json.dumps(pod, sort_keys=True).encode()).hexdigest()}  # fmt: skip


def _federations() -> dict[str, Federation]:
    out = {}
    for example in sorted((REPO / "examples" / "k8s").glob("*.yaml")):
        for doc in yaml.safe_load_all(example.read_text()):
            if doc and doc.get("kind") == KIND and "federateGroups" not in doc["spec"]:
                fed = Federation(doc["metadata"]["name"], "ns", "uid-1", parse_spec(doc["spec"]))
                out[f"{example.stem}/{fed.name}"] = fed
    return out


FEDS = _federations()


def test_every_example_is_in_the_record() -> None:
    assert sorted(FEDS) == sorted(BEFORE)


@pytest.mark.parametrize("key", sorted(FEDS))
def test_example_plans_the_same_pods_as_before_groups(key: str) -> None:
    now = [view(p) for p in federation_pods(FEDS[key], 1)]
    for before, after in zip(BEFORE[key], now, strict=True):
        assert {k: v for k, v in after.items() if k != "sha256"} == {k: v for k, v in before.items() if k != "sha256"}
        assert after["sha256"] == before["sha256"], f"{after['name']}: the manifest changed beyond the fields above"


def test_shorthand_becomes_two_groups() -> None:
    s = make_fed(samplers={"replicas": 3, "maxReplicas": 5, "resources": {"requests": {"cpu": "1"}}},
                 learner={"gpus": 2, "image": "img:gpu"}).spec  # fmt: skip
    samplers, learner = s.groups
    assert (samplers.name, samplers.role, samplers.bank, samplers.width_param, samplers.scale) == (
        "samplers", "sampler", "samplers", "num_samplers", True)
    assert (samplers.replicas, samplers.max_replicas, samplers.max_param) == (3, 5, "max_samplers")
    assert samplers.resources == {"requests": {"cpu": "1"}} and samplers.gpus == 0
    assert (learner.name, learner.role, learner.federate, learner.gpus, learner.image) == (
        "learner", "learner", "learner", 2, "img:gpu")
    assert learner.holds_state and not samplers.holds_state
    assert s.scale_group is samplers and s.shape == ""


def test_renamed_shorthand_keeps_its_roles() -> None:
    s = make_fed(samplers={"name": "actors"}, learner={"name": "env"}).spec
    assert [(g.name, g.role, g.federates(2)) for g in s.groups] == [
        ("actors", "sampler", ["actors[0]", "actors[1]"]), ("env", "learner", ["env"])]
