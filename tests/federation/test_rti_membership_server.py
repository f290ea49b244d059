"""The RTI server's side of elastic banks (issue 19): a real RtiServer in a thread, over
real ZeroMQ (CurveZMQ), with hand-made federates (raw DEALER sockets speaking the
protocol) that join, leave and fail while it runs. The door's new rules (Admission), pure,
at the end."""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
import zmq

from reactorfed import Reactor, each
from reactorfed.federation import layout_of
from reactorfed.federation.coordination.admission import Admission
from reactorfed.federation.coordination.membership import MembershipError
from reactorfed.federation.errors import FederationError
from reactorfed.federation.io.curve import federation_keys, secure_client
from reactorfed.federation.process.rti_server import RtiConfig, RtiPhase, RtiServer, RtiSummary
from reactorfed.federation.wire import protocol as P
from reactorfed.model.elastic import Elastic, MemberChange, elastic_bank
from reactorfed.time.clock import SystemClock

from .harness import wait_until
from .programs import Pipeline
from .test_membership import Sampler, Trainer  # the simulation's reactors, over real sockets here

SECRET = b"elastic-secret-0123456789"
M = TypeVar("M")
MEMBERSHIP = (P.Query, P.Change, P.RoundEnd, P.Admit, P.Refused)


class Main(Reactor):
    """learner (0) and the slots samplers[0..hi-1] (1..hi), ``initial`` present at first."""

    def __init__(self, initial: int = 2, lo: int = 1, hi: int = 4) -> None:
        self.learner = Trainer(hi)
        self.samplers = elastic_bank(Sampler, Elastic(lo, hi, initial=initial), seed=each(lambda i: i))
        self.connect(self.samplers.out, self.learner.ins, after=0)
        self.connect(self.learner.out, self.samplers.inp, broadcast=True)


