"""RtiCore's EIMTs over deep layouts (rti_bounds): long chains, DAGs, lines of cycles
(zero-delay ones included), a learner's loop between chains, against the straightforward
algorithm call for call (``test_rti_core.NaiveRti``, the reference).

The core follows a change of a federate's bound from component to component and stops
where a bound does not move; what could go wrong is a change that stops too early or
moves a term wrongly deep down a chain. The small random layouts of ``test_rti_core``
rarely have more than three components in a row; these have up to 24."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from reactorfed.federation.coordination.layout import Layout, add_delay, link_delay
from reactorfed.federation.coordination.rti_core import FOREVER_T, RtiCore

from .test_layout import lay
from .test_rti_core import _TAG, START, NaiveRti, _exact, _state, calls

_DELAY = st.sampled_from([None, None, None, 0, 0, 1, 3])
Edge = tuple[int, int, int | None]


def _chain(draw: st.DrawFn) -> tuple[int, list[Edge]]:
    n = draw(st.integers(2, 24))
    return n, [(i, i + 1, draw(_DELAY)) for i in range(n - 1)]


def _dag(draw: st.DrawFn) -> tuple[int, list[Edge]]:
    n = draw(st.integers(2, 16))
    edges: list[Edge] = []
    for i in range(1, n):
        for s in draw(st.lists(st.integers(max(0, i - 4), i - 1), min_size=1, max_size=3, unique=True)):
            edges.append((s, i, draw(_DELAY)))
    return n, edges


def _cycles(draw: st.DrawFn) -> tuple[int, list[Edge]]:
    """A line of components, each a cycle of one to three federates (a self-link for one,
    or none) or a federate alone, each linked to the next."""
    n, edges, prev = 0, [], None
    for k in draw(st.lists(st.integers(1, 3), min_size=2, max_size=8)):
        members = list(range(n, n + k))
        n += k
        if k > 1 or draw(st.booleans()):
            edges += [(a, b, draw(_DELAY)) for a, b in zip(members, members[1:] + members[:1], strict=True)]
        if prev is not None:
            edges.append((draw(st.sampled_from(prev)), draw(st.sampled_from(members)), draw(_DELAY)))
        prev = members
    return n, edges


def _loop(draw: st.DrawFn) -> tuple[int, list[Edge]]:
    """A chain into a learner and its samplers (a broadcast, answers after 0 or another
    delay), and a chain out of it."""
    before, workers, after = draw(st.integers(0, 4)), draw(st.integers(1, 5)), draw(st.integers(0, 4))
    edges: list[Edge] = [(i, i + 1, draw(_DELAY)) for i in range(before)]
    hub = before
    out, back = draw(_DELAY), draw(st.sampled_from([0, 0, 1, None]))
    for w in range(hub + 1, hub + 1 + workers):
        edges += [(hub, w, out), (w, hub, back)]
    n = hub + 1 + workers
    tail = draw(st.sampled_from(range(hub, n)))
    for i in range(after):
        edges.append((tail if i == 0 else n - 1, n, draw(_DELAY)))
        n += 1
    return n, edges


@st.composite
def deep_layouts(draw: st.DrawFn) -> Layout:
    n, edges = draw(st.sampled_from([_chain, _chain, _dag, _cycles, _loop]))(draw)
    # and a few links anywhere: across the line (more paths), back (longer cycles), to itself
    extra = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), _DELAY), max_size=3))
    return lay(n, *edges, *extra)


@st.composite
def reports(draw: st.DrawFn, layout: Layout) -> tuple[Any, ...]:
    """A report as a federate of ``layout`` makes it: messages sent on its links, received
    on its links (cumulative counts, mostly growing, not always)."""
    n = len(layout.names)
    f = draw(st.integers(0, n - 1))
    downs, ups = sorted(layout.downstream(f)), sorted(layout.direct_upstream(f))
    count = st.integers(0, 6)
    sent = {d: [draw(count), *draw(_TAG)] for d in (draw(st.lists(st.sampled_from(downs), unique=True)) if downs else [])}
    received = {u: draw(count) for u in (draw(st.lists(st.sampled_from(ups), unique=True)) if ups else [])}
    regrant = draw(st.integers(0, 3)) > 0
    kind = draw(st.integers(0, 9))
    if kind < 6:
        return ("on_ltc", f, draw(_TAG), draw(_TAG), sent, received, regrant)
    if kind < 9:
        return ("on_net", f, draw(_TAG), sent, received, regrant)
    return ("on_resign", f, sent, received, regrant)


def _same(new: RtiCore, old: NaiveRti, call: tuple[Any, ...]) -> None:
    name, *args = call
    n = len(new.feds)
    if name == "agree_stop":  # a request every live federate answers at once
        f, tag = args
        for c in (new, old):
            c.on_stop_request(f, tag)
            for i in range(n):
                if not c.feds[i].resigned:
                    c.on_stop_reply(i, tag)
    else:
        assert _exact(getattr(new, name)(*args)) == _exact(getattr(old, name)(*args)), call
    assert _state(new) == _state(old), call


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_deep_layouts_make_the_same_grants_as_the_straightforward_algorithm(data: st.DataObject) -> None:
    layout = data.draw(deep_layouts())
    n = len(layout.names)
    new, old = RtiCore(layout), NaiveRti(layout)
    new.start(START)
    old.start(START)
    assert _state(new) == _state(old)
    step = st.one_of(reports(layout), reports(layout), reports(layout), calls(n))
    for call in data.draw(st.lists(step, min_size=5, max_size=60)):
        _same(new, old, call)


def test_a_chain_that_advances_tag_by_tag_makes_the_same_grants() -> None:
    """A chain of 40 stepping 30 tags as the federates report them (each completes a tag
    having received its upstream's message and sent its own, at the tag it arrives at),
    in an order that runs the head ahead of the tail: every report moves bounds, few far."""
    n = 40
    delays = [None if i % 3 else 0 for i in range(n - 1)]
    layout = lay(n, *((i, i + 1, d) for i, d in enumerate(delays)))
    new, old = RtiCore(layout), NaiveRti(layout)
    new.start(START)
    old.start(START)
    done = [0] * n  # tags each has completed
    k = 0
    while done[-1] < 30:
        for f in range(n):
            # the head runs up to 3 tags ahead of the next; each follows its upstream
            ahead = done[0] < done[1] + 3 if f == 0 else done[f] < done[f - 1]
            if done[f] < 30 and ahead:
                t = done[f]
                net = (START + t + 1, 0) if f == 0 else FOREVER_T
                sent = {f + 1: [t + 1, *add_delay((START + t, 0), link_delay(delays[f]))]} if f + 1 < n else {}
                received = {f - 1: t + 1} if f > 0 else {}
                _same(new, old, ("on_ltc", f, (START + t, 0), net, sent, received, k % 2 == 0))
                done[f] += 1
                k += 1
        _same(new, old, ("regrant", list(range(n))))
