"""reactorfed.time.tag: the Tag type, and the tag arithmetic (delay_tag, succ, pred, add_delay)
with its one saturation rule (the module docstring): FOREVER saturates, NEVER stays NEVER,
microsteps neither wrap nor saturate."""

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from reactorfed import FOREVER, NEVER, Tag
from reactorfed.time.tag import (
    FOREVER_TAG,
    MAX_MICROSTEP,
    NEVER_TAG,
    ZERO_TAG,
    TagT,
    add_delay,
    delay_tag,
    pred,
    succ,
)

MAX = MAX_MICROSTEP


def test_tags_order_lexicographically():
    assert Tag(1, 0) < Tag(1, 1) < Tag(2, 0)
    assert Tag(5, 9) < Tag(6, 0)
    assert sorted([Tag(2, 0), Tag(1, 3), Tag(1, 0)]) == [Tag(1, 0), Tag(1, 3), Tag(2, 0)]
    assert NEVER_TAG < ZERO_TAG < FOREVER_TAG
    assert Tag(3) == Tag(3, 0) == (3, 0)


def test_times_are_integers():
    assert isinstance(Tag(1, 0).time, int)
    assert NEVER == -(2**63) and FOREVER == 2**63 - 1


def test_zero_delay_advances_the_microstep():
    assert Tag(10, 2).delayed(0) == Tag(10, 3)
    assert delay_tag((10, 2), 0) == (10, 3)


def test_positive_delay_advances_time_and_resets_the_microstep():
    assert Tag(10, 2).delayed(5) == Tag(15, 0)


def test_delay_saturates_at_forever_and_never_stays_never():
    assert Tag(FOREVER - 1, 0).delayed(10) == FOREVER_TAG
    assert NEVER_TAG.delayed(10) == NEVER_TAG


def test_relative_to_and_repr():
    assert Tag(1_000_010, 3).relative_to(1_000_000) == Tag(10, 3)
    assert repr(Tag(7, 1)) == "Tag(7, 1)"
    assert repr(NEVER_TAG) == "Tag(NEVER)"
    assert repr(FOREVER_TAG) == "Tag(FOREVER)"


def test_str_is_lf_pythons_form():
    """reactor-c's python_tag.c (Tag_str): ``Tag(time=..., microstep=...)``, what LF's
    Python programs print and parse (TagString.lf); f-strings use it too."""
    assert str(Tag(7, 1)) == "Tag(time=7, microstep=1)"
    assert f"{Tag(0, 0)}" == "Tag(time=0, microstep=0)"
    assert str(NEVER_TAG) == f"Tag(time={NEVER}, microstep=0)"


# -- the arithmetic at normal values -------------------------------------------------------
def test_arithmetic_at_normal_values():
    assert delay_tag((10, 2), 5) == (15, 0)
    assert delay_tag((10, 2), 0) == (10, 3)
    assert succ((10, 2)) == (10, 3)
    assert pred((10, 2)) == (10, 1)
    assert pred((10, 0)) == (9, MAX)
    assert add_delay((10, 4), (0, 0)) == (10, 4)  # no delay
    assert add_delay((10, 4), (0, 1)) == (10, 5)  # after 0
    assert add_delay((10, 4), (0, 3)) == (10, 7)  # three "after 0" links in a row
    assert add_delay((10, 4), (5, 0)) == (15, 0)  # after 5: the microstep is lost
    assert add_delay((10, 4), (5, 2)) == (15, 2)  # after 5 then after 0 twice
    assert ZERO_TAG.delayed(0) == Tag(0, 1)
    assert pred(ZERO_TAG) == (-1, MAX)


def test_results_are_bare_tuples():
    """The scheduler and the federation keep bare tuples (a Tag in, a tuple out)."""
    for out in (delay_tag(Tag(1, 0), 2), delay_tag(Tag(1, 0), 0), succ(Tag(1, 0)), pred(Tag(1, 0)),
                add_delay(Tag(1, 0), (2, 0)), delay_tag(Tag(FOREVER - 1, 0), 5), pred(FOREVER_TAG)):
        assert type(out) is tuple
    assert delay_tag(Tag(FOREVER - 1, 0), 5) == FOREVER_TAG


