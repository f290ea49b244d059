"""What Kubernetes itself refuses on a pod, checked before any pod is made.

The API server accepts a ReactorFederation whose node selector key is not a label key (the
custom resource's schema is ours), and the error would come only when the operator creates
the pod. These pure checks follow the API server's own validation of pods
(``k8s.io/apimachinery/pkg/util/validation``: qualified names and label values;
``ValidateTolerations``): each raises :class:`~.errors.SpecError` naming the field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .errors import SpecError

__all__ = ["check_label_key", "check_label_value", "check_node_selector", "check_tolerations"]

_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
OPERATORS = ("Exists", "Equal")
EFFECTS = ("", "NoSchedule", "PreferNoSchedule", "NoExecute")


def check_label_key(key: str, path: str) -> None:
    """A qualified name: ``[prefix/]name``, the prefix a DNS subdomain of at most 253
    characters, the name at most 63 alphanumerics, ``-``, ``_``, ``.``, alphanumeric at both ends."""
    prefix, _, name = key.rpartition("/")
    if "/" in prefix:
        raise SpecError(path, f"{key!r} is not a label key: at most one '/'")
    if "/" in key and not (prefix and len(prefix) <= 253 and _SUBDOMAIN.match(prefix)):
        raise SpecError(path, f"{key!r} is not a label key: the prefix before '/' must be a DNS subdomain "
                              "(lower-case alphanumerics, '-', '.'; at most 253 characters)")  # fmt: skip
    if not name or len(name) > 63 or not _NAME.match(name):
        raise SpecError(path, f"{key!r} is not a label key: the name must be at most 63 characters, alphanumerics, "
                              "'-', '_' or '.', beginning and ending with an alphanumeric")  # fmt: skip


def check_label_value(value: str, path: str) -> None:
    if value and (len(value) > 63 or not _NAME.match(value)):
        raise SpecError(path, f"{value!r} is not a label value: at most 63 characters, alphanumerics, '-', '_' "
                              "or '.', beginning and ending with an alphanumeric")  # fmt: skip


def check_node_selector(selector: Mapping[str, str], path: str) -> None:
    for key, value in selector.items():
        check_label_key(str(key), f"{path}[{key!r}]")
        check_label_value(str(value), f"{path}[{key!r}]")


def check_tolerations(tolerations: Sequence[Mapping[str, Any]], path: str) -> None:
    """As the API server checks a pod's tolerations."""
    for i, t in enumerate(tolerations):
        where = f"{path}[{i}]"
        key = str(t.get("key") or "")
        op = t.get("operator") or "Equal"
        effect = t.get("effect") or ""
        if key:
            check_label_key(key, f"{where}.key")
        if op not in OPERATORS:
            raise SpecError(f"{where}.operator", f"must be Exists or Equal, got {op!r}")
        if effect not in EFFECTS:
            raise SpecError(f"{where}.effect", f"must be NoSchedule, PreferNoSchedule or NoExecute, got {effect!r}")
        if not key and op != "Exists":
            raise SpecError(f"{where}.operator", "must be Exists when the key is empty (a toleration of every taint)")
        if op == "Exists" and t.get("value"):
            raise SpecError(f"{where}.value", "must be empty when the operator is Exists")
        if op == "Equal" and t.get("value"):
            check_label_value(str(t["value"]), f"{where}.value")
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            raise SpecError(f"{where}.tolerationSeconds", "is allowed only with effect NoExecute")
