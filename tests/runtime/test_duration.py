import pytest

from reactorfed import format_duration, hours, minutes, ms, ns, parse_duration, sec, us


def test_helpers_give_integer_nanoseconds():
    assert ns(7) == 7
    assert us(3) == 3_000
    assert ms(10) == 10_000_000
    assert sec(2) == 2_000_000_000
    assert minutes(1) == 60_000_000_000
    assert hours(1) == 3_600_000_000_000
    assert all(isinstance(x, int) for x in (ns(1), us(1), ms(1), sec(1), minutes(1), hours(1)))


@pytest.mark.parametrize(
    ("text", "value"),
    [("5s", 5_000_000_000), ("10 ms", 10_000_000), ("250us", 250_000), ("0", 0), ("3 min", 180_000_000_000),
     ("2h", 7_200_000_000_000), ("42 nsec", 42), (" 1 sec ", 1_000_000_000), ("7MS", 7_000_000)],
)
def test_parse_duration(text, value):
    assert parse_duration(text) == value


@pytest.mark.parametrize(("text", "words"), [("1.5s", "not a duration"), ("5", "needs a unit"), ("5 parsecs", "unknown time unit"), ("-1s", "not a duration"), ("", "not a duration")])
def test_parse_duration_refuses_what_is_not_a_whole_duration(text, words):
    with pytest.raises(ValueError, match=words):
        parse_duration(text)


def test_format_duration_uses_the_largest_exact_unit():
    assert format_duration(0) == "0"
    assert format_duration(ms(1500)) == "1500 ms"
    assert format_duration(sec(3)) == "3 s"
    assert format_duration(minutes(2)) == "2 min"
    assert format_duration(hours(1)) == "1 h"
    assert format_duration(us(5)) == "5 us"
    assert format_duration(1001) == "1001 ns"


def test_format_then_parse_round_trips():
    for d in (0, 1, us(5), ms(1500), sec(3), minutes(2), hours(1), 123_456_789):
        assert parse_duration(format_duration(d)) == d


@pytest.mark.parametrize("helper", [ns, us, ms, sec, minutes, hours])
@pytest.mark.parametrize("value", [1.5, 2.0, "3", True])
def test_helpers_refuse_anything_but_whole_numbers(helper, value):
    with pytest.raises(TypeError, match="time is never a float"):
        helper(value)


def test_helpers_accept_numpy_integers():
    import numpy as np

    assert ms(np.int64(3)) == 3_000_000
    assert type(ms(np.int64(3))) is int
