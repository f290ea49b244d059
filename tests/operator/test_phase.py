"""The operator's phases and roles: enums in the code, plain strings in the API."""

from __future__ import annotations

import json

from reactorfed_operator.phase import TERMINAL, Phase, PodPhase, Role
from reactorfed_operator.planner import PriorStatus


def test_phases_read_back_from_a_stored_status() -> None:
    assert PriorStatus.from_status({"phase": "Running"}).phase is Phase.RUNNING
    assert PriorStatus.from_status({}).phase is None
    assert PriorStatus.from_status({"phase": "Exploded"}).phase is None  # not ours: start afresh
    assert PodPhase.parse(None) is PodPhase.PENDING and PodPhase.parse("Weird") is PodPhase.UNKNOWN
    assert Phase.SUCCEEDED in TERMINAL and Phase.RUNNING not in TERMINAL


def test_they_are_the_strings_kubernetes_stores_and_prints() -> None:
    assert json.dumps({"phase": Phase.SCALING, "role": Role.LEARNER}) == '{"phase": "Scaling", "role": "learner"}'
    assert Phase.RUNNING == "Running" and f"{PodPhase.FAILED}" == "Failed"
