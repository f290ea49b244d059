"""Live rescaling of an elastic sampler bank (issue 19), driven through whole lifecycles
against the in-memory cluster: the RTI and the learner stay, samplers come and go."""

from __future__ import annotations

from typing import Any

from reactorfed_operator.progress import MemberChange, Progress

from .helpers import FakeCluster, make_fed, program_command

CORE = ("pong-rti", "pong-learner")


def elastic(replicas: int = 2, most: int = 4, **overrides: Any) -> dict[str, Any]:
    return {"samplers": {"replicas": replicas, "maxReplicas": most}, **overrides}


def running(replicas: int = 2, most: int = 4, **overrides: Any) -> FakeCluster:
    """An elastic federation whose first incarnation has run (every pod up once)."""
    c = FakeCluster(make_fed(**elastic(replicas, most, **overrides)))
    c.settle()
    assert c.status["phase"] == "Running" and c.status["incarnation"] == 1
    c.step()  # the first pass that sees it Running takes it over live
    return c


def rescale(c: FakeCluster, replicas: int, most: int = 4, **overrides: Any) -> None:
    c.set_spec(**elastic(replicas, most, **overrides))


def params(manifest: dict[str, Any]) -> dict[str, str]:
    cmd = program_command(manifest)
    return dict(cmd[i + 1].split("=", 1) for i, a in enumerate(cmd) if a == "--param")


def core_untouched(c: FakeCluster) -> None:
    assert not set(CORE) & set(c.deleted), c.deleted
    assert all(c.pods[n].incarnation == 1 and c.pods[n].phase == "Running" for n in CORE)
    assert c.status["incarnation"] == 1 and c.status["restarts"] == 0


def test_every_pod_gets_the_start_width_and_the_bounds() -> None:
    c = FakeCluster(make_fed(**elastic(2, 4)))
    c.step()
    assert len(c.made) == 4
    for m in c.made:
        assert params(m) == {"num_samplers": "2", "max_samplers": "4"}
        assert m["metadata"]["annotations"]["reactorfed.io/max-samplers"] == "4"
    assert c.status["samplers"]["initial"] == 2 and c.status["samplers"]["maxReplicas"] == 4


def test_scale_up_adds_sampler_pods_in_the_running_incarnation() -> None:
    c = running(2, 4)
    rescale(c, 4)
    p = c.step()
    assert p.phase == "Scaling" and p.reason == "ScalingLive" and p.delete == []
    assert [m["metadata"]["name"] for m in p.create] == ["pong-samplers-2", "pong-samplers-3"]
    for m in p.create:  # the incarnation's parameters, not the new width
        assert params(m) == {"num_samplers": "2", "max_samplers": "4"}
        assert m["metadata"]["labels"]["reactorfed.io/incarnation"] == "1"
    assert "RTI and the learner run on" in p.message
    c.settle()
    core_untouched(c)
    samplers = c.status["samplers"]
    assert (samplers["desired"], samplers["replicas"], samplers["readyText"]) == (4, 4, "4/4")
    assert (samplers["initial"], samplers["slots"], samplers["replaced"]) == (2, 4, 0)
    assert c.events.count("ScalingLive") == 1 and c.events[-1] == "Running"


def test_scale_down_deletes_the_highest_slots_first() -> None:
    c = running(4, 4)
    rescale(c, 1)
    p = c.step()
    assert p.phase == "Scaling" and p.create == []
    assert p.delete == ["pong-samplers-3", "pong-samplers-2", "pong-samplers-1"]
    c.step(linger=True)  # the leaving samplers take their time to exit: still scaling
    assert c.status["phase"] == "Scaling" and c.status["samplers"]["replicas"] == 1
    c.settle()
    core_untouched(c)
    assert sorted(c.pods) == ["pong-learner", "pong-rti", "pong-samplers-0"]
    assert c.status["samplers"]["readyText"] == "1/1" and c.status["samplers"]["replaced"] == 0


def test_scale_back_up_while_scaled_down_pods_still_leave() -> None:
    c = running(4, 4)
    rescale(c, 2)
    c.step()
    rescale(c, 4)
    p = c.step(linger=True)  # samplers-2 and -3 are still leaving: their names are taken
    assert p.create == [] and p.phase == "Scaling"
    p = c.step()
    assert [m["metadata"]["name"] for m in p.create] == ["pong-samplers-2", "pong-samplers-3"]
    c.settle()
    core_untouched(c)
    assert c.status["samplers"]["replaced"] == 0  # new members, not replacements


