"""Loading programs from MODULE:ATTR / file.py:ATTR specs, and parameter conversion."""

from __future__ import annotations

import enum
import sys
import textwrap
from pathlib import Path
from typing import Literal

import pytest

from reactorfed import Environment, Reactor
from reactorfed.cli.loader import (
    ProgramError,
    convert,
    load_program,
    parse_params,
    program_params,
    resolve_spec,
)

PROGRAM = '''
from __future__ import annotations

import enum

from reactorfed import STARTUP, Reactor, reaction

RESULTS: list = []


class Mode(enum.Enum):
    SLOW = "slow"
    FAST = "fast"


class Main(Reactor):
    """Records its parameters at startup."""

    def __init__(self, n: int, period: int = 5, scale: float = 1.5, verbose: bool = False,
                 label: str = "x", mode: Mode = Mode.SLOW, seeds: list[int] | None = None,
                 untyped=7) -> None:
        self.params = dict(n=n, period=period, scale=scale, verbose=verbose, label=label,
                           mode=mode, seeds=seeds, untyped=untyped)

    @reaction(triggers=[STARTUP])
    def start(self):
        RESULTS.append(self.params)


def build(width: int = 2) -> Main:
    return Main(n=width)


def not_a_reactor() -> int:
    return 3


class Plain:
    pass


class Outer:
    Inner = Main


INSTANCE = Main(n=1)
NUMBER = 4
'''


@pytest.fixture
def prog(tmp_path: Path) -> Path:
    path = tmp_path / "myprog.py"
    path.write_text(PROGRAM)
    yield path
    sys.modules.pop("myprog", None)
    sys.modules.pop("reactorfed_program_myprog", None)


def test_parse_params():
    assert parse_params(["a=1", "b=x=y", "c="]) == {"a": "1", "b": "x=y", "c": ""}
    for bad, why in (("a", "KEY=VALUE"), ("=1", "KEY=VALUE"), ("1a=2", "not a parameter name")):
        with pytest.raises(ProgramError, match=why):
            parse_params([bad])
    with pytest.raises(ProgramError, match="given twice"):
        parse_params(["a=1", "a=2"])


class Colour(enum.Enum):
    RED = 1
    BLUE = 2


@pytest.mark.parametrize(
    ("text", "annotation", "expected"),
    [
        ("42", int, 42),
        ("-3", int, -3),
        ("1_000", int, 1000),
        ("10ms", int, 10_000_000),
        ("2 s", int, 2_000_000_000),
        ("0.25", float, 0.25),
        ("3", float, 3.0),
        ("true", bool, True),
        ("Yes", bool, True),
        ("off", bool, False),
        ("0", bool, False),
        ("hi there", str, "hi there"),
        ("none", int | None, None),
        ("5", int | None, 5),
        ("1,2,3", list[int], [1, 2, 3]),
        ("", list[int], []),
        ("1, 2", tuple[int, ...], (1, 2)),
        ("1,x", tuple[int, str], (1, "x")),
        ("b", Literal["a", "b"], "b"),
        ("RED", Colour, Colour.RED),
        ("blue", Colour, Colour.BLUE),
        ("2", Colour, Colour.BLUE),
        ("/tmp/x", Path, Path("/tmp/x")),
    ],
)
def test_convert(text, annotation, expected):
    value = convert(text, annotation)
    assert value == expected
    assert type(value) is type(expected)


def test_convert_uses_the_default_type_without_an_annotation():
    import inspect

    empty = inspect.Parameter.empty
    assert convert("3", empty, 7) == 3
    assert convert("true", empty, False) is True
    assert convert("3", empty, None) == "3"  # nothing to go by: the text
    assert convert("3", empty) == "3"


