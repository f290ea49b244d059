"""Examples and benchmarks are what users copy: they import only public names of public
modules. Examples: ``reactorfed``, ``reactorfed.rl`` and ``reactorfed.rl.tune`` (the search
recipes' schedulers: ``reactorfed.rl`` keeps to its 40 names); benchmarks may also use the
curated ``reactorfed.rl`` subpackages, ``reactorfed.federation``, ``reactorfed.time`` (the
tag arithmetic) and ``reactorfed.federation.coordination`` (the RTI's pure core, which
bench/rti_core.py measures alone). A name is public when it is in its module's
``__all__``."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

EXAMPLE_MODULES = {"reactorfed", "reactorfed.rl", "reactorfed.rl.tune"}
BENCH_MODULES = EXAMPLE_MODULES | {
    "reactorfed.federation",
    "reactorfed.federation.coordination",
    "reactorfed.observe.trace",
    "reactorfed.rl.envs",
    "reactorfed.rl.algos",
    "reactorfed.rl.algos.ppo",
    "reactorfed.rl.algos.appo",
    "reactorfed.rl.algos.dqn",
    "reactorfed.rl.algos.apex",
    "reactorfed.rl.replay",
    "reactorfed.rl.plans",
    "reactorfed.time",
}


def _files() -> list[Path]:
    return sorted([*ROOT.glob("examples/*.py"), *ROOT.glob("examples/rl/*.py"), *ROOT.glob("bench/*.py")])


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, names) of every import of reactorfed in ``path`` (names empty for ``import m``)."""
    out: list[tuple[str, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] == "reactorfed":
                out.append((node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            out.extend((a.name, []) for a in node.names if a.name.split(".")[0] == "reactorfed")
    return out


def _public(module: str) -> set[str]:
    return set(getattr(importlib.import_module(module), "__all__", ()))


def test_examples_and_bench_import_only_public_names() -> None:
    problems: list[str] = []
    for path in _files():
        rel = path.relative_to(ROOT).as_posix()
        allowed = EXAMPLE_MODULES if rel.startswith("examples/") else BENCH_MODULES
        for module, names in _imports(path):
            private = [n for n in names if n.startswith("_")]
            if private:
                problems.append(f"{rel}: private name(s) {private} from {module}")
            if module not in allowed:
                problems.append(f"{rel}: imports {module}, not a public module ({', '.join(sorted(allowed))})")
                continue
            missing = [n for n in names if n != "*" and n not in _public(module)]
            if missing:
                problems.append(f"{rel}: {missing} not in {module}.__all__")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("module", sorted(BENCH_MODULES - {"reactorfed", "reactorfed.federation"}))
def test_rl_public_modules_export_what_they_list(module: str) -> None:
    """Every name of a curated ``__all__`` resolves (the torch names load on first use)."""
    mod = importlib.import_module(module)
    for name in mod.__all__:
        assert getattr(mod, name) is not None, f"{module}.{name}"


def test_rl_exports_at_most_40_names() -> None:
    assert len(_public("reactorfed.rl")) <= 40
