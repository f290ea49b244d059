"""shm: the shared-memory ring hands records over intact and in order, refuses what does
not fit (the caller then sends inline), refuses forged descriptors without reading out
of bounds, and leaves nothing in /dev/shm and no resource-tracker noise behind."""

from __future__ import annotations

import collections
import collections.abc
import gc
import subprocess
import sys
import textwrap
from multiprocessing.shared_memory import SharedMemory
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from reactorfed.federation.io.shm import RECORD_HEADER as H
from reactorfed.federation.io.shm import ShmError, ShmReader, ShmWriter

TOKEN = b"federation-secret"
DEV_SHM = Path("/dev/shm")
posix_shm = pytest.mark.skipif(not DEV_SHM.is_dir(), reason="needs /dev/shm")


def payload(seed: int, n: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


@pytest.fixture
def ring() -> collections.abc.Iterator[tuple[ShmWriter, ShmReader]]:
    w = ShmWriter(1000, TOKEN)
    r = ShmReader(w.name, TOKEN)
    yield w, r
    r.close()
    w.close()


def test_round_trip_with_wrap_and_gaps(ring: tuple[ShmWriter, ShmReader]) -> None:
    w, r = ring
    rng = np.random.default_rng(1)
    pending: collections.deque[tuple[int, int, bytes]] = collections.deque()
    gaps = refused = taken = 0
    expected = 0
    for i in range(3000):
        data = payload(i, int(rng.integers(0, w.max_record + 1)))
        at = w.put([data])
        if at is None:
            refused += 1
            assert pending, "an empty ring must take any record of at most max_record"
        else:
            assert at[1] == len(data) and at[0] + at[1] <= w.capacity
            pending.append((*at, data))
        if at is None or rng.random() < 0.4:
            while pending and (at is None or rng.random() < 0.6):
                offset, n, want = pending.popleft()
                gaps += offset != expected + H
                assert r.take(offset, n) == want
                expected = (offset + n) % w.capacity
                taken += 1
                at = (0, 0)
    while pending:
        offset, n, want = pending.popleft()
        assert r.take(offset, n) == want
    assert taken > 1000 and refused > 100 and gaps > 100  # the paths under test did run


def test_several_buffers_make_one_record(ring: tuple[ShmWriter, ShmReader]) -> None:
    w, r = ring
    a = np.arange(12, dtype="<f8").reshape(3, 4)
    strided = np.arange(20, dtype="<i2")[::2]  # not contiguous: copied once, still right
    parts: list[object] = [b"head", memoryview(b"mid"), a, strided, np.float32(1.5), bytearray(b"")]
    at = w.put(parts)  # type: ignore[arg-type]
    assert at is not None
    want = b"head" + b"mid" + a.tobytes() + strided.tobytes() + np.float32(1.5).tobytes()
    assert at == (H, len(want))
    got = r.take(*at)
    assert got == want
    np.testing.assert_array_equal(np.frombuffer(got, "<f8", 12, 7).reshape(3, 4), a)


def test_full_ring_refuses_then_frees(ring: tuple[ShmWriter, ShmReader]) -> None:
    w, r = ring
    n = 250 - H  # each record takes 250 bytes of the ring, its header included
    records = [w.put([payload(i, n)]) for i in range(4)]
    assert records == [(H, n), (250 + H, n), (500 + H, n), (750 + H, n)]
    assert w.put([b""]) is None  # not one byte free
    assert r.take(H, n) == payload(0, n)
    assert w.put([payload(9, n + 1)]) is None  # only 250 came back
    assert w.put([payload(9, n)]) == (H, n)
    for i, at in enumerate(records[1:], 1):
        assert at is not None and r.take(*at) == payload(i, n)
    assert r.take(H, n) == payload(9, n)


def test_gap_at_the_tail_is_skipped_and_released(ring: tuple[ShmWriter, ShmReader]) -> None:
    w, r = ring
    # (sizes less the header: the records take 400, 400, 300 and 100 bytes of the ring)
    assert w.put([payload(0, 400 - H)]) == (H, 400 - H)
    assert w.put([payload(1, 400 - H)]) == (400 + H, 400 - H)
    assert r.take(H, 400 - H) == payload(0, 400 - H)
    # 200 bytes left at the tail, 400 free at the head: the record goes to 0.
    assert w.put([payload(2, 300 - H)]) == (H, 300 - H)
    assert w.put([payload(3, 100 - H)]) == (300 + H, 100 - H)
    assert w.put([b""]) is None  # the skipped tail is not free
    assert r.take(400 + H, 400 - H) == payload(1, 400 - H)
    with pytest.raises(ShmError):
        r.take(300 + H, 100 - H)  # the wrapped record comes first
    assert r.take(H, 300 - H) == payload(2, 300 - H)  # releases the 200-byte gap too
    assert r.take(300 + H, 100 - H) == payload(3, 100 - H)
    assert w.put([payload(5, w.max_record)]) == (400 + H, w.max_record)  # everything is free again
    assert r.take(400 + H, w.max_record) == payload(5, w.max_record)


def test_record_larger_than_half_the_ring_goes_inline(ring: tuple[ShmWriter, ShmReader]) -> None:
    w, r = ring
    big = w.max_record
    assert big + H == w.capacity // 2  # with its header, half the ring
    assert w.put([b"x" * (big + 1)]) is None
    assert w.put([b"x" * 300, b"y" * (big - 299)]) is None
    assert w.put([b"x" * big]) == (H, big)
    assert w.put([b""]) == (500 + H, 0)
    assert r.take(H, big) == b"x" * big
    assert r.take(500 + H, 0) == b""


def test_taken_copy_is_private(ring: tuple[ShmWriter, ShmReader]) -> None:
    w, r = ring
    at = w.put([b"a" * 400])
    assert at is not None
    got = r.take(*at)
    for i in range(5):  # overwrite the ring several times over
        at = w.put([bytes([i]) * 400])
        assert at is not None and r.take(*at) == bytes([i]) * 400
    assert got == b"a" * 400


def test_wrong_token_bad_names_and_foreign_segments() -> None:
    w = ShmWriter(4096, TOKEN)
    try:
        with pytest.raises(ShmError, match="token"):
            ShmReader(w.name, b"another federation")
        for name in ["rfed-0123456789abcdef00000000", "psm_12345678", "../etc/passwd", "", "rfed-", 7]:
            with pytest.raises(ShmError):
                ShmReader(name, TOKEN)  # type: ignore[arg-type]
    finally:
        w.close()
    # A segment under our prefix that is not a ring (or a too-small / lying one).
    for content, size in [(b"", 64), (b"RFEDSHM1", 100), (b"junk" * 64, 4096)]:
        shm = SharedMemory("rfed-00000000deadbeef", create=True, size=size)
        try:
            shm.buf[: len(content)] = content
            with pytest.raises(ShmError):
                ShmReader(shm.name, TOKEN)
        finally:
            shm.close()
            shm.unlink()


def test_lying_capacity_is_refused() -> None:
    w = ShmWriter(4096, TOKEN)
    try:
        shm = SharedMemory(w.name)  # the test's own handle, to forge the header
        try:
            assert shm.buf is not None
            shm.buf[24:32] = (1 << 50).to_bytes(8, "little")
            with pytest.raises(ShmError, match="capacity"):
                ShmReader(w.name, TOKEN)
        finally:
            shm.close()
    finally:
        w.close()  # also unregisters the name the test's handle registered


def test_capacity_bounds() -> None:
    for bad in [0, 63, -1, 1 << 41]:
        with pytest.raises(ShmError, match="capacity"):
            ShmWriter(bad, TOKEN)


GOOD = (400 + H, 300)  # the one record to take in test_forged_descriptors_are_refused


@given(st.lists(st.tuples(st.integers(-2, 1200) | st.sampled_from([1 << 64, -(1 << 63)])
                          | st.integers(GOOD[0] - 2 * H, GOOD[0] + 2 * H),  # around the record's start
                          st.integers(-2, 1200)), max_size=30))
@example([(GOOD[0], 1)])  # its first byte (found by hypothesis: taken, and the reader out of step)
@example([(GOOD[0], 0)])  # nothing where it starts: no empty record was put there
@example([(GOOD[0], 299), (GOOD[0], 100), (GOOD[0] + 1, 299), (GOOD[0] + 100, 200)])
@settings(max_examples=60, deadline=None)
def test_forged_descriptors_are_refused(forged: list[tuple[int, int]]) -> None:
    """Only the record that was put, whole, is taken: no part of it, nothing before or
    after it, nothing where it is not."""
    w = ShmWriter(1000, TOKEN)
    r = ShmReader(w.name, TOKEN)
    try:
        assert w.put([payload(0, 400 - H)]) == (H, 400 - H)
        assert r.take(H, 400 - H) == payload(0, 400 - H)
        good = w.put([payload(1, 300)])  # its header at 400
        assert good == GOOD
        for at in forged:
            if at == good:
                continue
            with pytest.raises(ShmError):
                r.take(*at)
        # A descriptor past what was written: the true next one but longer, or a forged
        # wrap to 0 (which would claim the 600-byte tail as a gap).
        for at in [(good[0], 301), (H, 300), (H, 0), (0, 0), (True, 300), (float(good[0]), 300)]:
            with pytest.raises(ShmError):
                r.take(*at)  # type: ignore[arg-type]
        assert r.take(*good) == payload(1, 300)  # refusals changed nothing
    finally:
        r.close()
        w.close()


def test_only_whole_records_in_order_are_taken(ring: tuple[ShmWriter, ShmReader]) -> None:
    """Descriptors that stay inside what was written, at the position where the next
    record starts, and yet do not name it: a part of it, two records as one, or a wrap
    to 0 that would skip it as if it were a gap. Positions and counters alone allow them."""
    w, r = ring

    def refused(*forged: tuple[int, int]) -> None:
        for at in forged:
            with pytest.raises(ShmError):
                r.take(*at)

    while True:  # records of 50 and 300 bytes until the second one wraps to 0
        a, b = w.put([payload(2, 50)]), w.put([payload(3, 300)])
        assert a is not None and b is not None
        if b[0] < a[0]:
            break
        refused((a[0], 49), (a[0], 1), (a[0], 0),  # a part of it
                (a[0], b[0] + b[1] - a[0]),  # both as one
                b)  # the second one first
        assert r.take(*a) == payload(2, 50) and r.take(*b) == payload(3, 300)
    refused((a[0], 49), (a[0], 0),
            (a[0], w.capacity - a[0]),  # it and the tail the writer skipped
            b)  # the wrapped one, skipping this one (the tail from it on would pass for the gap)
    assert r.take(*a) == payload(2, 50)
    refused((b[0], 299), (b[0], 1))
    assert r.take(*b) == payload(3, 300)


def test_corrupt_counters_are_refused(ring: tuple[ShmWriter, ShmReader]) -> None:
    w, r = ring
    at = w.put([b"z" * 10])
    assert at is not None
    shm = SharedMemory(w.name)
    try:
        assert shm.buf is not None
        shm.buf[64:72] = (1 << 40).to_bytes(8, "little")  # written: far ahead
        with pytest.raises(ShmError, match="corrupt"):
            r.take(*at)
        shm.buf[64:72] = (H + 10).to_bytes(8, "little")
        assert r.take(*at) == b"z" * 10
        shm.buf[128:136] = (H + 11).to_bytes(8, "little")  # released beyond written
        with pytest.raises(ShmError, match="corrupt"):
            w.put([b"z"])
        shm.buf[128:136] = (H + 10).to_bytes(8, "little")
    finally:
        shm.close()


def test_closed_sides_refuse() -> None:
    w = ShmWriter(1000, TOKEN)
    r = ShmReader(w.name, TOKEN)
    at = w.put([b"abc"])
    r.close()
    r.close()
    with pytest.raises(ShmError, match="closed"):
        r.take(*at)  # type: ignore[misc]
    w.close()
    w.close()
    with pytest.raises(ShmError, match="closed"):
        w.put([b"abc"])


@posix_shm
def test_writer_close_and_garbage_collection_unlink() -> None:
    w = ShmWriter(1000, TOKEN)
    path = DEV_SHM / w.name
    assert path.exists()
    r = ShmReader(w.name, TOKEN)
    w.close()
    assert not path.exists()
    with pytest.raises(ShmError, match="cannot attach"):
        ShmReader(w.name, TOKEN)
    r.close()  # unmapping after the unlink is fine

    w = ShmWriter(1000, TOKEN)
    path = DEV_SHM / w.name
    del w
    gc.collect()
    assert not path.exists()


# The two-process tests run in a fresh interpreter so that its whole process tree's
# stderr (the resource tracker included) is ours to inspect.
_TWO_PROCESSES = textwrap.dedent("""
    import multiprocessing as mp, os, sys
    import numpy as np
    from reactorfed.federation.io.shm import ShmReader, ShmWriter

    TOKEN, N = b"tok", 40

    def array(i):
        return np.random.default_rng(i).standard_normal((i % 7 + 1, 1000 + 37 * i)).astype("<f4")

    def writer(conn):
        w = ShmWriter(1 << 20, TOKEN)
        conn.send(w.name)
        for i in range(N):
            a = array(i)
            while (at := w.put([a])) is None:  # the ring is full: wait for the reader
                conn.recv()
            conn.send((at, a.shape))
        while conn.recv() != "done":  # the reader's acknowledgements
            pass
        w.close()
        conn.send("closed")

    def reader(name, conn):
        r = ShmReader(name, TOKEN)
        for i in range(N):
            (offset, n), shape = conn.recv()
            got = np.frombuffer(r.take(offset, n), "<f4").reshape(shape)
            np.testing.assert_array_equal(got, array(i))
            conn.send("taken")
        r.close()

    if __name__ == "__main__":
        ctx = mp.get_context("spawn")
        if sys.argv[1] == "child-writes":
            mine, theirs = ctx.Pipe()
            p = ctx.Process(target=writer, args=(theirs,))
            p.start()
            name = mine.recv()
            reader(name, mine)
            mine.send("done")
            assert mine.recv() == "closed"
            p.join()
            assert p.exitcode == 0
        else:  # the reader is an unrelated process (its own tracker) and exits first
            import subprocess, threading
            mine, theirs = ctx.Pipe()
            t = threading.Thread(target=writer, args=(theirs,))
            t.start()
            name = mine.recv()
            child = subprocess.Popen([sys.executable, __file__, "reader", name],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            for i in range(N):
                msg = mine.recv()
                child.stdin.write(repr(msg) + "\\n"); child.stdin.flush()
                assert child.stdout.readline() == "taken\\n"
                mine.send("taken")
            child.stdin.close()
            assert child.wait() == 0
            assert os.path.exists("/dev/shm/" + name), "the reader's exit unlinked the segment"
            mine.send("done")
            assert mine.recv() == "closed"
            t.join()
        print("NAME", name)
""")

_READER = textwrap.dedent("""
    import ast, sys
    import numpy as np
    from reactorfed.federation.io.shm import ShmReader
    r = ShmReader(sys.argv[2], b"tok")
    for i in range(40):
        (offset, n), shape = ast.literal_eval(sys.stdin.readline())
        got = np.frombuffer(r.take(offset, n), "<f4").reshape(shape)
        want = np.random.default_rng(i).standard_normal((i % 7 + 1, 1000 + 37 * i)).astype("<f4")
        np.testing.assert_array_equal(got, want)
        print("taken", flush=True)
    r.close()
""")


@posix_shm
@pytest.mark.parametrize("mode", ["child-writes", "reader-exits-first"])
def test_two_processes(tmp_path: Path, mode: str) -> None:
    script = tmp_path / "two.py"
    # One file plays both scripts: argv[1] == "reader" is the unrelated reader process.
    script.write_text(
        "import sys\nif sys.argv[1] == 'reader':\n"
        + textwrap.indent(_READER, "    ")
        + "    sys.exit(0)\n"
        + _TWO_PROCESSES
    )
    done = subprocess.run([sys.executable, str(script), mode], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # no "leaked shared_memory" warning, no tracker KeyError
    name = done.stdout.split()[-1]
    assert name.startswith("rfed-")
    assert not (DEV_SHM / name).exists()


def test_lent_records_are_views_given_back_in_order(ring: tuple[ShmWriter, ShmReader]) -> None:
    w, r = ring
    n = 250 - H  # records of 250 bytes of the ring each
    at = [w.put([payload(i, n)]) for i in range(4)]
    assert None not in at
    views = [r.lend(*a) for a in at]  # type: ignore[misc]
    assert [bytes(v) for v in views] == [payload(i, n) for i in range(4)]
    assert not views[0].flags.writeable
    with pytest.raises(ValueError):
        views[0][0] = 1  # read-only: the ring is the writer's to reuse
    assert w.put([b""]) is None and r.lent() == 4
    derived = views[1].reshape(9, 26)[2:]  # a view of a view keeps the record
    del views[1]
    assert w.put([b""]) is None  # record 0 still lent: nothing before record 1 is free
    del views[0]
    assert w.pending() == 750  # record 0 came back; record 1 lives on in `derived`
    assert bytes(derived[0]) == payload(1, n)[52:78]
    del derived
    assert w.pending() == 500 and r.lent() == 2
    taken_after = w.put([payload(7, 200 - H)])
    assert taken_after == (H, 200 - H)
    views.clear()  # records 2 and 3 go back
    assert w.pending() == 200 and r.lent() == 0
    assert r.take(*taken_after) == payload(7, 200 - H)


def test_a_take_behind_a_lent_record_waits_for_it(ring: tuple[ShmWriter, ShmReader]) -> None:
    w, r = ring
    a, b = w.put([payload(0, 100 - H)]), w.put([payload(1, 100 - H)])
    assert a is not None and b is not None
    kept = r.lend(*a)
    assert r.take(*b) == payload(1, 100 - H)
    assert w.pending() == 200  # the copied record's space comes back with the lent one's
    del kept
    assert w.pending() == 0


def test_closing_the_reader_leaves_lent_arrays_readable(ring: tuple[ShmWriter, ShmReader]) -> None:
    w, r = ring
    at = w.put([payload(3, 64)])
    assert at is not None
    kept = r.lend(*at)
    r.close()
    assert bytes(kept) == payload(3, 64)  # still mapped; goes with the process
    with pytest.raises(ShmError):
        r.lend(*at)


def test_no_room_in_dev_shm_is_an_error_not_a_sigbus(monkeypatch: pytest.MonkeyPatch) -> None:
    import errno
    import os

    def full(fd: int, offset: int, length: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    before = set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()
    monkeypatch.setattr(os, "posix_fallocate", full, raising=False)
    with pytest.raises(ShmError, match="reserve"):
        ShmWriter(1 << 20, TOKEN)
    if os.path.isdir("/dev/shm"):
        assert set(os.listdir("/dev/shm")) == before  # nothing left behind


@posix_shm
def test_the_writer_keeps_its_name_until_a_reader_has_attached() -> None:
    w = ShmWriter(1000, TOKEN)
    try:
        assert not w.reader_needs_name()  # nothing sent: nothing to lose
        at = w.put([payload(5, 100)])
        assert at is not None and w.reader_needs_name()
        with pytest.raises(ShmError):
            ShmReader(w.name, b"another federation")
        assert w.reader_needs_name()  # a refused reader is no reader
        r = ShmReader(w.name, TOKEN)
        kept = r.lend(*at)
        assert w.pending() > 0 and not w.reader_needs_name()  # it may keep the record to its end
        name = w.name
        w.close()  # unlinks the name...
        assert not (DEV_SHM / name).exists()
        assert bytes(kept) == payload(5, 100)  # ...and the reader's mapping lives on
        del kept
        r.close()
    finally:
        w.close()
    assert not w.reader_needs_name()  # closed
