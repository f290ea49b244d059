"""protocol.parse: every message type round-trips, typed messages as the positional
arrays they replaced; anything else is a ProtocolError."""

from __future__ import annotations

import contextlib
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reactorfed.federation.wire import data as D
from reactorfed.federation.wire import kinds as K
from reactorfed.federation.wire import protocol as P

I64 = st.integers(-(2**63), 2**63 - 1)
U64 = st.integers(0, 2**63 - 1)

FIELD: dict[str, st.SearchStrategy[Any]] = {
    "i": I64,
    "u": U64,
    "s": st.text(max_size=40),
    "b16": st.binary(min_size=16, max_size=16),
    "b32": st.binary(min_size=32, max_size=32),
    "counts": st.dictionaries(U64, U64, max_size=5),
    "sent": st.dictionaries(U64, st.tuples(U64, I64, U64).map(list), max_size=5),
    "peers": st.dictionaries(U64, st.text(max_size=30), max_size=5),
    "keys": st.dictionaries(U64, st.binary(min_size=32, max_size=32), max_size=5),
    "bin": st.binary(max_size=40),
    "items": st.lists(st.lists(U64, min_size=1, max_size=4), min_size=1, max_size=4),
    "bool": st.booleans(),
    "changes": st.lists(st.tuples(U64, st.booleans()).map(list), min_size=1, max_size=5),
    "ints": st.lists(U64, max_size=5),
    "tags": st.dictionaries(U64, st.tuples(I64, U64).map(list), max_size=3),
    "u?": st.none() | U64,
    "figures": st.dictionaries(st.text(min_size=1, max_size=K.MAX_NAME),
                               I64 | st.floats(allow_nan=False, allow_infinity=False), max_size=K.MAX_FIGURES),
    "any": st.recursive(st.none() | st.integers(-(2**63), 2**64 - 1) | st.text(max_size=10) | st.binary(max_size=10),
                        lambda c: st.lists(c, max_size=4), max_leaves=8),
}

# A value of each field kind that is NOT acceptable for it.
WRONG: dict[str, list[Any]] = {
    "i": [2**63, 2**64 - 1, True, 1.0, "1", None, b"1", [1]],
    "u": [-1, 2**63, 2**64 - 1, False, 0.0, "0", None],
    "s": [b"abc", 1, None, "x" * 4097, ["a"]],
    "b16": [b"\0" * 15, b"\0" * 17, "x" * 16, None, 16],
    "b32": [b"\0" * 31, b"\0" * 33, "x" * 32, None],
    "counts": [[], {-1: 1}, {1: -1}, {"a": 1}, {1: "a"}, {1: 1.5}, {True: 1}, None],
    "sent": [{1: [1, 2]}, {1: [1, 2, 3, 4]}, {1: [-1, 0, 0]}, {1: [0, 0, -1]}, {-1: [0, 0, 0]}, {1: (0, "t", 0)}, {1: 5}, []],
    "peers": [{1: b"x"}, {-1: "x"}, {"a": "x"}, {1: 1}, []],
    "keys": [{1: b"x" * 31}, {1: b"x" * 33}, {-1: b"x" * 32}, {"a": b"x" * 32}, {1: "x" * 32}, [], None],
    "bin": ["x", 1, None, [b"x"]],
    "items": [[], {}, b"x", None, 3],
    "bool": [0, 1, None, "true", b"\x01", [True]],
    "changes": [[], {}, None, [[1]], [[1, True, 0]], [[-1, True]], [[True, True]], [[1, 1]], [[1, None]],
                [(1, "yes")], [[2**63, False]], [[1, True], 5], [["1", True]]],
    "ints": [None, {}, 3, [-1], [2**63], [1.0], ["1"], [True], [[1]], "12"],
    "tags": [None, [], {1: [1]}, {1: [1, -1]}, {-1: [1, 0]}, {"a": [1, 0]}, {1: [1, 0, 0]}, {1: (1, "0")}, {1: 5}],
    "u?": [-1, 2**63, False, 0.5, "0", []],
    "figures": [None, [], {"": 1}, {"x" * 33: 1}, {1: 1}, {"a": True}, {"a": "1"}, {"a": None}, {"a": float("nan")},
                {"a": float("inf")}, {"a": 2**63}, {f"f{i}": i for i in range(9)}],
}


