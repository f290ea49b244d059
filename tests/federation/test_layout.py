"""layout: path delays over transitive paths, zero-delay cycles, and the program digest."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from reactorfed import Input, Output, Reactor, bank, ms, reaction
from reactorfed.federation.coordination.layout import Layout, Link, add_delay, compose, link_delay
from reactorfed.federation.process.runner import layout_of
from reactorfed.time import tag
from reactorfed.time.tag import FOREVER, NEVER

from .programs import OtherPipeline, Pipeline

NONE = (0, 0)
AFTER0 = (0, 1)


def lay(n: int, *edges: tuple[int, int, int | None]) -> Layout:
    links = [Link(i, s, d, delay, f"f{s}.out{i}", f"f{d}.in{i}") for i, (s, d, delay) in enumerate(edges)]
    out = Layout([f"f{i}" for i in range(n)], links)
    out._closure()
    return out


def test_link_delays_and_composition() -> None:
    assert link_delay(None) == NONE
    assert link_delay(0) == AFTER0
    assert link_delay(ms(5)) == (ms(5), 0)
    assert compose(AFTER0, AFTER0) == (0, 2)
    assert compose((5, 0), AFTER0) == (5, 1)
    assert compose(AFTER0, (5, 0)) == (5, 0)  # a delay resets the microstep
    assert compose((5, 3), (7, 0)) == (12, 0)
    assert compose((5, 3), NONE) == (5, 3)
    assert add_delay((10, 4), (5, 1)) == (15, 1)
    assert add_delay((10, 4), (0, 2)) == (10, 6)
    assert add_delay((10, 4), NONE) == (10, 4)
    assert add_delay((FOREVER - 3, 0), (5, 0))[0] == FOREVER  # saturates, never wraps
    assert add_delay((FOREVER, 0), AFTER0)[0] == FOREVER
    # reactorfed.time.tag's rule (add_delay is tag.add_delay): the microstep is not clamped, so
    # a microstep delay still gives a later tag (it gave (3, 2**32 - 1), the same tag), and
    # NEVER stays NEVER (it gave (NEVER + 5, 0)).
    assert add_delay is tag.add_delay
    assert add_delay((3, 2**32 - 1), AFTER0) == (3, 2**32)
    assert add_delay((NEVER, 0), (5, 0)) == (NEVER, 0)


_times = st.one_of(st.integers(-(2**63), 2**63 - 1), st.sampled_from([-(2**63), 0, 2**63 - 2, 2**63 - 1]))
_delays = st.tuples(st.one_of(st.integers(0, 10), st.integers(0, 2**63)), st.integers(0, 4))


@settings(max_examples=500, deadline=None)
@given(st.tuples(_times, st.integers(0, 2**32)), _delays, _delays)
def test_a_composed_delay_adds_as_its_parts(t: tuple[int, int], a: tuple[int, int], b: tuple[int, int]) -> None:
    """A path's delay applied at once is its links' delays applied one after the other,
    the edges (NEVER, FOREVER) included: compose and add_delay agree."""
    assert add_delay(t, compose(a, b)) == add_delay(add_delay(t, a), b)


def test_transitive_path_delays() -> None:
    # 0 -after 5-> 1 -none-> 2 -after 0-> 3
    ly = lay(4, (0, 1, 5), (1, 2, None), (2, 3, 0))
    assert ly.path[0] == {1: (5, 0), 2: (5, 0), 3: (5, 1)}
    assert ly.path[1] == {2: NONE, 3: AFTER0}
    assert ly.upstream(3) == {0: (5, 1), 1: AFTER0, 2: AFTER0}
    assert ly.upstream(0) == {}
    assert ly.direct_upstream(3) == {2}
    assert ly.downstream(0) == {1}


def test_microsteps_add_up_along_after_0_paths() -> None:
    ly = lay(4, (0, 1, 0), (1, 2, 0), (2, 3, 0))
    assert ly.upstream(3) == {0: (0, 3), 1: (0, 2), 2: AFTER0}


def test_the_smallest_delay_of_parallel_paths() -> None:
    # 0 -after 10-> 2 directly, and 0 -none-> 1 -after 3-> 2
    ly = lay(3, (0, 2, 10), (0, 1, None), (1, 2, 3))
    assert ly.upstream(2) == {0: (3, 0), 1: (3, 0)}
    # microsteps only matter between equal times: after 0 twice beats after 1 ns
    ly = lay(3, (0, 2, 1), (0, 1, 0), (1, 2, 0))
    assert ly.upstream(2)[0] == (0, 2)
    # two links between the same pair: the smaller counts
    ly = lay(2, (0, 1, 7), (0, 1, None))
    assert ly.upstream(1) == {0: NONE}


def _floyd_warshall(n: int, links: list[Link]) -> list[dict[int, tuple[int, int]]]:
    """The all-pairs smallest path delays the plain way: the oracle for Layout's Dijkstra."""
    path: list[dict[int, tuple[int, int]]] = [{} for _ in range(n)]
    for lk in links:
        d = link_delay(lk.delay)
        if lk.dst not in path[lk.src] or d < path[lk.src][lk.dst]:
            path[lk.src][lk.dst] = d
    for k in range(n):
        for i in range(n):
            if k not in path[i]:
                continue
            for j, kj in list(path[k].items()):
                d = compose(path[i][k], kj)
                if j not in path[i] or d < path[i][j]:
                    path[i][j] = d
    return path


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 9).flatmap(lambda n: st.tuples(st.just(n), st.lists(
    st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.sampled_from([None, 0, 1, 2, 5, 10**6])),
    max_size=3 * n))))  # fmt: skip
