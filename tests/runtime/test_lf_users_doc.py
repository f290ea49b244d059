"""Every Python block of docs/lf-users.md runs, each in a fresh namespace, and its own
asserts hold: the page for Lingua Franca users cannot drift from the API."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "lf-users.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```$", DOC.read_text(), re.MULTILINE | re.DOTALL)


def _title(code: str) -> str:
    m = re.search(r"^class (\w+)", code, re.MULTILINE)
    return m.group(1) if m else "block"


def test_the_page_has_its_examples() -> None:
    assert len(BLOCKS) >= 8


@pytest.mark.timeout(120)
@pytest.mark.parametrize("code", BLOCKS, ids=[f"{i}-{_title(c)}" for i, c in enumerate(BLOCKS)])
def test_a_python_block_of_the_page_runs(code: str) -> None:
    exec(compile(code, f"{DOC.name} block", "exec"), {"__name__": "lf_users_doc"})


def test_the_page_is_linked_from_the_readme() -> None:
    assert "docs/lf-users.md" in (DOC.parents[1] / "README.md").read_text()