def sample(kind: int) -> list[Any]:
    return [{"i": -5, "u": 7, "s": "x", "b16": b"a" * 16, "b32": b"b" * 32, "counts": {1: 2}, "sent": {0: [1, 2, 3]},
             "peers": {0: "tcp://h:1"}, "keys": {0: b"k" * 32}, "any": [1, "a"], "bin": b"\x00\x01", "items": [[43, 1, 2]], "bool": True,
             "changes": [[3, True], [4, False]], "ints": [2, 3], "u?": None, "tags": {2: [5, 0]},
             "figures": {"mean_return": 21.5, "env_steps": 1200}}[f] for f in K.SCHEMA[kind]]


@st.composite
def valid_message(draw: Any) -> list[Any]:
    kind = draw(st.sampled_from(sorted(K.SCHEMA)))
    return [kind, *(draw(FIELD[f]) for f in K.SCHEMA[kind])]


def kind_of(frame: bytes) -> int:
    """The type of a well-formed message (P.COMPACT for the compact form); ProtocolError
    if it is none."""
    if P.is_compact(frame):
        return P.COMPACT
    try:
        return P.KIND[type(P.parse(frame))]
    except P.ProtocolError:
        P.parse_batch(frame)
        return P.BATCH


def read(msg: list[Any]) -> Any:
    """What a receiver makes of ``msg`` (packed): a typed message (parse), a batch's items
    (parse_batch), or a data-plane item (check_item, inside a batch)."""
    kind, raw = msg[0], P.pack(*msg)
    if kind in P.TYPED:
        got = P.parse(raw)
        assert type(got) is P.TYPED[kind]
        assert P.parse(memoryview(raw), frozenset({kind})) == got
        return got
    with pytest.raises(P.ProtocolError, match="not a control message"):
        P.parse(raw)
    if kind == P.BATCH:
        assert P.parse_batch(memoryview(raw)) == msg[1]
        return P.parse_batch(raw)
    return P.check_item(msgpack.unpackb(raw, strict_map_key=False), frozenset({kind}))


@settings(max_examples=600, deadline=None)
@given(valid_message())
def test_every_message_type_round_trips(msg: list[Any]) -> None:
    got = read(msg)
    if msg[0] in P.TYPED:
        assert got.pack() == P.pack(*msg)  # the same bytes: the wire format is unchanged
    elif msg[0] == P.BATCH:
        assert got == msg[1]
    else:
        assert got == msg


def test_every_type_has_a_name_and_a_sample() -> None:
    for kind in K.SCHEMA:
        assert kind in P.NAMES
        read([kind, *sample(kind)])
        if kind in P.TYPED or kind == P.BATCH:
            assert kind_of(P.pack(kind, *sample(kind))) == kind
    # typed: the control messages and the peers' AUTH, SHM_OPEN, PROMISE, STOP_MARK, each
    # class named after its type
    assert set(P.TYPED) == set(K.SCHEMA) - {P.DATA, P.ABSENT, P.SHM_DATA, P.DATA_INLINE, P.BATCH}
    for kind, cls in P.TYPED.items():
        assert P.KIND[cls] == kind and cls.__name__.upper() == P.NAMES[kind].replace("_", "")


# -- the typed messages, field by field ----------------------------------------------------
# Each typed message built from named fields, and the positional array the code sent
# before (``P.pack(kind, ...)``, a tag as its time and microstep) for the same fields.

TAG = st.tuples(I64, U64)
TEXT = FIELD["s"]
B16, B32 = FIELD["b16"], FIELD["b32"]
COUNTS, SENT, PEERS = FIELD["counts"], FIELD["sent"], FIELD["peers"]

