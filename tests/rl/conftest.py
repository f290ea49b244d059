"""Helpers for the RL tests: the example programs, loaded from their files."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "rl"


def make_args(args_cls: type, params: Mapping[str, Any]) -> Any:
    """``args_cls`` from ``params`` whose dotted keys (``ppo.minibatch_size``, as ``--param``
    takes them) set a field of a nested config, the others the settings' own fields."""
    flat = {k: v for k, v in params.items() if "." not in k}
    nested: dict[str, dict[str, Any]] = {}
    for key, value in params.items():
        if "." in key:
            group, name = key.split(".", 1)
            nested.setdefault(group, {})[name] = value
    args = args_cls(**flat)
    return dataclasses.replace(args, **{g: dataclasses.replace(getattr(args, g), **kw) for g, kw in nested.items()})


def untagged_decisions(checkpoint: Path) -> list[dict[str, Any]]:
    """A tuner's decision record (``checkpoint/decisions.jsonl``) without each line's tag:
    a resumed run's logical time starts again at 0, its decisions are the same."""
    rows = [json.loads(line) for line in (checkpoint / "decisions.jsonl").read_text().splitlines()]
    return [{k: v for k, v in row.items() if k != "tag"} for row in rows]


def load_example(name: str) -> ModuleType:
    """Import ``examples/rl/NAME.py`` under a private module name."""
    mod_name = f"_rl_example_{name}"
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    spec = importlib.util.spec_from_file_location(mod_name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def _one_torch_thread() -> None:
    import torch

    torch.set_num_threads(1)
