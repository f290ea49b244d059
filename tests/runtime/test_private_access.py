"""Privacy between modules, checked on the AST of every module of ``reactorfed``.

A leading underscore says "this module's business". The walk fails on:

- an import of a private name (``from x import _name``) from another module of the package;
- an attribute access ``expr._name`` (read or write; also ``getattr(expr, "_name")`` and
  ``expr.__dict__["_name"]``) where ``_name`` is not owned by the module doing the access. A module owns the private names assigned to ``self``/``cls`` in
  its classes' methods, its classes' bodies and ``__slots__``, its module-level names and
  the private keys it stores in a dict (``obj.__dict__["_name"] = ...``).
  ``self._x`` where only a base class in another module owns ``_x`` is a violation too: that
  is reaching into another module's private state;
- a class body annotating an attribute without a value (``x: int``) that another class
  assigns: the mixin pattern "attributes annotated below without a value are the core's".
  Dataclasses, NamedTuples, Protocols and TypedDicts declare fields that way and are fine.

Private names of other projects (stdlib, numpy, torch...) are their privacy: each one still
used is in ``FOREIGN`` with the reason no public API serves; the test also fails when one
of them no longer occurs, so the list stays true.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "runtime" / "reactorfed"

_TORCH = (
    "torch has no public view of a module's submodule, parameter and hook dicts; the fast "
    "MLP path (rl.algos.network) keeps them to notice a layer replaced or a hook added since"
)
_ARGPARSE = "argparse has no public name for an argument group's type nor a way to list a group's actions"

#: (module, name) -> reason: private names of other projects (stdlib, torch) with no public twin
FOREIGN: dict[tuple[str, str], str] = {
    ("reactorfed.cli.forkserver", "_exit"): "os._exit: documented; a forked child ends without the parent's atexit handlers",
    ("reactorfed.cli.main", "_exit"): "os._exit: documented; after every atexit handler, skips the interpreter's teardown "
    "where torch's triton bindings print their leaks",
    ("reactorfed.federation.process.heartbeat", "_exit"): "os._exit: documented; ends the process from the watchdog thread",
    ("reactorfed.federation.process.launch", "_exit"): "os._exit: documented; a forked child ends without the parent's atexit handlers",
    ("reactorfed.cli.options", "_ArgumentGroup"): _ARGPARSE,
    ("reactorfed.cli.options", "_action_groups"): _ARGPARSE,
    ("reactorfed.cli.options", "_group_actions"): _ARGPARSE,
    ("reactorfed.federation.io.shm", "_posixshmem"): (
        "before Python 3.13 SharedMemory cannot attach without registering with the resource "
        "tracker; the reader opens the segment the way SharedMemory does, minus the register"
    ),
    ("reactorfed.federation.io.shm", "_fd"): "SharedMemory exposes no file descriptor; posix_fallocate needs it",
    ("reactorfed.federation.io.shm", "_name"): "the name SharedMemory registered with the resource tracker (with its leading slash)",
    ("reactorfed.rl.algos.network", "_modules"): _TORCH,
    ("reactorfed.rl.algos.network", "_parameters"): _TORCH,
    ("reactorfed.rl.algos.network", "_forward_hooks"): _TORCH,
    ("reactorfed.rl.algos.network", "_forward_pre_hooks"): _TORCH,
    ("reactorfed.rl.algos.network", "_global_forward_hooks"): _TORCH,
    ("reactorfed.rl.algos.network", "_global_forward_pre_hooks"): _TORCH,
}

#: decorators and bases whose class-body annotations declare fields, not borrowed state
FIELD_DECLARERS = {"dataclass", "NamedTuple", "Protocol", "TypedDict"}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _simple(node: ast.expr) -> str:
    """``dataclasses.dataclass(frozen=True)`` -> ``dataclass``; ``typing.Protocol[T]`` -> ``Protocol``."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


@dataclass
class Parsed:
    module: str
    tree: ast.Module
    #: private names this module owns
    owned: set[str]
    #: class name -> attributes its methods assign on self/cls
    assigns: dict[str, set[str]]
    #: class name -> the simple names of its bases
    bases: dict[str, set[str]]
    #: names bound by ``import x`` / ``from x import y`` (modules and foreign objects)
    imported: set[str]


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return node.targets
    if isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        return [node.target]
    return []


def _names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _names(e)]
    if isinstance(target, ast.Starred):
        return _names(target.value)
    return []


def _self_assigned(cls: ast.ClassDef) -> set[str]:
    """Attributes assigned as ``self.x = ``/``cls.x = `` anywhere in the class's methods (an
    augmented assignment updates an attribute, it does not set it up)."""
    out: set[str] = set()
    for node in ast.walk(cls):
        for target in _targets(node) if not isinstance(node, ast.AugAssign) else []:
            for t in target.elts if isinstance(target, ast.Tuple) else [target]:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in ("self", "cls"):
                    out.add(t.attr)
    return out