def test_failed_sampler_is_replaced_live() -> None:
    c = running(3, 4)
    c.set_phase("pong-samplers-1", "Failed", "exit code 3")
    p = c.step()
    assert p.delete == ["pong-samplers-1"] and p.create == []
    assert p.phase == "Running" and p.reason == "ReplacingSampler"
    degraded = next(x for x in c.status["conditions"] if x["type"] == "Degraded")
    assert degraded["status"] == "True"
    p = c.step()  # the failed pod is gone: its slot gets a new pod, joining the running federation
    assert [m["metadata"]["name"] for m in p.create] == ["pong-samplers-1"]
    assert params(p.create[0]) == {"num_samplers": "3", "max_samplers": "4"}
    assert c.status["samplers"]["replaced"] == 1
    c.settle()
    core_untouched(c)
    assert c.status["samplers"]["replaced"] == 1 and c.status["samplers"]["readyText"] == "3/3"
    assert [e for e in c.events if e.startswith("Sampler")] == ["SamplerFailed", "SamplerReplaced"]
    assert "FederateFailed" not in c.events


def test_vanished_sampler_is_replaced_and_counted() -> None:
    c = running(2, 4)
    del c.pods["pong-samplers-1"]  # someone deleted it; it left
    p = c.step()
    assert [m["metadata"]["name"] for m in p.create] == ["pong-samplers-1"]
    c.settle()
    core_untouched(c)
    assert c.status["samplers"]["replaced"] == 1


def test_sampler_that_exits_0_is_neither_a_failure_nor_replaced() -> None:
    c = running(2, 4)
    c.set_phase("pong-samplers-1", "Succeeded")
    p = c.step()
    assert p.create == [] and p.delete == [] and p.phase == "Running"
    core_untouched(c)


def test_learner_failure_restarts_from_the_checkpoint_at_the_current_width() -> None:
    c = running(2, 4)
    rescale(c, 3)
    c.settle()
    c.set_phase("pong-learner", "Failed", "exit code 1")
    p = c.step()
    assert p.phase == "Restarting" and p.reason == "FederateFailed" and p.restarts == 1
    assert "pong-learner failed (exit code 1)" in p.message
    c.settle()
    assert c.status["incarnation"] == 2 and c.status["restarts"] == 1
    assert params(c.made[-1]) == {"num_samplers": "3", "max_samplers": "4"}  # starts at the width asked for
    assert c.status["samplers"]["initial"] == 3 and c.status["samplers"]["slots"] is None


def test_vanished_rti_restarts() -> None:
    c = running(2, 4)
    del c.pods["pong-rti"]
    p = c.step()
    assert p.phase == "Restarting" and "pong-rti vanished" in p.message


def test_before_it_has_run_a_rescale_restarts() -> None:
    c = FakeCluster(make_fed(**elastic(2, 4)))
    c.step()  # pods made, none up yet: the federation has not started
    rescale(c, 3)
    p = c.step()
    assert p.phase == "Scaling" and p.reason == "Rescaling" and p.delete == ["pong-learner"]


def test_changing_the_bounds_restarts() -> None:
    c = running(2, 4)
    rescale(c, 2, most=8)
    p = c.step()
    assert p.reason == "Rescaling" and p.delete == ["pong-learner"] and "maxReplicas 4 -> 8" in p.message
    c.settle()
    assert c.status["incarnation"] == 2 and params(c.made[-1])["max_samplers"] == "8"
    c.set_spec(samplers={"replicas": 2})  # no longer elastic: a restart too
    c.settle()
    assert c.status["incarnation"] == 3 and "max_samplers" not in params(c.made[-1])
    assert "initial" not in c.status["samplers"]


def test_a_missing_dependency_mid_run_does_not_forget_the_live_incarnation() -> None:
    c = running(2, 4)
    c.step(missing=("ConfigMap/prog (key 'prog.py')",))
    assert c.status["phase"] == "Pending"
    rescale(c, 3)
    p = c.step()
    assert p.reason == "ScalingLive" and [m["metadata"]["name"] for m in p.create] == ["pong-samplers-2"]


