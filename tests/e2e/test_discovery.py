"""The program says what its federates are, on a real control plane: before any pod of a
federation the operator runs ``reactorfed federates`` in a discovery pod (run here as a
local process by the session's discovery kubelet, tests/e2e/discovery.py: the real
command on the real program), keeps the answer in ``status.program`` and checks the groups
against it. A federation that matches proceeds (and is not asked again on a rescale, only
when its program changes); groups that name no federate of the program, leave one of its
federates unplaced or do not set a bank's width parameter are refused with the field and
the federate named, and so is a program that fails to import, with its error; no federate
pod is made, and the refusal is lifted once the cause is gone."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from typing import Any

import pytest

from .conftest import NAMESPACE, rfed
from .controlplane import ControlPlane, wait_for
from .discovery import PROGRAMS, DiscoveryKubelet

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

COUNTING = (PROGRAMS / "counting.py").read_text()  # samplers[0..num_samplers-1] and learner


def configmap(name: str, key: str, text: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {key: text}}


def federation(name: str, groups: list[dict[str, Any]] | None = None, module: str = "counting") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "program": {"image": "reactorfed-runtime:e2e", "entrypoint": f"{module}:Main",
                    "configMap": {"name": name, "key": f"{module}.py"}},
        "samplers": {"replicas": 2},
        "rti": {"resources": {"requests": {"cpu": "100m"}}},
    }  # fmt: skip
    if groups is None:
        spec["samplers"]["resources"] = {"requests": {"cpu": "100m"}}
        spec["learner"] = {"gpus": 0}
    else:
        spec["federateGroups"] = groups
    return {"apiVersion": "reactorfed.io/v1alpha1", "kind": "ReactorFederation", "metadata": {"name": name},
            "spec": spec}  # fmt: skip


def apply(cp: ControlPlane, *objs: dict[str, Any]) -> None:
    cp.kubectl("apply", "-n", NAMESPACE, "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List",
                                                                       "items": list(objs)}))  # fmt: skip


def _seconds(stamp: str) -> float:
    return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def federate_pods(cp: ControlPlane, name: str) -> list[str]:
    """Every pod of the federation but its discovery pod, deleted or not: none may ever exist
    while it is refused."""
    selector = f"reactorfed.io/federation={name},reactorfed.io/role!=discovery"
    return [p["metadata"]["name"] for p in cp.get_json("pods", "-n", NAMESPACE, "-l", selector)["items"]]


def status(cp: ControlPlane, name: str) -> dict[str, Any]:
    return rfed(cp, name).get("status") or {}


def condition(st: dict[str, Any], ctype: str = "GroupsMatchProgram") -> dict[str, Any]:
    return next((c for c in st.get("conditions") or [] if c["type"] == ctype), {})


def events(cp: ControlPlane, name: str) -> list[dict[str, Any]]:
    return cp.get_json("events", "-n", NAMESPACE, "--field-selector", f"involvedObject.name={name}")["items"]


def until(cp: ControlPlane, kubelet: DiscoveryKubelet, what: str, probe: Any, timeout: float = 90) -> Any:
    try:
        return wait_for(what, probe, timeout)
    except TimeoutError:
        print(cp.log_tail("operator", 60))
        print(cp.kubectl("get", "pods,rfed", "-n", NAMESPACE, "-o", "wide", check=False).stdout)
        print(f"discovery runs: {kubelet.runs}, errors: {kubelet.errors[-5:]}")
        raise


def running(cp: ControlPlane, name: str, samplers: int) -> dict[str, Any] | None:
    st = status(cp, name)
    names = federate_pods(cp, name)
    pods_ok = len(names) == samplers + 2 and all(
        p["status"].get("phase") == "Running" for p in cp.get_json(
            "pods", "-n", NAMESPACE, "-l", f"reactorfed.io/federation={name},reactorfed.io/role!=discovery")["items"])  # fmt: skip
    return st if st.get("phase") == "Running" and pods_ok else None


def refused(cp: ControlPlane, kubelet: DiscoveryKubelet, name: str, reason: str) -> dict[str, Any]:
    st = until(cp, kubelet, f"{name} refused ({reason})", lambda: (s := status(cp, name)).get("reason") == reason and s)
    assert st["phase"] == "Failed", st
    assert federate_pods(cp, name) == []  # no federate pod was made, not even behind its gate
    assert not any(e["reason"] == "Creating" for e in events(cp, name))
    cond = condition(st)
    assert cond["status"] == "False" and cond["reason"] == reason and cond["message"] in st["message"], cond
    return st


def test_a_matching_federation_proceeds_and_is_asked_again_only_when_its_program_changes(
    installed: ControlPlane, operator: subprocess.Popen[bytes], discovery_kubelet: DiscoveryKubelet
) -> None:
    cp, kubelet, name = installed, discovery_kubelet, "disc-match"
    apply(cp, configmap(name, "counting.py", COUNTING), federation(name))
    try:
        st = until(cp, kubelet, f"{name} running", lambda: running(cp, name, 2))
        assert condition(st)["status"] == "True", st["conditions"]
        program = st["program"]
        assert program["federates"] == ["learner"] and not program.get("error"), program
        assert program["banks"] == [{"name": "samplers", "width": 2, "widthParam": "num_samplers"}], program
        assert program["entrypoint"] == "counting:Main" and program["image"] == "reactorfed-runtime:e2e"
        assert [c for _, _, c in kubelet.runs_of(name)] == [0]
        created = rfed(cp, name)["metadata"]["creationTimestamp"]
        took = _seconds(program["discoveredAt"]) - _seconds(created)
        print(f"\n{name}: apply -> status.program {took:.0f} s (1 s resolution); the command itself "
              f"{kubelet.runs_of(name)[0][1]:.2f} s")
        assert took < 30, took
        reasons = [e["reason"] for e in sorted(events(cp, name), key=lambda e: e.get("firstTimestamp") or "")]
        assert "Discovering" in reasons and "Creating" in reasons
        assert cp.kubectl("get", "pod", f"{name}-discovery", "-n", NAMESPACE, check=False).returncode != 0  # deleted

        # a rescale restarts the federation at the new width, and does not ask again
        cp.kubectl("scale", f"rfed/{name}", "-n", NAMESPACE, "--replicas=3")
        st = until(cp, kubelet, f"{name} at 3 samplers", lambda: running(cp, name, 3))
        assert st["program"]["discoveredAt"] == program["discoveredAt"] and len(kubelet.runs_of(name)) == 1

        # the program changed (its ConfigMap): asked again, while the federation keeps running
        apply(cp, configmap(name, "counting.py", COUNTING + "\n# edited\n"))
        st = until(cp, kubelet, f"{name} asked again", lambda: (s := status(cp, name)).get("program", {}).get(
            "inputs") != program["inputs"] and s)  # fmt: skip
        assert len(kubelet.runs_of(name)) == 2 and condition(st)["status"] == "True"
        assert running(cp, name, 3) is not None and st["restarts"] == 0
    finally:
        cp.kubectl("delete", "rfed,configmap", name, "-n", NAMESPACE, "--wait=false", check=False)


LEARNER = {"name": "learner", "federate": "learner"}
SAMPLERS = {"name": "samplers", "bank": "samplers", "widthParam": "num_samplers", "scale": True}


@pytest.mark.parametrize(("case", "groups", "field", "federate"), [
    ("no-such-federate", [{"name": "trainer", "federate": "trainer"}, SAMPLERS],
     "spec.federateGroups[0].federate", "'trainer'"),
    ("unplaced", [SAMPLERS], "spec.federateGroups", "'learner'"),
    ("width-param-unset", [LEARNER, {"name": "samplers", "bank": "samplers", "replicas": 2}],
     "spec.federateGroups[1].widthParam", "'samplers'"),
])  # fmt: skip
def test_groups_that_do_not_match_the_program_are_refused_before_any_pod(
    installed: ControlPlane, operator: subprocess.Popen[bytes], discovery_kubelet: DiscoveryKubelet,
    case: str, groups: list[dict[str, Any]], field: str, federate: str,
) -> None:  # fmt: skip
    cp, kubelet, name = installed, discovery_kubelet, f"disc-{case}"
    apply(cp, configmap(name, "counting.py", COUNTING), federation(name, groups))
    try:
        st = refused(cp, kubelet, name, "GroupsDoNotMatchProgram")
        assert f"{field}: " in st["message"] and federate in st["message"], st["message"]
        warned = [e for e in events(cp, name) if e["reason"] == "GroupsDoNotMatchProgram"]
        assert warned and warned[0]["type"] == "Warning" and field in warned[0]["message"]
        # fixed: the answer kept for the program judges the new groups at once, and it proceeds
        # (a scaled bank's width is no input of the answer: the fixed spec is not asked again)
        apply(cp, federation(name, [LEARNER, SAMPLERS]))
        st = until(cp, kubelet, f"{name} running once fixed", lambda: running(cp, name, 2))
        assert condition(st)["status"] == "True" and len(kubelet.runs_of(name)) == 1, kubelet.runs_of(name)
    finally:
        cp.kubectl("delete", "rfed,configmap", name, "-n", NAMESPACE, "--wait=false", check=False)


def test_a_program_that_fails_to_import_is_refused_with_its_error(
    installed: ControlPlane, operator: subprocess.Popen[bytes], discovery_kubelet: DiscoveryKubelet
) -> None:
    cp, kubelet, name = installed, discovery_kubelet, "disc-broken"
    apply(cp, configmap(name, "counting.py", COUNTING + "\nimport no_such_module_here\n"), federation(name))
    try:
        st = refused(cp, kubelet, name, "DiscoveryFailed")
        message = st["message"]
        assert message.startswith("spec.program: `reactorfed federates counting:Main` failed in a pod of "
                                  "reactorfed-runtime:e2e (exit code 1): "), message  # fmt: skip
        assert message.endswith("ModuleNotFoundError: No module named 'no_such_module_here'"), message
        assert st["program"]["error"] == message and [c for _, _, c in kubelet.runs_of(name)] == [1]
        assert any(e["reason"] == "DiscoveryFailed" and e["type"] == "Warning" for e in events(cp, name))
        # the program fixed (no spec edit): asked again, and the federation starts
        apply(cp, configmap(name, "counting.py", COUNTING))
        st = until(cp, kubelet, f"{name} running once its program imports", lambda: running(cp, name, 2))
        assert condition(st)["status"] == "True" and [c for _, _, c in kubelet.runs_of(name)] == [1, 0]
    finally:
        cp.kubectl("delete", "rfed,configmap", name, "-n", NAMESPACE, "--wait=false", check=False)
