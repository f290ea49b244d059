"""examples/k8s/ run real programs: each entrypoint resolves (image paths map to the
repository's examples/rl/, ConfigMap programs are written out), accepts every parameter
the manifest passes, and declares the bank and learner the manifest names."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from reactorfed.cli.inspect import describe_federates
from reactorfed.cli.loader import load_program, program_params, resolve_spec
from reactorfed_operator import KIND
from reactorfed_operator.discovery import check_groups, parse_federates
from reactorfed_operator.discovery_pod import discovery_params
from reactorfed_operator.spec import parse_spec

REPO = Path(__file__).resolve().parents[2]
IMAGE_EXAMPLES = "/opt/reactorfed/examples/"  # where images/runtime*.Dockerfile copy examples/
EXAMPLES = sorted((REPO / "examples" / "k8s").glob("*.yaml"))
#: the examples whose federates are checked to be exactly the operator's pods
EXACT_FEDERATES = ("ppo-cartpole", "appo-cartpole", "ppo-minatar", "apex-dqn-cartpole", "seed-ppo-cartpole")


def _docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_example_program_matches_its_manifest(example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = _docs(example)
    fed = next(d for d in docs if d["kind"] == KIND)
    spec = parse_spec(fed["spec"])
    entry = spec.program.entrypoint
    if spec.program.config_map:
        cm = next(d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == spec.program.config_map)
        (tmp_path / spec.program.config_map_key).write_text(cm["data"][spec.program.config_map_key])
        monkeypatch.syspath_prepend(str(tmp_path))
    elif entry.startswith(IMAGE_EXAMPLES):
        entry = str(REPO / "examples" / entry[len(IMAGE_EXAMPLES):])
    assert Path(entry.split(":")[0]).exists() or spec.program.config_map, entry
    if "torch" not in sys.modules:
        pytest.importorskip("torch")
    obj = resolve_spec(entry)
    params = program_params(obj)
    passed = dict(spec.program.params) | {spec.sampler_param: "2"}
    if spec.elastic:  # the operator passes the bank's maximum too
        passed[spec.max_param] = str(spec.max_replicas)
    unknown = set(passed) - set(params)
    assert not unknown, f"{example.name}: the program takes no parameter(s) {sorted(unknown)}"
    if example.stem in ("gym-sampling", "configmap-program"):  # cheap to build: check the federates
        main = load_program(entry, {**passed, spec.sampler_param: "2"})
        children = set(vars(main))
        assert spec.samplers.name in children and spec.learner.name in children
    if example.stem in EXACT_FEDERATES:
        # the operator makes a pod per sampler and one for the learner, none for anything else
        # (a replay shard of its own would never join): those must be all the federates
        if example.stem == "ppo-minatar":
            pytest.importorskip("minatar", reason="MinAtar is not installed")
        main = load_program(entry, {**passed, spec.sampler_param: "2"})
        assert [c.name for c in main._children] == [*spec.sampler_names(2), spec.learner.name]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_a_gpu_learner_runs_the_gpu_image(example: Path) -> None:
    """A learner that asks for a GPU lands on a GPU node: it must run the CUDA image
    (images/runtime-gpu.Dockerfile), not the CPU one, which GPU nodes need not hold
    (ppo-cartpole.yaml asked for the GPU by default with the CPU image: ErrImagePull on kind)."""
    for doc in _docs(example):
        if doc.get("kind") != KIND:
            continue
        spec = parse_spec(doc["spec"])
        image = spec.learner.image or spec.program.image
        assert (spec.gpus > 0) == ("gpu" in image), (example.name, spec.gpus, image)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_the_operator_finds_each_examples_groups_in_its_program(
    example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the discovery pod answers for each example (its command, its parameters) matches
    the example's groups: applied, every example proceeds (the kind suite applies them)."""
    fed = next(d for d in _docs(example) if d["kind"] == KIND)
    spec = parse_spec(fed["spec"])
    entry = spec.program.entrypoint
    if spec.program.config_map:
        cm = next(d for d in _docs(example) if d["kind"] == "ConfigMap" and d["metadata"]["name"] == spec.program.config_map)
        (tmp_path / spec.program.config_map_key).write_text(cm["data"][spec.program.config_map_key])
        monkeypatch.syspath_prepend(str(tmp_path))
    elif entry.startswith(IMAGE_EXAMPLES):
        entry = str(REPO / "examples" / entry[len(IMAGE_EXAMPLES):])
    if "torch" not in sys.modules:
        pytest.importorskip("torch")
    if example.stem == "ppo-minatar":
        pytest.importorskip("minatar", reason="MinAtar is not installed")
    if example.stem == "atari-sampling":
        pytest.importorskip("ale_py", reason="ALE is not installed")
    answer = describe_federates(entry, dict(discovery_params(spec)))
    assert check_groups(spec.groups, parse_federates(answer)) == [], example.name
