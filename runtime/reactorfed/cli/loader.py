"""Loading a program from the command line: ``MODULE:ATTR`` or ``path/file.py:ATTR``.

``ATTR`` names (dotted names reach nested attributes):

* a :class:`~reactorfed.Reactor` subclass: instantiated with the parameters as keyword
  arguments, each converted from text by the constructor's annotation (or its default's
  type when there is no annotation);
* a function returning the main reactor: called the same way;
* a reactor instance: used as it is (no parameters).

A constructor (or function) whose one parameter is a dataclass (``def __init__(self,
args: Args = Args())``, the way CleanRL's recipes keep their settings) takes the
dataclass's fields as parameters: ``--param seed=3`` sets ``args.seed``, converted by the
field's annotation; fields not given keep their defaults.

A field (or a keyword parameter) that is itself a dataclass, such as an algorithm's
config nested in the settings (``ppo: PPOConfig = field(default_factory=PPOConfig)``),
takes its fields by dotted names: ``--param ppo.learning_rate=3e-4`` sets
``args.ppo.learning_rate``, converted by that field's annotation; the nested fields not
given keep the values of the field's default (the recipe's, not the config class's own).
:func:`program_params` lists the nested fields by their dotted names.

Without ``:ATTR``, the attribute ``Main`` is used. Conversion: ``int`` also takes
durations (``10ms`` -> 10000000, since durations are ints in ns), ``bool`` takes
true/false/yes/no/on/off/1/0, ``X | None`` takes ``none``, ``list[X]``/``tuple[X, ...]``
take comma-separated items, enums take a member's name or value, ``Literal`` its choices.

Every mistake in the spec or the parameters raises :class:`ProgramError` with a message
meant for the person at the terminal (the CLI exits with code 2); an exception raised by
the user's own code (while importing the module or building the reactor) propagates.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import importlib
import importlib.util
import inspect
import os
import sys
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from ..errors import ReactorError
from ..model.reactor import Reactor
from ..time.duration import parse_duration

__all__ = [
    "ProgramError",
    "add_program_args",
    "convert",
    "load_program",
    "parse_params",
    "program_params",
    "resolve_spec",
]

DEFAULT_ATTR = "Main"
_TRUE = {"true", "yes", "on", "1", "y", "t"}
_FALSE = {"false", "no", "off", "0", "n", "f"}


class ProgramError(ReactorError):
    """The program spec or its parameters are wrong (a usage error: exit code 2)."""


def add_program_args(parser: argparse.ArgumentParser, *, optional: bool = False) -> None:
    """Add the positional ``PROGRAM`` and the repeatable ``--param KEY=VALUE``
    (``optional``: PROGRAM may be left out, when another flag stands for it)."""
    parser.add_argument(
        "program",
        metavar="PROGRAM",
        nargs="?" if optional else None,
        help="what to run: MODULE:ATTR or path/to/file.py:ATTR, where ATTR is a Reactor "
        f"class, a function returning the main reactor, or a reactor (default ATTR: {DEFAULT_ATTR})",
    )
    parser.add_argument(
        "-p",
        "--param",
        dest="params",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a parameter of the main reactor (its constructor's keyword argument, or a field of "
        "its settings dataclass), converted by its annotation; a nested dataclass's field by its "
        "dotted name (ppo.learning_rate=3e-4); repeatable",
    )


def parse_params(items: Sequence[str]) -> dict[str, str]:
    """``["a=1", "b=x=y", "ppo.lr=1"]`` -> ``{"a": "1", "b": "x=y", "ppo.lr": "1"}``; a
    repeated key is an error. A key is a name or a dotted path of names (a nested field)."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ProgramError(f"--param {item!r}: expected KEY=VALUE")
        if not all(part.isidentifier() for part in key.split(".")):
            raise ProgramError(f"--param {item!r}: {key!r} is not a parameter name (NAME or NAME.FIELD)")
        if key in out:
            raise ProgramError(f"--param {key} is given twice")
        out[key] = value
    return out


# -- resolving the spec ------------------------------------------------------------------
def _split_spec(spec: str) -> tuple[str, str]:
    target, sep, attr = spec.rpartition(":")
    if not sep:
        target, attr = spec, DEFAULT_ATTR
    if not target or not attr:
        raise ProgramError(f"program {spec!r}: expected MODULE:ATTR or path/to/file.py:ATTR")
    return target, attr


def _is_path(target: str) -> bool:
    return target.endswith(".py") or os.sep in target or "/" in target