def test_path_delays_equal_floyd_warshall(graph: tuple[int, list[tuple[int, int, int | None]]]) -> None:
    """Every pair's smallest path delay, cycles and self-links included, is what the
    all-pairs algorithm finds."""
    n, edges = graph
    ly = lay(n, *edges)
    assert ly.path == _floyd_warshall(n, ly.links)


def test_zero_delay_cycles() -> None:
    # 0 <-> 1 with no delay; 2 -> 0 feeds the cycle; 1 -> 3 -after 0-> 1: a cycle with a delay
    ly = lay(4, (0, 1, None), (1, 0, None), (2, 0, None), (1, 3, None), (3, 1, 0))
    assert ly.scc[0] == ly.scc[1] == frozenset({0, 1})
    assert ly.scc[2] == frozenset({2})
    assert ly.scc[3] == frozenset({3})  # its cycle has a delay
    assert [ly.cyclic(lk) for lk in ly.links] == [True, True, False, False, False]
    # a federate on a cycle is among its own upstream, with the cycle's delay
    assert ly.upstream(0)[0] == NONE
    assert ly.upstream(3)[3] == AFTER0
    assert 2 not in ly.upstream(2)


def test_a_three_federate_zero_delay_ring() -> None:
    ly = lay(3, (0, 1, None), (1, 2, None), (2, 0, None))
    assert all(ly.scc[i] == frozenset({0, 1, 2}) for i in range(3))
    assert all(ly.cyclic(lk) for lk in ly.links)
    # one delayed link breaks the zero-delay cycle
    ly = lay(3, (0, 1, None), (1, 2, None), (2, 0, ms(1)))
    assert all(ly.scc[i] == frozenset({i}) for i in range(3))
    assert ly.upstream(0) == {0: (ms(1), 0), 1: (ms(1), 0), 2: (ms(1), 0)}


def test_layout_of_a_program() -> None:
    ly = layout_of(Pipeline(after=ms(2)))
    assert ly.names == ["src", "relay", "sink"]
    assert [(lk.src, lk.dst, lk.delay) for lk in ly.links] == [(0, 1, None), (1, 2, ms(2))]
    assert ly.upstream(2) == {0: (ms(2), 0), 1: (ms(2), 0)}


class Member(Reactor):
    out = Output(int)
    inp = Input(int)

    @reaction(triggers=[inp], effects=[out])
    def go(self, inp: object, out: object) -> None:
        pass


class Ring(Reactor):
    def __init__(self, n: int = 3) -> None:
        self.m = bank(Member, n)
        for i in range(n):
            self.connect(self.m[i].out, self.m[(i + 1) % n].inp, after=ms(1) if i == n - 1 else None)


def test_bank_members_are_federates() -> None:
    ly = layout_of(Ring(3))
    assert ly.names == ["m[0]", "m[1]", "m[2]"]
    assert ly.upstream(0) == {0: (ms(1), 0), 1: (ms(1), 0), 2: (ms(1), 0)}


