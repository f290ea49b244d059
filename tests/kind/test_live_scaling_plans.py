"""Live scaling of synchronous PPO, APPO and Ape-X in the kind cluster: each plan's elastic
example (examples/k8s/*-elastic.yaml, tests/kind/live.py's ELASTIC_PLANS) in real
containers, scaled with `kubectl scale` 2 -> 4 -> 1 -> 3 while it trains, then a sampler
container killed (SIGKILL from its node's containerd) and its slot refilled live.

Through it all the RTI's pod and every pod of a group not scaled (the learner; Ape-X's
replay shards too) must keep its UID and restartCount 0, in incarnation 1 with no restart;
after each change the new width must be at work (the members that joined a few of their
periods of logical time past their joins) and the learner must have trained on (its
iterations, status.progress.done, past where they were when the change was asked for).
tests/kind/test_live_scaling.py does the same for Q-learning, and checks every sample once
at the end; the elastic learners' accounting is checked in processes
(tests/rl/test_live_scale_{ppo,appo,apex}.py). The figures: time from `kubectl scale` to
the new members' joins in status.membership (conftest.record)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import NAMESPACE, Kind, record
from .federations import apply
from .live import ELASTIC_PLANS, ElasticPlan, Watch, elastic_doc, signal_container, watching

pytestmark = [pytest.mark.kind, pytest.mark.timeout(900)]

START_S = 600.0  # the first pods of a federation on a fresh cluster (an image's first start)
CHANGE_S = 240.0  # a change: pods made, scheduled, python and torch imported, joined


@pytest.fixture(params=sorted(ELASTIC_PLANS), ids=str)
def plan(request: pytest.FixtureRequest) -> ElasticPlan:
    return ELASTIC_PLANS[request.param]


@pytest.fixture
def watch(operator: Kind, plan: ElasticPlan, tmp_path: Path) -> Iterator[Watch]:
    name = plan.manifest.removesuffix(".yaml")
    with watching(operator, name, tmp_path, role="samplers", at_work_ns=plan.at_work_ns) as w:
        yield w


def rescaled(w: Watch, width: int) -> None:
    """`kubectl scale` to ``width``; returns once it runs at that width, the members that
    joined at work and the learner past where it was when asked."""
    present = w.slots()
    joining = tuple(s for s in range(width) if s not in present)
    leaving = tuple(s for s in present if s >= width)
    seen = {(s, joined): len(w.changes(f"samplers[{s}]", joined)) for s in range(max([width, *present]) + 1)
            for joined in (True, False)}  # fmt: skip
    done, t = w.done(), time.monotonic()
    assert w.scale(width).returncode == 0

    def changed(s: int, joined: bool) -> bool:
        return len(w.changes(f"samplers[{s}]", joined)) > seen[s, joined]

    w.until(f"{w.name} at {width} samplers (joining {joining}, leaving {leaving})", lambda st: w.at(width) if all(
        changed(s, True) for s in joining) and all(changed(s, False) for s in leaving) else None, CHANGE_S)  # fmt: skip
    shown = [w.shown(f"samplers[{s}]", True) for s in joining] + [w.shown(f"samplers[{s}]", False) for s in leaving]
    record(f"{w.name}_scale_to_{width}_s", max(shown) - t, "s",
           f"kubectl scale rfed/{w.name} --replicas={width} -> the last of its joins or leaves in "
           "status.membership (the operator reads the RTI's /status every 2 s)")  # fmt: skip
    w.until(f"{w.name}: the RTI to count {width} samplers present",
            lambda st: (st.get("samplers") or {}).get("members") == width, 60)  # fmt: skip
    w.until(f"{w.name}: {width} samplers at work and the learner past iteration {done}", lambda st: (
        w.at_work(joining) if joining else w.at_work(leaving, joined=False)) and w.done() > done, CHANGE_S)  # fmt: skip


def test_elastic_plan_rescales_live(operator: Kind, plan: ElasticPlan, watch: Watch) -> None:
    k, w = operator, watch
    t0 = time.monotonic()
    apply(k, [elastic_doc(plan)])
    w.until(f"{w.name}: 2 samplers and the learner training",
            lambda st: w.at(2) and (st.get("progress") or {}).get("rtiPhase") == "running" and w.done() > 0,
            START_S)  # fmt: skip
    record(f"{w.name}_apply_to_training_s", time.monotonic() - t0, "s",
           f"kubectl apply {plan.manifest} (2 samplers) -> Running 2/2, the learner's first iterations in status")  # fmt: skip
    roles = sorted(set(w.pinned().values()))
    assert roles == (["learner", "rti", "shards"] if plan.plan == "apex" else ["learner", "rti"]), roles

    for width in (4, 1, 3):
        rescaled(w, width)

    # a sampler container killed: its pod fails, a new pod for its slot joins, in the same incarnation
    killed = w.slot_pod(1)
    joins = len(w.changes("samplers[1]", True))
    done, t = w.done(), time.monotonic()
    signal_container(k, killed, "SIGKILL")
    w.until(f"{w.name}: the killed sampler's slot refilled", lambda st: w.at(3) if (
        (st["samplers"].get("replaced") or 0) >= 1 and len(w.changes("samplers[1]", True)) > joins) else None,
        CHANGE_S)  # fmt: skip
    assert w.slot_pod(1)["metadata"]["uid"] != killed["metadata"]["uid"]
    record(f"{w.name}_sampler_killed_to_readmitted_s", w.shown("samplers[1]", True) - t, "s",
           "SIGKILL to samplers[1]'s container -> its new pod's join in status.membership")  # fmt: skip
    w.until(f"{w.name}: the new samplers[1] at work and the learner past iteration {done}",
            lambda st: w.at_work((1,)) and w.done() > done, CHANGE_S)  # fmt: skip

    st = w.look()
    assert st["incarnation"] == 1 and st["restarts"] == 0 and st["samplers"]["replaced"] == 1, st
    events = k.get_json("events", "-n", NAMESPACE, "--field-selector", f"involvedObject.name={w.name}")["items"]
    reasons = {e["reason"] for e in events}
    assert {"ScalingLive", "SamplerFailed", "SamplerReplaced"} <= reasons, reasons
    assert "FederateFailed" not in reasons and "Rescaling" not in reasons, reasons
    # the record: each change with its tag, in order, all in incarnation 1
    changes = [(c["member"], c["joined"]) for c in st["membership"]]
    assert sorted(changes[:2]) == [("samplers[2]", True), ("samplers[3]", True)], changes
    assert sorted(changes[2:5]) == [(f"samplers[{i}]", False) for i in (1, 2, 3)], changes
    assert sorted(changes[5:7]) == [("samplers[1]", True), ("samplers[2]", True)], changes
    assert changes[7:] == [("samplers[1]", False), ("samplers[1]", True)], changes
    tags = [(c["tagNs"], c["microstep"]) for c in st["membership"]]
    assert tags == sorted(tags) and all(c["incarnation"] == 1 for c in st["membership"]), st["membership"]
