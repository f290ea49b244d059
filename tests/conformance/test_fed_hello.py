"""Ports of LF's simplest federated programs: a message from one federate to another
(``federated/HelloDistributed.lf``) and a file read by one federate, sent to another
(``federated/FederatedFileReader.lf``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from reactorfed import SHUTDOWN, STARTUP, Input, Output, Reactor, Tag, reaction
from tests.conformance.harness import lf_test, run_federated, run_local

pytestmark = pytest.mark.timeout(60)

# -- HelloDistributed.lf ---------------------------------------------------------------------


class _Source(Reactor):
    out = Output(str)

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        out.set("Hello World!")
        self.request_stop()


class _Destination(Reactor):
    inp = Input(str)

    def __init__(self) -> None:
        self.started = False
        self.received = False
        self.at: Tag | None = None
        self.shut = False

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        self.started = True  # "Destination started."

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        assert inp.get() == "Hello World!", "ERROR: Expected to receive 'Hello World!'"
        self.at = self.elapsed_tag()
        self.received = True

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        assert self.received, "ERROR: Destination did not receive the message."
        self.shut = True


class _HelloDistributed(Reactor):
    def __init__(self) -> None:
        self.s = _Source()
        self.d = _Destination()
        self.connect(self.s.out, self.d.inp)


@lf_test("federated/HelloDistributed.lf", federated=True)
def test_hello_distributed() -> None:
    """The source sends at startup and asks to stop; the destination gets the message at
    (0, 0), before the agreed stop at (0, 1)."""
    main = _HelloDistributed()
    run_local(main)
    assert main.d.started and main.d.at == Tag(0, 0) and main.d.shut
    progs = run_federated(_HelloDistributed)
    d = progs["d"].d  # type: ignore[attr-defined]
    assert d.started and d.at == Tag(0, 0) and d.shut


# -- FederatedFileReader.lf --------------------------------------------------------------------


class _FileSource(Reactor):
    out = Output(str)

    def __init__(self, source_directory: str) -> None:
        self.source_directory = source_directory  # lf.source_directory()

    @reaction(triggers=[STARTUP], effects=[out])
    def start(self, out: Any) -> None:
        file_path = os.path.join(self.source_directory, "..", "lib", "FileReader.txt")
        try:
            with open(file_path) as file:
                buffer = file.read()
        except Exception as e:
            raise AssertionError(f"Error reading file at path {file_path}: {e}") from e
        out.set(buffer)


class _FileCheck(Reactor):
    inp = Input(str)

    def __init__(self) -> None:
        self.received = False
        self.checked = False

    @reaction(triggers=[inp])
    def got(self, inp: Any) -> None:
        self.received = True
        assert inp.get() == "Hello World", "Expected 'Hello World'"

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        assert self.received, "No input received."
        self.checked = True


class _FederatedFileReader(Reactor):
    def __init__(self, source_directory: str) -> None:
        self.s = _FileSource(source_directory)
        self.c = _FileCheck()
        self.connect(self.s.out, self.c.inp)


@lf_test("federated/FederatedFileReader.lf", federated=True)
def test_federated_file_reader(tmp_path: Path) -> None:
    """A federate reads ``../lib/FileReader.txt`` relative to the program's source directory
    and sends its text, "Hello World", to another; timeout 0. The source directory is a
    temporary one here, with LF's file (its text) at the same relative place."""
    src = tmp_path / "federated"
    src.mkdir()
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "FileReader.txt").write_text("Hello World")
    main = _FederatedFileReader(str(src))
    run_local(main, timeout=0)
    assert main.c.checked
    progs = run_federated(lambda: _FederatedFileReader(str(src)), timeout=0)
    assert progs["c"].c.checked  # type: ignore[attr-defined]
