"""The handlers keep state per federation (a lock that serialises its passes) and drop it
when the federation is gone, so a long-lived operator's memory does not grow with every
federation it has ever seen."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from reactorfed_operator import handlers


class _Gone:
    """A namespace whose federations were all deleted (the API answers 404)."""

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace

    def federation(self, name: str) -> dict[str, Any] | None:
        return None


def test_a_federation_that_is_gone_leaves_no_state(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(handlers, "Cluster", _Gone)
    before = handlers.tracked()
    for i in range(100):
        handlers.reconcile("ns", f"fed-{i}", f"uid-{i}", logging.getLogger("test"))
    assert handlers.tracked() == before


def test_a_pass_that_finds_its_federation_deleted_drops_its_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    """Figures kept for the external metrics API go with the federation, also when the
    operator missed its delete (it was restarting), not with an older incarnation's pass."""
    monkeypatch.setattr(handlers, "Cluster", _Gone)
    before = handlers.tracked()
    handlers.METRICS.put("ns", "went", {"learner_wait": 0.5}, "2026-11-29T00:00:00Z")
    assert handlers.tracked() == before + 1
    handlers.reconcile("ns", "went", "uid-went", logging.getLogger("test"))
    assert handlers.tracked() == before

    class Renamed(_Gone):  # a newer federation of the same name
        def federation(self, name: str) -> dict[str, Any] | None:
            return {"metadata": {"uid": "uid-new", "name": name}}

    monkeypatch.setattr(handlers, "Cluster", Renamed)
    handlers.METRICS.put("ns", "again", {"learner_wait": 0.5}, "2026-11-29T00:00:00Z")
    handlers.reconcile("ns", "again", "uid-old", logging.getLogger("test"))
    assert handlers.tracked() == before + 1  # the new one's figures stay
    handlers.on_delete(meta={"uid": "uid-new", "namespace": "ns", "name": "again"})
    assert handlers.tracked() == before


def test_the_delete_handler_drops_the_state(monkeypatch: pytest.MonkeyPatch) -> None:
    before = handlers.tracked()
    seen: list[int] = []

    class Deleted(_Gone):
        def federation(self, name: str) -> dict[str, Any] | None:
            seen.append(handlers.tracked())  # a pass in progress holds its federation's state
            handlers.on_delete(meta={"uid": "uid-deleted"})  # Kopf's delete handler, meanwhile
            seen.append(handlers.tracked())
            return None

    monkeypatch.setattr(handlers, "Cluster", Deleted)
    handlers.reconcile("ns", "deleted", "uid-deleted", logging.getLogger("test"))
    assert seen == [before + 1, before] and handlers.tracked() == before