TYPED: list[tuple[type[Any], tuple[st.SearchStrategy[Any], ...], Any]] = [
    (P.Hello, (U64, TEXT, TEXT, TEXT, TEXT, B16),
     lambda h: [P.HELLO, h.version, h.federation_id, h.name, h.digest, h.endpoint, h.nonce]),
    (P.Proof, (B32,), lambda p: [P.PROOF, p.mac]),
    (P.Ltc, (TAG, TAG, SENT, COUNTS),
     lambda r: [P.LTC, r.tag[0], r.tag[1], r.net[0], r.net[1], r.sent, r.received]),
    (P.StopReq, (TAG,), lambda r: [P.STOP_REQ, r.tag[0], r.tag[1]]),
    (P.StopReply, (TAG,), lambda r: [P.STOP_REPLY, r.tag[0], r.tag[1]]),
    (P.Resign, (TAG, SENT, COUNTS), lambda r: [P.RESIGN, r.tag[0], r.tag[1], r.sent, r.received]),
    (P.Heartbeat, (), lambda _: [P.HEARTBEAT]),
    (P.Fail, (TEXT,), lambda f: [P.FAIL, f.reason]),
    (P.HbHello, (TEXT, TEXT, B16, B32), lambda h: [P.HB_HELLO, h.federation_id, h.name, h.nonce, h.mac]),
    (P.Challenge, (B16, B32, FIELD["keys"]), lambda c: [P.CHALLENGE, c.nonce, c.mac, c.keys]),
    (P.Reject, (TEXT,), lambda r: [P.REJECT, r.reason]),
    (P.Start, (I64, PEERS, B16, U64, st.lists(U64, max_size=5).map(tuple), st.booleans(), st.booleans(), FIELD["u?"]),
     lambda s: [P.START, s.start, s.peers, s.session, s.federate, list(s.absent), s.join, s.decentralized, s.window]),
    (P.Tag, (TAG, COUNTS), lambda g: [P.TAG, g.tag[0], g.tag[1], g.counts]),
    (P.Ptag, (TAG, COUNTS), lambda g: [P.PTAG, g.tag[0], g.tag[1], g.counts]),
    (P.StopRequest, (TAG,), lambda r: [P.STOP_REQUEST, r.tag[0], r.tag[1]]),
    (P.StopGranted, (TAG,), lambda g: [P.STOP_GRANTED, g.tag[0], g.tag[1]]),
    (P.Lead, (TAG,), lambda g: [P.LEAD, g.tag[0], g.tag[1]]),
    (P.Watch, (TAG,), lambda g: [P.WATCH, g.tag[0], g.tag[1]]),
    (P.Credit, (TAG,), lambda c: [P.CREDIT, c.tag[0], c.tag[1]]),
    (P.Keys, (FIELD["keys"],), lambda k: [P.KEYS, k.keys]),
    (P.Abort, (TEXT,), lambda a: [P.ABORT, a.reason]),
    (P.Auth, (U64, B32), lambda a: [P.AUTH, a.sender, a.mac]),
    (P.ShmOpen, (TEXT,), lambda o: [P.SHM_OPEN, o.name]),
    (P.Promise, (TAG,), lambda p: [P.PROMISE, p.tag[0], p.tag[1]]),
    (P.StopMark, (TAG,), lambda p: [P.STOP_MARK, p.tag[0], p.tag[1]]),
    (P.QueryReply, (U64, TAG, st.dictionaries(U64, TAG, max_size=3)),
     lambda r: [P.QUERY_REPLY, r.round, r.tag[0], r.tag[1], {m: list(t) for m, t in r.took.items()}]),
    (P.JoinReq, (I64,), lambda r: [P.JOIN_REQ, r.physical_time]),
    (P.LeaveReq, (), lambda _: [P.LEAVE_REQ]),
    (P.Query, (U64, TAG, st.lists(st.tuples(U64, st.booleans()), min_size=1, max_size=5).map(tuple)),
     lambda q: [P.QUERY, q.round, q.tag[0], q.tag[1], [list(c) for c in q.changes]]),
    (P.Change, (TAG, U64, st.booleans(), TEXT),
     lambda c: [P.CHANGE, c.tag[0], c.tag[1], c.member, c.joined, c.endpoint]),
    (P.Admit, (TAG, COUNTS, COUNTS), lambda a: [P.ADMIT, a.tag[0], a.tag[1], a.sent, a.received]),
    (P.Refused, (st.booleans(), TEXT), lambda r: [P.REFUSED, r.joined, r.reason]),
    (P.RoundEnd, (U64,), lambda r: [P.ROUND_END, r.round]),
    (P.Release, (), lambda _: [P.RELEASE]),
    (P.Peer, (TAG, U64, TEXT), lambda p: [P.PEER, p.tag[0], p.tag[1], p.member, p.endpoint]),
    (P.Lost, (U64, TAG), lambda lo: [P.LOST, lo.member, lo.quiet[0], lo.quiet[1]]),
    (P.Progress, (FIELD["u?"], FIELD["u?"], FIELD["figures"]), lambda p: [P.PROGRESS, p.done, p.total, p.figures]),
    (P.ClockT1, (I64,), lambda c: [P.CLOCK_T1, c.time]),
    (P.ClockT3, (), lambda _: [P.CLOCK_T3]),
    (P.ClockT4, (I64,), lambda c: [P.CLOCK_T4, c.time]),
    (P.ClockProbe, (I64,), lambda c: [P.CLOCK_PROBE, c.time]),
]
_ITEMS = (P.ShmOpen, P.Promise, P.StopMark)  # batch items


