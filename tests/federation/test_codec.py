"""codec: numpy arrays and CPU tensors travel without copies, plain data as msgpack,
objects only with trusted_pickle; a corrupt payload is a CodecError, never a crash."""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from reactorfed.federation.wire import codec as C
from reactorfed.federation.wire.codec import CodecError, decode, encode


def wire(frames: list[Any]) -> list[Any]:
    """What the receiver gets: each frame as its own buffer (as ZeroMQ hands them over)."""
    return [memoryview(bytes(memoryview(f).cast("B"))) for f in frames]


DTYPES = ["<i1", "<u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f2", "<f4", "<f8", "<c8", "<c16", "|b1", ">i4", "<M8[ns]", "i4,f8"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 4), (2, 0, 5), (2, 3, 4, 5)])
def test_numpy_round_trip_without_copies(dtype: str, shape: tuple[int, ...]) -> None:
    a = np.frombuffer(np.random.default_rng(0).bytes(int(np.prod(shape)) * np.dtype(dtype).itemsize), dtype=dtype).reshape(shape)
    codec, meta, frames = encode(a)
    assert codec == C.NUMPY and len(frames) == 1
    if a.size:
        assert np.shares_memory(frames[0], a)  # sent from the array's own buffer
    received = wire(frames)
    out = decode(codec, meta, received)
    assert out.dtype == a.dtype and out.shape == a.shape
    assert out.tobytes() == a.tobytes()
    if out.size:
        # decoding is a view over the received frame, not a copy
        assert np.shares_memory(out, np.frombuffer(received[0], dtype=np.uint8))
    assert not out.flags.writeable


def test_non_contiguous_arrays_are_made_contiguous_once() -> None:
    a = np.arange(24, dtype=np.float32).reshape(4, 6)[:, ::2]
    codec, meta, frames = encode(a)
    assert frames[0].flags.c_contiguous
    np.testing.assert_array_equal(decode(codec, meta, wire(frames)), a)
    f = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    codec, meta, frames = encode(f)
    np.testing.assert_array_equal(decode(codec, meta, wire(frames)), f)


@settings(max_examples=300, deadline=None)
@given(hnp.arrays(hnp.scalar_dtypes(), hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5)))
def test_any_numeric_array_round_trips(a: np.ndarray) -> None:
    codec, meta, frames = encode(a)
    out = decode(codec, meta, wire(frames))
    assert out.dtype == a.dtype and out.shape == a.shape and out.tobytes() == a.tobytes()


def test_object_arrays_are_refused_both_ways() -> None:
    with pytest.raises(CodecError, match="objects"):
        encode(np.array([object()], dtype=object))
    with pytest.raises(CodecError, match="objects"):
        decode(C.NUMPY, ["|O", [1]], [b"\0" * 8])
    with pytest.raises(CodecError, match="objects"):
        decode(C.NUMPY, ["i4,O", [1]], [b"\0" * 12])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "bool", "float16", "int16"])
def test_torch_cpu_tensors(dtype: str) -> None:
    torch = pytest.importorskip("torch")
    t = torch.arange(12).reshape(3, 4).to(getattr(torch, dtype))
    codec, meta, frames = encode(t)
    assert codec == C.TORCH
    assert np.shares_memory(frames[0], t.numpy())  # sent from the tensor's own memory
    out = decode(codec, meta, wire(frames))
    assert isinstance(out, torch.Tensor) and out.dtype == t.dtype and out.shape == t.shape
    assert torch.equal(out, t)
    out.copy_(t)  # writable: the receiver owns it


def test_torch_non_contiguous_and_parameters() -> None:
    torch = pytest.importorskip("torch")
    t = torch.arange(20.0).reshape(4, 5).t()
    codec, meta, frames = encode(t)
    assert torch.equal(decode(codec, meta, wire(frames)), t)
    p = torch.nn.Parameter(torch.ones(3))
    codec, meta, frames = encode(p)
    assert codec == C.TORCH
    assert torch.equal(decode(codec, meta, wire(frames)), torch.ones(3))


