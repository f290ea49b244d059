"""``--threads`` and ``--allow-thread-change``: one definition for every command that runs
a program, one default, said in each command's --help."""

from __future__ import annotations

import argparse

import pytest

from reactorfed.cli.main import build_parser
from reactorfed.execution.threads import DEFAULT_THREADS


def _sub(command: str) -> argparse.ArgumentParser:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found: argparse.ArgumentParser = sub.choices[command]
    return found


@pytest.mark.parametrize("command", ["run", "launch", "rti", "federate"])
def test_every_command_that_runs_a_program_takes_the_thread_count(command: str) -> None:
    p = _sub(command)
    threads = next(a for a in p._actions if "--threads" in a.option_strings)
    allow = next(a for a in p._actions if "--allow-thread-change" in a.option_strings)
    assert threads.default == DEFAULT_THREADS and allow.default is False
    help_text = p.format_help()
    assert "--threads N" in help_text and "same weights" in help_text and "--allow-thread-change" in help_text
    with pytest.raises(SystemExit):
        p.parse_args(["prog.py:Main", "--threads", "0"])
