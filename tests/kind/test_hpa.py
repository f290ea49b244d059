"""An HPA that really scales: examples/k8s/autoscaling/qlearning-elastic-hpa.yaml drives the
width of a running elastic Q-learning federation from learner_wait, the external metric the
operator serves (the chart with externalMetrics.enabled: an APIService the kube-apiserver's
aggregator forwards to, with its front-proxy client certificate).

The federation starts 1 sampler wide. Its rounds are timed (100 ms of logical time apart,
tracking physical time); a sampler collects a round's fragment only once the round's time
has come, so the learner waits a little in every round, for the collection and the
transport (learner_wait a few hundredths on a quiet machine, more on a loaded one). With the
target at 1m (0.001), the HPA wants ceil(1 x learner_wait / 0.001) samplers, at most 2, and
adds one, live: the RTI's and the learner's pods keep their UID and restartCount 0,
incarnation 1, no restart. The HPA's windows are 0 s. Then the target is raised out of
reach and the HPA takes the sampler away again, live, the same pods staying.

Measured (conftest.record): from the metric's first value served through the API server to
the federation training at the new width (the join in status.membership and ten rounds of
logical time since), and the part of it the HPA took (to its write of the scale)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from .conftest import CHART, NAMESPACE, OPERATOR_NS, RELEASE, Kind, record, wait_for
from .federations import apply, clean_slate, describe, load_example, small_requests

pytestmark = [pytest.mark.kind, pytest.mark.timeout(520)]

NAME = "qlearning-hpa"
ROUND_MS = 100
AT_WORK_NS = 10 * ROUND_MS * 1_000_000  # ten rounds of logical time
APISERVICE = "v1beta1.external.metrics.k8s.io"
METRIC = f"/apis/external.metrics.k8s.io/v1beta1/namespaces/{NAMESPACE}/learner_wait?labelSelector=federation%3D{NAME}"


def federation(runtime_image: str) -> dict[str, Any]:
    """The example, 1 of at most 2 samplers, the live-scaling test's small rounds; the
    learner on the CPU image without a GPU (the metric does not care where it runs, and the
    CPU image is the one every worker holds)."""
    doc = small_requests(load_example("qlearning-elastic.yaml")[0])
    doc["metadata"]["name"] = NAME
    spec = doc["spec"]
    spec["program"]["image"] = runtime_image
    spec["learner"].update(image=runtime_image, gpus=0)
    spec["samplers"].update(replicas=1, maxReplicas=2)
    spec["program"]["params"].update(fragment_len="10", updates_per_iteration="1", round_ms=str(ROUND_MS),
                                     iterations="1000000")  # fmt: skip
    spec["coordination"]["joinTimeout"] = "120 s"
    spec["terminationGracePeriodSeconds"] = 20
    return doc


def hpa() -> dict[str, Any]:
    """The example's HPA, for this federation: 1 to 2 samplers, target 1m, no windows."""
    doc = load_example("autoscaling/qlearning-elastic-hpa.yaml")[0]
    doc["metadata"]["name"] = NAME
    spec = doc["spec"]
    spec["scaleTargetRef"]["name"] = NAME
    spec.update(minReplicas=1, maxReplicas=2)
    external = spec["metrics"][0]["external"]
    external["metric"]["selector"]["matchLabels"]["federation"] = NAME
    external["target"]["value"] = "1m"
    spec["behavior"] = {"scaleUp": {"stabilizationWindowSeconds": 0},
                        "scaleDown": {"stabilizationWindowSeconds": 0,
                                      "policies": [{"type": "Pods", "value": 1, "periodSeconds": 15}]}}  # fmt: skip
    return doc


def serving(k: Kind) -> None:
    """The chart with the external metrics API (the session's install has it; a cluster kept
    from before gets it by an upgrade), and the APIService Available."""
    if k.kubectl("get", "apiservice", APISERVICE, check=False).returncode != 0:
        k.helm("upgrade", RELEASE, str(CHART), "-n", OPERATOR_NS, "--reuse-values", "--set",
               "externalMetrics.enabled=true", "--wait", "--timeout", "3m", timeout=200)  # fmt: skip

    def available() -> bool:
        conds = (k.get_json("apiservice", APISERVICE).get("status") or {}).get("conditions") or []
        return any(c["type"] == "Available" and c["status"] == "True" for c in conds)

    try:
        wait_for("the APIService Available", available, 120, interval=1)
    except AssertionError as e:
        raise AssertionError(f"{e}\n{k.kubectl('describe', 'apiservice', APISERVICE, check=False).stdout}") from None


def metric(k: Kind) -> list[dict[str, Any]]:
    proc = k.kubectl("get", "--raw", METRIC, check=False)
    return json.loads(proc.stdout)["items"] if proc.returncode == 0 else []


