"""Names of a package that load their module on first use (PEP 562's module
``__getattr__``): how ``reactorfed.federation`` keeps ZeroMQ out of ``--help`` and
``reactorfed.rl`` keeps torch out of a sampler process."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(package: str, namespace: dict[str, Any], homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: each name of ``homes`` is imported from
    its submodule (``homes[name]``, relative to the package) when first asked for, then
    stored in ``namespace`` (the package's globals) as a plain attribute."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{home}", package), name)
        namespace[name] = value
        return value

    return __getattr__
