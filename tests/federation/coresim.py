"""A whole federation of pure cores (an :class:`RtiCore` and a :class:`FederateCore` per
federate) driven as the process drivers drive them, with a small reaction model in place
of a program, and every message handed over in an order the test chooses. For property
tests: a federation that terminates in one process must terminate federated, whatever
the order messages arrive in, and with the trace of the one process.

The reaction model. Each federate has two reactions: ``early`` (level 0) fires at the
federate's own events and may write its *early* output links; ``late`` (level 1) fires
when an input is present and may write its *late* output links. What a reaction writes
is a fixed function of the link and the tag, so one process and the federation agree on
it. The late links without delay form no cycle (else the program would have a causality
loop, which assembly refuses); a late reaction writes
only below microstep 3 (an ``after 0`` loop through late reactions would otherwise run
through microsteps for ever, in one process too).
"""

from __future__ import annotations

import hashlib
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from reactorfed.federation.coordination.federate_core import WAIT, FederateCore
from reactorfed.federation.coordination.layout import Layout, Link, link_delay
from reactorfed.federation.coordination.rti_core import Grant, RtiCore
from reactorfed.federation.wire.protocol import Lead, Ltc, Promise, Resign, StopMark, Watch
from reactorfed.time.tag import TagT, add_delay, succ

#: the levels of the two reactions, and so the checkpoints of the links they write or read
EARLY_LEVEL, LATE_LEVEL = 0, 1
MAX_LATE_MICROSTEP = 3


def writes(link: int, tag: TagT, salt: int) -> bool:
    """Whether a reaction that may write ``link`` writes it at ``tag`` (fixed, per salt)."""
    h = hashlib.blake2b(repr((link, tag, salt)).encode(), digest_size=2).digest()
    return h[0] % 3 != 0


@dataclass(frozen=True)
class Model:
    """A federation: its links (``late[i]``: link i is written by the late reaction), the
    events of each federate, its stop tag, and the salt of what reactions write."""

    n: int
    links: tuple[tuple[int, int, int | None], ...]
    late: tuple[bool, ...]
    events: tuple[frozenset[TagT], ...]
    stop: TagT
    salt: int = 0

    def layout(self) -> Layout:
        ls = [Link(i, s, d, delay, f"f{s}.out{i}", f"f{d}.in{i}") for i, (s, d, delay) in enumerate(self.links)]
        out = Layout([f"f{i}" for i in range(self.n)], ls)
        out._closure()
        return out


#: A federate's trace: (tag, whether its early reaction fired, the links present when its
#: late reaction ran), at each tag where something fired.
Trace = list[tuple[TagT, bool, tuple[int, ...]]]


def one_process(m: Model) -> list[Trace]:
    """The traces of the model run in one process, by the semantics directly."""
    posted: dict[TagT, dict[int, set[int]]] = {}  # tag -> federate -> links present
    last: dict[int, TagT] = {}
    traces: list[Trace] = [[] for _ in range(m.n)]
    tags = set().union(*m.events)

    def post(i: int, tag: TagT) -> None:
        _src, dst, delay = m.links[i]
        t = add_delay(tag, link_delay(delay))
        if t <= last.get(i, (-1, 0)):
            t = succ(last[i])  # an "after" link piles a burst up, one microstep apart
        last[i] = t
        if t <= m.stop:
            posted.setdefault(t, {}).setdefault(dst, set()).add(i)
            tags.add(t)

    while True:
        now = min((t for t in tags if t <= m.stop), default=None)
        if now is None:
            break
        tags.discard(now)
        inputs = posted.pop(now, {})
        early = [now in m.events[f] for f in range(m.n)]
        same: dict[int, set[int]] = {}
        for i, (s, d, delay) in enumerate(m.links):
            if not m.late[i] and early[s] and writes(i, now, m.salt):
                if delay is None:
                    same.setdefault(d, set()).add(i)
                else:
                    post(i, now)
        for f in late_order(m):  # a late reaction after those that write its inputs
            present = inputs.get(f, set()) | same.get(f, set())
            if early[f] or present:
                traces[f].append((now, early[f], tuple(sorted(present))))
            if present and now[1] < MAX_LATE_MICROSTEP:
                for i, (s, d, delay) in enumerate(m.links):
                    if s == f and m.late[i] and writes(i, now, m.salt):
                        if delay is None:
                            same.setdefault(d, set()).add(i)
                        else:
                            post(i, now)
    return traces