def test_every_typed_message_has_a_case() -> None:
    assert sorted(P.KIND[cls] for cls, _, _ in TYPED) == sorted(P.TYPED)


@pytest.mark.parametrize(("cls", "fields", "positional"), TYPED, ids=[cls.__name__ for cls, _, _ in TYPED])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_typed_messages_round_trip_as_the_positional_arrays(cls: Any, fields: Any, positional: Any,
                                                            data: st.DataObject) -> None:
    msg = data.draw(st.builds(cls, *fields))
    raw = msg.pack()
    assert raw == P.pack(*positional(msg))  # the bytes the positional code sent
    got = P.parse(raw, frozenset({P.KIND[type(msg)]}))
    assert type(got) is type(msg) and got == msg
    if isinstance(msg, _ITEMS):  # in a batch: the array, and back through check_item
        assert msg.item() == positional(msg)
        item = P.check_item(msg.item(), frozenset({P.KIND[type(msg)]}))
        assert type(item) is type(msg) and item == msg
        batch = P.parse_batch(P.pack(P.BATCH, [msg.item()]))
        assert batch == [positional(msg)]


def test_typed_messages_compare_as_tuples() -> None:
    """What the typed messages are underneath (so: dispatch on the type, never on ==)."""
    assert P.StopReq((1, 0)) == P.StopReply((1, 0)) and P.Heartbeat() == ()
    assert P.Ltc((5, 1), (6, 0), {2: [1, 5, 1]}, {0: 3}).pack() == P.pack(P.LTC, 5, 1, 6, 0, {2: [1, 5, 1]}, {0: 3})


@pytest.mark.parametrize("kind", sorted(K.SCHEMA), ids=lambda k: P.NAMES[k])
def test_wrong_field_types_and_ranges_are_refused(kind: int) -> None:
    fields = sample(kind)
    for i, f in enumerate(K.SCHEMA[kind]):
        for bad in WRONG.get(f, []):
            msg = list(fields)
            msg[i] = bad
            with pytest.raises(P.ProtocolError, match=f"{P.NAMES[kind]}: field {i + 1}|undecodable"):
                P.parse(P.pack(kind, *msg))


@pytest.mark.parametrize("kind", sorted(K.SCHEMA), ids=lambda k: P.NAMES[k])
def test_wrong_lengths_are_refused(kind: int) -> None:
    fields = sample(kind)
    with pytest.raises(P.ProtocolError, match="fields, expected"):
        P.parse(P.pack(kind, *fields, 0))
    if fields:
        with pytest.raises(P.ProtocolError, match="fields, expected"):
            P.parse(P.pack(kind, *fields[:-1]))


