"""A process's trace recorder: a bounded buffer the program's threads append records to,
and a writer thread that flushes it to the trace file off the reaction thread.

Recording costs a clock read and a list append (:meth:`Recorder._recording`). A full
buffer drops records and counts them (the trailer says how many): the program never waits
for the disk. A directory that cannot be written, or a disk that fills up, is said once
in the log; the program runs on, and every record from then on is counted as dropped.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgpack

from ...time.clock import Clock
from ...time.tag import TagT
from . import records as R
from .otlp import OtlpSink

__all__ = ["DEFAULT_CAPACITY", "THREAD", "Recorder", "read", "trace_path"]

_get_ident = threading.get_ident

log = logging.getLogger("reactorfed.observe.trace")

#: records held before the writer takes them; past this, records are dropped (counted)
DEFAULT_CAPACITY = 1 << 18
#: how often the writer flushes the buffer (seconds)
_FLUSH_S = 0.1
#: a record naming a thread: ``[THREAD, ns, 0, 0, ident, name]`` (written by the writer)
THREAD = 14


def trace_path(directory: str | os.PathLike[str], process: str) -> Path:
    """Where process ``process`` of a run traced into ``directory`` writes its records."""
    return Path(directory) / f"{process}{R.SUFFIX}"


class Recorder:
    """Records of one process (``process``: a federate's name, ``rti``, or the program's
    name in one process), written to ``path`` (:func:`trace_path`)."""

    def __init__(self, path: str | os.PathLike[str] | None, process: str, clock: Clock, *, role: str = "federate",
                 capacity: int = DEFAULT_CAPACITY, otlp_endpoint: str | None = None) -> None:
        """``path`` None: no file (spans to ``otlp_endpoint`` only)."""
        self.path = Path(path) if path is not None else None
        self.process = process
        self.capacity = capacity
        self._now = clock.now
        self._buf: list[Sequence[Any]] = []
        self.dropped = 0
        self.written = 0
        self._failed = False
        self._names: dict[int, str] = {}  # thread ident -> name, as recorded
        self._named: set[int] = set()  # thread idents whose names are in the file
        self._wake = threading.Event()
        self._closed = False
        self._file: Any = None
        if self.path is not None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._file = open(self.path, "wb")  # noqa: SIM115 (held open until close)
            except OSError as e:
                self._fail(f"cannot write the trace file {self.path}: {e}")
        self._otlp: OtlpSink | None = OtlpSink(otlp_endpoint, process, clock, role) if otlp_endpoint else None
        self._buf.append([R.HEADER, self._now(), 0, 0, 0, R.VERSION, process, role, os.getpid(), socket.gethostname()])
        #: record an event of ``kind`` at ``tag`` now, with its fields (:data:`records.FIELDS`);
        #: from any thread
        self.record: Callable[..., None] = self._recording()
        self._writer = threading.Thread(target=self._run, name="reactorfed-trace", daemon=True)
        self._writer.start()

    # -- recording (any thread) ---------------------------------------------------------
    def _recording(self) -> Callable[..., None]:
        """:attr:`record`: a closure over the buffer and the clock, without attribute
        lookups, because it runs twice for every reaction of a traced run."""
        buf, cap, now, names, get_ident = self._buf, self.capacity, self._now, self._names, _get_ident

        def record(kind: int, tag: TagT, *fields: Any) -> None:
            if len(buf) >= cap:
                self.dropped += 1
                return
            ident = get_ident()
            if ident not in names:
                names[ident] = threading.current_thread().name  # (named while it runs)
            buf.append((kind, now(), tag[0], tag[1], ident, *fields))

        return record

    # -- writing (the writer thread) ------------------------------------------------------
    def _run(self) -> None:
        while not self._closed:
            self._wake.wait(_FLUSH_S)
            self._wake.clear()
            self._flush()

    def _take(self) -> list[Sequence[Any]]:
        """The records buffered so far, off the buffer's front (the recording threads only
        append, so the first ``n`` are the ones copied)."""
        buf = self._buf
        n = len(buf)
        batch = buf[:n]
        del buf[:n]
        return batch

    def _flush(self) -> None:
        buf = self._take()
        if not buf:
            return
        if self._otlp is not None:
            self._otlp.export(buf, self._names)
        if self.path is None:
            self.written += len(buf)  # (exported: the SDK says what it could not send)
            return
        if self._failed or self._file is None:
            self.dropped += len(buf)
            return
        # the batch, then new threads' names, as one array: packed in one call
        # (a call per record cost as much as recording it)
        named = [(THREAD, buf[0][1], 0, 0, ident, name) for ident, name in list(self._names.items())
                 if ident not in self._named]
        self._named.update(n[4] for n in named)
        data = msgpack.packb([*buf, *named])  # (the header stays the first record)
        try:
            self._file.write(data)
            self._file.flush()
        except OSError as e:
            self.dropped += len(buf)
            self._fail(f"cannot write the trace file {self.path}: {e}")
            return
        self.written += len(buf)

    def _fail(self, why: str) -> None:
        if not self._failed:
            self._failed = True
            log.warning("%s; the program goes on, its trace records are dropped (and counted)", why)

    def close(self) -> None:
        """Flush what is buffered, write the trailer and close the file."""
        if self._closed:
            return
        self._closed = True
        self._wake.set()
        self._writer.join(5)
        self._flush()
        if self._otlp is not None:
            self._otlp.close()
        if self._file is not None:
            try:
                if not self._failed:
                    self._file.write(msgpack.packb([R.TRAILER, self._now(), 0, 0, 0, self.written, self.dropped]))
                self._file.close()
            except OSError as e:
                self._fail(f"cannot finish the trace file {self.path}: {e}")
        if self.dropped:
            log.warning("trace %s: %d records dropped (buffer full or file not writable)", self.path, self.dropped)


def read(path: str | os.PathLike[str]) -> list[list[Any]]:
    """Every record of one trace file (a file cut short by a crash: what was complete)."""
    out: list[list[Any]] = []
    with open(path, "rb") as f:
        unpacker = msgpack.Unpacker(f, raw=False, strict_map_key=False)
        try:
            for obj in unpacker:  # a record, or a batch of them (a list of lists)
                if obj and isinstance(obj[0], list):
                    out.extend(obj)
                else:
                    out.append(obj)
        except (msgpack.OutOfData, ValueError):
            pass
    return out
