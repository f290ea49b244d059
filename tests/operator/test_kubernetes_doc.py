"""docs/kubernetes.md stays true to examples/k8s/: every manifest it applies exists, every
federation example is in it, every plan the suites run has its row in "One example per
plan", and its federate-group snippets are specs the operator accepts."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from reactorfed_operator.spec import parse_spec

from ..kind.plans import PLANS

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "kubernetes.md").read_text()
EXAMPLES = REPO / "examples" / "k8s"


def _section(title: str) -> str:
    start = DOC.index(f"\n{title}\n")
    level = title.split(" ", 1)[0]
    end = DOC.find(f"\n{level} ", start + len(title) + 2)
    return DOC[start:end if end > 0 else None]


def test_every_applied_manifest_exists_and_every_example_is_applied() -> None:
    applied = set(re.findall(r"kubectl apply -n rl -f examples/k8s/([\w.-]+\.yaml)", DOC))
    assert applied and all((EXAMPLES / name).exists() for name in applied), applied
    federations = {p.name for p in EXAMPLES.glob("*.yaml") if "kind: ReactorFederation" in p.read_text()}
    left_out = federations - applied - {"gym-sampling.yaml", "atari-sampling.yaml", "configmap-program.yaml"}
    assert not left_out, f"examples the walk in docs/kubernetes.md does not apply: {sorted(left_out)}"


def test_every_plan_has_its_row() -> None:
    table = _section("### One example per plan")
    for plan in PLANS:
        assert f"`{plan.manifest}`" in table, plan.manifest


def _snippets() -> list[str]:
    blocks = re.findall(r"```yaml\n(.*?)```", _section("## Federate groups"), re.DOTALL)
    return [b for b in blocks if "federateGroups:" in b]


@pytest.mark.parametrize("snippet", _snippets())
def test_group_snippets_are_accepted(snippet: str) -> None:
    doc: dict[str, Any] = yaml.safe_load(textwrap.dedent(snippet))
    spec = doc.get("spec", doc)
    spec.setdefault("program", {"image": "reactorfed-runtime:0.1.0", "entrypoint": "pkg.mod:Main"})
    assert parse_spec(spec).groups