def _import_file(target: str, spec: str) -> types.ModuleType:
    path = Path(target).expanduser()
    if path.is_dir():
        raise ProgramError(f"program {spec!r}: {target} is a directory; name a .py file (e.g. {target}/main.py:Main)")
    if not path.is_file():
        raise ProgramError(f"program {spec!r}: no such file: {target}")
    path = path.resolve()
    name = path.stem if path.stem.isidentifier() else "reactorfed_program"
    if name in sys.modules and getattr(sys.modules[name], "__file__", None) != str(path):
        name = f"reactorfed_program_{name}"
    mspec = importlib.util.spec_from_file_location(name, path)
    if mspec is None or mspec.loader is None:
        raise ProgramError(f"program {spec!r}: cannot load {target} as Python")
    # Sibling modules of the file import as they would when it runs as a script.
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    module = importlib.util.module_from_spec(mspec)
    sys.modules[name] = module  # dataclasses, pickling and friends look modules up
    try:
        mspec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _import_module(target: str, spec: str) -> types.ModuleType:
    # A console script's sys.path lacks the working directory; `python -m` has it.
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as e:
        # Only a missing *program* module is a usage error; a missing dependency
        # inside it is the program's own failure and keeps its traceback.
        if e.name is not None and (target == e.name or target.startswith(e.name + ".")):
            raise ProgramError(
                f"program {spec!r}: no module named {e.name!r} (run from the directory that "
                f"holds it, set PYTHONPATH, or give a file: path/to/file.py:ATTR)"
            ) from None
        raise


def resolve_spec(spec: str) -> Any:
    """Import the module or file of ``spec`` and return the attribute it names."""
    target, attr = _split_spec(spec)
    module = _import_file(target, spec) if _is_path(target) else _import_module(target, spec)
    obj: Any = module
    for part in attr.split("."):
        if not part.isidentifier():
            raise ProgramError(f"program {spec!r}: {attr!r} is not an attribute name")
        try:
            obj = getattr(obj, part)
        except AttributeError:
            found = sorted(
                n for n, v in vars(module).items() if isinstance(v, type) and issubclass(v, Reactor) and v is not Reactor
            )
            hint = f"; reactor classes there: {', '.join(found)}" if found else ""
            raise ProgramError(f"program {spec!r}: {module.__name__} has no attribute {attr!r}{hint}") from None
    return obj


# -- parameters ------------------------------------------------------------------------
def _signature_target(obj: Any) -> Callable[..., Any]:
    if isinstance(obj, type):
        init: Callable[..., Any] = obj.__init__  # type: ignore[misc]
        return init
    return cast(Callable[..., Any], obj)


def program_params(obj: Any) -> dict[str, inspect.Parameter]:
    """The parameters ``obj`` (a reactor class or a factory) accepts, with the annotations
    resolved to types where possible: its keyword parameters or, when its one parameter
    is a settings dataclass, that dataclass's fields. A nested dataclass (a field or a
    parameter) is listed by its fields, keyed by dotted names (``ppo.learning_rate``; the
    :class:`inspect.Parameter` keeps the field's own name), with the defaults its default
    holds."""
    params = _signature_params(obj)
    settings = _settings_class(params)
    if settings is not None:
        return _leaves(settings[1], "", None)
    out: dict[str, inspect.Parameter] = {}
    for name, p in params.items():
        if _is_dataclass_type(p.annotation) and p.kind is not inspect.Parameter.VAR_KEYWORD:
            base = None if p.default is inspect.Parameter.empty else p.default
            out.update(_leaves(p.annotation, name + ".", base))
        else:
            out[name] = p
    return out


def _is_dataclass_type(t: Any) -> bool:
    return isinstance(t, type) and dataclasses.is_dataclass(t)


def _hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls)
    except Exception:  # unresolvable annotations: fall back to the raw ones
        return {}


def _field_default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return inspect.Parameter.empty


def _leaves(cls: type, prefix: str, base: Any) -> dict[str, inspect.Parameter]:
    """``cls``'s fields as parameters keyed ``prefix + name``, a nested dataclass's by its
    own fields; defaults from ``base`` (an instance) when given, else the fields'."""
    hints = _hints(cls)
    out: dict[str, inspect.Parameter] = {}
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        t = hints.get(f.name, f.type)
        default = getattr(base, f.name) if base is not None else _field_default(f)
        if _is_dataclass_type(t):
            out.update(_leaves(t, f"{prefix}{f.name}.", None if default is inspect.Parameter.empty else default))
        else:
            out[prefix + f.name] = inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, annotation=t,
                                                     default=default)
    return out


