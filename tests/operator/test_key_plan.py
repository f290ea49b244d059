"""Which keys a reconcile pass issues, keeps and withdraws, from the spec, the member table
(the operator's record of the keys it issued) and the pods: every member of the layout has one (an elastic bank's slots up to
its maximum), a key found is never issued again (an operator restart re-issues nothing a
pod holds), a released slot's held key is replaced by a fresh one, and a member gone loses
its Secret."""

from __future__ import annotations

import zmq

from reactorfed_operator.key_plan import (
    ObservedKey,
    key_step,
    layout_members,
    observe_table,
    released_slots,
)
from reactorfed_operator.member_keys import IssuedKey, member_table
from reactorfed_operator.observed import ObservedPod
from reactorfed_operator.phase import PodPhase, Role

from .helpers import make_fed

RTI = "R" * 40


def _key() -> IssuedKey:
    pk, sk = zmq.curve_keypair()
    return IssuedKey(pk.decode(), sk.decode())


def _have(*members: str, held: bool = False, rti: str = RTI) -> dict[str, ObservedKey]:
    return {m: ObservedKey(m, f"{m:<40}"[:40], rti, held) for m in members}


def _sampler(slot: int, *, deleting: bool = False, phase: PodPhase = PodPhase.RUNNING) -> ObservedPod:
    return ObservedPod(f"pong-samplers-{slot}", Role.SAMPLER, 1, 2, phase=phase, deleting=deleting, slot=slot,
                       max_width=4)  # fmt: skip


def test_the_layout_s_members_an_elastic_bank_at_its_maximum() -> None:
    assert layout_members(make_fed(samplers={"replicas": 2}).spec) == ["samplers[0]", "samplers[1]", "learner"]
    elastic = make_fed(samplers={"replicas": 2, "maxReplicas": 4}).spec
    assert layout_members(elastic) == ["samplers[0]", "samplers[1]", "samplers[2]", "samplers[3]", "learner"]


def test_a_new_federation_gets_a_key_per_member_and_the_made_pods_hold_theirs() -> None:
    members = layout_members(make_fed(samplers={"replicas": 2, "maxReplicas": 4}).spec)
    step = key_step(members, {}, RTI, creating=["samplers[0]", "samplers[1]", "learner"])
    assert step.issue == members and step.withdraw == [] and step.hold == []
    assert step.table({}, {m: f"pk-{m}" for m in step.issue}) == {m: f"pk-{m}" for m in members}


def test_keys_found_are_kept_a_restarted_operator_issues_none_again() -> None:
    members = ["samplers[0]", "samplers[1]", "learner"]
    have = _have(*members, held=True)
    step = key_step(members, have, RTI, creating=["samplers[1]"])
    assert (step.issue, step.withdraw, step.hold) == ([], [], [])
    assert step.table(have, {}) == {m: k.public for m, k in have.items()}
    # a pod about to mount a key nobody held yet marks it held
    fresh = _have("samplers[1]")
    assert key_step(members, {**have, **fresh}, RTI, creating=["samplers[1]"]).hold == ["samplers[1]"]


def test_a_released_slot_s_held_key_is_withdrawn_and_a_fresh_one_waits() -> None:
    fed = make_fed(samplers={"replicas": 1, "maxReplicas": 4})  # scaled down from 3
    members = layout_members(fed.spec)
    pods = [_sampler(0), _sampler(1, deleting=True), _sampler(2, phase=PodPhase.SUCCEEDED)]
    released = released_slots(fed.spec, pods)
    assert released == {"samplers[1]", "samplers[2]", "samplers[3]"}
    have = {**_have("samplers[0]", "samplers[1]", "samplers[2]", "learner", held=True), **_have("samplers[3]")}
    step = key_step(members, have, RTI, released)
    assert step.issue == ["samplers[1]", "samplers[2]"], "held keys of released slots; samplers[3]'s was never held"
    table = step.table(have, {"samplers[1]": "new-1", "samplers[2]": "new-2"})
    assert table["samplers[1]"] == "new-1" and table["samplers[2]"] == "new-2"
    assert table["samplers[3]"] == have["samplers[3]"].public and table["samplers[0]"] == have["samplers[0]"].public
    # the next pass: the fresh keys are not held; nothing more to do until a pod holds one
    after = {**have, **_have("samplers[1]", "samplers[2]")}
    assert key_step(members, after, RTI, released).issue == []


def test_a_slot_whose_pod_runs_on_is_not_released() -> None:
    fed = make_fed(samplers={"replicas": 1, "maxReplicas": 4})
    assert released_slots(fed.spec, [_sampler(0), _sampler(2)]) == {"samplers[1]", "samplers[3]"}
    assert released_slots(make_fed(samplers={"replicas": 2}).spec, [_sampler(0)]) == set(), "no elastic bank"


def test_members_gone_lose_their_keys_and_keys_of_another_rti_are_issued_again() -> None:
    members = ["samplers[0]", "learner"]
    have = _have("samplers[0]", "samplers[1]", "learner", held=True)
    step = key_step(members, have, RTI)
    assert step.withdraw == ["samplers[1]"] and step.issue == []
    assert "samplers[1]" not in step.table(have, {})
    # the RTI's Secret was made again: every member's key file names the old RTI key
    assert key_step(members, have, "N" * 40).issue == members


def test_the_record_is_read_back_from_the_member_table() -> None:
    fed = make_fed(samplers={"replicas": 2})
    k0, k1, rti = _key(), _key(), _key()
    table = member_table(fed, {"samplers[0]": k0.public, "samplers[1]": k1.public}, rti.public,
                         held=["samplers[1]", "learner"])  # (a member not in the table is not recorded held)
    assert table["metadata"]["annotations"]["reactorfed.io/held"] == "samplers[1]"
    assert observe_table(table) == (rti.public, {"samplers[0]": ObservedKey("samplers[0]", k0.public, rti.public),
                                                 "samplers[1]": ObservedKey("samplers[1]", k1.public, rti.public,
                                                                            True)})  # fmt: skip
    assert observe_table(None) == (None, {})
    assert observe_table({"metadata": {}, "data": {"members.json": "not json"}}) == (None, {})
