"""A federate reached through something that forwards its data port (a proxy, a
NodePort): it listens on ``data_port`` and tells its peers ``advertise_port``; every
message then crosses the forwarder, and the federation's results do not change."""

from __future__ import annotations

import contextlib
import socket
import threading

import pytest
from bench.ports import free_port

from reactorfed import ms

from .harness import Federation, reference
from .programs import Pipeline, trace_of

pytestmark = pytest.mark.timeout(120)


class _Relay:
    """A TCP forwarder on loopback: accepts on its own port, relays both ways to
    ``upstream``, and counts the bytes it carried toward it."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.bytes_up = 0
        self._lsock = socket.create_server(("127.0.0.1", 0))
        self.port = self._lsock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                a, _ = self._lsock.accept()
            except OSError:
                return
            b = socket.create_connection(("127.0.0.1", self.upstream))
            threading.Thread(target=self._pipe, args=(a, b, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(b, a, False), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, up: bool) -> None:
        try:
            while data := src.recv(65536):
                if up:
                    self.bytes_up += len(data)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._lsock.close()


def test_peers_reach_a_federate_at_its_advertised_port() -> None:
    fed = Federation(Pipeline)
    sink_port = free_port()
    relay = _Relay(sink_port)
    try:
        for name in fed.layout.names:
            extra = {"data_port": sink_port, "advertise_port": relay.port} if name == "sink" else {}
            fed.start(name, timeout=ms(100), unix_sockets=False, shm_bytes=0, **extra)
        fed.wait(60)
        assert not fed.errors and fed.rti_error is None, (fed.errors, fed.rti_error)
        assert relay.bytes_up > 0, "nothing reached the sink through its advertised port"
        expected = reference(Pipeline, timeout=ms(100))
        assert trace_of(fed.programs) == trace_of({"sink": expected}) and len(expected.sink.trace) == 11  # type: ignore[attr-defined]
    finally:
        relay.close()