def test_the_end_waits_for_the_samplers_and_replaces_nothing() -> None:
    c = running(2, 4)
    for name in CORE:
        c.set_phase(name, "Succeeded")
    c.set_phase("pong-samplers-0", "Succeeded")
    del c.pods["pong-samplers-1"]  # gone at the end: not replaced
    p = c.step()
    assert p.create == [] and p.phase == "Succeeded"
    c = running(2, 4)
    for name in CORE:
        c.set_phase(name, "Succeeded")
    p = c.step()
    assert p.phase == "Running" and p.reason == "Finishing" and p.create == []


def test_membership_changes_from_the_rti_are_shown_bounded() -> None:
    c = running(2, 4)
    changes = tuple(MemberChange(1_000_000_000 * (k + 1), 0, f"samplers[{2 + k % 2}]", k % 2 == 0) for k in range(25))
    c.step(progress=Progress(True, "running", membership=changes[:2], present=("learner", "samplers[0]")))
    shown = c.status["membership"]
    assert shown == [
        {"incarnation": 1, "logicalTime": "1.000s", "tagNs": 1_000_000_000, "microstep": 0, "member": "samplers[2]",
         "joined": True},
        {"incarnation": 1, "logicalTime": "2.000s", "tagNs": 2_000_000_000, "microstep": 0, "member": "samplers[3]",
         "joined": False},
    ]  # fmt: skip
    assert c.status["samplers"]["members"] == 1
    c.step(progress=Progress(False, error="unreachable"))  # the RTI away: the list stays
    assert c.status["membership"] == shown
    c.step(progress=Progress(True, "running", membership=changes))
    assert len(c.status["membership"]) == 20 and c.status["membership"][-1]["tagNs"] == 25_000_000_000
    c.set_phase("pong-learner", "Failed")
    c.settle()  # the next incarnation's RTI starts a record of its own; the old one's stays
    c.step(progress=Progress(True, "running", membership=(MemberChange(5, 1, "samplers[1]", False),)))
    shown = c.status["membership"]
    assert len(shown) == 20 and shown[-1]["incarnation"] == 2 and shown[-2]["incarnation"] == 1


def test_fixed_bank_has_no_elastic_status() -> None:
    c = FakeCluster(make_fed())
    c.settle()
    assert "membership" not in c.status and "replaced" not in c.status["samplers"]
    c.set_phase("pong-samplers-0", "Failed")
    assert c.step().reason == "FederateFailed"  # a fixed bank restarts, as before


def test_an_elastic_scale_group_beside_a_fixed_bank_scales_live() -> None:
    """Federate groups (examples/k8s/apex-dqn-cartpole-elastic.yaml's shape): the scaled
    group elastic, a fixed bank beside it. Its pods, like the RTI's and the learner's, stay
    through scaling and a sampler's replacement; the fixed bank's width reaches every pod."""
    groups = [{"name": "learner", "federate": "learner", "checkpoint": True},
              {"name": "shards", "bank": "shards", "widthParam": "num_shards", "replicas": 2},
              {"name": "samplers", "bank": "samplers", "widthParam": "num_samplers", "maxReplicas": 8,
               "maxParam": "max_samplers", "scale": True}]  # fmt: skip
    c = FakeCluster(make_fed(samplers={"replicas": 2}, federateGroups=groups))
    c.settle()
    c.step()
    core = ("pong-rti", "pong-learner", "pong-shards-0", "pong-shards-1")
    assert all(c.pods[n].phase == "Running" for n in core)
    for width, made in ((4, ["pong-samplers-2", "pong-samplers-3"]), (1, []), (3, ["pong-samplers-1", "pong-samplers-2"])):
        c.set_spec(samplers={"replicas": width}, federateGroups=groups)
        p = c.step()
        assert p.reason == "ScalingLive" and [m["metadata"]["name"] for m in p.create] == made, p
        assert all(params(m) == {"num_samplers": "2", "max_samplers": "8", "num_shards": "2"} for m in p.create)
        c.settle()
        assert c.status["samplers"]["readyText"] == f"{width}/{width}"
    c.set_phase("pong-samplers-1", "Failed", "exit code 137")
    c.settle()
    assert c.status["samplers"]["replaced"] == 1 and "pong-samplers-1" in c.pods
    assert not set(core) & set(c.deleted), c.deleted
    assert c.status["incarnation"] == 1 and c.status["restarts"] == 0
    assert "FederateFailed" not in c.events and "Rescaling" not in c.events