@pytest.mark.parametrize(
    ("text", "annotation", "why"),
    [
        ("x", int, "expected an integer or a duration"),
        ("1.5", int, "expected an integer"),
        ("maybe", bool, "expected a boolean"),
        ("abc", float, "expected a number"),
        ("c", Literal["a", "b"], "expected one of a, b"),
        ("GREEN", Colour, "expected one of RED, BLUE"),
        ("1,2", tuple[int, int, int], "expected 3 comma-separated items"),
    ],
)
def test_convert_refuses_with_a_reason(text, annotation, why):
    with pytest.raises(ValueError, match=why):
        convert(text, annotation)


def test_load_a_class_from_a_file_with_converted_params(prog):
    main = load_program(
        f"{prog}:Main",
        {"n": "3", "period": "10ms", "scale": "2", "verbose": "yes", "label": "hello", "mode": "fast", "seeds": "1,2", "untyped": "9"},
    )
    assert isinstance(main, Reactor)
    Environment(fast=True).run(main)
    results = sys.modules["myprog"].RESULTS
    mode = sys.modules["myprog"].Mode
    assert results == [
        dict(n=3, period=10_000_000, scale=2.0, verbose=True, label="hello", mode=mode.FAST, seeds=[1, 2], untyped=9)
    ]


def test_defaults_apply_and_seeds_may_be_none(prog):
    main = load_program(f"{prog}:Main", {"n": "1", "seeds": "none"})
    assert main.params["seeds"] is None
    assert main.params["period"] == 5
    assert main.params["mode"].name == "SLOW"


def test_module_spec_from_the_path(prog, monkeypatch):
    monkeypatch.syspath_prepend(str(prog.parent))
    main = load_program("myprog:build", {"width": "5"})
    assert main.params["n"] == 5
    assert load_program("myprog:Outer.Inner", {"n": "2"}).params["n"] == 2


def test_default_attr_is_main(prog):
    assert type(load_program(str(prog), {"n": "1"})).__name__ == "Main"


def test_a_reactor_instance_is_used_as_is(prog):
    main = load_program(f"{prog}:INSTANCE")
    assert main.params["n"] == 1
    with pytest.raises(ProgramError, match="reactor instance: it takes no parameters"):
        load_program(f"{prog}:INSTANCE", {"n": "2"})


def test_program_params_skips_self_and_resolves_annotations(prog):
    load_program(f"{prog}:INSTANCE")
    params = program_params(sys.modules["myprog"].Main)
    assert list(params)[:3] == ["n", "period", "scale"]
    assert params["seeds"].annotation == list[int] | None  # resolved from the string


@pytest.mark.parametrize(
    ("spec", "params", "why"),
    [
        ("{prog}:Nope", {}, r"has no attribute 'Nope'; reactor classes there: Main"),
        ("{prog}:Plain", {}, "Plain is a class but not a Reactor"),
        ("{prog}:NUMBER", {}, "expected a Reactor class or a function returning the main reactor, got int"),
        ("{prog}:not_a_reactor", {}, "the function returned int, not a Reactor"),
        ("{prog}:Main", {}, r"needs --param n=\.\.\.; its parameters: n: int, period: int = 5"),
        ("{prog}:Main", {"n": "1", "colour": "red"}, "has no parameter 'colour'; its parameters: n: int"),
        ("{prog}:Main", {"n": "x"}, "--param n=x: expected an integer or a duration"),
        ("{prog}:Main", {"n": "1", "mode": "medium"}, "--param mode=medium: expected one of SLOW, FAST"),
        ("{dir}/missing.py:Main", {}, "no such file"),
        ("{dir}:Main", {}, "is a directory"),
        ("no_such_module_xyz:Main", {}, "no module named 'no_such_module_xyz'"),
        ("{prog}:", {}, "expected MODULE:ATTR"),
        (":Main", {}, "expected MODULE:ATTR"),
        ("{prog}:a-b", {}, "is not an attribute name"),
    ],
)
def test_bad_specs_and_params_say_what_is_wrong(prog, spec, params, why):
    with pytest.raises(ProgramError, match=why):
        load_program(spec.format(prog=prog, dir=prog.parent), params)


