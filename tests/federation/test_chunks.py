"""Frames cut into bounded pieces and joined again (federation/io/chunks.py): the pure
functions, and a client and server over a real TCP connection."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reactorfed.federation.io.chunks import CHUNK, MAGIC, WIRE_MAX, join, split, wire_limit
from reactorfed.federation.io.transport import Client, Poller, Server


def _wire(frames: list[object]) -> list[memoryview]:
    """What the receiver gets: every frame as its own bytes."""
    return [memoryview(bytes(memoryview(f).cast("B"))) for f in frames]  # type: ignore[arg-type]


def test_small_messages_are_left_alone() -> None:
    assert split([b"x" * CHUNK, b"", b"y"]) is None


def test_a_large_frame_travels_in_pieces_and_comes_back_whole() -> None:
    big = np.arange(100_000, dtype=np.float64).reshape(500, 200)  # 800 KB, two dimensions
    sent = split([b"head", big, b"tail" * 10])
    assert sent is not None and bytes(sent[0][:4]) == MAGIC
    assert all(memoryview(f).nbytes <= CHUNK for f in sent[1:])
    pieces = -(-big.nbytes // CHUNK)
    assert pieces > 1 and len(sent) == 1 + 1 + pieces + 1  # header, head, the pieces, tail
    got = join(_wire(sent), max_total=-1)
    assert got is not None and [bytes(f) for f in got] == [b"head", big.tobytes(), b"tail" * 10]


def test_a_non_contiguous_frame_is_sent_by_value() -> None:
    view = np.arange(200_000, dtype=np.int64)[::2]
    sent = split([b"h", memoryview(view)])
    assert sent is not None
    got = join(_wire(sent), -1)
    assert got is not None and bytes(got[1]) == view.tobytes()


@settings(max_examples=200, deadline=None, database=None)
@given(st.lists(st.integers(0, 3 * CHUNK + 5), min_size=1, max_size=4), st.integers(0, 255))
def test_any_sizes_round_trip(sizes: list[int], fill: int) -> None:
    frames = [bytes([fill]) * n for n in sizes]
    sent = split(frames)
    if sent is None:
        assert max(sizes) <= CHUNK
        return
    got = join(_wire(sent), max_total=sum(sizes))
    assert got is not None and [bytes(f) for f in got] == frames
    assert join(_wire(sent), max_total=sum(sizes) - 1) is None  # the receiver's limit holds for the whole


def _malformed() -> list[list[bytes]]:
    header = MAGIC + (2).to_bytes(4, "little")
    return [
        [MAGIC, b"a", b"b"],  # no counts
        [MAGIC + b"\x01\x00\x00", b"a", b"b"],  # a count cut short
        [header, b"a"],  # counts say 2 pieces, 1 came
        [header, b"a" * CHUNK, b"b", b"c"],  # 3 came
        [MAGIC + (0).to_bytes(4, "little"), b"a", b"b"],  # a group of no piece
        [header, b"a" * (CHUNK - 1), b"b"],  # a piece before the last not full
        [header, b"a" * CHUNK, b""],  # an empty last piece
        [b"\x00RFX" + (2).to_bytes(4, "little"), b"a" * CHUNK, b"b"],  # not the header
    ]


@pytest.mark.parametrize("frames", _malformed())
def test_malformed_messages_are_refused(frames: list[bytes]) -> None:
    assert join([memoryview(f) for f in frames], -1) is None


def test_the_wire_limit_is_a_piece_whatever_the_message_limit() -> None:
    assert wire_limit(-1) == wire_limit(1 << 30) == WIRE_MAX
    assert wire_limit(64 * 1024) == 64 * 1024 + (WIRE_MAX - CHUNK)  # the RTI's: its own, and a box
    assert WIRE_MAX - CHUNK >= 33  # a CurveZMQ MESSAGE's command, nonce, MAC and flags


def test_frames_of_every_size_arrive_as_sent_over_tcp() -> None:
    """Small frames go copied, large ones zero-copy, whole below a piece and cut above it
    (on a socket that takes no frame larger than a piece): each message arrives as sent."""
    server = Server("tcp://127.0.0.1:0")
    client = Client(server.endpoint)
    poller = Poller(server)
    rng = np.random.default_rng(0)
    try:
        for size in (10, 100_000, CHUNK, CHUNK + 1, 3 * CHUNK + 5):
            payload = rng.integers(0, 256, size, dtype=np.uint8)
            client.send([b"head", payload])
            got = None
            while got is None:
                assert poller.wait(5000) == [server], size
                got = server.recv()
            assert [bytes(f) for f in got[1]] == [b"head", payload.tobytes()], size
    finally:
        poller.close()
        client.close()
        server.close()
