"""The package's shape, checked: no import cycle inside ``reactorfed``, the root holds only
the package's entry points and its rooms, the federation never imports the command line,
and the command line loads no network stack, serialiser or ML library before a command
needs one."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "runtime" / "reactorfed"
HEAVY = ("zmq", "msgpack", "torch", "numpy", "gymnasium")


def _module(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    p = PKG.parent / name.replace(".", "/")
    return p.with_suffix(".py").exists() or (p / "__init__.py").exists()


def _imports(path: Path) -> set[str]:
    """Modules of reactorfed that ``path`` imports when it runs: at module level or
    inside functions (a lazy import is still an edge), but not under TYPE_CHECKING."""
    me = _module(path)
    package = me if path.name == "__init__.py" else me.rsplit(".", 1)[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for orelse in child.orelse:
                    visit(orelse)
                continue
            if isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")[: len(package.split(".")) - (child.level - 1)]
                    target = ".".join([*base, *([child.module] if child.module else [])])
                else:
                    target = child.module or ""
                if target.split(".")[0] == "reactorfed":
                    for alias in child.names:
                        sub = f"{target}.{alias.name}"
                        found.add(sub if _is_module(sub) else target)
            elif isinstance(child, ast.Import):
                found.update(a.name for a in child.names if a.name.split(".")[0] == "reactorfed")
            visit(child)

    visit(ast.parse(path.read_text()))
    found.discard(me)
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in graph:
                continue
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            strong(v)
    return out


def test_no_import_cycle_inside_the_package() -> None:
    graph = {_module(p): _imports(p) for p in PKG.rglob("*.py")}
    assert len(graph) > 40 and graph["reactorfed.cli.main"], "the walk found the package's modules and their imports"
    assert _cycles(graph) == []


#: the federation's layers: what each may import (besides the federation's errors);
#: docs/architecture.md says what each owns
ALLOWED = {
    "wire": {"wire"},
    "io": {"io"},
    "coordination": {"wire", "coordination"},
    "process": {"wire", "io", "coordination", "process"},
}


def _layer(module: str) -> str | None:
    parts = module.split(".")
    if parts[:2] == ["reactorfed", "federation"] and len(parts) > 2 and parts[2] in ALLOWED:
        return parts[2]
    return None


def _third_party(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    found |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and not n.level}
    return found


def test_the_federation_layers_import_only_downwards() -> None:
    fed = PKG / "federation"
    seen = {layer: 0 for layer in ALLOWED}
    wrong = []
    for path in fed.rglob("*.py"):
        me = _layer(_module(path))
        if me is None:
            continue
        seen[me] += 1
        for target in _imports(path):
            other = _layer(target)
            if target.startswith("reactorfed.federation") and other is None and target not in (
                "reactorfed.federation", "reactorfed.federation.errors"
            ):
                wrong.append(f"{_module(path)} imports {target}, which belongs to no layer")
            elif other is not None and other not in ALLOWED[me]:
                wrong.append(f"{_module(path)} ({me}) imports {target} ({other})")
    assert all(n >= 2 for n in seen.values()), seen
    assert wrong == []


def test_only_the_transport_imports_zmq_and_the_pure_layers_no_threads_or_sockets() -> None:
    fed = PKG / "federation"
    zmq_users = sorted(_module(p) for p in fed.rglob("*.py") if "zmq" in _third_party(p))
    # the transport, and what it uses: the CurveZMQ keys and ZAP handler (io/curve.py),
    # multipart messages part by part (io/parts.py)
    assert zmq_users == [
        "reactorfed.federation.io.curve",
        "reactorfed.federation.io.parts",
        "reactorfed.federation.io.transport",
    ]
    for layer in ("wire", "coordination"):
        for path in (fed / layer).glob("*.py"):
            used = _third_party(path) & {"socket", "threading", "time", "select", "selectors", "zmq", "os"}
            assert not used, f"{_module(path)} is pure but imports {sorted(used)}"


def test_the_federation_never_imports_the_command_line() -> None:
    """The drivers (``federation/process``) run federates and RTIs; the command line
    (``cli/``) parses flags and calls them, never the other way round."""
    wrong = sorted(
        f"{_module(p)} imports {t}"
        for p in (PKG / "federation").rglob("*.py")
        for t in _imports(p)
        if t == "reactorfed.cli" or t.startswith("reactorfed.cli.")
    )
    assert wrong == []


def test_the_root_holds_only_entry_points_and_private_helpers() -> None:
    """Everything else lives in a room (time/, model/, assembly/, execution/, observe/,
    cli/, federation/, rl/)."""
    root = sorted(p.name for p in PKG.glob("*.py"))
    assert [n for n in root if n not in ("__init__.py", "__main__.py", "errors.py") and not n.startswith("_")] == []
    rooms = sorted(p.name for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").exists())
    assert {"time", "model", "assembly", "execution", "cli", "federation"} <= set(rooms), rooms


def test_the_rl_root_holds_at_most_five_files() -> None:
    """rl/'s own modules are the contract, the curves, rollouts and training log; the rest
    lives in its rooms (envs/, algos/, replay/, plans/, tune/)."""
    root = sorted(p.name for p in (PKG / "rl").glob("*.py"))
    assert len(root) <= 5, root


def test_the_walk_sees_a_cycle_through_a_lazy_import() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


@pytest.mark.parametrize("argv", [["run", "--help"], ["launch", "--help"], ["--help"]])
def test_help_loads_nothing_heavy(argv: list[str]) -> None:
    code = (
        "import sys\n"
        "from reactorfed.cli.main import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print('LOADED', sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert "usage: reactorfed" in r.stdout
    assert r.stdout.strip().splitlines()[-1] == "LOADED []"


def test_the_heartbeat_timeout_default_is_written_once() -> None:
    """Every default of the heartbeat timeout (the RTI's, a federate's, a federation in
    threads', ``--heartbeat-timeout``'s) is the one constant, and no module of the package
    writes its value again."""
    import inspect

    from reactorfed.cli.main import build_parser
    from reactorfed.federation import FederateConfig, RtiConfig
    from reactorfed.federation.process.defaults import DEFAULT_HEARTBEAT_TIMEOUT_NS
    from reactorfed.federation.process.threads import run_threads

    assert FederateConfig("f", b"s", "tcp://x:1").liveness_ns == DEFAULT_HEARTBEAT_TIMEOUT_NS
    assert RtiConfig("f", b"s").liveness_ns == DEFAULT_HEARTBEAT_TIMEOUT_NS
    assert inspect.signature(run_threads).parameters["liveness_ns"].default == DEFAULT_HEARTBEAT_TIMEOUT_NS
    args = build_parser().parse_args(["launch", "prog.py"])
    assert args.heartbeat_timeout == DEFAULT_HEARTBEAT_TIMEOUT_NS
    written = sorted(
        f"{_module(p)}:{n.lineno}"
        for p in PKG.rglob("*.py")
        for n in ast.walk(ast.parse(p.read_text()))
        if isinstance(n, ast.Constant) and type(n.value) in (int, float) and n.value == DEFAULT_HEARTBEAT_TIMEOUT_NS
    )
    assert written == [f"reactorfed.federation.process.defaults:{_line_of_default()}"]


def _line_of_default() -> int:
    src = (PKG / "federation" / "process" / "defaults.py").read_text()
    return next(i for i, line in enumerate(src.splitlines(), 1) if line.startswith("DEFAULT_HEARTBEAT_TIMEOUT_NS ="))


#: the big objects, each split into parts that own their state: at most this many lines each
BIG_CLASSES = {
    "execution/scheduler.py": "Scheduler",
    "federation/coordination/federate_core.py": "FederateCore",
    "federation/coordination/rti_core.py": "RtiCore",
    "federation/coordination/rti_membership.py": "RtiMembership",
    "federation/process/federate.py": "FederateCoordinator",
    "federation/process/rti_server.py": "RtiServer",
}


@pytest.mark.parametrize(("path", "name"), sorted(BIG_CLASSES.items()))
def test_the_big_objects_stay_small(path: str, name: str) -> None:
    tree = ast.parse((PKG / path).read_text())
    found = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == name]
    assert len(found) == 1, f"{name} not in {path}"
    lines = (found[0].end_lineno or 0) - found[0].lineno + 1
    assert lines <= 350, f"{name} is {lines} lines: split it into parts that own their state"