def test_errors_in_the_program_itself_are_not_usage_errors(tmp_path):
    (tmp_path / "broken.py").write_text("import no_such_dependency_xyz\n")
    with pytest.raises(ModuleNotFoundError, match="no_such_dependency_xyz"):
        load_program(f"{tmp_path / 'broken.py'}:Main")
    (tmp_path / "raising.py").write_text(
        textwrap.dedent(
            """
            from reactorfed import Reactor
            class Main(Reactor):
                def __init__(self):
                    raise RuntimeError("boom")
            """
        )
    )
    with pytest.raises(RuntimeError, match="boom"):
        load_program(f"{tmp_path / 'raising.py'}:Main")
    sys.modules.pop("raising", None)


def test_var_keyword_factories_take_any_param_as_text(tmp_path):
    (tmp_path / "kw.py").write_text(
        textwrap.dedent(
            """
            from reactorfed import Reactor
            class Main(Reactor):
                def __init__(self, **opts):
                    self.opts = opts
            """
        )
    )
    assert load_program(f"{tmp_path / 'kw.py'}:Main", {"a": "1"}).opts == {"a": "1"}
    sys.modules.pop("kw", None)


SETTINGS_PROGRAM = '''
from __future__ import annotations

from dataclasses import dataclass, field

from reactorfed import Reactor


@dataclass
class Args:
    env: str = "CartPole-v1"
    num_samplers: int = 2
    lr: float = 2.5e-4
    hidden: tuple[int, ...] = (64, 64)
    target: float | None = None
    tags: list[str] = field(default_factory=list)


class Main(Reactor):
    def __init__(self, args: Args = Args()) -> None:
        self.args = args


@dataclass
class Needs:
    steps: int


def needs(args: Needs) -> Main:
    return Main()
'''


def test_a_settings_dataclass_takes_its_fields_as_parameters(tmp_path: Path) -> None:
    """CleanRL-style recipes keep their settings in one dataclass: --param sets its fields."""
    f = tmp_path / "recipe.py"
    f.write_text(SETTINGS_PROGRAM)
    main = load_program(f"{f}:Main", {"num_samplers": "4", "lr": "1e-3", "hidden": "128,128", "target": "none",
                                       "tags": "a,b"})
    args = main.args  # type: ignore[attr-defined]
    assert (args.env, args.num_samplers, args.lr, args.hidden, args.target, args.tags) == (
        "CartPole-v1", 4, 1e-3, (128, 128), None, ["a", "b"])
    assert load_program(f"{f}:Main").args.num_samplers == 2  # type: ignore[attr-defined]
    from reactorfed.cli.loader import resolve_spec

    params = program_params(resolve_spec(f"{f}:Main"))  # what the operator checks manifests against
    assert list(params) == ["env", "num_samplers", "lr", "hidden", "target", "tags"]
    assert params["num_samplers"].default == 2 and params["tags"].default == []
    with pytest.raises(ProgramError, match=r"no parameter 'num_sampler'; its settings \(Args\): env: str, num_samplers: int"):
        load_program(f"{f}:Main", {"num_sampler": "3"})
    with pytest.raises(ProgramError, match=r"--param num_samplers=many: expected an integer"):
        load_program(f"{f}:Main", {"num_samplers": "many"})
    with pytest.raises(ProgramError, match=r"missing 1 required positional argument: 'steps'"):
        load_program(f"{f}:needs")
    assert isinstance(load_program(f"{f}:needs", {"steps": "5"}), Reactor)


