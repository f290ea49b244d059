"""Multipart messages part by part (federation/io/parts.py) over real ZeroMQ sockets,
against pyzmq's own ``send_multipart`` and ``recv_multipart`` on the same sockets."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import zmq
from hypothesis import given, settings
from hypothesis import strategies as st

from reactorfed.federation.io.parts import recv_parts, send_parts


@pytest.fixture
def pair() -> Iterator[tuple[zmq.Socket[bytes], zmq.Socket[bytes]]]:
    ctx = zmq.Context()
    a, b = ctx.socket(zmq.PAIR), ctx.socket(zmq.PAIR)
    a.bind("inproc://parts")
    b.connect("inproc://parts")
    yield a, b
    a.close(0)
    b.close(0)
    ctx.term()


@settings(max_examples=60, deadline=None, database=None)
@given(st.lists(st.lists(st.binary(max_size=300), min_size=1, max_size=5), min_size=1, max_size=6),
       st.lists(st.booleans(), min_size=6, max_size=6))  # fmt: skip
def test_messages_go_and_come_whole_and_in_order_mixed_with_pyzmqs_own(
    messages: list[list[bytes]], ours: list[bool]
) -> None:
    ctx = zmq.Context()
    a, b = ctx.socket(zmq.PAIR), ctx.socket(zmq.PAIR)
    try:
        a.bind("inproc://mixed")
        b.connect("inproc://mixed")
        for m, mine in zip(messages, ours, strict=False):
            if mine:
                send_parts(a, m)
            else:
                a.send_multipart(m)
        for i, m in enumerate(messages):
            got = recv_parts(b, zmq.NOBLOCK) if i % 2 else b.recv_multipart(zmq.NOBLOCK, copy=False)
            assert [f.bytes for f in got] == m
        with pytest.raises(zmq.Again):
            recv_parts(b, zmq.NOBLOCK)
    finally:
        a.close(0)
        b.close(0)
        ctx.term()


def test_zero_copy_pieces_of_an_array_arrive_intact(pair: tuple[zmq.Socket[bytes], zmq.Socket[bytes]]) -> None:
    a, b = pair
    big = np.arange(300_000, dtype=np.uint8)
    pieces = [b"header", big.data[:65536], big.data[65536:]]
    send_parts(a, pieces, copy=False)
    got = recv_parts(b)
    assert [f.more for f in got] == [True, True, False]
    assert got[0].bytes == b"header" and got[1].bytes + got[2].bytes == big.tobytes()


def test_a_send_without_room_fails_whole_on_its_first_part() -> None:
    ctx = zmq.Context()
    a = ctx.socket(zmq.PUSH)
    try:
        a.sndhwm = 1
        a.bind("inproc://full")
        b = ctx.socket(zmq.PULL)
        b.rcvhwm = 1
        b.connect("inproc://full")
        sent = 0
        with pytest.raises(zmq.Again):
            for _ in range(100):
                send_parts(a, [b"one", b"two", b"three"], zmq.NOBLOCK)
                sent += 1
        assert 0 < sent < 100
        for _ in range(sent):  # every message that went, whole; nothing of the refused one
            assert [f.bytes for f in recv_parts(b, zmq.NOBLOCK)] == [b"one", b"two", b"three"]
        with pytest.raises(zmq.Again):
            recv_parts(b, zmq.NOBLOCK)
        b.close(0)
    finally:
        a.close(0)
        ctx.term()