def test_the_digest_names_the_program() -> None:
    a, b = layout_of(Pipeline()), layout_of(Pipeline())
    assert a.digest == b.digest and len(a.digest) == 32
    assert layout_of(OtherPipeline()).digest != a.digest  # same federates, another delay
    assert layout_of(Pipeline(after=0)).digest != a.digest
    assert layout_of(Ring(3)).digest != layout_of(Ring(4)).digest


class _Watcher(Reactor):
    inp = Input(int)
    late = Input(int)

    @reaction(triggers=[inp, late])
    def see(self, inp: object, late: object) -> None:
        pass


class Mixed(Reactor):
    """Zero-delay, delayed and physical links, an elastic bank, a declared maxwait and an
    absent_after: every part of a layout's data."""

    def __init__(self) -> None:
        from reactorfed.model.elastic import Elastic, elastic_bank
        from reactorfed.model.maxwait import maxwait

        from .elastic_programs import Sampler, Trainer

        self.learner = Trainer()
        self.samplers = elastic_bank(Sampler, Elastic(min=1, max=3, initial=2))
        self.connect(self.samplers.out, self.learner.ins)
        self.ring = bank(Member, 2)
        self.connect(self.ring[0].out, self.ring[1].inp)
        self.connect(self.ring[1].out, self.ring[0].inp, after=0)
        self.watch = _Watcher()
        self.connect(self.ring[0].out, self.watch.inp, physical=True, after=ms(1))
        self.connect(self.ring[1].out, self.watch.late, absent_after=ms(2))
        maxwait(self.watch, ms(5))


def _same(a: Layout, b: Layout) -> None:
    assert (a.names, a.links, a.physical, a.elastic, a.maxwait, a.digest) == (
        b.names, b.links, b.physical, b.elastic, b.maxwait, b.digest)
    assert (a.path, a.scc) == (b.path, b.scc)
    assert [a.elastic_of(f) for f in range(len(a.names))] == [b.elastic_of(f) for f in range(len(b.names))]
    assert a.initial_members() == b.initial_members()


def test_a_layout_read_back_from_its_json_is_the_same_layout() -> None:
    """What ``reactorfed rti --layout`` serves: the same federates, links, banks, paths
    and digest as the program's own layout (through a JSON text, as the file holds it)."""
    import json

    from .elastic_programs import Main as Elastic

    for program in (Pipeline(after=ms(2)), Ring(3), Elastic()):
        ly = layout_of(program)
        _same(Layout.from_json(json.loads(json.dumps(ly.json()))), ly)


def test_every_part_of_a_layout_survives_its_json() -> None:
    import json

    ly = layout_of(Mixed())
    assert ly.physical and ly.elastic and any(lk.absent_after for lk in ly.links) and min(ly.maxwait) < FOREVER
    _same(Layout.from_json(json.loads(json.dumps(ly.json()))), ly)


def test_a_malformed_layout_is_refused_naming_what_is_wrong() -> None:
    import pytest

    from reactorfed.errors import ValidationError

    good = layout_of(Pipeline()).json()
    cases = {
        "format": ({**good, "format": 99}, "format 99"),
        "federates": ({**good, "federates": ["a", "a", "b"]}, "'federates' must be distinct"),
        "digest": ({**good, "digest": 7}, "'digest' must be a str"),
        "maxwait": ({**good, "maxwait": [0]}, "'maxwait' must be 3 durations"),
        "links": ({**good, "links": [[0, 0, 5, None, "a", "b", 0]]}, "links[0] must be"),
        "elastic": ({**good, "elastic": [{"name": "s", "slots": [0], "min": 2, "max": 1, "initial": 1}]},
                    "elastic[0] must be"),
        "ids": ({**good, "physical": [good["links"][0]]}, "link ids must be distinct"),
        "slots": ({**good, "elastic": [{"name": "s", "slots": [0, 0], "min": 1, "max": 2, "initial": 1}]},
                  "a federate is a slot of two elastic banks"),
    }
    for data, says in cases.values():
        with pytest.raises(ValidationError, match=re.escape(f"prog.json: {says}")):
            Layout.from_json(data, "prog.json")
    with pytest.raises(ValidationError, match="expected a JSON object"):
        Layout.from_json([], "prog.json")
