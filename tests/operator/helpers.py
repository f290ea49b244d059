"""Shared builders for the operator's unit tests."""

from __future__ import annotations

from typing import Any

from reactorfed_operator.manifests import Federation
from reactorfed_operator.spec import parse_spec

__all__ = ["make_fed", "minimal_spec"]


def minimal_spec(**overrides: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "program": {"image": "ghcr.io/example/reactorfed:0.1.0", "entrypoint": "reactorfed_examples.pong:main"}
    }
    spec.update(overrides)
    return spec


def make_fed(name: str = "pong", namespace: str = "rl", **overrides: Any) -> Federation:
    return Federation(name=name, namespace=namespace, uid="uid-1234", spec=parse_spec(minimal_spec(**overrides)))