def _signature_params(obj: Any) -> dict[str, inspect.Parameter]:
    """The keyword parameters of ``obj``'s signature, annotations resolved."""
    fn = _signature_target(obj)
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return {}
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # unresolvable annotations: fall back to the raw ones
        hints = {}
    params = list(sig.parameters.values())
    if isinstance(obj, type) and params and params[0].name == "self":
        params = params[1:]
    out: dict[str, inspect.Parameter] = {}
    for p in params:
        if p.name in hints:
            p = p.replace(annotation=hints[p.name])
        out[p.name] = p
    return out


def _type_name(t: Any) -> str:
    return getattr(t, "__name__", None) or str(t).replace("typing.", "")


def convert(text: str, annotation: Any, default: Any = inspect.Parameter.empty) -> Any:
    """Convert command-line text to ``annotation`` (or to ``default``'s type when the
    annotation is missing). Raises ValueError with a readable reason."""
    t = annotation
    if t is inspect.Parameter.empty or t is Any or isinstance(t, str):
        if default is inspect.Parameter.empty or default is None:
            return text
        t = type(default)
    origin = typing.get_origin(t)
    args = typing.get_args(t)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in args if a is not type(None)]
        if len(members) < len(args) and text.strip().lower() in ("none", "null", ""):
            return None
        errors = []
        for m in members:
            try:
                return convert(text, m)
            except ValueError as e:
                errors.append(str(e))
        raise ValueError(" / ".join(errors) or f"cannot convert {text!r}")
    if origin is typing.Literal:
        for choice in args:
            if str(choice) == text:
                return choice
        raise ValueError(f"expected one of {', '.join(map(str, args))}, got {text!r}")
    if origin in (list, tuple, set, frozenset, Sequence) or t in (list, tuple):
        items = [s.strip() for s in text.split(",")] if text.strip() else []
        if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            if len(items) != len(args):
                raise ValueError(f"expected {len(args)} comma-separated items, got {len(items)}")
            return tuple(convert(s, a) for s, a in zip(items, args, strict=True))
        item_t = args[0] if args else str
        values = [convert(s, item_t) for s in items]
        if origin is None:
            return values if t is list else tuple(values)
        return values if origin is Sequence else origin(values)
    if t is bool:
        low = text.strip().lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise ValueError(f"expected a boolean (true/false, yes/no, on/off, 1/0), got {text!r}")
    if t is int:
        try:
            return int(text.strip())
        except ValueError:
            pass
        try:
            return parse_duration(text)  # durations are ints in ns
        except ValueError:
            raise ValueError(f"expected an integer or a duration like 10ms, got {text!r}") from None
    if t is float:
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"expected a number, got {text!r}") from None
    if t is str:
        return text
    if isinstance(t, type) and issubclass(t, enum.Enum):
        for member in t:
            if text in (member.name, str(member.value)) or text.lower() == member.name.lower():
                return member
        raise ValueError(f"expected one of {', '.join(m.name for m in t)}, got {text!r}")
    if isinstance(t, type):
        try:
            return t(text)
        except Exception as e:
            raise ValueError(f"cannot make a {t.__name__} of {text!r}: {e}") from None
    return text


def _settings_class(named: Mapping[str, inspect.Parameter]) -> tuple[str, type] | None:
    """(name, dataclass) when the program's one parameter is a dataclass of settings."""
    if len(named) != 1:
        return None
    (name, p), = named.items()
    t = p.annotation
    return (name, t) if isinstance(t, type) and dataclasses.is_dataclass(t) else None


def _listing(cls: type, prefix: str) -> str:
    what = f"its settings ({cls.__name__})" if not prefix else f"the fields of {prefix[:-1]} ({cls.__name__})"
    return what + ": " + ", ".join(
        f"{n}: {_type_name(p.annotation)}" for n, p in _leaves(cls, prefix, None).items())


