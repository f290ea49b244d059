"""Reading raw spec values: each helper returns a typed value or raises SpecError naming the field."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .errors import SpecError
from .kube import check_node_selector, check_tolerations

__all__ = ["cpu_cores", "int_", "obj", "placement", "str_"]


def obj(value: Any, path: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise SpecError(path, f"must be an object, got {type(value).__name__}")
    return value


def int_(value: Any, path: str, default: int, lo: int, hi: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpecError(path, f"must be an integer, got {value!r}")
    if not lo <= value <= hi:
        raise SpecError(path, f"must be between {lo} and {hi}, got {value}")
    return value


def str_(value: Any, path: str, default: str | None = None) -> str | None:
    if value is None:
        return default
    if not isinstance(value, str):
        raise SpecError(path, f"must be a string, got {value!r}")
    return value


_QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE]([+-]?[0-9]+))?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$")
_SUFFIX = {None: 1.0, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
           "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50, "Ei": 2.0**60}


def cpu_cores(quantity: Any, path: str = "cpu") -> float:
    """A Kubernetes CPU quantity (``500m``, ``2``, ``1.5``, ``1e3m``) in cores."""
    m = _QUANTITY.match(str(quantity).strip())
    if isinstance(quantity, bool) or m is None:
        raise SpecError(path, f"not a CPU quantity: {quantity!r} (e.g. 500m, 2)")
    return float(m[1]) * 10.0 ** int(m[2] or 0) * _SUFFIX[m[3]]


def placement(
    raw: Mapping[str, Any], path: str
) -> tuple[dict[str, dict[str, Any]], dict[str, str], tuple[dict[str, Any], ...]]:
    """``resources``, ``nodeSelector`` and ``tolerations`` of a group, checked as the API
    server would check them on its pods."""
    resources = obj(raw.get("resources"), f"{path}.resources")
    for key in resources:
        if key not in ("requests", "limits"):
            raise SpecError(f"{path}.resources", f"unknown key {key!r} (requests, limits)")
        cpu = obj(resources[key], f"{path}.resources.{key}").get("cpu")
        if cpu is not None:
            cpu_cores(cpu, f"{path}.resources.{key}.cpu")
    selector = {str(k): str(v) for k, v in obj(raw.get("nodeSelector"), f"{path}.nodeSelector").items()}
    check_node_selector(selector, f"{path}.nodeSelector")
    tolerations = raw.get("tolerations") or []
    if not isinstance(tolerations, list):
        raise SpecError(f"{path}.tolerations", "must be a list")
    tols = tuple(dict(obj(t, f"{path}.tolerations[{i}]")) for i, t in enumerate(tolerations))
    check_tolerations(tols, f"{path}.tolerations")
    return ({k: dict(obj(v, f"{path}.resources.{k}")) for k, v in resources.items()}, selector, tols)
