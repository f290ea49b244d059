"""The CRD (generated from reactorfed_operator.schema, the one source) agrees with the
operator's defaults, the checked-in files are what the generator writes, the chart ships an
identical copy, and the examples are valid for the operator."""

from __future__ import annotations

import filecmp
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from reactorfed_operator import GROUP, KIND, PLURAL, VERSION, crdgen
from reactorfed_operator.schema import DEFAULTS
from reactorfed_operator.schema_parts import CREDENTIAL_ENV_VARS, THREAD_ENV_VARS
from reactorfed_operator.spec import parse_spec

REPO = Path(__file__).resolve().parents[2]
CRD = REPO / "crds" / "reactorfederations.reactorfed.io.yaml"


@pytest.fixture(scope="module")
def crd() -> dict[str, Any]:
    return yaml.safe_load(CRD.read_text())


def _version(crd: dict[str, Any]) -> dict[str, Any]:
    (version,) = crd["spec"]["versions"]
    return version


def test_names_and_subresources(crd: dict[str, Any]) -> None:
    spec = crd["spec"]
    assert spec["group"] == GROUP and spec["names"]["kind"] == KIND and spec["names"]["plural"] == PLURAL
    assert spec["scope"] == "Namespaced" and "rfed" in spec["names"]["shortNames"]
    v = _version(crd)
    assert v["name"] == VERSION and v["served"] and v["storage"]
    assert v["subresources"]["status"] == {}
    assert v["subresources"]["scale"] == {
        "specReplicasPath": ".spec.samplers.replicas",
        "statusReplicasPath": ".status.samplers.replicas",
        "labelSelectorPath": ".status.samplers.selector",
    }
    columns = [c["name"] for c in v["additionalPrinterColumns"] if not c.get("priority")]
    assert columns == ["Phase", "Samplers", "Progress", "Return", "Age"]
    wide = [c["name"] for c in v["additionalPrinterColumns"] if c.get("priority")]
    assert wide[0] == "Logical-Time"  # (the synchronous RL plans run at time 0 with microsteps: not for a person)
    paths = {c["name"]: c["jsonPath"] for c in v["additionalPrinterColumns"]}
    progress = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]["progress"]
    for name in ("Progress", "Return", "Logical-Time"):  # each column reads a field the status schema declares
        field = paths[name].removeprefix(".status.progress.").split(".")[0]
        assert field in progress["properties"], (name, paths[name])
    assert progress["properties"]["figures"]["additionalProperties"] == {"type": "number"}


