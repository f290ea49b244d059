"""Hot swap, pure: a new process for a transient federate (``transient(...)``, LF's
``@transient``) that is present takes over from the one running. The RTI's door
(:class:`Admission`) completes the new process's handshake and holds it while the present
one runs; the core (:meth:`RtiMembership.request_swap`) has the present one leave at a tag
agreed in a round; once its process is forgotten the held one takes its slot and joins
after the last tag the old one completed. A second process for a bank's member, or for
any federate before the start, stays a duplicate, refused. (The whole exchange over the
network: ``tests/conformance/test_fed_transient.py``, LF's two hot-swap programs.)"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

import pytest

from reactorfed import Input, Output, Reactor, transient
from reactorfed.federation import layout_of
from reactorfed.federation.coordination.admission import Admission, PeerKind, Swap
from reactorfed.federation.coordination.layout import ElasticGroup, Layout, Link
from reactorfed.federation.coordination.membership import (
    Admit,
    Change,
    MembershipError,
    Query,
    RoundEnd,
)
from reactorfed.federation.coordination.rti_core import RtiCore
from reactorfed.federation.process.rti_server import RtiPhase
from reactorfed.federation.wire import protocol as P
from reactorfed.model.elastic import Elastic, elastic_bank
from reactorfed.time.tag import TagT

from .test_rti_membership_server import Fed, Rti, answer_all

SECRET = b"0123456789abcdef"
START = 1_000


def at(dt: int, m: int = 0) -> TagT:
    return (START + dt, m)


class Src(Reactor):
    out = Output(int)


class Mid(Reactor):
    inp = Input(int)
    out = Output(int)


class Sink(Reactor):
    inp = Input(int)


class WithTransient(Reactor):
    def __init__(self) -> None:
        self.up = Src()
        self.mid = transient(Mid())
        self.down = Sink()
        self.connect(self.up.out, self.mid.inp)
        self.connect(self.mid.out, self.down.inp)


class WithBank(Reactor):
    def __init__(self) -> None:
        self.up = Src()
        self.mids = elastic_bank(Mid, Elastic(0, 2, initial=1))
        self.connect(self.up.out, [m.inp for m in self.mids], broadcast=True)


def _door(main: Reactor) -> Admission:
    return Admission(layout_of(main), "swap", SECRET)


def _join(door: Admission, peer: bytes, name: str, *, open_: bool) -> int | Swap | P.Reject:
    hello = P.Hello(
        P.PROTOCOL_VERSION,
        "swap",
        name,
        door.layout.digest,
        f"tcp://127.0.0.1:{len(peer)}",
        os.urandom(16),
    )
    ch = door.hello(peer, hello, 0, os.urandom(16), open_=open_)
    if isinstance(ch, P.Reject):
        return ch
    nonce = door.challenge_nonce(peer)
    assert nonce is not None
    return door.proof(peer, P.Proof(P.mac(SECRET, "federate", nonce, "swap", name)))


def _started(main: Reactor) -> Admission:
    door = _door(main)
    for i, name in enumerate(door.layout.names):
        if i in door.layout.initial_members():
            assert _join(door, name.encode(), name, open_=True) == i
    return door


# -- the layout --------------------------------------------------------------------------
def test_a_transient_federate_is_marked_so_and_a_bank_is_not() -> None:
    (g,) = layout_of(WithTransient()).elastic
    assert g.transient and g.name == "mid"
    (b,) = layout_of(WithBank()).elastic
    assert not b.transient


# -- the door ----------------------------------------------------------------------------
def test_a_transient_federates_new_process_is_held_once_it_proves_itself() -> None:
    door = _started(WithTransient())
    mid = door.layout.index("mid")
    old = door.control_of[mid]
    held = _join(door, b"new-mid", "mid", open_=False)
    assert held == Swap(mid)
    assert door.kind(b"new-mid") is PeerKind.HELD and b"new-mid" in door.peers()
    assert door.control_of[mid] == old, "the present process keeps its slot until it is forgotten"
    assert door.take_over(mid) is None  # (it is still here)
    door.forget(mid)
    assert door.take_over(mid) == b"new-mid"
    assert door.control_of[mid] == b"new-mid" and door.kind(b"new-mid") is PeerKind.CONTROL
    assert door.endpoints[mid] == "tcp://127.0.0.1:7"  # the new process's data address
    assert door.take_over(mid) is None  # (once)


def test_a_stranger_cannot_make_a_transient_leave() -> None:
    """A wrong proof is refused as any is: nothing is held, nobody is asked to leave."""
    door = _started(WithTransient())
    hello = P.Hello(
        P.PROTOCOL_VERSION, "swap", "mid", door.layout.digest, "tcp://127.0.0.1:1", os.urandom(16)
    )
    assert isinstance(door.hello(b"evil", hello, 0, os.urandom(16), open_=False), P.Challenge)
    got = door.proof(b"evil", P.Proof(os.urandom(32)))
    assert isinstance(got, P.Reject) and "authentication" in got.reason
    door.forget(door.layout.index("mid"))
    assert door.take_over(door.layout.index("mid")) is None


def test_one_hot_swap_at_a_time() -> None:
    door = _started(WithTransient())
    assert isinstance(_join(door, b"second", "mid", open_=False), Swap)
    third = _join(door, b"third", "mid", open_=False)
    assert isinstance(third, P.Reject) and "one at a time" in third.reason
    assert door.drop_swap(door.layout.index("mid")) == b"second"  # (its connection closed)
    assert door.kind(b"second") is PeerKind.STRANGER
    assert isinstance(_join(door, b"fourth", "mid", open_=False), Swap)


@pytest.mark.parametrize("main, name", [(WithTransient(), "up"), (WithBank(), "mids[0]")])
def test_other_duplicates_are_refused(main: Reactor, name: str) -> None:
    """A persistent federate's, or a bank member's (the operator runs one process per
    slot: a second one is an accident), while the federation runs."""
    door = _started(main)
    got = _join(door, b"again", name, open_=False)
    assert isinstance(got, P.Reject) and "duplicate" in got.reason


def test_before_the_start_a_transients_second_process_is_a_duplicate() -> None:
    door = _started(WithTransient())
    got = _join(door, b"again", "mid", open_=True)
    assert isinstance(got, P.Reject) and "duplicate" in got.reason


# -- the core ----------------------------------------------------------------------------
def _core(transient_mid: bool = True) -> RtiCore:
    """up (0) -> mid (1) -> down (2), after 0 between up and mid; mid is the one slot."""
    links = [Link(0, 0, 1, 0, "up.out", "mid.inp"), Link(1, 1, 2, None, "mid.out", "down.inp")]
    lay = Layout(
        ["up", "mid", "down"], links, elastic=[ElasticGroup("mid", (1,), 0, 1, 1, transient_mid)]
    )
    lay._closure()
    c = RtiCore(lay)
    c.start(START)
    return c


def _answer_all(c: RtiCore) -> None:
    rnd = c.members.round
    assert rnd is not None
    for f in sorted(rnd.waiting):
        c.members.on_membership_reply(f, rnd.id, rnd.tag)


def test_the_present_incarnation_leaves_and_the_new_one_joins_after_it() -> None:
    c = _core()
    c.on_ltc(0, at(0), at(10), {1: [1, *at(0, 1)]}, {})
    c.on_ltc(1, at(0, 1), at(10, 1), {}, {0: 1})
    c.on_ltc(2, at(0, 1), at(20), {}, {})
    c.members.request_swap(1)
    (q,) = c.members.take_outbox()
    assert isinstance(q, Query) and q.changes == ((1, False),) and 1 in q.to  # it is asked too
    _answer_all(c)
    out: list[Any] = c.members.take_outbox()
    assert out == [Change(q.tag, 1, False), RoundEnd(q.round, q.to)]
    leave = q.tag
    assert c.members.present[1]  # until it resigns, having run the tags before its leave
    c.on_resign(1, {}, {})
    assert not c.members.present[1]
    c.members.request_join(1)  # the new process, once it took the slot
    _answer_all(c)
    ch, adm = [o for o in c.members.take_outbox() if isinstance(o, Change | Admit)]
    assert ch.joined and ch.tag > leave and isinstance(adm, Admit) and adm.tag == ch.tag
    assert [(x.member, x.joined) for x in c.members.record] == [(1, False), (1, True)]


def test_a_swap_of_a_member_on_its_way_out_adds_nothing() -> None:
    c = _core()
    c.members.request_leave(1)  # its own stop request
    (q,) = c.members.take_outbox()
    assert c.members.request_swap(1) == [] and c.members.take_outbox() == []
    _answer_all(c)
    assert c.members.request_swap(1) == [] and c.members.take_outbox() == [
        Change(q.tag, 1, False),
        RoundEnd(q.round, q.to),
    ]


def test_a_swap_is_refused_when_it_cannot_be() -> None:
    with pytest.raises(MembershipError, match="not a transient federate"):
        _core(transient_mid=False).members.request_swap(1)
    c = _core()
    c.members.request_leave(1)
    _answer_all(c)
    c.on_resign(1, {}, {})
    with pytest.raises(MembershipError, match="not present"):
        c.members.request_swap(1)
    c = _core()
    c.on_stop_request(0, at(5))
    with pytest.raises(MembershipError, match="stopping"):
        c.members.request_swap(1)
    assert c.members.take_outbox() == [] and c.members.record == []


# -- the server: the whole exchange, with hand-made federates over real sockets ------------
@pytest.fixture
def rtis() -> Iterator[list[Rti]]:
    made: list[Rti] = []
    yield made
    for r in made:
        r.close()


def test_the_server_stops_the_present_process_then_starts_the_new_one(rtis: list[Rti]) -> None:
    rti = Rti(WithTransient())
    rtis.append(rti)
    server = rti.server
    feds = rti.start("up", "mid", "down")
    mid = server.layout.index("mid")
    new = Fed(rti, "mid")
    new.handshake()  # it proves itself, and is held: no START while the present one runs
    queried = {
        n: f.next(P.Query) for n, f in feds.items()
    }  # the present one's leave: it is asked too
    assert queried["mid"].changes == ((mid, False),)
    time.sleep(0.2)
    assert not new.got, new.got
    for n, q in queried.items():
        feds[n].send(P.QueryReply(q.round, q.tag))
    leave = feds["mid"].next(P.Change)
    assert (leave.member, leave.joined) == (mid, False)
    old = feds.pop("mid")
    old.send(P.Resign(leave.tag, {}, {}))
    old.close()
    start = new.next(P.Start)  # once the present process is forgotten
    assert start.join and start.federate == mid
    assert new.next(P.Change) == leave  # the record so far
    new.send(P.JoinReq(server.clock.now()))
    answer_all(*feds.values())
    feds["up"].send(
        P.Ltc(leave.tag, (leave.tag[0] + 10**9, 0), {}, {})
    )  # past the last incarnation's tags
    join = new.next(P.Change)
    assert (join.member, join.joined) == (mid, True) and join.tag > leave.tag
    assert new.next(P.Admit).tag == join.tag
    assert [(r["member"], r["joined"]) for r in server.status()["membership"]] == [
        ("mid", False),
        ("mid", True),
    ]
    assert rti.error is None and server.phase is RtiPhase.RUNNING


def test_the_server_refuses_a_swap_while_the_federation_stops(rtis: list[Rti]) -> None:
    rti = Rti(WithTransient())
    rtis.append(rti)
    feds = rti.start("up", "mid", "down")
    feds["up"].send(P.StopReq((rti.server.start_time or 0, 5)))
    feds["up"].next(P.StopRequest)
    new = Fed(rti, "mid")
    new.handshake()
    reject = new.next(P.Reject)
    assert "hot swap refused" in reject.reason and "stopping" in reject.reason
    assert not [m for m in feds["mid"].got if isinstance(m, P.Query)]


def test_a_decentralized_federations_start_says_so_to_transient_federates_too(
    rtis: list[Rti],
) -> None:
    rti = Rti(WithTransient(), coordination="decentralized")
    rtis.append(rti)
    feds = rti.start("up", "mid", "down")
    assert all(f.got[0].decentralized for f in feds.values())