@pytest.mark.parametrize(
    "data",
    [b"", b"\xc1", b"\x91", msgpack.packb(None), msgpack.packb([]), msgpack.packb({1: 2}), msgpack.packb(["HELLO"]),
     msgpack.packb([True]), msgpack.packb([1.0]), msgpack.packb([99]), msgpack.packb([-1]), msgpack.packb([2**64 - 1]),
     msgpack.packb(P.HEARTBEAT), msgpack.packb([P.HEARTBEAT]) + b"\x00", b"\xdd\xff\xff\xff\xff",
     b"\x91" * 5000 + b"\x08", msgpack.packb([P.FAIL, "x" * 5000]), msgpack.packb([P.TAG, 1, 1, {i: i for i in range(5000)}])],
)
def test_malformed_messages_are_refused(data: bytes) -> None:
    with pytest.raises(P.ProtocolError):
        P.parse(data)


def test_a_type_not_allowed_here_is_refused() -> None:
    with pytest.raises(P.ProtocolError, match="unexpected HEARTBEAT here"):
        P.parse(P.pack(P.HEARTBEAT), frozenset({P.HELLO}))


@settings(max_examples=1500, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_never_raise_anything_but_protocol_error(data: bytes) -> None:
    for parse in (P.parse, P.parse_batch):
        try:
            msg = parse(data)
        except P.ProtocolError:
            continue
        if parse is P.parse:
            assert type(P.parse(msg.pack())) is type(msg) and P.parse(msg.pack()) == msg


@settings(max_examples=800, deadline=None)
@given(valid_message(), st.data())
def test_truncated_and_bit_flipped_messages(msg: list[Any], data: st.DataObject) -> None:
    raw = P.pack(*msg)
    cut = data.draw(st.integers(0, len(raw) - 1))
    with pytest.raises(P.ProtocolError):
        P.parse(raw[:cut])
    pos = data.draw(st.integers(0, len(raw) - 1))
    flipped = bytearray(raw)
    flipped[pos] ^= data.draw(st.integers(1, 255))
    with contextlib.suppress(P.ProtocolError):
        P.parse(bytes(flipped))


def test_mac_parts_do_not_collide() -> None:
    assert P.mac(b"k", "ab", "c") != P.mac(b"k", "a", "bc")
    # Ints and their 8-byte encoding hash alike; every mac starts with a label
    # ("rti", "federate", "hb", "data") that fixes the type of each later part.
    assert P.mac(b"k", "a") != P.mac(b"j", "a")
    assert len(P.mac(b"k", "a")) == 32


def test_batch_items_are_checked_one_by_one() -> None:
    kinds = frozenset({P.DATA_INLINE, P.PROMISE, P.ABSENT})
    promise = P.check_item([P.PROMISE, -5, 3], kinds)
    assert type(promise) is P.Promise and promise.tag == (-5, 3)
    assert P.check_item([P.DATA_INLINE, 1, 2, 3, 0, None, b"p"], kinds)[6] == b"p"
    for bad in ([], [P.PROMISE], [P.PROMISE, 1, -1], [P.AUTH, 1, b"x" * 32], [P.DATA_INLINE, 1, 2, 3, 0, None, "p"],
                ["x", 1], [P.PROMISE, 1, 2, 3], None, b"\x93"):
        with pytest.raises(P.ProtocolError):
            P.check_item(bad, kinds)


def _checked(check: Any, item: list[Any], allowed: frozenset[int]) -> Any:
    """What ``check`` makes of (a copy of) ``item``: the item (a typed one as its array on
    the wire), or ProtocolError."""
    try:
        got = check(list(item), allowed)
    except P.ProtocolError:
        return P.ProtocolError
    return got if type(got) is list else msgpack.unpackb(got.pack(), strict_map_key=False)


def _schema(item: list[Any], allowed: frozenset[int]) -> list[Any]:
    """The schema's verdict alone, without check_item's straight-line path."""
    return K.validated(item, allowed, "an item")


# A field of a batch item as the wire can carry it: in range or not, of the right type or not.
_ANY_FIELD = st.one_of(I64, st.integers(-(2**65), 2**65), st.booleans(), st.floats(allow_nan=False),
                       st.binary(max_size=8), st.text(max_size=4), st.none(), st.lists(U64, max_size=2))


@given(st.sampled_from([P.DATA_INLINE, P.PROMISE, P.DATA, P.ABSENT, 99]), st.lists(_ANY_FIELD, max_size=8),
       st.sampled_from([frozenset({P.DATA_INLINE, P.PROMISE}), frozenset({P.PROMISE}), frozenset({P.DATA})]))
@settings(max_examples=400)
def test_check_item_accepts_exactly_what_the_schema_accepts(kind: int, fields: list[Any], allowed: frozenset[int]) -> None:
    """check_item's straight-line checks of the two commonest items agree with the schema."""
    item = [kind, *fields]
    assert _checked(P.check_item, item, allowed) == _checked(_schema, item, allowed)


@given(I64, U64, U64, U64, st.binary(max_size=16))
def test_check_item_takes_well_formed_data_and_promises(t: int, m: int, link: int, codec: int, payload: bytes) -> None:
    allowed = frozenset({P.DATA_INLINE, P.PROMISE})
    assert P.check_item([P.DATA_INLINE, link, t, m, codec, None, payload], allowed)[6] == payload
    promise = P.check_item([P.PROMISE, t, m], allowed)
    assert type(promise) is P.Promise and promise.tag == (t, m)


@given(st.sampled_from([[P.DATA_INLINE, 3, 10, 1, 0, None, b"x"], [P.PROMISE, 10, 1]]), st.data())
def test_check_item_and_the_schema_agree_on_items_one_field_off(valid: list[Any], data: st.DataObject) -> None:
    item = list(valid)
    item[data.draw(st.integers(1, len(item) - 1))] = data.draw(_ANY_FIELD)
    allowed = frozenset({P.DATA_INLINE, P.PROMISE})
    assert _checked(P.check_item, item, allowed) == _checked(_schema, item, allowed)


# -- the compact form of a closed loop's message ----------------------------------------

_META = st.one_of(st.none(), st.tuples(st.sampled_from(["<f4", "<i8", "|u1"]), st.lists(st.integers(0, 99), max_size=3))
                  .map(list), st.text(max_size=5))


@given(st.integers(0, 2**32 - 1), I64, U64, st.integers(0, 255), _META, st.binary(max_size=300),
       st.one_of(st.none(), st.tuples(I64, U64)))
@settings(max_examples=400)
def test_a_value_and_a_promise_round_trip_in_compact_form(link: int, t: int, m: int, codec: int, meta: Any,
                                                          payload: bytes, promise: tuple[int, int] | None) -> None:
    items: list[list[Any]] = [[P.DATA_INLINE, link, t, m, codec, meta, payload]]
    if promise is not None:
        items.append([P.PROMISE, *promise])
    frame = P.pack_compact(items)
    assert frame is not None and P.is_compact(frame)
    flags, link2, t2, m2, codec2, mb, body, pt, pm = P.parse_compact(memoryview(frame))
    assert (link2, t2, m2, codec2, bytes(body)) == (link, t, m, codec, payload)
    assert P.compact_meta(mb) == meta
    assert flags == (3 if promise else 1)
    if promise:
        assert (pt, pm) == promise
    if payload:  # an array over the payload is aligned as in a bytes object of its own
        assert (len(frame) - len(payload)) % 16 == 0


@given(I64, U64)
def test_a_promise_alone_in_compact_form(t: int, m: int) -> None:
    frame = P.pack_compact([[P.PROMISE, t, m]])
    assert frame is not None
    flags, *_, pt, pm = P.parse_compact(memoryview(frame))
    assert (flags, pt, pm) == (2, t, m)


def test_what_the_compact_form_cannot_carry_goes_as_a_batch() -> None:
    value = [P.DATA_INLINE, 1, 5, 0, 0, None, b"x"]
    promise = [P.PROMISE, 5, 1]
    for items in ([promise, value], [value, value], [value, promise, promise], [[P.ABSENT, 1, 5, 0]],
                  [[P.SHM_OPEN, "ring"]], [promise, promise],
                  [[P.DATA_INLINE, 2**32, 5, 0, 0, None, b"x"]],  # link beyond 32 bits
                  [[P.DATA_INLINE, 1, 5, 0, 256, None, b"x"]],  # codec beyond a byte
                  [[P.DATA_INLINE, 1, 5, 0, 0, "m" * 70000, b"x"]]):  # meta beyond 64 KiB
        assert P.pack_compact(items) is None, items
    # a batch ahead of the compact form: not taken for one
    assert not P.is_compact(P.pack(P.BATCH, [value, promise]))


def _compact_frames() -> st.SearchStrategy[bytes]:
    return st.builds(lambda v, p: P.pack_compact([v, p] if p else [v]),
                     st.builds(lambda link, t, m, meta, payload: [P.DATA_INLINE, link, t, m, 1, meta, payload],
                               st.integers(0, 9), I64, U64, _META, st.binary(max_size=40)),
                     st.one_of(st.none(), st.builds(lambda t, m: [P.PROMISE, t, m], I64, U64)))


@given(st.one_of(_compact_frames(), st.binary(max_size=120).map(lambda b: bytes([P.COMPACT]) + b)), st.data())
@settings(max_examples=600)
def test_mangled_compact_messages_are_protocol_errors_or_well_formed(frame: bytes, data: st.DataObject) -> None:
    """Cut short, bit-flipped or random: parse_compact raises only ProtocolError, and what
    it accepts has a known flag set, no negative microstep and its meta within the frame."""
    b = bytearray(frame)
    if b and data.draw(st.booleans()):
        b = b[: data.draw(st.integers(1, len(b)))]
    if len(b) > 1 and data.draw(st.booleans()):
        b[data.draw(st.integers(1, len(b) - 1))] ^= data.draw(st.integers(1, 255))
    try:
        flags, _link, _t, m, _codec, mb, body, _pt, pm = P.parse_compact(memoryview(bytes(b)))
    except P.ProtocolError:
        return
    assert flags in (1, 2, 3) and m >= 0 and pm >= 0
    assert len(mb) + len(body) <= len(b) - D._COMPACT_HEAD.size
    with contextlib.suppress(P.ProtocolError):
        P.compact_meta(mb)


# -- membership messages (issue 19) ----------------------------------------------------------
def test_membership_messages_carry_what_the_rti_core_emits() -> None:
    """The RTI core's Query, Change and Admit (coordination.membership) as they go on the
    wire, and back; a round's changes come back as the core's tuples."""
    from reactorfed.federation.coordination import membership as M

    q = M.Query(3, (10, 1), ((2, True), (5, False)), frozenset({0, 1}))
    got = P.parse(P.Query(q.round, q.tag, q.changes).pack(), frozenset({P.QUERY}))
    assert type(got) is P.Query and (got.round, got.tag, got.changes) == (q.round, q.tag, q.changes)
    ch = M.Change((10, 1), 2, True)
    assert P.parse(P.Change(ch.tag, ch.member, ch.joined).pack()) == (ch.tag, ch.member, ch.joined, "")
    # a joiner's data address (for its upstream peers): version 3
    got_c = P.parse(P.Change(ch.tag, ch.member, ch.joined, "tcp://10.0.0.7:4100").pack(), frozenset({P.CHANGE}))
    assert type(got_c) is P.Change and got_c.endpoint == "tcp://10.0.0.7:4100" and got_c.tag == ch.tag
    adm = M.Admit(2, (10, 1), {0: 4}, {0: 7})
    got_a = P.parse(P.Admit(adm.tag, adm.sent, adm.received).pack())
    assert type(got_a) is P.Admit and got_a == ((10, 1), {0: 4}, {0: 7})
    reply = P.parse(P.QueryReply(3, (11, 0)).pack(), frozenset({P.QUERY_REPLY}))
    assert type(reply) is P.QueryReply and reply.round == 3 and reply.tag == (11, 0)


@pytest.mark.parametrize(
    ("msg", "why"),
    [([P.QUERY, 1, 5, 0, []], "QUERY: field 4"),  # a round changes something
     ([P.QUERY, 1, 5, 0, [[2, 1]]], "QUERY: field 4"),  # joined is a bool, not an int
     ([P.QUERY, 1, 5, 0, [[2, True]] * 5000], "undecodable"),  # more entries than any bank has
     ([P.QUERY, -1, 5, 0, [[2, True]]], "QUERY: field 1"),
     ([P.CHANGE, 5, 0, 2, "yes", ""], "CHANGE: field 4"),
     ([P.CHANGE, 5, -1, 2, True, ""], "CHANGE: field 2"),
     ([P.CHANGE, 5, 0, 2, True, 7], "CHANGE: field 5"),
     ([P.CHANGE, 5, 0, 2, True], "CHANGE has 4 fields, expected 5"),  # version 2's
     ([P.ADMIT, 5, 0, {0: -1}, {}], "ADMIT: field 3"),
     ([P.ADMIT, 5, 0, {}], "ADMIT has 3 fields, expected 4"),
     ([P.QUERY_REPLY, 1, 2**63, 0, {}], "undecodable|QUERY_REPLY: field 2"),
     ([P.QUERY_REPLY, 1, 2, 0, {1: [2, -1]}], "QUERY_REPLY: field 4"),
     ([P.QUERY_REPLY, 1, 2, 0], "QUERY_REPLY has 3 fields, expected 4"),  # version 5's
     ([P.JOIN_REQ, 1.5], "JOIN_REQ: field 1"),
     ([P.LEAVE_REQ, 1], "LEAVE_REQ has 1 fields, expected 0"),
     ([P.REFUSED, 1, "x"], "REFUSED: field 1"),
     ([P.ROUND_END, "1"], "ROUND_END: field 1"),
     ([P.RELEASE, 0], "RELEASE has 1 fields, expected 0"),
     ([P.PEER, 5, 0, 3, b"tcp://h:1"], "PEER: field 4"),  # an address is text
     ([P.PEER, 5, 0, -3, "tcp://h:1"], "PEER: field 3"),
     ([P.PEER, 3, "tcp://h:1"], "PEER has 2 fields, expected 4"),
     ([P.LOST, 2**64 - 1, 0, 0], "LOST: field 1"),
     ([P.LOST, 2], "LOST has 1 fields, expected 3"),  # version 5's
     ([P.START, 5, {}, b"s" * 16, 1], "START has 4 fields, expected 8"),  # version 3's
     ([P.START, 5, {}, b"s" * 16, 1, [-1], False, False, None], "START: field 5"),
     ([P.START, 5, {}, b"s" * 16, 1, [2], 1, False, None], "START: field 6"),
     ([P.START, 5, {}, b"s" * 16, 1, [2], False], "START has 6 fields, expected 8"),  # version 6's
     ([P.START, 5, {}, b"s" * 16, 1, [2], False, 1, None], "START: field 7"),
     ([P.START, 5, {}, b"s" * 16, 1, [2], False, False], "START has 7 fields, expected 8"),  # version 7's
     ([P.START, 5, {}, b"s" * 16, 1, [2], False, False, -1], "START: field 8"),
     ([P.LEAD, 5], "LEAD has 1 fields, expected 2"),
     ([P.WATCH, 5, -1], "WATCH: field 2"),
     ([P.CREDIT, 5], "CREDIT has 1 fields, expected 2"),
     ([P.CREDIT, 5, -1], "CREDIT: field 2")],
)
def test_malformed_membership_messages_are_protocol_errors(msg: list[Any], why: str) -> None:
    with pytest.raises(P.ProtocolError, match=why):
        P.parse(msgpack.packb(msg, use_bin_type=True))


def test_a_membership_message_where_it_is_not_expected_is_refused() -> None:
    rti_side = frozenset({P.LTC, P.QUERY_REPLY, P.JOIN_REQ, P.LEAVE_REQ})
    with pytest.raises(P.ProtocolError, match="unexpected ADMIT here"):
        P.parse(P.Admit((1, 0), {}, {}).pack(), rti_side)
    with pytest.raises(P.ProtocolError, match="not a control message"):
        P.parse(P.pack(P.BATCH, [[P.CHANGE, 1, 0, 2, True, ""]]))
    with pytest.raises(P.ProtocolError, match="unexpected CHANGE here"):  # not a data-plane item
        P.check_item([P.CHANGE, 1, 0, 2, True, ""], frozenset({P.DATA_INLINE, P.PROMISE}))


def test_progress_limits_are_the_reporting_sides() -> None:
    """What a federate's reactors may report (reactorfed.observe.progress) fits a PROGRESS."""
    from reactorfed.observe import progress

    assert (K.MAX_FIGURES, K.MAX_NAME) == (progress.MAX_FIGURES, progress.MAX_NAME)