class Rti:
    """A real RtiServer, serving in a thread."""

    def __init__(self, main: Reactor, **cfg: Any) -> None:
        self.fid = f"elastic-{os.getpid()}-{time.monotonic_ns()}"
        self.layout = layout_of(main)
        cfg.setdefault("liveness_ns", 1_000_000_000)
        self.server = RtiServer(self.layout, RtiConfig(self.fid, SECRET, port=0, **cfg), SystemClock())
        self.endpoint = self.server.bind()
        self.summary: RtiSummary | None = None
        self.error: BaseException | None = None
        self.feds: list[Fed] = []
        self._thread = threading.Thread(target=self._serve, name="rti", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        try:
            self.summary = self.server.run()
        except BaseException as e:
            self.error = e

    def connect(self, name: str, *, start: bool = True) -> Fed:
        """A federate ``name`` that passed the handshake (and, running, got its START)."""
        fed = Fed(self, name)
        fed.handshake()
        if start and self.server.phase is RtiPhase.RUNNING:
            fed.next(P.Start)
        return fed

    def start(self, *names: str) -> dict[str, Fed]:
        """The federates ``names`` joined, all of them started."""
        feds = {n: self.connect(n, start=False) for n in names}
        for f in feds.values():
            f.next(P.Start)
        return feds

    def ended(self, timeout: float = 20.0) -> None:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the RTI did not end"

    def close(self) -> None:
        for f in self.feds:
            f.close()
        if self._thread.is_alive():  # (a test that failed half-way: end the server)
            self.server.phase = RtiPhase.DONE
            self._thread.join(5)


class Fed:
    """A federate's control connection, by hand: what it sends is what the test says,
    what it gets is kept in order (``got``)."""

    def __init__(self, rti: Rti, name: str) -> None:
        self.rti, self.name = rti, name
        self.index = rti.layout.index(name)
        self.sock = zmq.Context.instance().socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        secure_client(self.sock, federation_keys(SECRET, rti.fid))
        self.sock.connect(rti.endpoint)
        self.got: list[Any] = []
        self._taken = 0  # got[:_taken] was looked at by next()
        rti.feds.append(self)

    def send(self, msg: Any) -> None:
        self.sock.send(msg.pack())

    def hello(self) -> P.Challenge | P.Reject:
        self.send(P.Hello(P.PROTOCOL_VERSION, self.rti.fid, self.name, self.rti.layout.digest,
                          f"tcp://127.0.0.1:{20000 + self.index}", os.urandom(16)))
        return self.next((P.Challenge, P.Reject))

    def handshake(self) -> None:
        ch = self.hello()
        assert isinstance(ch, P.Challenge), f"{self.name} was not challenged: {ch}"
        self.send(P.Proof(P.mac(SECRET, "federate", ch.nonce, self.rti.fid, self.name)))
        self.got, self._taken = [], 0  # (what follows the handshake is what the tests look at)

    def next(self, kind: type[M] | tuple[type, ...], timeout: float = 10.0) -> M:
        """The next message of ``kind`` after the last one taken (waiting for it)."""
        deadline = time.monotonic() + timeout
        while True:
            for i in range(self._taken, len(self.got)):
                if isinstance(self.got[i], kind):
                    self._taken = i + 1
                    return self.got[i]
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{self.name}: no {kind} within {timeout} s; got {self.got}")
            if self.sock.poll(int(left * 1000) + 1):
                self.got.append(P.parse(self.sock.recv_multipart()[0]))

    def membership(self) -> list[Any]:
        """What it got of the membership messages, in order."""
        return [m for m in self.got if isinstance(m, MEMBERSHIP)]

    def answer(self) -> P.Query:
        """Answer the next query with its proposal."""
        q = self.next(P.Query)
        self.send(P.QueryReply(q.round, q.tag))
        return q

    def close(self) -> None:
        self.sock.close(0)


def answer_all(*feds: Fed) -> None:
    for f in feds:
        f.answer()


def resign_all(*feds: Fed) -> None:
    for f in feds:
        f.send(P.Resign((f.rti.server.start_time or 0, 0), {}, {}))


@pytest.fixture
def rtis() -> Iterator[list[Rti]]:
    made: list[Rti] = []
    yield made
    for r in made:
        r.close()


def _rti(rtis: list[Rti], main: Reactor, **cfg: Any) -> Rti:
    r = Rti(main, **cfg)
    rtis.append(r)
    return r


# -- joining -----------------------------------------------------------------------------
def test_a_member_joins_mid_run_and_gets_start_then_the_changes_then_its_admit(rtis: list[Rti]) -> None:
    rti = _rti(rtis, Main(initial=2, hi=5))  # learner (0), samplers[0..1] (1, 2); slots 3, 4, 5 absent
    server = rti.server
    feds = rti.start("learner", "samplers[0]", "samplers[1]")
    start = server.start_time
    assert start is not None and server.phase is RtiPhase.RUNNING

    j1 = rti.connect("samplers[2]", start=False)  # the federation runs: a slot is still taken
    s = j1.next(P.Start)
    assert (s.start, s.session, s.federate) == (start, server.session, 3)
    assert set(s.peers) == {0, 1, 2, 3}, "the data addresses of every federate connected now"
    j1.send(P.JoinReq(server.clock.now()))
    queried = [f.next(P.Query) for f in feds.values()]  # the present federates; the joiner is not asked
    j2 = rti.connect("samplers[3]")  # connects while the round is under way, asks nothing yet
    for f, q in zip(feds.values(), queried, strict=True):
        f.send(P.QueryReply(q.round, q.tag))
    c1 = j1.next(P.Change)
    a1 = j1.next(P.Admit)
    assert [type(m) for m in j1.got[:3]] == [P.Start, P.Change, P.Admit]
    assert (c1.member, c1.joined) == (3, True) and a1.tag == c1.tag and c1.tag >= (start, 0)
    assert c1.endpoint == "tcp://127.0.0.1:20003", "its data address from its HELLO, for its upstream peers"
    for f in feds.values():
        assert f.next(P.Change) == c1
        f.next(P.RoundEnd)
        assert [type(m) for m in f.membership()] == [P.Query, P.Change, P.RoundEnd]
    assert j2.next(P.Change) == c1, "a joiner waiting gets every change as it comes"

    j2.send(P.JoinReq(server.clock.now()))
    answer_all(*feds.values(), j1)  # (the first joiner is present now: asked too)
    c2 = j2.next(P.Change)
    j2.next(P.Admit)
    assert [type(m) for m in j2.got[:4]] == [P.Start, P.Change, P.Change, P.Admit]
    assert (c2.member, c2.joined) == (4, True) and c2.tag >= c1.tag
    assert j1.next(P.Change) == c2

    # A joiner that comes later gets the record so far after its START, then its own change
    j3 = rti.connect("samplers[4]", start=False)
    j3.next(P.Start)
    assert [j3.next(P.Change), j3.next(P.Change)] == [c1, c2]
    j3.send(P.JoinReq(server.clock.now()))
    answer_all(*feds.values(), j1, j2)
    c3 = j3.next(P.Change)
    j3.next(P.Admit)
    assert [type(m) for m in j3.got[:5]] == [P.Start, P.Change, P.Change, P.Change, P.Admit]
    assert (c3.member, c3.joined) == (5, True)

    record = [{"tag": [c.tag[0] - start, c.tag[1]], "member": f"samplers[{c.member - 1}]", "bank": "samplers",
               "index": c.member - 1, "joined": True} for c in (c1, c2, c3)]
    status = server.status()
    assert status["membership"] == record
    assert status["federates"]["samplers[4]"]["present"] and status["federates"]["learner"]["present"]
    json.dumps(status)  # (served as JSON)

    resign_all(*feds.values(), j1, j2, j3)
    rti.ended()
    assert rti.error is None and rti.summary is not None
    assert [r.json() for r in rti.summary.membership] == record
    assert "3 membership changes" in str(rti.summary)


def test_a_joiner_that_goes_away_before_its_admit_is_dropped_and_the_round_goes_on(rtis: list[Rti]) -> None:
    rti = _rti(rtis, Main(initial=2, hi=4))
    feds = rti.start("learner", "samplers[0]", "samplers[1]")
    j = rti.connect("samplers[2]")
    j.send(P.JoinReq(rti.server.clock.now()))
    queried = [f.next(P.Query) for f in feds.values()]
    j.close()
    wait_until(lambda: 3 not in rti.server.admission.control_of, what="the joiner's process to be forgotten")
    for f, q in zip(feds.values(), queried, strict=True):
        f.send(P.QueryReply(q.round, q.tag))
    for f in feds.values():
        f.next(P.RoundEnd)
        assert [type(m) for m in f.membership()] == [P.Query, P.RoundEnd], "called off: no change"
    assert rti.server.status()["membership"] == [] and rti.error is None
    again = rti.connect("samplers[2]", start=False)  # its slot is free again
    assert again.next(P.Start).federate == 3


def joins_and_leaves(server: RtiServer) -> dict[str, tuple[float, float]]:
    """Each federate's (joins, leaves) as the RTI's metrics count them."""
    got: dict[str, dict[str, float]] = {}
    for fam in server.collect():
        for smp in fam.samples:
            if smp.name in ("reactorfed_rti_federate_joins_total", "reactorfed_rti_federate_leaves_total"):
                got.setdefault(smp.labels["federate"], {})[smp.name.split("_")[-2]] = smp.value
    return {f: (c["joins"], c["leaves"]) for f, c in got.items()}


# -- leaving -----------------------------------------------------------------------------
def test_a_member_leaves_on_request_and_its_slot_is_free_again(rtis: list[Rti]) -> None:
    rti = _rti(rtis, Main(initial=3, hi=4))
    server = rti.server
    feds = rti.start("learner", "samplers[0]", "samplers[1]", "samplers[2]")
    leaver = feds["samplers[1]"]
    leaver.send(P.LeaveReq())
    answer_all(*feds.values())  # the member leaving is asked too
    for f in feds.values():
        ch = f.next(P.Change)
        f.next(P.RoundEnd)
        assert (ch.member, ch.joined) == (2, False)
    assert server.core.members.present[2], "present until it resigns, after the tags before its leave"
    leaver.send(P.Resign(ch.tag, {}, {}))
    wait_until(lambda: not server.core.members.present[2], what="the leave to complete")
    status = server.status()
    assert status["membership"] == [{"tag": [ch.tag[0] - (server.start_time or 0), ch.tag[1]],
                                     "member": "samplers[1]", "bank": "samplers", "index": 1, "joined": False}]
    assert not status["federates"]["samplers[1]"]["present"]

    leaver.next(P.Release)
    leaver.close()  # its process ends: the slot can be taken by a new one
    wait_until(lambda: 2 not in server.admission.control_of, what="the slot to be free")
    back = rti.connect("samplers[1]", start=False)
    back.next(P.Start)
    assert back.next(P.Change) == ch, "the record so far"
    # the metrics: its first process joined and left (resigned), the second joined
    assert joins_and_leaves(server) == {"learner": (1, 0), "samplers[0]": (1, 0), "samplers[1]": (2, 1),
                                        "samplers[2]": (1, 0), "samplers[3]": (0, 0)}
    assert rti.error is None and server.phase is RtiPhase.RUNNING


def test_a_leave_below_the_minimum_width_is_refused_and_nothing_changes(rtis: list[Rti]) -> None:
    rti = _rti(rtis, Main(initial=2, lo=2, hi=4))
    feds = rti.start("learner", "samplers[0]", "samplers[1]")
    feds["samplers[0]"].send(P.LeaveReq())
    r = feds["samplers[0]"].next(P.Refused)
    assert not r.joined and "samplers[0] cannot leave" in r.reason and "minimum width 2" in r.reason
    assert rti.server.status()["membership"] == [] and rti.server.phase is RtiPhase.RUNNING


# -- failing -----------------------------------------------------------------------------
def test_an_elastic_member_whose_connection_dies_leaves_and_the_federation_goes_on(rtis: list[Rti]) -> None:
    rti = _rti(rtis, Main(initial=3, hi=4))
    server = rti.server
    feds = rti.start("learner", "samplers[0]", "samplers[1]", "samplers[2]")
    feds.pop("samplers[1]").close()  # the process ends: the kernel closes its connection
    answer_all(*feds.values())  # its leave is agreed in a round (it is not asked)
    for f in feds.values():
        ch = f.next(P.Change)
        assert (ch.member, ch.joined) == (2, False)
    # its downstream federate was told first that it failed (it stops waiting for it)
    told = [m for m in feds["learner"].got if isinstance(m, P.Lost | P.Query | P.Change)]
    # (it completed no tag: it did nothing from the start tag on)
    assert [type(m) for m in told] == [P.Lost, P.Query, P.Change] and told[0] == P.Lost(2, (server.start_time, 0))
    assert not [m for f in feds.values() if f.name != "learner" for m in f.got if isinstance(m, P.Lost)]
    wait_until(lambda: server.status()["membership"] != [], what="the record")
    assert [(r["member"], r["joined"]) for r in server.status()["membership"]] == [("samplers[1]", False)]
    assert 2 not in server.admission.control_of and server.phase is RtiPhase.RUNNING and rti.error is None

    resign_all(*feds.values())  # the others end the run as usual
    rti.ended()
    assert rti.error is None and rti.summary is not None and rti.summary.federates == 3
    assert [(r.member, r.joined) for r in rti.summary.membership] == [("samplers[1]", False)]


def test_a_federate_that_is_not_elastic_dying_still_ends_the_federation(rtis: list[Rti]) -> None:
    rti = _rti(rtis, Main(initial=2, hi=4))
    feds = rti.start("learner", "samplers[0]", "samplers[1]")
    feds.pop("learner").close()
    rti.ended()
    assert isinstance(rti.error, FederationError) and "federate learner stopped responding" in str(rti.error)
    for f in feds.values():
        assert "learner stopped responding" in f.next(P.Abort).reason


def test_a_member_failing_below_the_minimum_width_ends_the_federation_with_the_reason(rtis: list[Rti]) -> None:
    rti = _rti(rtis, Main(initial=2, lo=2, hi=4))
    feds = rti.start("learner", "samplers[0]", "samplers[1]")
    feds.pop("samplers[0]").close()
    rti.ended()
    why = str(rti.error)
    assert isinstance(rti.error, FederationError), rti.error
    assert "federate samplers[0] stopped responding" in why and "cannot go on without it" in why
    assert "bank samplers would fall below its minimum width 2" in why
    assert "minimum width 2" in feds["learner"].next(P.Abort).reason


def test_start_says_which_slots_are_absent_and_which_process_joins(rtis: list[Rti]) -> None:
    """The RTI's word, not the process's own widths: the slots absent at the start, and
    ``join`` for a slot absent at the start or any slot's process connecting later."""
    rti = _rti(rtis, Main(initial=2, hi=4))  # learner (0), slots 1..4; 3 and 4 absent at first
    early = rti.connect("samplers[3]", start=False)  # absent at the start, connected before it
    feds = rti.start("learner", "samplers[0]", "samplers[1]")
    for f in feds.values():
        s = f.got[0]
        assert isinstance(s, P.Start) and s.absent == (3, 4) and not s.join, s
    assert early.next(P.Start).join
    late = rti.connect("samplers[2]", start=False)
    assert late.next(P.Start) == P.Start(rti.server.start_time or 0, late.got[0].peers, rti.server.session, 3,
                                         (3, 4), True, window=rti.server.cfg.lead_window)


def test_a_new_process_for_a_slot_whose_process_died_waits_for_the_leave_then_joins(rtis: list[Rti]) -> None:
    """A slot present at the start: its process dies; a new one connects before the leave
    is agreed and asks to join: held (not refused "already present") until the leave is
    agreed, then joined in a round of its own."""
    rti = _rti(rtis, Main(initial=3, hi=4))
    server = rti.server
    feds = rti.start("learner", "samplers[0]", "samplers[1]", "samplers[2]")
    feds.pop("samplers[1]").close()
    queried = [f.next(P.Query) for f in feds.values()]  # the round of its leave
    wait_until(lambda: 2 not in server.admission.control_of, what="the dead process to be forgotten")
    again = rti.connect("samplers[1]", start=False)
    assert again.next(P.Start).join, "a process connecting while the federation runs joins"
    again.send(P.JoinReq(server.clock.now()))
    time.sleep(0.2)
    assert not [m for m in again.got if isinstance(m, P.Refused)], again.got
    assert server.core.members.present[2], "its last incarnation has not left yet"
    for f, q in zip(feds.values(), queried, strict=True):
        f.send(P.QueryReply(q.round, q.tag))
    leave = again.next(P.Change)
    assert (leave.member, leave.joined) == (2, False)
    answer_all(*feds.values())  # the join's round, asked once the slot is free
    # agreed once the learner is past the tags of the last incarnation (nothing more for it)
    feds["learner"].send(P.Ltc(leave.tag, (leave.tag[0], leave.tag[1] + 1), {}, {}))
    join = again.next(P.Change)
    assert (join.member, join.joined) == (2, True) and join.tag > leave.tag
    assert again.next(P.Admit).tag == join.tag
    assert [(r["member"], r["joined"]) for r in server.status()["membership"]] == [
        ("samplers[1]", False), ("samplers[1]", True)]
    assert rti.error is None and server.phase is RtiPhase.RUNNING
    # the metrics: the dead process's leave (it failed, no RESIGN), and both processes' joins
    assert joins_and_leaves(server)["samplers[1]"] == (2, 1)


def test_a_silent_elastic_member_fails_and_the_federation_goes_on(rtis: list[Rti]) -> None:
    """``--silence-timeout``: an elastic member that says nothing for that long fails as if
    its process had ended (it is told so); a federate outside the bank still ends the run."""
    rti = _rti(rtis, Main(initial=3, hi=4), silence_ns=600_000_000)
    server = rti.server
    feds = rti.start("learner", "samplers[0]", "samplers[1]", "samplers[2]")
    quiet = feds.pop("samplers[1]")
    deadline = time.monotonic() + 10
    while not [m for m in quiet.got if isinstance(m, P.Reject)]:  # the others keep talking
        assert time.monotonic() < deadline, quiet.got
        for f in feds.values():
            f.send(P.Heartbeat())
        with contextlib.suppress(AssertionError):
            quiet.next(P.Reject, timeout=0.1)
    rejected = [m for m in quiet.got if isinstance(m, P.Reject)]
    assert "samplers[1] stopped responding" in rejected[0].reason and "failed by the RTI" in rejected[0].reason
    assert feds["learner"].next(P.Lost).member == 2
    answer_all(*feds.values())
    for f in feds.values():
        ch = f.next(P.Change)
        assert (ch.member, ch.joined) == (2, False)
    assert server.phase is RtiPhase.RUNNING and rti.error is None
    time.sleep(0.8)  # now the learner says nothing either: not elastic, it ends the run
    rti.ended()
    assert isinstance(rti.error, FederationError) and "stopped responding" in str(rti.error)


# -- what should not be -----------------------------------------------------------------
def test_unexpected_membership_requests_are_refused_with_a_reason_and_nothing_breaks(rtis: list[Rti]) -> None:
    rti = _rti(rtis, Main(initial=2, hi=4))
    server = rti.server
    feds = rti.start("learner", "samplers[0]", "samplers[1]")
    learner, s0 = feds["learner"], feds["samplers[0]"]
    rejected = server.rejected
    learner.send(P.JoinReq(server.clock.now()))
    r = learner.next(P.Refused)
    assert r.joined and "learner is not a member of an elastic bank" in r.reason
    learner.send(P.LeaveReq())
    r = learner.next(P.Refused)
    assert not r.joined and "learner is not a member of an elastic bank" in r.reason
    s0.send(P.JoinReq(server.clock.now()))
    assert "samplers[0] is already present" in s0.next(P.Refused).reason
    s0.send(P.QueryReply(99, (0, 0)))  # no such round: ignored
    dup = Fed(rti, "samplers[0]").hello()  # a second process for a slot connected
    assert isinstance(dup, P.Reject) and "duplicate federate 'samplers[0]'" in dup.reason
    late = Fed(rti, "learner").hello()
    assert isinstance(late, P.Reject)
    assert server.rejected >= rejected + 5

    j = rti.connect("samplers[2]")  # and a real join still goes through
    j.send(P.JoinReq(server.clock.now()))
    answer_all(*feds.values())
    c = j.next(P.Change)
    assert j.next(P.Admit).tag == c.tag
    assert server.phase is RtiPhase.RUNNING and rti.error is None


def test_without_elastic_banks_membership_messages_are_dropped_as_before(rtis: list[Rti]) -> None:
    rti = _rti(rtis, Pipeline())
    server = rti.server
    assert server.members is None
    feds = rti.start("src", "relay", "sink")
    rejected = server.rejected
    feds["src"].send(P.JoinReq(server.clock.now()))
    wait_until(lambda: server.rejected == rejected + 1, what="the JOIN_REQ to be dropped")
    feds["src"].send(P.StopReq((0, 0)))  # what comes back next is the stop's, not an answer
    feds["src"].next(P.StopRequest)
    assert not feds["src"].membership()
    assert "membership" not in server.status() and "present" not in server.status()["federates"]["src"]


# -- replay ------------------------------------------------------------------------------
def _replayed(rti: Rti, at: int) -> None:
    """The schedule (samplers[2] joins ``at`` ns after the start) is applied."""
    server = rti.server
    feds = rti.start("learner", "samplers[0]", "samplers[1]")
    start = server.start_time
    assert start is not None
    for f in feds.values():  # every federate gets the schedule right after its START
        assert f.next(P.Change) == P.Change((start + at, 0), 3, True)
        assert [type(m) for m in f.got[:2]] == [P.Start, P.Change]
    j = rti.connect("samplers[2]", start=False)
    j.next(P.Start)
    # (its own record entry: it is connected now, so the address is known)
    assert j.next(P.Change) == P.Change((start + at, 0), 3, True, "tcp://127.0.0.1:20003")
    j.send(P.JoinReq(server.clock.now()))
    assert j.next(P.Admit).tag == (start + at, 0), "admitted at its recorded tag"
    # its address, for its upstream federate (the CHANGE it got at the start had none)
    assert feds["learner"].next(P.Peer) == P.Peer((start + at, 0), 3, "tcp://127.0.0.1:20003")
    assert not [m for n in ("samplers[0]", "samplers[1]") for m in feds[n].got if isinstance(m, P.Peer)]
    s1 = feds["samplers[1]"]
    s1.send(P.LeaveReq())  # live requests are refused in a replay
    assert "replayed" in s1.next(P.Refused).reason
    assert [type(m) for m in s1.membership()] == [P.Change, P.Refused], "no round (a QUERY would be before)"
    assert server.status()["membership"] == [
        {"tag": [at, 0], "member": "samplers[2]", "bank": "samplers", "index": 2, "joined": True}]


def test_a_schedule_given_as_changes_is_replayed(rtis: list[Rti]) -> None:
    _replayed(_rti(rtis, Main(initial=2, hi=4), membership=[MemberChange(40_000_000, 0, "samplers", 2, True)]),
              40_000_000)


@pytest.mark.parametrize("document", [False, True])
def test_a_schedule_in_a_file_is_replayed(rtis: list[Rti], tmp_path: Path, document: bool) -> None:
    record = [{"tag": [30_000_000, 0], "member": "samplers[2]", "bank": "samplers", "index": 2, "joined": True}]
    path = tmp_path / "membership.json"
    path.write_text(json.dumps({"phase": "done", "membership": record} if document else record))
    _replayed(_rti(rtis, Main(initial=2, hi=4), membership=str(path)), 30_000_000)


@pytest.mark.parametrize(("schedule", "reason"), [
    ([{"tag": [1, 0], "member": "learner", "joined": True}], "'learner' is not a member of an elastic bank"),
    ([{"tag": [1], "member": "samplers[2]", "joined": True}], "'tag' must be"),
    ([{"tag": [1, 0], "member": "samplers[0]", "joined": True}], "samplers[0] joins at"),
    ([{"tag": [1, 0], "bank": "samplers", "index": 9, "joined": True}], "no slot 9"),
    ({"phase": "done"}, "expected a list of changes"),
])
def test_a_bad_schedule_is_refused_before_anything_runs(tmp_path: Path, schedule: Any, reason: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(schedule))
    lay = layout_of(Main(initial=2, hi=4))
    with pytest.raises(MembershipError, match=re.escape(reason)):
        RtiServer(lay, RtiConfig("x", SECRET, port=0, membership=path), SystemClock())


def test_a_schedule_for_a_program_without_elastic_banks_is_refused() -> None:
    with pytest.raises(FederationError, match="no elastic bank"):
        RtiServer(layout_of(Pipeline()), RtiConfig("x", SECRET, port=0, membership=[]), SystemClock())


# -- the door, pure ----------------------------------------------------------------------
def _hello(door: Admission, name: str) -> P.Hello:
    return P.Hello(P.PROTOCOL_VERSION, "door", name, door.layout.digest, "tcp://127.0.0.1:1", os.urandom(16))


def _join(door: Admission, peer: bytes, name: str, *, open_: bool) -> int | P.Reject:
    got = door.hello(peer, _hello(door, name), 0, os.urandom(16), open_=open_)
    if isinstance(got, P.Reject):
        return got
    nonce = door.challenge_nonce(peer)
    assert nonce is not None
    return door.proof(peer, P.Proof(P.mac(SECRET, "federate", nonce, "door", name)))


def test_the_door_waits_for_the_initial_members_and_takes_a_slot_while_running() -> None:
    door = Admission(layout_of(Main(initial=1, hi=3)), "door", SECRET)
    assert door.missing() == ["learner", "samplers[0]"]
    assert _join(door, b"l", "learner", open_=True) == 0 and not door.complete
    assert _join(door, b"s0", "samplers[0]", open_=True) == 1 and door.complete and door.missing() == []
    late = _join(door, b"x", "learner", open_=False)
    assert isinstance(late, P.Reject) and "duplicate" in late.reason
    assert _join(door, b"s2", "samplers[2]", open_=False) == 3, "an absent slot is taken while running"
    door.heartbeat[b"s2-hb"] = 3
    door.forget(3)
    assert 3 not in door.control_of and b"s2" not in door.control and b"s2-hb" not in door.heartbeat
    assert 3 not in door.endpoints and _join(door, b"s2-again", "samplers[2]", open_=False) == 3


def test_a_federation_without_elastic_banks_still_refuses_late_joiners() -> None:
    door = Admission(layout_of(Pipeline()), "door", SECRET)
    late = _join(door, b"x", "src", open_=False)
    assert isinstance(late, P.Reject) and "already started" in late.reason