PLAIN = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=False) | st.text(max_size=20) | st.binary(max_size=20),
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=5) | st.integers(0, 100), c, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(PLAIN)
def test_plain_data_round_trips_as_msgpack(v: Any) -> None:
    codec, meta, frames = encode(v)
    assert codec == C.MSGPACK
    assert decode(codec, meta, wire(frames)) == v


def test_tuples_arrive_as_lists() -> None:
    codec, meta, frames = encode((1, (2, "x")))
    assert decode(codec, meta, wire(frames)) == [1, [2, "x"]]


class Thing:
    def __init__(self, x: int) -> None:
        self.x = x

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Thing) and other.x == self.x


@pytest.mark.parametrize("v", [Thing(1), {1, 2}, 2**70, complex(1, 2), [Thing(2)], {"a": Thing(3)}])
def test_objects_need_trusted_pickle(v: Any) -> None:
    with pytest.raises(CodecError, match="trusted_pickle"):
        encode(v)
    codec, meta, frames = encode(v, trusted_pickle=True)
    assert codec == C.PICKLE
    assert decode(codec, meta, wire(frames), trusted_pickle=True) == v
    with pytest.raises(CodecError, match="refused a pickled payload"):
        decode(codec, meta, wire(frames))


class Boom:
    def __reduce__(self) -> Any:
        return (pytest.fail, ("unpickled a payload that was not trusted",))


def test_a_pickled_payload_is_never_loaded_untrusted() -> None:
    import pickle

    with pytest.raises(CodecError, match="refused a pickled payload"):
        decode(C.PICKLE, None, [pickle.dumps(Boom())])


@pytest.mark.parametrize(
    ("codec", "meta", "frames"),
    [
        (C.NUMPY, None, [b""]),
        (C.NUMPY, "f8", [b""]),
        (C.NUMPY, ["<f8"], [b""]),
        (C.NUMPY, ["<f8", 3], [b""]),
        (C.NUMPY, [8, [1]], [b"\0" * 8]),
        (C.NUMPY, ["<f8", [1]], [b"\0" * 7]),
        (C.NUMPY, ["<f8", [2]], [b"\0" * 8]),
        (C.NUMPY, ["<f8", [-1]], [b""]),
        (C.NUMPY, ["<f8", [1.0]], [b"\0" * 8]),
        (C.NUMPY, ["<f8", ["1"]], [b"\0" * 8]),
        (C.NUMPY, ["<f8", [1] * 33], [b"\0" * 8]),
        (C.NUMPY, ["nonsense", [1]], [b"\0" * 8]),
        (C.NUMPY, ["<i99", [1]], [b"\0" * 8]),
        (C.NUMPY, ["(2)i4", [1]], [b"\0" * 8]),
        (C.NUMPY, ["V0", [0]], [b""]),
        (C.NUMPY, ["S0", [3]], [b""]),
        (C.NUMPY, ["<i4", [2**70, 0]], [b""]),
        (C.NUMPY, ["<i4", [2**62, 2**62, 0]], [b""]),
        (C.NUMPY, ["<i4", [2**40, 2**40]], [b""]),
        (C.TORCH, ["V0", [0]], [b""]),
        (C.TORCH, [">i4", [1]], [b"\0" * 4]),
        (C.TORCH, ["i4,f8", [1]], [b"\0" * 12]),
        (C.TORCH, ["<M8[ns]", [1]], [b"\0" * 8]),
        (C.MSGPACK, None, [b"\xc1"]),
        (C.MSGPACK, None, [b"\x92\x01"]),
        (C.MSGPACK, None, [b"\x81\x91\x01\x01"]),  # unhashable map key
        (C.MSGPACK, None, []),
        (C.MSGPACK, None, [b"\x01", b"\x01"]),
        (C.PICKLE, None, [b"not a pickle"]),
        (7, None, [b""]),
        (-1, None, [b""]),
    ],
)
def test_corrupt_payloads_are_codec_errors(codec: int, meta: Any, frames: list[bytes]) -> None:
    if codec == C.TORCH:
        pytest.importorskip("torch")
    with pytest.raises(CodecError):
        decode(codec, meta, [memoryview(f) for f in frames], trusted_pickle=codec == C.PICKLE)


