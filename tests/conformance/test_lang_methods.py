"""Ports of LF's programs about methods, preambles, literals and files: what LF calls a
method or a preamble is a plain Python method or module-level code of the reactor class."""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any

from reactorfed import STARTUP, Input, Output, Reactor, Timer, ms, reaction, sec
from tests.conformance.harness import lf_test, run

# -- Methods.lf -------------------------------------------------------------------------


class _MethodsMain(Reactor):
    def __init__(self) -> None:
        self.foo = 2
        self.result: int | None = None

    def getFoo(self) -> int:
        return self.foo

    def add(self, x: int) -> None:
        self.foo += x

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        assert self.getFoo() == 2, "Expected 2!"
        self.add(40)
        a = self.getFoo()
        assert a == 42, "Expected 42!"
        self.result = a


@lf_test("Methods.lf")
def test_methods() -> None:
    main = _MethodsMain()
    run(main)
    assert main.result == 42


# -- MethodsRecursive.lf ----------------------------------------------------------------


class _MethodsRecursiveMain(Reactor):
    def __init__(self) -> None:
        self.foo = 2
        self.printed: list[int] = []

    def fib(self, n: int) -> int:
        """The n-th Fibonacci number."""
        if n <= 1:
            return 1
        return self.add(self.fib(n - 1), self.fib(n - 2))

    def add(self, x: int, y: int) -> int:
        return x + y

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        for n in range(1, 10):
            self.printed.append(self.fib(n))


@lf_test("MethodsRecursive.lf")
def test_methods_recursive() -> None:
    main = _MethodsRecursiveMain()
    run(main)
    assert main.printed == [1, 2, 3, 5, 8, 13, 21, 34, 55]


# -- MethodsSameName.lf -----------------------------------------------------------------


class _MSNFoo(Reactor):
    def __init__(self) -> None:
        self.foo = 2

    def add(self, x: int) -> None:
        self.foo += x

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        self.add(40)
        assert self.foo == 42, "Expected 42!"


class _MethodsSameNameMain(Reactor):
    def __init__(self) -> None:
        self.foo = 2
        self.a = _MSNFoo()

    def add(self, x: int) -> None:
        self.foo += x

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        self.add(40)
        assert self.foo == 42, "Expected 42!"


@lf_test("MethodsSameName.lf")
def test_methods_same_name() -> None:
    main = _MethodsSameNameMain()
    run(main)
    assert main.foo == 42 and main.a.foo == 42


# -- MethodMacros.lf --------------------------------------------------------------------


class _Fib(Reactor):
    inp = Input(int)
    out = Output(int)

    def __init__(self) -> None:
        self.foo = 2

    def fib(self, out: Any, n: int) -> int:
        result = 1
        if n > 1:
            result = self.add(self.fib(None, n - 1), self.fib(None, n - 2))
        if out is not None:
            out.set(result)
        return result

    def add(self, x: int, y: int) -> int:
        return x + y

    @reaction(triggers=[inp], effects=[out])
    def compute(self, inp: Any, out: Any) -> None:
        self.fib(out, inp.get())


class _MethodMacrosMain(Reactor):
    t = Timer(0, ms(1))

    def __init__(self) -> None:
        self.count = 0
        self.fib = _Fib()

    @reaction(triggers=[t], effects=["fib.inp"])
    def ask(self, fib: Any) -> None:
        fib.inp.set(self.count)

    @reaction(triggers=["fib.out"])
    def check(self, fib: Any) -> None:
        answers = [1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89]
        assert fib.out.get() == answers[self.count], f"Expected {answers[self.count]}"
        self.count += 1


@lf_test("MethodMacros.lf")
def test_method_macros() -> None:
    main = _MethodMacrosMain()
    run(main, timeout=ms(10))
    assert main.count == 11


# -- Preamble.lf ------------------------------------------------------------------------


class _PreambleMain(Reactor):
    # The preamble: an import and a method of the reactor class.
    platform = platform
    t = Timer()

    def __init__(self) -> None:
        self.printed: list[str] = []

    def add_42(self, i: int) -> int:
        return i + 42

    @reaction(triggers=[t])
    def go(self) -> None:
        s = "42"
        i = int(s)
        self.printed.append(f"Converted string {s} to int {i}.")
        self.printed.append(f"42 plus 42 is {self.add_42(42)}")
        self.printed.append(f"Your platform is {self.platform.system()}")


@lf_test("Preamble.lf")
def test_preamble() -> None:
    main = _PreambleMain()
    run(main, timeout=sec(2), fast=True)
    assert main.printed[:2] == ["Converted string 42 to int 42.", "42 plus 42 is 84"]
    assert len(main.printed) == 3


# -- PreambleInherited.lf ---------------------------------------------------------------


class _PIBase(Reactor):
    def initiation(self) -> None:
        self.printed = "Hello World\n"