def narrow(k: Kind, core: dict[str, str]) -> None:
    """The target raised far above any share (100: the learner would have to wait 100 times
    its time): the HPA wants ceil(2 x learner_wait / 100) = 1 sampler and takes one away,
    live (samplers[1] leaves at an agreed tag; the RTI and the learner stay)."""
    t0 = time.monotonic()
    k.kubectl("patch", "hpa", NAME, "-n", NAMESPACE, "--type", "json", "-p",
              json.dumps([{"op": "replace", "path": "/spec/metrics/0/external/target/value", "value": "100"}]))
    seen: dict[str, float] = {}

    def look() -> dict[str, Any] | None:
        now = time.monotonic()
        items = k.get_json("rfed,pods", "-n", NAMESPACE)["items"]
        fed: dict[str, Any] = next((i for i in items if i["kind"] == "ReactorFederation" and i["metadata"]["name"] == NAME), {})
        if "scaled" not in seen and (fed.get("spec") or {}).get("samplers", {}).get("replicas") == 1:
            seen["scaled"] = now
        for p in items:
            labels = p["metadata"].get("labels", {})
            if (p["kind"] == "Pod" and labels.get("reactorfed.io/federation") == NAME
                    and labels.get("reactorfed.io/role") in core):  # (another federation's end may still show)
                assert p["metadata"]["uid"] == core[labels["reactorfed.io/role"]], "a core pod was replaced"
        st = fed.get("status") or {}
        changes = [c for c in st.get("membership") or [] if c["member"] == "samplers[1]"]
        left = bool(changes) and not changes[-1]["joined"]
        ready = (st.get("samplers") or {}).get("readyText") == "1/1"
        return st if left and ready and st.get("phase") == "Running" else None  # (the scale finished)

    try:
        st = wait_for("the HPA to narrow the federation to 1 sampler", look, 120, interval=1)
    except AssertionError as e:
        hpa_state = k.kubectl("describe", "hpa", NAME, "-n", NAMESPACE, check=False).stdout
        raise AssertionError(f"{e}\nseen: {seen}\n{hpa_state}\n{describe(k, NAME)}") from None
    assert (st["incarnation"], st["restarts"], st["phase"]) == (1, 0, "Running"), st
    record("hpa_target_to_narrower_s", time.monotonic() - t0, "s",
           "the HPA's target raised -> samplers[1]'s leave in status.membership and 1/1 ready (its 15 s sync period)")
    record("hpa_target_to_scale_down_s", seen["scaled"] - t0, "s",
           "the HPA's target raised -> the HPA writes spec.samplers.replicas = 1")


def test_an_hpa_widens_a_running_federation_from_learner_wait(operator: Kind, images: dict[str, str]) -> None:
    k = operator
    t_start = time.monotonic()
    serving(k)
    clean_slate(k, NAME)
    k.kubectl("delete", "hpa", NAME, "-n", NAMESPACE, "--ignore-not-found")
    try:
        apply(k, [federation(images["runtime"]), hpa()])
        t_applied = time.monotonic()
        core: dict[str, str] = {}
        seen: dict[str, Any] = {}

        def look() -> dict[str, Any] | None:
            """One look: the metric, the federation, its pods; the status once it trains at
            width 2, ten rounds past the join of samplers[1]."""
            now = time.monotonic()
            if "metric" not in seen:
                items = metric(k)
                if items:
                    seen["metric"], seen["value"] = now, items[0]["value"]
            items = k.get_json("rfed,pods", "-n", NAMESPACE)["items"]
            fed: dict[str, Any] = next((i for i in items if i["kind"] == "ReactorFederation" and i["metadata"]["name"] == NAME), {})
            st = fed.get("status") or {}
            if "scaled" not in seen and (fed.get("spec") or {}).get("samplers", {}).get("replicas") == 2:
                seen["scaled"] = now
            for p in items:
                labels = p["metadata"].get("labels", {})
                if p["kind"] != "Pod" or labels.get("reactorfed.io/federation") != NAME:
                    continue
                role, cs = labels["reactorfed.io/role"], (p["status"].get("containerStatuses") or [{}])[0]
                if role in ("rti", "learner") and "running" in cs.get("state", {}):
                    assert core.setdefault(role, p["metadata"]["uid"]) == p["metadata"]["uid"], f"{role} replaced"
                    assert cs.get("restartCount", 0) == 0, f"the {role}'s container restarted: {cs}"
            joined = [c for c in st.get("membership") or [] if c["member"] == "samplers[1]" and c["joined"]]
            if joined and "joined" not in seen:
                seen["joined"] = now
            progress = st.get("progress") or {}
            trains = (joined and progress.get("tagNs") is not None
                      and progress["tagNs"] >= joined[-1]["tagNs"] + AT_WORK_NS)  # fmt: skip
            ready = (st.get("samplers") or {}).get("readyText") == "2/2"
            return st if trains and ready and "metric" in seen else None

        try:
            st = wait_for("the HPA to widen the federation to 2 samplers, training", look, 240, interval=1)
        except AssertionError as e:
            hpa_state = k.kubectl("describe", "hpa", NAME, "-n", NAMESPACE, check=False).stdout
            raise AssertionError(f"{e}\nseen: {seen}\n{hpa_state}\n{describe(k, NAME)}") from None
        t_done = time.monotonic()
        assert (st["incarnation"], st["restarts"], st["phase"]) == (1, 0, "Running"), st
        assert set(core) == {"rti", "learner"}
        status = k.get_json("hpa", NAME, "-n", NAMESPACE)["status"]
        active = next(c for c in status["conditions"] if c["type"] == "ScalingActive")
        assert active["status"] == "True", status
        metrics = status["currentMetrics"][0]["external"]
        assert metrics["metric"]["name"] == "learner_wait"
        print(f"learner_wait first served {seen['value']}, then {metrics['current']['value']}; "
              f"apply->metric {seen['metric'] - t_applied:.1f} s")  # fmt: skip
        record("hpa_metric_to_new_width_s", t_done - seen["metric"], "s",
               "learner_wait first served by the API server -> the federation trains at the HPA's width "
               "(the join in status.membership, ten rounds of logical time since)")  # fmt: skip
        record("hpa_metric_to_scale_s", seen["scaled"] - seen["metric"], "s",
               "learner_wait first served -> the HPA writes spec.samplers.replicas (its 15 s sync period)")
        narrow(k, core)
        record("hpa_test_s", time.monotonic() - t_start, "s", "tests/kind/test_hpa.py, apply to the end")
    finally:
        k.kubectl("delete", "hpa", NAME, "-n", NAMESPACE, "--ignore-not-found", check=False)
        clean_slate(k, NAME)
