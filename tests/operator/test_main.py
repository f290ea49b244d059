"""``python -m reactorfed_operator``: arguments map onto kopf.run() (not started here)."""

from __future__ import annotations

from typing import Any

import pytest

from reactorfed_operator import __main__ as cli


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(cli.kopf, "run", lambda **kw: calls.append(kw))
    monkeypatch.setattr(cli.kopf, "configure", lambda **kw: None)
    return calls


def test_namespaced_with_peering(runs: list[dict[str, Any]]) -> None:
    assert cli.main(["-n", "a", "-n", "b", "--priority", "7", "--liveness", "http://0.0.0.0:8080/healthz"]) == 0
    (kw,) = runs
    assert kw["namespaces"] == ["a", "b"] and not kw["clusterwide"]
    assert kw["peering_name"] == "reactorfed-operator" and kw["priority"] == 7 and not kw["standalone"]
    assert kw["liveness_endpoint"] == "http://0.0.0.0:8080/healthz"


def test_cluster_wide_and_standalone(runs: list[dict[str, Any]]) -> None:
    cli.main(["--all-namespaces", "--standalone"])
    (kw,) = runs
    assert kw["clusterwide"] and kw["namespaces"] == [] and kw["standalone"] and kw["peering_name"] is None


def test_default_namespace_from_env(runs: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WATCH_NAMESPACE", "rl")
    cli.main([])
    assert runs[0]["namespaces"] == ["rl"]


def test_namespace_and_all_namespaces_conflict(runs: list[dict[str, Any]]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["-n", "a", "-A"])