NESTED_PROGRAM = '''
from __future__ import annotations

from dataclasses import dataclass, field

from reactorfed import Reactor


@dataclass(frozen=True)
class Algo:
    lr: float = 1e-3
    epochs: int = 4
    hidden: tuple[int, ...] = (64, 64)

    def __post_init__(self) -> None:
        if self.epochs < 1:
            raise ValueError("Algo: epochs must be >= 1")


@dataclass(frozen=True)
class Args:
    seed: int = 1
    algo: Algo = field(default_factory=lambda: Algo(epochs=20))  # the recipe's, not Algo's own


class Main(Reactor):
    def __init__(self, args: Args = Args()) -> None:
        self.args = args


class Keywords(Reactor):
    def __init__(self, n: int = 1, algo: Algo = Algo(lr=0.5)) -> None:
        self.n, self.algo = n, algo
'''


@pytest.fixture
def nested(tmp_path: Path) -> Path:
    f = tmp_path / "nested_recipe.py"
    f.write_text(NESTED_PROGRAM)
    yield f
    sys.modules.pop("nested_recipe", None)


def test_a_nested_dataclass_takes_its_fields_by_dotted_names(nested: Path) -> None:
    """An algorithm's config nested in the settings: --param algo.lr=... sets one of its
    fields, the others keep the recipe's default (not the config class's)."""
    args = load_program(f"{nested}:Main", parse_params(["algo.lr=3e-4", "algo.hidden=32", "seed=2"])).args
    assert (args.seed, args.algo.lr, args.algo.epochs, args.algo.hidden) == (2, 3e-4, 20, (32,))
    default = load_program(f"{nested}:Main").args.algo
    assert (default.lr, default.epochs, default.hidden) == (1e-3, 20, (64, 64))
    assert load_program(f"{nested}:Main", {"seed": "3"}).args.algo.epochs == 20  # untouched: unchanged
    kw = load_program(f"{nested}:Keywords", {"algo.epochs": "7"})
    assert (kw.n, kw.algo.lr, kw.algo.epochs) == (1, 0.5, 7)  # a keyword parameter's default, too


def test_program_params_lists_nested_fields_by_dotted_names(nested: Path) -> None:
    params = program_params(resolve_spec(f"{nested}:Main"))
    assert list(params) == ["seed", "algo.lr", "algo.epochs", "algo.hidden"]
    assert params["algo.epochs"].default == 20 and params["algo.hidden"].annotation == tuple[int, ...]
    assert list(program_params(resolve_spec(f"{nested}:Keywords"))) == ["n", "algo.lr", "algo.epochs", "algo.hidden"]


@pytest.mark.parametrize(
    ("params", "why"),
    [
        ({"algo.lrr": "1"}, r"has no parameter 'algo\.lrr'; the fields of algo \(Algo\): algo\.lr: float, algo\.epochs: int"),
        ({"algo.epochs": "many"}, r"--param algo\.epochs=many: expected an integer"),
        ({"algo.lr": "fast"}, r"--param algo\.lr=fast: expected a number"),
        ({"algo.epochs": "0"}, r"--param algo\.epochs=0: Algo: epochs must be >= 1"),
        ({"seed.x": "1"}, r"has no parameter 'seed\.x': seed \(int\) has no fields"),
        ({"algo": "x"}, r"--param algo=x: algo is a dataclass \(Algo\); set its fields \(algo\.FIELD=VALUE\)"),
        ({"nope.lr": "1"}, r"has no parameter 'nope\.lr'; its settings \(Args\): seed: int, algo\.lr: float"),
    ],
)
def test_bad_nested_params_name_the_key(nested: Path, params: dict[str, str], why: str) -> None:
    with pytest.raises(ProgramError, match=why):
        load_program(f"{nested}:Main", params)


def test_parse_params_takes_dotted_keys() -> None:
    assert parse_params(["ppo.learning_rate=3e-4"]) == {"ppo.learning_rate": "3e-4"}
    for bad in ("ppo.=1", ".lr=1", "ppo..lr=1", "ppo.1x=1"):
        with pytest.raises(ProgramError, match="is not a parameter name"):
            parse_params([bad])
