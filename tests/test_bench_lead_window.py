"""bench/lead_window.py's pairing: the two sides interleaved, medians, the weights compared."""

from __future__ import annotations

from typing import Any

from bench.lead_window import NO_WINDOW, measure
from bench.rf_runner import ProgramFailed


def _runner(seconds: dict[str, list[float]], digest: dict[str, str], order: list[str],
            fail: frozenset[int] = frozenset()) -> Any:
    calls = {"n": 0}

    def run(program: str, params: dict[str, Any], mode: str, *, extra: list[str], expect: dict[str, Any],
            result_of: str) -> dict[str, Any]:
        assert mode == "federated" and result_of == ".learner"
        side = "off" if extra == NO_WINDOW else "on"
        order.append(side)
        calls["n"] += 1
        if calls["n"] in fail:
            raise ProgramFailed("a run that failed")
        return {"seconds": seconds[side].pop(0), "weights_sha256": digest[side]}

    return run


def test_the_sides_alternate_which_goes_first_and_the_medians_are_reported() -> None:
    order: list[str] = []
    run = _runner({"on": [3.0, 1.0, 2.0], "off": [4.0, 6.0, 5.0]}, {"on": "d", "off": "d"}, order)
    m = measure("w", "p.py:Main", {}, {}, 3, run=run)
    assert order == ["on", "off", "off", "on", "on", "off"]
    assert m is not None and (m["on"], m["off"], m["runs"], m["same_weights"]) == (2.0, 5.0, 3, True)


def test_different_weights_are_reported_and_a_side_that_always_fails_gives_no_row() -> None:
    m = measure("w", "p.py:Main", {}, {}, 1, run=_runner({"on": [1.0], "off": [1.0]}, {"on": "a", "off": "b"}, []))
    assert m is not None and not m["same_weights"]
    assert measure("w", "p.py:Main", {}, {}, 1, run=_runner({"on": [1.0], "off": [1.0]}, {"on": "a", "off": "a"}, [],
                                                            fail=frozenset({2}))) is None