def late_order(m: Model) -> list[int]:
    """The federates in an order where each late reaction comes after those writing its
    inputs without delay (the late zero-delay links must form no cycle)."""
    ins = {f: {s for i, (s, d, delay) in enumerate(m.links) if d == f and m.late[i] and delay is None}
           for f in range(m.n)}
    order: list[int] = []
    while len(order) < m.n:
        ready = [f for f in range(m.n) if f not in order and ins[f] <= set(order)]
        assert ready, "a causality loop through late reactions"
        order.append(ready[0])
    return order


def acyclic_late(n: int, links: list[tuple[int, int, int | None]], late: list[bool]) -> bool:
    """Whether the late zero-delay links form no cycle."""
    try:
        late_order(Model(n, tuple(links), tuple(late), tuple(frozenset() for _ in range(n)), (0, 0)))
    except AssertionError:
        return False
    return True


class Hang(AssertionError):
    pass


@dataclass
class _Fed:
    me: int
    core: FederateCore
    events: set[TagT]
    inputs: dict[TagT, set[int]] = field(default_factory=dict)
    ticks: set[TagT] = field(default_factory=set)
    current: TagT = (-1, 0)
    #: the tag in progress and the links written at it; None between tags
    tag: TagT | None = None
    phase: int = 0
    written: set[int] = field(default_factory=set)
    present: set[int] = field(default_factory=set)
    early: bool = False
    last_sent: dict[int, TagT] = field(default_factory=dict)
    resigned: bool = False
    blocked: bool = False
    trace: Trace = field(default_factory=list)

    def head(self) -> TagT | None:
        return min((*self.events, *self.inputs, *self.ticks), default=None)