def _build(spec: str, cls: type, base: Any, params: Mapping[str, str], prefix: str = "") -> Any:
    """The dataclass ``cls`` with ``params`` (text, keys relative to ``prefix``; a dotted
    key sets a nested dataclass's field) set on ``base`` (an instance: the fields not given
    keep its values) or, without a base, on the fields' defaults."""
    hints = _hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    values: dict[str, Any] = {}
    nested: dict[str, dict[str, str]] = {}
    for key, text in params.items():
        head, dot, rest = key.partition(".")
        f = fields.get(head)
        if f is None:
            raise ProgramError(f"program {spec!r} has no parameter {prefix + key!r}; {_listing(cls, prefix)}")
        t = hints.get(head, f.type)
        if dot:
            if not _is_dataclass_type(t):
                raise ProgramError(f"program {spec!r} has no parameter {prefix + key!r}: {prefix + head} "
                                   f"({_type_name(t)}) has no fields")
            nested.setdefault(head, {})[rest] = text
            continue
        if _is_dataclass_type(t):
            raise ProgramError(f"--param {prefix + key}={text}: {prefix + key} is a dataclass "
                               f"({_type_name(t)}); set its fields ({prefix + key}.FIELD=VALUE): {_listing(t, prefix + key + '.')}")
        default = getattr(base, head) if base is not None else (
            f.default if f.default is not dataclasses.MISSING else inspect.Parameter.empty)
        try:
            values[head] = convert(text, hints.get(head, inspect.Parameter.empty), default)
        except ValueError as e:
            raise ProgramError(f"--param {prefix + key}={text}: {e}") from None
    for head, sub in nested.items():
        inner = getattr(base, head) if base is not None else _field_default(fields[head])
        values[head] = _build(spec, hints[head], None if inner is inspect.Parameter.empty else inner, sub,
                              f"{prefix}{head}.")
    try:
        return dataclasses.replace(base, **values) if base is not None else cls(**values)
    except TypeError as e:  # a field without a default that was not given
        raise ProgramError(f"program {spec!r}: {e}; {_listing(cls, prefix)}") from None
    except ValueError as e:  # a nested config refuses the values (its __post_init__)
        if not prefix:
            raise
        given = " ".join(f"--param {prefix}{k}={v}" for k, v in params.items())
        raise ProgramError(f"{given}: {e}") from None


def _convert_params(spec: str, obj: Any, params: Mapping[str, str]) -> dict[str, Any]:
    accepted = _signature_params(obj)
    var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values())
    named = {n: p for n, p in accepted.items() if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)}

    def listing() -> str:
        if not named:
            return "it takes no parameters"
        parts = []
        for n, p in named.items():
            t = "" if p.annotation is inspect.Parameter.empty else f": {_type_name(p.annotation)}"
            d = "" if p.default is inspect.Parameter.empty else f" = {p.default!r}"
            parts.append(f"{n}{t}{d}")
        return "its parameters: " + ", ".join(parts)

    settings = _settings_class(named)
    if settings is not None and settings[0] not in params:
        return {settings[0]: _build(spec, settings[1], None, params)}
    out: dict[str, Any] = {}
    nested: dict[str, dict[str, str]] = {}
    for key, text in params.items():
        head, dot, rest = key.partition(".")
        if dot:  # a field of a dataclass parameter
            p = named.get(head)
            if p is None or not _is_dataclass_type(p.annotation):
                raise ProgramError(f"program {spec!r} has no parameter {key!r}; {listing()}")
            nested.setdefault(head, {})[rest] = text
            continue
        p = named.get(key)
        if p is None:
            if var_kw:
                out[key] = text
                continue
            raise ProgramError(f"program {spec!r} has no parameter {key!r}; {listing()}")
        try:
            out[key] = convert(text, p.annotation, p.default)
        except ValueError as e:
            raise ProgramError(f"--param {key}={text}: {e}") from None
    for head, sub in nested.items():
        if head in out:
            raise ProgramError(f"--param {head} and --param {head}.{next(iter(sub))} are both given")
        p = named[head]
        out[head] = _build(spec, p.annotation, None if p.default is inspect.Parameter.empty else p.default, sub,
                           head + ".")
    missing = [n for n, p in named.items() if p.default is inspect.Parameter.empty and n not in out]
    if missing:
        raise ProgramError(
            f"program {spec!r} needs {', '.join('--param ' + m + '=...' for m in missing)}; {listing()}"
        )
    return out


def load_program(spec: str, params: Mapping[str, str] | None = None) -> Reactor:
    """Resolve ``spec`` and build the main reactor with ``params`` (text, converted)."""
    params = dict(params or {})
    obj = resolve_spec(spec)
    if isinstance(obj, Reactor):
        if params:
            raise ProgramError(f"program {spec!r} is a reactor instance: it takes no parameters")
        return obj
    if isinstance(obj, type) and not issubclass(obj, Reactor):
        raise ProgramError(f"program {spec!r}: {obj.__name__} is a class but not a Reactor")
    if not callable(obj):
        raise ProgramError(
            f"program {spec!r}: expected a Reactor class or a function returning the main reactor, "
            f"got {type(obj).__name__}"
        )
    kwargs = _convert_params(spec, obj, params)
    main = obj(**kwargs)
    if not isinstance(main, Reactor):
        raise ProgramError(f"program {spec!r}: the function returned {type(main).__name__}, not a Reactor")
    return main