# -- the edges: FOREVER saturates ----------------------------------------------------------
def test_a_time_reaching_forever_saturates():
    assert delay_tag((FOREVER - 5, 3), 5) == FOREVER_TAG  # exactly FOREVER: FOREVER_TAG
    assert delay_tag((FOREVER - 5, 3), 4) == (FOREVER - 1, 0)
    assert delay_tag((1, 0), FOREVER) == FOREVER_TAG  # past it: never wraps
    assert delay_tag((FOREVER - 1, 0), 2**70) == FOREVER_TAG
    assert add_delay((FOREVER - 5, 3), (5, 0)) == FOREVER_TAG
    assert add_delay((FOREVER - 5, 3), (4, 7)) == (FOREVER - 1, 7)
    assert add_delay((1, 0), (FOREVER, 1)) == FOREVER_TAG


def test_a_tag_at_forever_counts_as_forever_tag():
    for t in (FOREVER_TAG, (FOREVER, 0), (FOREVER, 5)):
        assert delay_tag(t, 0) == FOREVER_TAG
        assert delay_tag(t, 7) == FOREVER_TAG
        assert succ(t) == FOREVER_TAG
        assert pred(t) == FOREVER_TAG
        assert add_delay(t, (0, 0)) == FOREVER_TAG
        assert add_delay(t, (0, 1)) == FOREVER_TAG
        assert add_delay(t, (3, 1)) == FOREVER_TAG


def test_delay_zero_at_forever_no_longer_passes_forever_tag():
    """A behaviour change: delay_tag checked a zero delay before FOREVER, so FOREVER_TAG
    delayed by 0 was (FOREVER, 2**32), past FOREVER_TAG, and (FOREVER, 0) gave (FOREVER, 1).
    reactor-c's lf_delay_tag (and now this) gives FOREVER_TAG."""
    assert delay_tag(FOREVER_TAG, 0) == FOREVER_TAG
    assert FOREVER_TAG.delayed(0) == FOREVER_TAG
    assert delay_tag((FOREVER, 0), 0) == FOREVER_TAG


# -- the edges: NEVER stays NEVER ----------------------------------------------------------
def test_never_stays_never():
    for t in (NEVER_TAG, (NEVER, 3)):
        assert delay_tag(t, 0) == t
        assert delay_tag(t, 10) == t
        assert delay_tag(t, FOREVER) == t
        assert succ(t) == t
        assert add_delay(t, (0, 1)) == t
        assert add_delay(t, (10, 0)) == t
    assert pred(NEVER_TAG) == NEVER_TAG  # nothing is before it
    assert pred((NEVER, 3)) == (NEVER, 2)
    assert pred((NEVER + 1, 0)) == (NEVER, MAX)
    assert delay_tag((NEVER + 1, 0), 0) == (NEVER + 1, 1)  # just after NEVER: ordinary


def test_add_delay_keeps_never():
    """A behaviour change (layout.add_delay is this one now): a tag at NEVER with a time
    delay gave (NEVER + d, 0), and a microstep delay (NEVER, m + dm)."""
    assert add_delay(NEVER_TAG, (5, 0)) == NEVER_TAG
    assert add_delay(NEVER_TAG, (0, 1)) == NEVER_TAG


# -- the edges: microsteps neither wrap nor saturate ---------------------------------------
def test_the_largest_microstep_is_not_a_cap():
    """reactor-c wraps the uint32 microstep (lf_delay_tag) or gives FOREVER_TAG (lf_tag_add);
    both would put (t, MAX) + 1 microstep after (t + 1, 0). Here it is (t, MAX + 1)."""
    assert delay_tag((7, MAX), 0) == (7, MAX + 1)
    assert succ((7, MAX)) == (7, MAX + 1)
    assert (7, MAX) < succ((7, MAX)) < (8, 0) < FOREVER_TAG
    assert pred(succ((7, MAX))) == (7, MAX)
    assert delay_tag((7, MAX), 3) == (10, 0)


def test_add_delay_no_longer_clamps_the_microstep():
    """A behaviour change: layout.add_delay clamped (t, m + dm) at MAX, so a microstep delay
    could give the same tag back: (3, MAX) after 0 was (3, MAX)."""
    assert add_delay((3, MAX), (0, 1)) == (3, MAX + 1) > (3, MAX)
    assert add_delay((3, MAX - 1), (0, 5)) == (3, MAX + 4)
    assert add_delay((3, MAX), (0, 1)) == succ((3, MAX))


def test_negative_delays_are_refused():
    with pytest.raises(AssertionError):
        delay_tag((1, 0), -1)