def _class_body_names(cls: ast.ClassDef) -> set[str]:
    out: set[str] = set()
    for stmt in cls.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(stmt.name)
        for target in _targets(stmt):
            out.update(_names(target))
            if _names(target) == ["__slots__"] and isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                value = stmt.value
                if isinstance(value, (ast.Tuple, ast.List, ast.Set)):
                    out.update(e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
                elif isinstance(value, ast.Constant) and isinstance(value.value, str):
                    out.add(value.value)
    return out


def parse(module: str, source: str) -> Parsed:
    tree = ast.parse(source)
    owned: set[str] = set()
    assigns: dict[str, set[str]] = {}
    bases: dict[str, set[str]] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            owned.add(stmt.name)
        for target in _targets(stmt):
            owned.update(_names(target))
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            owned.update((a.asname or a.name).split(".")[0] for a in stmt.names)
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.update(a.asname or a.name for a in node.names)
        if isinstance(node, ast.ClassDef):
            mine = _self_assigned(node)
            assigns[node.name] = mine
            bases[node.name] = {_simple(b) for b in node.bases}
            owned |= mine | _class_body_names(node) | _attributes_stored_on_self(node)
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, (ast.Name, ast.Attribute))
            and _key(node) is not None
        ):
            owned.add(_key(node) or "")  # d["_x"] = ..., obj.__dict__["_x"] = ...
    return Parsed(module, tree, {n for n in owned if _private(n)}, assigns, bases, imported)


def _attributes_stored_on_self(cls: ast.ClassDef) -> set[str]:
    return {
        node.attr
        for node in ast.walk(cls)
        if isinstance(node, ast.Attribute)
        and isinstance(node.ctx, ast.Store)
        and isinstance(node.value, ast.Name)
        and node.value.id in ("self", "cls")
    }


def _key(node: ast.Subscript) -> str | None:
    """The constant string key of ``x[...]``, None when it is not one."""
    k = node.slice
    return k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else None


def _instance_dict_key(node: ast.AST) -> str | None:
    """``obj.__dict__["_k"]`` or ``obj.__dict__.get("_k")`` (pop, setdefault) with ``obj``
    not self: the private key it reads or writes in another object's instance dict."""
    if isinstance(node, ast.Subscript):
        owner, key = node.value, _key(node)
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("get", "pop", "setdefault")
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        owner, key = node.func.value, node.args[0].value
    else:
        return None
    if (
        key is not None
        and _private(key)
        and isinstance(owner, ast.Attribute)
        and owner.attr == "__dict__"
        and not (isinstance(owner.value, ast.Name) and owner.value.id in ("self", "cls"))
    ):
        return key
    return None


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _ancestors(name: str, bases: dict[str, set[str]]) -> set[str]:
    seen: set[str] = set()
    todo = [name]
    while todo:
        for b in bases.get(todo.pop(), set()):
            if b not in seen:
                seen.add(b)
                todo.append(b)
    return seen


def violations(
    parsed: Parsed, is_package: bool, all_assigns: dict[str, set[str]], all_bases: dict[str, set[str]]
) -> set[tuple[str, str, int]]:
    """(kind, name, line) of every violation in one module. ``all_assigns`` maps
    ``module.Class`` of the whole package to the attributes that class assigns,
    ``all_bases`` a class's simple name to its bases'. A class body's bare annotation is
    borrowed when a class derived from it sets the attribute up and neither it nor its
    bases do (a mixin declaring its core's state); a class narrowing the type of what its
    base sets up declares nothing it does not own."""
    found: set[tuple[str, str, int]] = set()
    for node in ast.walk(parsed.tree):
        if isinstance(node, ast.ImportFrom):
            if _resolve(parsed.module, is_package, node) != parsed.module:
                for alias in node.names:
                    if _private(alias.name):
                        found.add(("import", alias.name, node.lineno))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if any(_private(part) for part in alias.name.split(".")):
                    found.add(("import", alias.name, node.lineno))
        elif isinstance(node, ast.Attribute) and _private(node.attr):
            # on a module this one imports, the name is that module's even if it is ours too
            on_module = isinstance(node.value, ast.Name) and node.value.id in parsed.imported
            if on_module or node.attr not in parsed.owned:
                found.add(("attribute", node.attr, node.lineno))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and _private(node.args[1].value)
            and (
                node.args[1].value not in parsed.owned
                or (isinstance(node.args[0], ast.Name) and node.args[0].id in parsed.imported)
            )
        ):
            found.add(("attribute", node.args[1].value, node.lineno))
        elif (key := _instance_dict_key(node)) is not None and key not in parsed.owned:
            found.add(("attribute", key, node.lineno))
        elif isinstance(node, ast.ClassDef):
            kinds = {_simple(d) for d in node.decorator_list} | {_simple(b) for b in node.bases}
            if kinds & FIELD_DECLARERS:
                continue
            mine = parsed.assigns.get(node.name, set())
            ancestors = _ancestors(node.name, all_bases)
            for stmt in node.body:
                if isinstance(stmt, ast.AnnAssign) and stmt.value is None and isinstance(stmt.target, ast.Name):
                    name = stmt.target.id
                    if name in mine:
                        continue
                    me = f"{parsed.module}.{node.name}"
                    owners = {o.rsplit(".", 1)[1] for o, attrs in all_assigns.items() if name in attrs and o != me}
                    if owners & ancestors:
                        continue
                    if any(node.name in _ancestors(o, all_bases) for o in owners):
                        found.add(("borrowed", f"{node.name}.{name}", stmt.lineno))
    return found