@settings(max_examples=1000, deadline=None)
@given(
    st.sampled_from([C.MSGPACK, C.NUMPY, C.TORCH, C.PICKLE, 4, 255]),
    st.recursive(st.none() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=12) | st.binary(max_size=8) | st.booleans(),
                 lambda c: st.lists(c, max_size=4), max_leaves=8),
    st.lists(st.binary(max_size=64), min_size=0, max_size=3),
)
def test_hostile_payloads_never_raise_anything_but_codec_error(codec: int, meta: Any, frames: list[bytes]) -> None:
    with contextlib.suppress(CodecError):
        decode(codec, meta, [memoryview(f) for f in frames])


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(DTYPES[:-1]), st.lists(st.integers(0, 6), max_size=4), st.integers(0, 80))
def test_array_headers_against_frames_of_any_size(dtype: str, shape: list[int], nbytes: int) -> None:
    for codec in (C.NUMPY, C.TORCH):
        try:
            out = decode(codec, [dtype, shape], [memoryview(b"\0" * nbytes)])
        except CodecError:
            continue
        assert tuple(out.shape) == tuple(shape)


def _decoded(meta: Any, buf: bytes) -> Any:
    try:
        a = decode(C.NUMPY, meta, [buf])
    except CodecError:
        return CodecError
    return (a.dtype, a.shape, a.tobytes())


@given(st.sampled_from(["<f4", "<i8", "|u1", "<f8", "|b1", "<U0", "|V0", "<c16"]),
       st.one_of(st.integers(-3, 40), st.booleans(), st.floats(allow_nan=False), st.none()),
       st.binary(max_size=200))
@settings(max_examples=300)
def test_one_dimension_decodes_as_the_general_path_does(descr: str, n: Any, buf: bytes) -> None:
    """A list header with one dimension takes a shorter path: same array, same refusals
    as the general one (taken with a tuple header)."""
    for d in ("<f4", "<i8", "|u1", "<f8", "|b1", "<c16"):
        decode(C.NUMPY, [d, [0]], [b""])  # dtypes seen before (the shorter path needs one)
    assert _decoded([descr, [n]], buf) == _decoded((descr, (n,)), buf)


_STRUCTURED = [[["obs", "<f4", [4]], ["action", "<i8"], ["done", "|b1"]], [["x", "|O"]], [["z", "<f4", [0]]],
               [["a", "<f4"], ["a", "<f4"]], [["bad"]]]


@given(st.one_of(st.tuples(st.sampled_from(["<f4", "<i8", "|u1", "<f8", "|b1", "<c16", "<U0", "|V0", "|O", "bad",
                                            *_STRUCTURED]),
                           st.lists(st.one_of(st.integers(-3, 40), st.booleans(), st.none()), max_size=3))
                 .map(lambda t: [t[0], t[1]]),
                 st.none(), st.text(max_size=4), st.lists(st.integers(), max_size=3)),
       st.binary(max_size=200))
@settings(max_examples=300)
def test_flat_array_is_what_decode_does(meta: Any, buf: bytes) -> None:
    """A receiver that keeps flat_array's plan for a header and makes np.frombuffer of a
    payload of the planned size gets what decode returns; any other header has no plan."""
    plan = C.flat_array(meta)
    if plan is None:
        if (type(meta) is list and len(meta) == 2 and type(meta[0]) in (str, list) and type(meta[1]) is list
                and len(meta[1]) == 1 and type(meta[1][0]) is int and meta[1][0] >= 0):
            # a one-dimensional header without a plan: its dtype is refused, whatever the size
            assert all(_decoded(meta, b"\0" * (meta[1][0] * k)) is CodecError for k in (0, 1, 2, 4, 8, 16))
        return
    dtype, size = plan
    assert size == meta[1][0] * dtype.itemsize
    if len(buf) == size:
        a = np.frombuffer(buf, dtype)
        assert (a.dtype, a.shape, a.tobytes()) == _decoded(meta, buf)