# -- properties ----------------------------------------------------------------------------
EDGE_TIMES = [NEVER, NEVER + 1, NEVER + 2, -1, 0, 1, FOREVER - 2, FOREVER - 1, FOREVER]
EDGE_MICROSTEPS = [0, 1, 2, MAX - 1, MAX, MAX + 1]
times = st.one_of(st.sampled_from(EDGE_TIMES), st.integers(NEVER, FOREVER), st.integers(-100, 100))
microsteps = st.one_of(st.sampled_from(EDGE_MICROSTEPS), st.integers(0, MAX + 1), st.integers(0, 5))
#: any tag, the edges included (a microstep up to MAX + 1: one past reactor-c's largest)
tags = st.tuples(times, microsteps)
#: a tag neither at NEVER nor at FOREVER
inner = st.tuples(st.one_of(st.sampled_from(EDGE_TIMES[1:-1]), st.integers(NEVER + 1, FOREVER - 1)), microsteps)
ns = st.one_of(st.sampled_from([0, 1, 2, FOREVER - 1, FOREVER, 2**64]), st.integers(0, FOREVER), st.integers(0, 10))
delays = st.tuples(ns, st.one_of(st.integers(0, 3), st.sampled_from([MAX, MAX + 1])))
PROPS = settings(max_examples=500, deadline=None)


def _le(a: TagT, b: TagT) -> tuple[TagT, TagT]:
    return (a, b) if a <= b else (b, a)


@PROPS
@given(inner)
def test_pred_undoes_succ(t):
    assert pred(succ(t)) == t
    if t[1] > 0:
        assert succ(pred(t)) == t


@PROPS
@given(tags)
def test_succ_is_a_zero_delay(t):
    assert succ(t) == delay_tag(t, 0) == add_delay(t, (0, 1))


@PROPS
@given(tags, ns)
def test_add_delay_of_a_time_is_delay_tag(t, d):
    assume(d > 0)
    assert add_delay(t, (d, 0)) == delay_tag(t, d)


@PROPS
@given(tags)
def test_no_delay_is_no_change(t):
    assume(t[0] < FOREVER)
    assert add_delay(t, (0, 0)) == t


@PROPS
@given(tags, ns, delays)
def test_nothing_passes_forever_tag_or_goes_back(t, d, dd):
    assume(t[0] < FOREVER or t[1] <= MAX)  # (FOREVER, past MAX) is past FOREVER_TAG already
    for out in (delay_tag(t, d), succ(t), add_delay(t, dd)):
        assert t <= out <= FOREVER_TAG or t[0] == NEVER == out[0]
    assert pred(t) <= FOREVER_TAG
    assert pred(t) <= t or t[0] == FOREVER  # a tag at FOREVER counts as FOREVER_TAG


@PROPS
@given(tags, ns)
def test_a_delay_gives_a_later_tag(t, d):
    """Strictly later, unless at NEVER (stays) or FOREVER_TAG (saturated)."""
    assume(t[0] != NEVER and t != FOREVER_TAG and t < FOREVER_TAG)
    assert delay_tag(t, d) > t
    assert succ(t) > t
    assert add_delay(t, (0, 1)) > t


@PROPS
@given(tags, tags)
def test_pred_is_the_largest_tag_before(t, u):
    """pred(t) < t, and every tag before t (microstep at most MAX) is at most pred(t)."""
    assume(t[1] <= MAX and u[1] <= MAX)
    assume(t != NEVER_TAG and t[0] < FOREVER)
    assert pred(t) < t
    if u < t:
        assert u <= pred(t)


@PROPS
@given(tags, tags, ns, delays)
def test_monotone(a, b, d, dd):
    a, b = _le(a, b)
    assert delay_tag(a, d) <= delay_tag(b, d)
    assert succ(a) <= succ(b)
    assert add_delay(a, dd) <= add_delay(b, dd)
    if a[1] <= MAX + 1 and b[1] <= MAX + 1:
        assert pred(a) <= pred(b)


@PROPS
@given(tags, ns, ns, delays, delays)
def test_monotone_in_the_delay(t, d1, d2, e1, e2):
    """A longer delay never gives an earlier tag (path delays are ordered lexicographically:
    layout's shortest paths rely on it)."""
    d1, d2 = sorted((d1, d2))
    e1, e2 = _le(e1, e2)
    assert delay_tag(t, d1) <= delay_tag(t, d2)
    assert add_delay(t, e1) <= add_delay(t, e2)
