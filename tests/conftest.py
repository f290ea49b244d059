"""The whole suite: when a run deselects the ``peers`` mark, as CI's does, the bench extra's
peers cannot be imported even where this machine has them, so a test that needs one but
lacks the mark fails here as it would on CI's machine, which never installs them."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType

import pytest

PEERS = ("ray", "stable_baselines3", "xronos")  # the bench extra beyond rl, operator and dev


class _PeersAbsent(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname.split(".", 1)[0] in PEERS:
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: a benchmark peer, which CI does not install;"
                " a test that needs it carries the `peers` mark",
                name=fullname,
            )
        return None


def pytest_configure(config: pytest.Config) -> None:
    if "not peers" in (config.option.markexpr or ""):
        assert not any(name.split(".", 1)[0] in PEERS for name in sys.modules), "a peer imported before the suite"
        sys.meta_path.insert(0, _PeersAbsent())