class Federation:
    """The cores of model ``m`` and the messages between them (per channel, in order),
    under a lead window of ``window`` ns (None: none)."""

    def __init__(self, m: Model, *, peer_grants: bool = True, window: int | None = None) -> None:
        self.m = m
        lay = m.layout()
        self.layout = lay
        self.window = window
        self.rti = RtiCore(lay, window)
        self.feds = [_Fed(f, FederateCore(lay, f, peer_grants=peer_grants, fast=True), set(m.events[f]))
                     for f in range(m.n)]
        #: (from, to) -> messages in order; "rti" is one end of the control channels
        self.channels: dict[tuple[Any, Any], deque[Any]] = {}
        self.now = 1_000_000_000
        cps: list[list[int]] = []
        for f, fed in enumerate(self.feds):
            outs = [(EARLY_LEVEL + 1 if not m.late[lk.id] else LATE_LEVEL + 1, lk.id)
                    for lk in lay.links if lk.src == f and lay.cyclic(lk)]
            ins = [(LATE_LEVEL, lk.id) for lk in lay.links if lk.dst == f and lay.cyclic(lk)]
            cps.append(fed.core.checkpoints(outs, ins))
            fed.core.begin(0, window)
        self.checkpoints = cps
        self._grants(self.rti.start(0))

    # -- channels -------------------------------------------------------------------------
    def _put(self, src: Any, dst: Any, msg: Any) -> None:
        self.channels.setdefault((src, dst), deque()).append(msg)

    def _grants(self, grants: list[Grant]) -> None:
        for g in grants:
            self._put("rti", g.federate, g)
        if self.rti.lead.held:  # (as the RTI server does after a batch of reports)
            leads, watches = self.rti.lead.due()
            for f, tag in leads:
                self._put("rti", f, Lead(tag))
            for f, tag in watches:
                self._put("rti", f, Watch(tag))

    def _flush(self, fed: _Fed) -> None:
        core = fed.core
        for msg in core.outbox:
            if isinstance(msg, Promise | StopMark):
                for d in self.layout.downstream(fed.me):
                    self._put(fed.me, d, msg)
            else:
                self._put(fed.me, "rti", msg)
        core.outbox.clear()

    def _send_data(self, fed: _Fed, link: int, tag: TagT, absent: bool = False) -> None:
        lk = self.layout.links[link]
        if absent:
            self._put(fed.me, lk.dst, ("absent", link, tag))
            return
        t = add_delay(tag, link_delay(lk.delay))
        if t <= fed.last_sent.get(link, (-1, 0)):
            t = succ(fed.last_sent[link])
        fed.last_sent[link] = t
        if t <= self.m.stop:
            fed.core.reports.sent_message(lk.dst, t)
            self._put(fed.me, lk.dst, ("data", link, t))

    def pending(self) -> list[tuple[Any, Any]]:
        return [k for k, q in self.channels.items() if q]

    def deliver(self, key: tuple[Any, Any]) -> None:
        src, dst = key
        msg = self.channels[key].popleft()
        if dst == "rti":
            rti = self.rti
            if isinstance(msg, Ltc):
                self._grants(rti.on_ltc(src, msg.tag, msg.net, msg.sent, msg.received))
            elif isinstance(msg, Resign):
                self._grants(rti.on_resign(src, msg.sent, msg.received))
            else:
                raise AssertionError(f"unexpected {msg!r}")
            return
        fed = self.feds[dst]
        fed.blocked = False
        core = fed.core
        if src == "rti":
            if isinstance(msg, Lead):
                core.lead.widen(msg.tag)
            elif isinstance(msg, Watch):
                core.on_watch(msg.tag, fed.head(), self.m.stop, fed.current, self.now)
            else:
                assert isinstance(msg, Grant)
                (core.on_ptag if msg.provisional else core.on_tag)(msg.tag, msg.counts)
        elif isinstance(msg, Promise):
            core.promises.on_promise(src, msg.tag)
        elif isinstance(msg, StopMark):
            core.on_mark(src, msg.tag)
        else:
            kind, link, tag = msg
            if kind == "absent":
                core.cycles.on_absent(link, tag)
                if tag > fed.current:
                    fed.ticks.add(tag)
            else:
                assert core.on_data(src, link, tag)
                if tag == fed.tag and fed.phase <= 1:
                    fed.present.add(link)  # mid-tag, before the late reaction reads it
                elif tag > fed.current:
                    fed.inputs.setdefault(tag, set()).add(link)
                else:
                    raise AssertionError(f"f{dst} got link {link} at {tag} after processing it (now {fed.current})")
        if core.promises.fresh:
            core.grant_from_promises()
            if fed.tag is None and core.passes_promises:
                core.pass_on(fed.head(), self.m.stop, fed.current)
        self._flush(fed)

    # -- a federate's steps -----------------------------------------------------------------
    def runnable(self) -> list[int]:
        return [f.me for f in self.feds if not f.resigned and not f.blocked]

    def step(self, f: int) -> None:
        """Run federate ``f`` until it must wait for a message (or is done)."""
        fed = self.feds[f]
        core = fed.core
        while not fed.resigned:
            self.now += 50_000  # (a step takes real time: reports held back become due)
            if fed.tag is None:
                tag = core.acquire(fed.head(), self.m.stop, self.now)
                self._flush(fed)
                if tag is WAIT:
                    fed.blocked = True
                    return
                assert tag is not None
                self._begin(fed, tag)
            if not self._advance(fed):
                fed.blocked = True
                return

    def _begin(self, fed: _Fed, tag: TagT) -> None:
        assert tag > fed.current, (fed.me, tag, fed.current)
        assert tag <= fed.core.lead.limit, (fed.me, tag, fed.core.lead.limit)
        fed.tag = fed.current = tag
        fed.phase = 0
        fed.early = tag in fed.events
        fed.events.discard(tag)
        fed.ticks.discard(tag)
        fed.present = fed.inputs.pop(tag, set())
        fed.written = set()

    def _advance(self, fed: _Fed) -> bool:
        """Go on with the tag in progress; False when it waits for inputs."""
        m, core, tag = self.m, fed.core, fed.tag
        assert tag is not None
        cps = self.checkpoints[fed.me]
        mine = [lk for lk in self.layout.links if lk.src == fed.me]
        if fed.phase == 0:  # the early reaction
            if fed.early:
                fed.written |= {lk.id for lk in mine if not m.late[lk.id] and writes(lk.id, tag, m.salt)}
            fed.phase = 1
        if fed.phase == 1:  # the checkpoint before the late reaction
            if EARLY_LEVEL + 1 in cps:
                self._cyclic(fed, EARLY_LEVEL + 1)
                if not core.inputs_ready(tag, LATE_LEVEL):
                    return False
            fed.phase = 2
        if fed.phase == 2:  # the late reaction, then the tag's end
            if fed.early or fed.present:
                fed.trace.append((tag, fed.early, tuple(sorted(fed.present))))
            if fed.present and tag[1] < MAX_LATE_MICROSTEP:
                fed.written |= {lk.id for lk in mine if m.late[lk.id] and writes(lk.id, tag, m.salt)}
            if LATE_LEVEL + 1 in cps:
                self._cyclic(fed, LATE_LEVEL + 1)
            for lk in mine:
                if lk.id in fed.written and not self.layout.cyclic(lk):
                    self._send_data(fed, lk.id, tag)
            fed.tag = None
            if tag >= m.stop:
                core.resign(tag)
                fed.resigned = True
            else:
                core.completed(tag, fed.head(), m.stop, self.now)
            self._flush(fed)
        return True

    def _cyclic(self, fed: _Fed, level: int) -> None:
        tag = fed.tag
        assert tag is not None
        for lid in fed.core.cycles.outputs_due(tag, level):
            self._send_data(fed, lid, tag, absent=lid not in fed.written)
        self._flush(fed)

    # -- the run --------------------------------------------------------------------------
    def run(self, choices: list[int], max_steps: int = 20_000) -> list[Trace]:
        """Run to the end, taking the next action (deliver a message, or step a federate)
        by ``choices`` (cycled); raise :class:`Hang` if nothing can move and some federate
        is not done."""
        k = 0
        for _ in range(max_steps):
            acts: list[tuple[str, Any]] = [("deliver", c) for c in self.pending()]
            acts += [("step", f) for f in self.runnable()]
            if not acts:
                if all(f.resigned for f in self.feds):
                    return [f.trace for f in self.feds]
                # Time passes: a report held back becomes due; every federate looks again.
                self.now += 1_000_000_000
                for f in self.feds:
                    f.blocked = False
                self.step_all_once()
                if all(f.resigned for f in self.feds):
                    continue
                if not self.pending() and not self.runnable():
                    raise Hang(self.describe())
                continue
            # (+ k: every action is taken sooner or later, whatever the choices: a real
            # federate runs while promises go back and forth)
            kind, x = acts[(choices[k % len(choices)] + k) % len(acts)] if choices else acts[k % len(acts)]
            k += 1
            if kind == "deliver":
                self.deliver(x)
            else:
                self.step(x)
        raise Hang(f"no end after {max_steps} steps: " + self.describe())

    def step_all_once(self) -> None:
        for f in self.feds:
            if not f.resigned:
                self.step(f.me)

    def describe(self) -> str:
        return "; ".join(
            f"f{f.me}: current {f.current}, in tag {f.tag} phase {f.phase}, head {f.head()}, "
            f"grant {f.core.grant}, ptag {f.core.ptag}, resigned {f.resigned}"
            for f in self.feds
        )