class _PIExtended(_PIBase):
    def __init__(self) -> None:
        self.printed = ""

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        self.initiation()


class _PreambleInheritedMain(Reactor):
    def __init__(self) -> None:
        self.e = _PIExtended()


@lf_test("PreambleInherited.lf")
def test_preamble_inherited() -> None:
    main = _PreambleInheritedMain()
    run(main)
    assert main.e.printed == "Hello World\n"


# -- FloatLiteral.lf --------------------------------------------------------------------


class _FloatLiteralMain(Reactor):
    def __init__(self) -> None:
        self.N = 6.0221409e23
        self.charge = -1.6021766e-19
        self.minus_epsilon = -0.01e0
        self.expected = 0.964853323188e5
        self.F: float | None = None

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        F = -self.N * self.charge
        assert abs(F - self.expected) < abs(self.minus_epsilon), f"ERROR: Expected {self.expected} but got {F}."
        self.F = F


@lf_test("FloatLiteral.lf")
def test_float_literal() -> None:
    main = _FloatLiteralMain()
    run(main)
    assert main.F is not None


# -- FileReader.lf, FilePkgReader.lf ----------------------------------------------------
# LF reads lib/FileReader.txt next to the program's source (lf.source_directory()) or
# under the package's src/ (lf.package_directory()); the ports get those directories as
# parameters and the file is written there with LF's content ("Hello World", no newline).

_FILE_READER_TXT = b"Hello World"


class _FRSource(Reactor):
    out = Output(str)

    def __init__(self, source_directory: str) -> None:
        self.source_directory = source_directory

    @reaction(triggers=[STARTUP], effects=[out])
    def read(self, out: Any) -> None:
        file_path = f"{self.source_directory}/lib/FileReader.txt"
        with open(file_path) as file:
            buffer = file.read()
        out.set(buffer)


class _FPRSource(Reactor):
    out = Output(str)

    def __init__(self, package_directory: str) -> None:
        self.package_directory = package_directory

    @reaction(triggers=[STARTUP], effects=[out])
    def read(self, out: Any) -> None:
        file_path = f"{self.package_directory}/src/lib/FileReader.txt"
        file = open(file_path, "rb")  # noqa: SIM115 (LF's code: open, read, close)
        assert file is not None, f"Error opening file at path {file_path}."
        file_size = os.path.getsize(file_path)
        buffer = file.read(file_size)
        file.close()
        out.set(buffer.decode("utf-8"))


class _FileReaderMain(Reactor):
    def __init__(self, source: Reactor) -> None:
        self.s = source
        self.received: list[str] = []

    @reaction(triggers=["s.out"])
    def check(self, s: Any) -> None:
        self.received.append(s.out.get())
        assert s.out.get() == "Hello World", "Expected 'Hello World'"


@lf_test("FileReader.lf")
def test_file_reader(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "FileReader.txt").write_bytes(_FILE_READER_TXT)

    class Main(_FileReaderMain):
        def __init__(self) -> None:
            super().__init__(_FRSource(str(tmp_path)))

    main = Main()
    run(main)
    assert main.received == ["Hello World"]


@lf_test("FilePkgReader.lf")
def test_file_pkg_reader(tmp_path: Path) -> None:
    (tmp_path / "src" / "lib").mkdir(parents=True)
    (tmp_path / "src" / "lib" / "FileReader.txt").write_bytes(_FILE_READER_TXT)

    class Main(_FileReaderMain):
        def __init__(self) -> None:
            super().__init__(_FPRSource(str(tmp_path)))

    main = Main()
    run(main)
    assert main.received == ["Hello World"]


# -- PythonPaths.lf ---------------------------------------------------------------------
# LF prints its own source twice: once found through lf.source_directory(), once through
# lf.package_directory()/src. The port's source is this module; its "package" is the
# repository, where it sits under tests/conformance/.

_SOURCE_DIRECTORY = Path(__file__).resolve().parent
_PACKAGE_DIRECTORY = _SOURCE_DIRECTORY.parents[1]


class _PythonPathsMain(Reactor):
    def __init__(self) -> None:
        self.source_path = os.path.join(_SOURCE_DIRECTORY, Path(__file__).name)
        self.package_path = os.path.join(_PACKAGE_DIRECTORY, "tests", "conformance", Path(__file__).name)
        self.printed: list[str] = []

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        with open(self.source_path) as file:
            self.printed.append(file.read())
        self.printed.append("----------------")
        with open(self.package_path) as file:
            self.printed.append(file.read())


@lf_test("PythonPaths.lf")
def test_python_paths() -> None:
    main = _PythonPathsMain()
    run(main)
    assert len(main.printed) == 3 and main.printed[0] == main.printed[2]
    assert "PythonPaths.lf" in main.printed[0]
