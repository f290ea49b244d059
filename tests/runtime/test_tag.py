from reactorfed import FOREVER, NEVER, Tag
from reactorfed.tag import FOREVER_TAG, NEVER_TAG, ZERO_TAG, delay_tag


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
