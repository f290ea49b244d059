"""What a person reads in ``kubectl get rfed`` while a training run goes on, for every RL
example in examples/k8s/: the Progress column shows the run's iteration of its total
(``37/400``) and moves on, the Return column the training return where the program has
one, and the logical time has moved to the wide output. Each manifest runs with CPU
requests that fit the 2-core machine's nodes, no checkpoint, and a budget no run reaches in
the test's time; the test deletes it once the column has moved on.

Q-learning is read the same way by test_federations.py (its run is the suite's long one).
The sampling workloads (gym-sampling, atari-sampling, marl-inference) do not train: their
programs report no progress, so the Progress column stays empty and Logical-Time shows
where they are. The CI kind suite reads the plans whose learner reports through a path of
its own (data-parallel rounds, the tuners' controller, multi-agent PPO); the others carry
the marker ``plans`` (``scripts/kind-test.sh -m plans``). A tuner's column is its
population's: PBT's iterations of each trial's budget, a search's trials ended of all, and
the best trial's return."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from .conftest import NAMESPACE, Kind, record, wait_for
from .federations import apply, clean_slate, columns, describe, load_example, small_requests
from .plans import PLANS, federation

pytestmark = [pytest.mark.kind, pytest.mark.timeout(600)]

_NO_CHECKPOINT = {"checkpoint": "", "resume": "false", "progress": "false"}
_ENDLESS_PPO = {"ppo.total_timesteps": "1000000000", "target_return": "100000", **_NO_CHECKPOINT}

#: manifest -> (the run's parameters, whether the Return column must show a return, in CI)
PROGRAMS: dict[str, tuple[dict[str, str], bool, bool]] = {
    "ppo-cartpole.yaml": (_ENDLESS_PPO, True, False),
    "appo-cartpole.yaml": ({"total_timesteps": "1000000000", "target_return": "100000", **_NO_CHECKPOINT},
                           True, False),
    "apex-dqn-cartpole.yaml": ({"total_timesteps": "1000000000", "replay.learning_starts": "500",
                                "target_return": "100000", **_NO_CHECKPOINT}, True, False),
    "ppo-data-parallel-cartpole.yaml": (_ENDLESS_PPO, True, True),
    "ppo-param-server-cartpole.yaml": (_ENDLESS_PPO, True, False),
    "seed-ppo-cartpole.yaml": ({**_ENDLESS_PPO, "device": "cpu"}, True, False),
    "ppo-minatar.yaml": ({"ppo.total_timesteps": "1000000000", **_NO_CHECKPOINT}, True, False),
    "pbt-cartpole.yaml": ({"pbt.iterations": "100000", "pbt.perturbation_interval": "2", "pbt.target": "100000",
                           **_NO_CHECKPOINT}, True, True),
    # (a search's progress is its trials ended of all: short trials, many of them)
    "asha-cartpole.yaml": ({"search.num_samples": "60", "search.iterations": "8", "asha.grace_period": "2",
                            **_NO_CHECKPOINT}, True, False),
    "ippo-spread.yaml": ({"ppo.total_timesteps": "1000000000", **_NO_CHECKPOINT}, True, False),
    "mappo-spread.yaml": ({"mappo.total_timesteps": "1000000000", **_NO_CHECKPOINT}, True, True),
}  # fmt: skip

_PROGRESS = re.compile(r"(\d+)/(\d+)")


def _done(cells: dict[str, str]) -> int | None:
    """The Progress cell's iterations done, when it reads done/total."""
    m = _PROGRESS.fullmatch(cells.get("PROGRESS", ""))
    return int(m[1]) if m else None


def _cases() -> list[Any]:
    return [pytest.param(m, id=m.removesuffix(".yaml"), marks=() if ci else (pytest.mark.plans,))
            for m, (_, _, ci) in PROGRAMS.items()]  # fmt: skip


@pytest.mark.parametrize("manifest", _cases())
def test_the_progress_columns_read_as_a_run_trains(operator: Kind, manifest: str) -> None:
    k = operator
    params, has_return, _ = PROGRAMS[manifest]
    docs = load_example(manifest)
    fed = small_requests(federation(docs))
    fed["spec"]["program"]["params"].update(params)
    width = next((p.replicas for p in PLANS if p.manifest == manifest), None)  # (as the plans test runs it)
    if width is not None:
        fed["spec"].setdefault("samplers", {})["replicas"] = width
    fed["spec"].pop("checkpoint", None)
    name = fed["metadata"]["name"]
    clean_slate(k, name)
    t0 = time.monotonic()
    apply(k, docs)
    try:
        def readable() -> dict[str, str] | None:
            cells = columns(k, name)
            if cells.get("PHASE") in ("Failed", "Succeeded"):
                raise AssertionError(f"{name} ended while the test read it:\n{describe(k, name)}")
            return cells if _done(cells) and (cells.get("RETURN") or not has_return) else None

        cells = wait_for(f"{name}'s Progress column", readable, 420, interval=1)
        first_s = time.monotonic() - t0
        done, total = (int(x) for x in cells["PROGRESS"].split("/"))
        assert done <= total and total > 1, cells
        if has_return:
            float(cells["RETURN"])  # a number a person reads
        assert "LOGICAL-TIME" not in cells, cells  # a wide column, once a program reports progress

        def moved_on() -> dict[str, str] | None:
            cells = columns(k, name)
            return cells if (_done(cells) or 0) > done else None

        moved = wait_for(f"{name}'s Progress column to move on", moved_on, 120, interval=1)
        assert columns(k, name, wide=True).get("LOGICAL-TIME"), "the wide output keeps the logical time"
        record(f"progress_column_{name}_s", first_s, "s",
               f"kubectl apply {manifest} -> Progress {cells['PROGRESS']} Return {cells.get('RETURN')!r}; "
               f"then {moved['PROGRESS']}")  # fmt: skip
    finally:
        k.kubectl("delete", "rfed", name, "-n", NAMESPACE, "--ignore-not-found", "--timeout=120s", check=False,
                  timeout=150)  # fmt: skip