def scan() -> dict[tuple[str, str], list[str]]:
    """(module, name) -> where and what, over the whole package."""
    parsed = {}
    for path in sorted(PKG.rglob("*.py")):
        parsed[path] = parse(_module_name(path), path.read_text())
    all_assigns = {f"{p.module}.{cls}": attrs for p in parsed.values() for cls, attrs in p.assigns.items()}
    all_bases = {cls: b for p in parsed.values() for cls, b in p.bases.items()}
    out: dict[tuple[str, str], list[str]] = {}
    for path, p in parsed.items():
        for kind, name, line in violations(p, path.name == "__init__.py", all_assigns, all_bases):
            out.setdefault((p.module, name), []).append(f"{path.relative_to(PKG.parent)}:{line} {kind}")
    return out


def test_no_module_reaches_into_another_modules_privates() -> None:
    found = scan()
    new = {k: sorted(v) for k, v in found.items() if k not in FOREIGN}
    gone = sorted(k for k in FOREIGN if k not in found)
    assert not new, "private access across modules (make the name public in its module):\n" + "\n".join(
        f"  {m} {n}: {', '.join(w)}" for (m, n), w in sorted(new.items())
    )
    assert not gone, f"no longer occur: remove from FOREIGN: {gone}"


def test_every_allowlist_entry_gives_a_reason() -> None:
    assert all(r.strip() for r in FOREIGN.values())


def _check(module: str, source: str, others: dict[str, str] | None = None) -> set[tuple[str, str]]:
    parsed = {m: parse(m, s) for m, s in {module: source, **(others or {})}.items()}
    all_assigns = {f"{p.module}.{c}": a for p in parsed.values() for c, a in p.assigns.items()}
    all_bases = {c: b for p in parsed.values() for c, b in p.bases.items()}
    return {(k, n) for k, n, _ in violations(parsed[module], False, all_assigns, all_bases)}


def test_the_checker_finds_what_it_should() -> None:
    """The checker is not blind: each rule fires on a snippet that breaks it, and stays quiet
    on the same snippet written the allowed way."""
    assert _check("reactorfed.a", "from reactorfed.b import _helper\nfrom .c import _x\n") == {
        ("import", "_helper"),
        ("import", "_x"),
    }
    assert _check("reactorfed.a", "from reactorfed.b import helper, __version__\n") == set()
    # another module's private attribute, read and written
    assert _check("reactorfed.a", "def f(s):\n    s._queue.pop()\n    s._n = 1\n") == {
        ("attribute", "_queue"),
        ("attribute", "_n"),
    }
    # self._x owned by the module's own class; a module-level private; a dunder
    own = (
        "_CACHE = {}\n"
        "class A:\n"
        "    __slots__ = ('_slot',)\n"
        "    def __init__(self):\n        self._x = 1\n"
        "    def f(self, other):\n        return other._x + other._slot + _CACHE.__len__()\n"
    )
    assert _check("reactorfed.a", own) == set()
    # a foreign module's private, even under a name this module also uses
    foreign = "import sys\n_getframe = None\nimport _thread\ndef f():\n    return sys._getframe(1)\n"
    assert _check("reactorfed.a", foreign) == {("attribute", "_getframe"), ("import", "_thread")}
    # another object's instance dict, under a private key this module does not own
    peek = "def f(r):\n    return r.__dict__.get('_ended'), r.__dict__['_env']\n"
    assert _check("reactorfed.a", peek) == {("attribute", "_ended"), ("attribute", "_env")}
    assert _check("reactorfed.a", "def f(r):\n    r.__dict__['_env'] = 1\n    return r.__dict__['_env']\n") == set()
    # self._x owned only by a base class in another module
    sub = "from reactorfed.b import Base\nclass A(Base):\n    def f(self):\n        return self._state\n"
    assert _check("reactorfed.a", sub) == {("attribute", "_state")}
    # a mixin declaring the core's attribute; a dataclass's field is fine
    mixin = "class Part:\n    count: int\n    def bump(self):\n        self.count += 1\n"
    core = "from reactorfed.a import Part\nclass Core(Part):\n    def __init__(self):\n        self.count = 0\n"
    assert _check("reactorfed.a", mixin, {"reactorfed.b": core}) == {("borrowed", "Part.count")}
    fields = "from dataclasses import dataclass\n@dataclass\nclass Part:\n    count: int\n"
    assert _check("reactorfed.a", fields, {"reactorfed.b": core}) == set()
    # a subclass narrowing the type of what its base sets up
    narrow = "from reactorfed.b import Core\nclass Sub(Core):\n    count: bool\n"
    assert _check("reactorfed.a", narrow, {"reactorfed.b": core}) == set()
