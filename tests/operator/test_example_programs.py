"""examples/k8s/ run real programs: each entrypoint resolves (image paths map to the
repository's examples/, ConfigMap programs are written out), accepts every parameter the
manifest passes, and, built with exactly the parameters the operator gives its pods, has
exactly the federates the operator makes pods for (one group per federate or bank)."""

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
from reactorfed_operator.manifests import Federation
from reactorfed_operator.pods import federation_pods
from reactorfed_operator.spec import parse_spec

REPO = Path(__file__).resolve().parents[2]
IMAGE_EXAMPLES = "/opt/reactorfed/examples/"  # where images/runtime*.Dockerfile copy examples/
EXAMPLES = sorted((REPO / "examples" / "k8s").glob("*.yaml"))
#: the examples whose programs are not built here: Atari needs ALE's ROMs
NOT_BUILT = ("atari-sampling",)


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
    federates, passed = _pods(spec)
    unknown = set(passed) - set(params)
    assert not unknown, f"{example.name}: the program takes no parameter(s) {sorted(unknown)}"
    if example.stem in NOT_BUILT:
        return
    if example.stem == "ppo-minatar":
        pytest.importorskip("minatar", reason="MinAtar is not installed")
    # the operator makes a pod per federate and none for anything else (a replay shard
    # without a pod would never join): the program built as the pods build it has exactly those
    main = load_program(entry, passed)
    if spec.elastic:  # an elastic bank's members are every slot up to its maximum; pods start on the first
        scaled = spec.scale_group
        assert scaled is not None
        federates = sorted({*federates, *scaled.federates(spec.max_replicas)})
    assert sorted(c.name for c in main._children) == sorted(federates), example.name


def _pods(spec: Any) -> tuple[list[str], dict[str, str]]:
    """The federates the operator makes pods for, and the parameters every pod gets."""
    federates, passed = [], {}
    for pod in federation_pods(Federation("example", "ns", "uid", spec), 1)[1:]:
        cmd = pod["spec"]["containers"][0]["command"]
        federates.append(cmd[cmd.index("--federate") + 1])
        passed = dict(cmd[i + 1].split("=", 1) for i, arg in enumerate(cmd) if arg == "--param")
    return federates, passed
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_a_gpu_learner_runs_the_gpu_image(example: Path) -> None:
    """A group that asks for a GPU lands on a GPU node: it must run the CUDA image
    (images/runtime-gpu.Dockerfile), not the CPU one, which GPU nodes need not hold
    (ppo-cartpole.yaml asked for the GPU by default with the CPU image: ErrImagePull on kind);
    and a group that runs the CUDA image asks for a GPU."""
    for doc in _docs(example):
        if doc.get("kind") != KIND:
            continue
        spec = parse_spec(doc["spec"])
        for g in spec.groups:
            image = g.image or spec.program.image
            assert (g.gpus > 0) == ("gpu" in image), (example.name, g.name, g.gpus, image)


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