def _defaults(schema: dict[str, Any], path: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, sub in (schema.get("properties") or {}).items():
        p = f"{path}.{key}" if path else key
        if "default" in sub and sub["default"] != {}:
            out[p] = sub["default"]
        out.update(_defaults(sub, p))
    return out


def test_crd_defaults_match_the_operators(crd: dict[str, Any]) -> None:
    defaults = _defaults(_version(crd)["schema"]["openAPIV3Schema"]["properties"]["spec"])
    s = parse_spec({"program": {"image": "i", "entrypoint": "m:Main"}})
    ours = {
        "program.imagePullPolicy": s.program.image_pull_policy,
        "program.configMap.key": s.program.config_map_key,
        "program.threads": s.program.threads,
        "program.allowThreadChange": s.program.allow_thread_change,
        "rti.port": s.rti_port,
        "rti.metricsPort": s.metrics_port,
        "samplers.replicas": s.replicas,
        "samplers.name": s.samplers.name,
        "samplers.param": s.sampler_param,
        "samplers.maxParam": s.max_param,
        "learner.name": s.learner.name,
        "learner.gpus": s.gpus,
        "coordination.fast": s.fast,
        "coordination.mode": s.coordination,
        "coordination.leadWindow": s.lead_window,
        "secretRef.key": s.secret_key,
        "checkpoint.mountPath": "/checkpoints",
        "observability.trace.mountPath": s.observability.trace_mount,
        "failurePolicy.maxRestarts": s.max_restarts,
        "terminationGracePeriodSeconds": s.grace_seconds,
        "suspend": s.suspend,
    }
    assert defaults == ours


def test_checked_in_crds_are_what_the_generator_writes(crd: dict[str, Any]) -> None:
    assert crdgen.main(["--check", "--root", str(REPO)]) == 0, "run: python -m reactorfed_operator.crdgen"
    assert crd == crdgen.crd()


def test_schema_defaults_are_the_one_list(crd: dict[str, Any]) -> None:
    assert _defaults(_version(crd)["schema"]["openAPIV3Schema"]["properties"]["spec"]) == DEFAULTS


def test_the_thread_count_is_the_runtimes_and_its_variables_are_reserved(crd: dict[str, Any]) -> None:
    """spec.program.threads defaults to the runtime's default (the operator's image carries
    no runtime, so the value is written twice and kept equal here); the variables it sets
    cannot be set by hand, in spec.program.env or a group's env."""
    from reactorfed.execution.threads import DEFAULT_THREADS, ENV_VARS

    assert DEFAULTS["program.threads"] == DEFAULT_THREADS and THREAD_ENV_VARS == ENV_VARS
    program = _version(crd)["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["program"]
    assert program["properties"]["threads"] == {**program["properties"]["threads"], "type": "integer", "minimum": 1,
                                                "default": DEFAULT_THREADS}
    rules = program["properties"]["env"]["items"]["properties"]["name"]["x-kubernetes-validations"]
    assert any("OMP_NUM_THREADS" in r["rule"] and "spec.program.threads" in r["message"] for r in rules)


def test_the_credential_variables_are_the_runtimes_and_reserved(crd: dict[str, Any]) -> None:
    """The variables that carry a member's credentials are the runtime's names (written twice:
    the operator's image carries no runtime), and the CRD refuses them in a program's env."""
    from reactorfed.federation.process.defaults import CREDENTIAL_ENV_VARS as RUNTIME_S

    assert CREDENTIAL_ENV_VARS == RUNTIME_S
    program = _version(crd)["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["program"]
    rules = program["properties"]["env"]["items"]["properties"]["name"]["x-kubernetes-validations"]
    assert any(all(v in r["rule"] for v in (*CREDENTIAL_ENV_VARS, "POD_IP")) for r in rules), rules


def test_the_lead_window_is_the_runtimes(crd: dict[str, Any]) -> None:
    """spec.coordination.leadWindow defaults to the runtime's default (written twice, kept
    equal here), and takes a duration or none, as --lead-window does."""
    from reactorfed.cli.options import lead_window
    from reactorfed.federation.process.defaults import DEFAULT_LEAD_WINDOW_NS

    assert lead_window(DEFAULTS["coordination.leadWindow"]) == DEFAULT_LEAD_WINDOW_NS
    coord = _version(crd)["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["coordination"]
    pattern = re.compile(coord["properties"]["leadWindow"]["pattern"])
    for ok in ("none", "250ms", "2 s", "0s"):
        assert pattern.match(ok) and lead_window(ok) is not None, ok
    for bad in ("", "-1s", "1.5s", "nonesuch", "5"):
        assert not pattern.match(bad), bad


def test_every_cel_rule_has_a_message(crd: dict[str, Any]) -> None:
    def walk(node: Any) -> list[dict[str, Any]]:
        if isinstance(node, dict):
            found = list(node.get("x-kubernetes-validations", []))
            return found + [r for v in node.values() for r in walk(v)]
        if isinstance(node, list):
            return [r for v in node for r in walk(v)]
        return []

    rules = walk(_version(crd)["schema"])
    assert len(rules) >= 8
    assert all(r.get("message") for r in rules)


def test_chart_ships_an_identical_copy() -> None:
    chart = REPO / "charts" / "reactorfed-operator" / "crds"
    names = sorted(p.name for p in (REPO / "crds").glob("*.yaml"))
    assert names == sorted(p.name for p in chart.glob("*.yaml"))
    _match, mismatch, errors = filecmp.cmpfiles(REPO / "crds", chart, names, shallow=False)
    assert not mismatch and not errors, "run: cp crds/*.yaml charts/reactorfed-operator/crds/"


@pytest.mark.parametrize("example", sorted((REPO / "examples" / "k8s").glob("*.yaml")), ids=lambda p: p.stem)
def test_examples_parse(example: Path) -> None:
    docs = [d for d in yaml.safe_load_all(example.read_text()) if d and d["kind"] == KIND]
    assert docs
    for doc in docs:
        assert doc["apiVersion"] == f"{GROUP}/{VERSION}"
        parse_spec(doc["spec"])


def test_elastic_bounds_are_validated_by_the_api_server(crd: dict[str, Any]) -> None:
    """The CEL rules that keep an elastic bank's width within [1, maxReplicas]: `kubectl
    scale` and an HPA go through the same validation (the scale subresource writes
    spec.samplers.replicas). The e2e suite checks that the API server applies them."""
    samplers = _version(crd)["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["samplers"]
    rules = {r["rule"]: r["message"] for r in samplers["x-kubernetes-validations"]}
    assert rules["!has(self.maxReplicas) || !has(self.replicas) || self.replicas <= self.maxReplicas"].startswith(
        "spec.samplers.replicas must be between 1 and spec.samplers.maxReplicas")
    assert samplers["properties"]["maxReplicas"]["minimum"] == 1
    assert "default" not in samplers["properties"]["maxReplicas"]  # fixed unless asked
    status = _version(crd)["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]
    assert {"initial", "maxReplicas", "replaced", "slots", "members"} <= set(status["samplers"]["properties"])
    assert set(status["membership"]["items"]["properties"]) == {
        "incarnation", "logicalTime", "tagNs", "microstep", "member", "joined"}
