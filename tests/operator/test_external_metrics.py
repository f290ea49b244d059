"""The external metrics API's documents (discovery, the metric's value list, selectors,
quantities) and the figures it serves (:mod:`reactorfed_operator.external_metrics`)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from reactorfed_operator import GROUP, KIND, VERSION
from reactorfed_operator.external_metrics import (
    METRICS,
    MetricStore,
    parse_selector,
    quantity,
    respond,
)

BASE = "/apis/external.metrics.k8s.io/v1beta1"
T = "2026-11-28T21:00:00Z"


@pytest.mark.parametrize(("value", "text"), [(0.35, "350m"), (0.0, "0"), (1.0, "1"), (0.12345, "123m"),
                                             (2.5, "2500m"), (0.0004, "0")])  # fmt: skip
def test_quantities_are_thousandths(value: float, text: str) -> None:
    assert quantity(value) == text


def test_discovery_documents() -> None:
    code, group_list = respond(MetricStore(), "/apis")
    assert code == 200 and group_list["kind"] == "APIGroupList"
    assert group_list["groups"][0]["name"] == "external.metrics.k8s.io"
    code, group = respond(MetricStore(), "/apis/external.metrics.k8s.io")
    assert code == 200 and group["preferredVersion"] == {"groupVersion": "external.metrics.k8s.io/v1beta1",
                                                         "version": "v1beta1"}  # fmt: skip
    code, resources = respond(MetricStore(), BASE)
    assert code == 200 and resources["kind"] == "APIResourceList"
    assert resources["groupVersion"] == "external.metrics.k8s.io/v1beta1"
    assert resources["resources"] == [{"name": "learner_wait", "singularName": "", "namespaced": True,
                                       "kind": "ExternalMetricValueList", "verbs": ["get"]}]  # fmt: skip


def store() -> MetricStore:
    s = MetricStore()
    s.put("rl", "a", {"env_steps": 100, "learner_wait": 0.8123}, T)
    s.put("rl", "b", {"learner_wait": 0.1}, T)
    s.put("other", "a", {"learner_wait": 0.5}, T)
    s.put("rl", "c", {"env_steps": 5}, T)  # (no figure: not served)
    return s


def test_the_metric_of_the_selected_federation() -> None:
    code, doc = respond(store(), f"{BASE}/namespaces/rl/learner_wait?labelSelector=federation%3Da")
    assert code == 200
    assert doc == {"kind": "ExternalMetricValueList", "apiVersion": "external.metrics.k8s.io/v1beta1",
                   "metadata": {}, "items": [{"metricName": "learner_wait", "metricLabels": {"federation": "a"},
                                              "timestamp": T, "value": "812m"}]}  # fmt: skip


@pytest.mark.parametrize(("selector", "names"), [
    ("", ["a", "b"]), ("federation=b", ["b"]), ("federation==b", ["b"]), ("federation!=b", ["a"]),
    ("federation in (a, b)", ["a", "b"]), ("federation notin (a)", ["b"]), ("federation", ["a", "b"]),
    ("!federation", []), ("federation=c", []), ("federation=a,federation in (a,b)", ["a"]),
])  # fmt: skip
def test_selectors(selector: str, names: list[str]) -> None:
    code, doc = respond(store(), f"{BASE}/namespaces/rl/learner_wait?labelSelector={selector}")
    assert code == 200 and [i["metricLabels"]["federation"] for i in doc["items"]] == names


def test_bad_requests() -> None:
    assert respond(store(), f"{BASE}/namespaces/rl/cpu")[0] == 404
    assert respond(store(), f"{BASE}/namespaces/rl/learner_wait?labelSelector=a%20in%20b")[0] == 400
    assert respond(store(), f"{BASE}/namespaces/Bad_NS/learner_wait")[0] == 404
    assert respond(store(), "/api/v1/pods")[0] == 404
    assert parse_selector("a=(") is None


def test_a_federation_without_the_figure_serves_none() -> None:
    s = store()
    s.put("rl", "a", {"env_steps": 200}, T)  # restarting: no figure now
    s.drop("rl", "b")
    assert respond(s, f"{BASE}/namespaces/rl/learner_wait")[1]["items"] == []
    assert len(respond(s, f"{BASE}/namespaces/other/learner_wait")[1]["items"]) == 1


def test_a_federation_deleted_or_without_figures_leaves_nothing_in_the_store() -> None:
    """What the store keeps per federation goes with it: an operator that saw thousands
    of federations come and go keeps nothing of those that went."""
    s = MetricStore()
    for i in range(1000):
        s.put("rl", f"f{i}", {"learner_wait": 0.1}, T)
        s.drop("rl", f"f{i}")
    s.put("rl", "restarting", {"learner_wait": 0.1}, T)
    s.put("rl", "restarting", {"env_steps": 1}, T)  # no figure now: nothing kept either
    assert len(s) == 0
    s.put("rl", "live", {"learner_wait": 0.1}, T)
    assert len(s) == 1


def test_the_hpa_example_reads_the_served_metric_of_its_federation() -> None:
    """examples/k8s/autoscaling/qlearning-elastic-hpa.yaml: a Value target (a share, not a
    per-pod amount) on the metric served, selecting the federation it scales, within its
    elastic bounds."""
    examples = Path(__file__).resolve().parents[2] / "examples" / "k8s"
    hpa = yaml.safe_load((examples / "autoscaling" / "qlearning-elastic-hpa.yaml").read_text())
    fed = yaml.safe_load((examples / "qlearning-elastic.yaml").read_text())
    spec = hpa["spec"]
    assert spec["scaleTargetRef"] == {"apiVersion": f"{GROUP}/{VERSION}", "kind": KIND, "name": fed["metadata"]["name"]}
    [m] = spec["metrics"]
    assert m["type"] == "External" and m["external"]["metric"]["name"] in METRICS
    assert m["external"]["metric"]["selector"] == {"matchLabels": {"federation": fed["metadata"]["name"]}}
    assert m["external"]["target"]["type"] == "Value"
    assert 1 <= spec["minReplicas"] <= spec["maxReplicas"] <= fed["spec"]["samplers"]["maxReplicas"]


def test_a_figure_not_renewed_is_not_served() -> None:
    now = [100.0]
    s = MetricStore(max_age=60.0, clock=lambda: now[0])
    s.put("rl", "a", {"learner_wait": 0.3}, T)
    now[0] += 59.0
    assert list(s.samples("rl", "learner_wait")) == ["a"]
    now[0] += 2.0
    assert s.samples("rl", "learner_wait") == {}
    s.put("rl", "a", {"learner_wait": 0.4}, T)
    assert s.samples("rl", "learner_wait")["a"].value == 0.4


def test_the_served_figure_is_the_one_learners_report() -> None:
    """The operator does not import the runtime: the figure's name is written twice."""
    from reactorfed.rl.plans.learner_wait import FIGURE

    assert METRICS == {FIGURE: FIGURE}
