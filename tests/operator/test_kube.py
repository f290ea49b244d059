"""Label keys, label values and tolerations checked as the API server checks a pod's."""

from __future__ import annotations

from typing import Any

import pytest

from reactorfed_operator.kube import (
    check_label_key,
    check_label_value,
    check_node_selector,
    check_tolerations,
)
from reactorfed_operator.spec import SpecError, parse_spec

from .helpers import minimal_spec


@pytest.mark.parametrize("key", ["pool", "reactorfed.io/accelerator", "kubernetes.io/hostname", "a", "A_b.c-D",
                                 "node-role.kubernetes.io/worker", "x" * 63, f"{'a' * 253}/name"])
def test_valid_label_keys(key: str) -> None:
    check_label_key(key, "k")


@pytest.mark.parametrize("key", ["", "bad key", "-pool", "pool-", "a/b/c", "/name", "Example.com/x", "x" * 64,
                                 "ex_ample.com/x", f"{'a' * 254}/name", "prefix/", "pool!"])
def test_invalid_label_keys(key: str) -> None:
    with pytest.raises(SpecError) as err:
        check_label_key(key, "spec.x")
    assert err.value.field == "spec.x" and "not a label key" in err.value.message


def test_label_values() -> None:
    check_label_value("", "v")
    check_label_value("nvidia", "v")
    for bad in ("a b", "x" * 64, "-x"):
        with pytest.raises(SpecError):
            check_label_value(bad, "v")


def test_node_selector_names_the_key() -> None:
    with pytest.raises(SpecError) as err:
        check_node_selector({"ok": "1", "bad/key/x": "2"}, "spec.samplers.nodeSelector")
    assert err.value.field == "spec.samplers.nodeSelector['bad/key/x']"


@pytest.mark.parametrize(
    ("toleration", "field"),
    [
        ({"key": "k", "operator": "Exists", "value": "v"}, "value"),
        ({"operator": "Equal", "value": "v"}, "operator"),
        ({"value": "v"}, "operator"),  # an empty operator is Equal
        ({"key": "k", "operator": "In"}, "operator"),
        ({"key": "k", "operator": "Exists", "effect": "Evict"}, "effect"),
        ({"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}, "tolerationSeconds"),
        ({"key": "bad key", "operator": "Exists"}, "key"),
    ],
)
def test_invalid_tolerations(toleration: dict[str, Any], field: str) -> None:
    with pytest.raises(SpecError) as err:
        check_tolerations([{"key": "fine", "operator": "Exists"}, toleration], "spec.learner.tolerations")
    assert err.value.field == f"spec.learner.tolerations[1].{field}", str(err.value)


def test_valid_tolerations() -> None:
    check_tolerations([{"operator": "Exists"}, {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                       {"key": "k", "value": "v"}, {"key": "k", "operator": "Equal", "value": "v",
                                                    "effect": "NoExecute", "tolerationSeconds": 30}], "t")  # fmt: skip


def test_shorthand_refuses_what_a_pod_would_refuse() -> None:
    """Before groups, a bad node selector key passed the API server and failed only when the pod was made."""
    with pytest.raises(SpecError) as err:
        parse_spec(minimal_spec(samplers={"nodeSelector": {"bad key": "x"}}))
    assert err.value.field == "spec.samplers.nodeSelector['bad key']"
    with pytest.raises(SpecError) as err:
        parse_spec(minimal_spec(learner={"tolerations": [{"key": "k", "operator": "Exists", "value": "v"}]}))
    assert err.value.field == "spec.learner.tolerations[0].value"
