"""The program says what its federates are, in the kind cluster: the discovery pod runs
``reactorfed federates`` in a real container of the runtime image (non-root, read-only root
filesystem, the ConfigMap program mounted), and the answer comes back through its
termination message, or its log when the answer is wider than the 4 KiB a termination
message holds.

* examples/k8s/configmap-program.yaml as shipped: asked once, its groups match, it proceeds
  (the time from apply to the answer recorded: what discovery adds to every applied
  federation);
* the same program with a group naming no federate of it and a 100-wide bank (an answer of
  some 6 KB, read from the log): refused, no federate pod made;
* a program that fails to import: refused with its error (``FallbackToLogsOnError``).

Kept short: the matching federation is deleted as soon as its pods are made."""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

import pytest

from .conftest import NAMESPACE, Kind, record, wait_for
from .federations import apply, clean_slate, describe, load_example, pods, rfed, status

pytestmark = [pytest.mark.kind, pytest.mark.timeout(400)]


def _example(images: dict[str, str], name: str, program: str | None = None) -> list[dict[str, Any]]:
    docs = copy.deepcopy(load_example("configmap-program.yaml"))
    cm = next(d for d in docs if d["kind"] == "ConfigMap")
    fed = next(d for d in docs if d["kind"] == "ReactorFederation")
    cm["metadata"]["name"] = fed["spec"]["program"]["configMap"]["name"] = f"{name}-program"
    if program is not None:
        cm["data"]["counter.py"] = program
    fed["metadata"]["name"] = name
    fed["spec"]["program"]["image"] = images["runtime"]
    return docs


def _seconds(stamp: str) -> float:
    return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def _refused(k: Kind, name: str, reason: str) -> dict[str, Any]:
    try:
        st = wait_for(f"{name} refused ({reason})", lambda: (s := status(k, name)).get("reason") == reason and s, 240)
    except TimeoutError:
        print(describe(k, name))
        raise
    assert st["phase"] == "Failed" and pods(k, name) == {}, st
    cond = next(c for c in st["conditions"] if c["type"] == "GroupsMatchProgram")
    assert cond["status"] == "False" and cond["reason"] == reason
    return st


def test_a_matching_program_is_asked_once_and_proceeds(operator: Kind, images: dict[str, str]) -> None:
    k, name = operator, "discovery-match"
    clean_slate(k, name)
    apply(k, _example(images, name))
    try:
        try:
            st = wait_for("the program's answer and the federate pods", lambda: (s := status(k, name)).get(
                "program", {}).get("federates") and len(pods(k, name)) == 4 and s, 240)  # fmt: skip
        except TimeoutError:
            print(describe(k, name))
            raise
        cond = next(c for c in st["conditions"] if c["type"] == "GroupsMatchProgram")
        assert cond["status"] == "True", cond
        assert st["program"]["banks"] == [{"name": "samplers", "width": 2, "widthParam": "num_samplers"}]
        assert k.kubectl("get", "pod", f"{name}-discovery", "-n", NAMESPACE, check=False).returncode != 0
        created = rfed(k, name)["metadata"]["creationTimestamp"]
        record("discovery_apply_to_answer_s", _seconds(st["program"]["discoveredAt"]) - _seconds(created), "s",
               "kubectl apply -> status.program.discoveredAt (a pod of the runtime image runs `reactorfed "
               "federates` on the ConfigMap program; 1 s resolution)")  # fmt: skip
    finally:
        k.kubectl("delete", "rfed", name, "-n", NAMESPACE, "--wait=false", "--ignore-not-found")


def test_groups_naming_no_federate_are_refused_reading_a_wide_answer_from_the_log(
    operator: Kind, images: dict[str, str]
) -> None:
    k, name = operator, "discovery-mismatch"
    clean_slate(k, name)
    docs = _example(images, name)
    fed = next(d for d in docs if d["kind"] == "ReactorFederation")
    fed["spec"]["samplers"] = {"replicas": 100}
    del fed["spec"]["learner"]
    fed["spec"]["federateGroups"] = [
        {"name": "trainer", "federate": "trainer"},
        {"name": "samplers", "bank": "samplers", "widthParam": "num_samplers", "scale": True},
    ]
    apply(k, docs)
    try:
        st = _refused(k, name, "GroupsDoNotMatchProgram")
        assert "spec.federateGroups[0].federate: the program has no federate 'trainer'" in st["message"], st["message"]
        assert "no group places the program's federate 'learner'" in st["message"]
        assert st["program"]["banks"][0]["width"] == 100  # more than a termination message holds: read from the log
    finally:
        k.kubectl("delete", "rfed", name, "-n", NAMESPACE, "--wait=false", "--ignore-not-found")


def test_a_program_that_fails_to_import_is_refused_with_its_error(operator: Kind, images: dict[str, str]) -> None:
    k, name = operator, "discovery-broken"
    clean_slate(k, name)
    apply(k, _example(images, name, program="import no_such_module_here\n"))
    try:
        st = _refused(k, name, "DiscoveryFailed")
        assert "(exit code 1)" in st["message"] and "No module named 'no_such_module_here'" in st["message"], st
    finally:
        k.kubectl("delete", "rfed", name, "-n", NAMESPACE, "--wait=false", "--ignore-not-found")