def test_structured_arrays_round_trip_and_their_headers_are_cached_safely() -> None:
    """A rollout's record (one structured row per step) round-trips; its dtype is cached
    on both sides (a header converts in microseconds otherwise), and a cached header is
    still judged: a hostile one with object fields or zero-sized items stays refused."""
    import msgpack

    dt = np.dtype([("obs", "<f4", (4,)), ("action", "<i8"), ("reward", "<f4"), ("done", "?")])
    a = np.zeros(3, dtype=dt)
    a["obs"][1] = [1, 2, 3, 4]
    a["reward"] = [0.5, 1.5, 2.5]
    for _ in range(2):  # the second time from the caches
        codec, meta, frames = C.encode(a)
        wire_meta = msgpack.unpackb(msgpack.packb(meta), raw=False)  # as a receiver sees it
        got = C.decode(codec, wire_meta, [bytes(frames[0])])
        assert got.dtype == dt and (got == a).all()
    assert C.encode(a)[1][0] is C.encode(a)[1][0], "the sender's header is cached"
    for bad in ([["x", "|O"]], [["x", "<f4", [0]]], [["x", [["y", "|O"]]]]):
        for _ in range(2):
            with pytest.raises(C.CodecError):
                C.decode(C.NUMPY, [bad, [1]], [b""])


def test_cached_structured_headers_never_stand_for_another() -> None:
    """Headers that differ in a name, a shape or a byte order (all cached after their first
    use) each decode to their own dtype."""
    import msgpack

    dts = [np.dtype([("obs", "<f4", (4,)), ("r", "<f4")]), np.dtype([("obs", "<f4", (2, 2)), ("r", "<f4")]),
           np.dtype([("obz", "<f4", (4,)), ("r", "<f4")]), np.dtype([("obs", ">f4", (4,)), ("r", "<f4")])]
    for _ in range(2):
        for dt in dts:
            a = np.zeros(2, dtype=dt)
            codec, meta, frames = C.encode(a)
            got = C.decode(codec, msgpack.unpackb(msgpack.packb(meta), raw=False), [bytes(frames[0])])
            assert got.dtype == dt, (got.dtype, dt)


def test_a_connections_own_serializer_carries_any_value_as_bytes() -> None:
    import pickle

    from reactorfed.federation.wire.codec import CUSTOM, decode_custom, encode_custom

    class Pickler:
        def serialize(self, v: object) -> bytes:
            return pickle.dumps(v)

        def deserialize(self, b: bytes) -> object:
            return pickle.loads(b)

    codec, meta, frames = encode_custom(Pickler(), {1: "x"})
    assert codec == CUSTOM and meta is None and decode_custom(Pickler(), memoryview(frames[0])) == {1: "x"}

    class Bad:
        def serialize(self, v: object) -> str:
            return "not bytes"

        def deserialize(self, b: bytes) -> object:
            raise ValueError("unreadable")

    with pytest.raises(CodecError, match="returned a str, not bytes"):
        encode_custom(Bad(), 1)
    with pytest.raises(CodecError, match="failed to deserialize 3 bytes"):
        decode_custom(Bad(), b"abc")


def test_a_serializer_without_its_methods_is_refused_naming_the_connection() -> None:
    from reactorfed import Input, Output, Reactor, ValidationError

    class A(Reactor):
        out = Output(int)

    class B(Reactor):
        inp = Input(int)

    class Main(Reactor):
        def __init__(self) -> None:
            self.a = A()
            self.b = B()
            self.connect(self.a.out, self.b.inp, serializer=object())

    with pytest.raises(ValidationError, match=r"Main: a connection: the serializer .* has no serialize\(\) or deserialize\(\)"):
        Main()
