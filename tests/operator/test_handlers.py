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
