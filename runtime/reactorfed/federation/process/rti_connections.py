"""Which connection is whose, at the RTI: the :class:`Connections` part of
:class:`.rti_server.RtiServer`. A joined federate's connections (control and heartbeat)
name it until its process is forgotten. A hot swap's new process (a transient federate's:
:class:`..coordination.admission.Swap`) is held on its connection, saying nothing, until
the process it replaces is forgotten (it takes over), the swap is refused, or its
connection closes.
"""

from __future__ import annotations

import logging

from ..coordination.admission import Admission
from ..coordination.layout import Layout

__all__ = ["Connections"]

log = logging.getLogger("reactorfed.rti")


class Connections:
    """The RTI's connections (by the transport's connection id) and whose each is."""

    def __init__(self, layout: Layout, admission: Admission) -> None:
        self._names = layout.names
        self._admission = admission
        self._fed_of_fd: dict[int, int] = {}  # a joined federate's connection -> the federate
        self._held_fd: dict[int, int] = {}  # a hot swap's new process's connection -> the federate

    def joined(self, fd: int, f: int) -> None:
        """Connection ``fd`` is federate ``f``'s (it passed a handshake over it)."""
        self._fed_of_fd[fd] = f

    def forget(self, f: int) -> None:
        """Federate ``f``'s process is gone: its connections no longer name it."""
        for fd in [fd for fd, g in self._fed_of_fd.items() if g == f]:
            del self._fed_of_fd[fd]

    def closed(self, fd: int) -> int | None:
        """Connection ``fd`` closed: the joined federate it was of (None: none). A held new
        process's connection: its swap is dropped (the swap's leave goes on: it was
        agreed, or is being)."""
        f = self._fed_of_fd.pop(fd, None)
        if f is None:
            held = self._held_fd.pop(fd, None)
            if held is not None:
                self._admission.drop_swap(held)
                log.warning(
                    "the new process for %s went away before it took over", self._names[held]
                )
        return f

    def hold(self, fd: int, f: int) -> None:
        """A new process for federate ``f`` (a hot swap) waits on connection ``fd``."""
        self._held_fd[fd] = f

    def take_over(self, f: int) -> tuple[int, bytes] | None:
        """Federate ``f``'s process is forgotten: the connection and peer of a new process
        held for it, which joins now (None: none is held)."""
        peer = self._admission.take_over(f)
        if peer is None:
            return None
        fd = next(fd for fd, g in self._held_fd.items() if g == f)
        del self._held_fd[fd]
        log.info("hot swap of %s: its new process takes over", self._names[f])
        return fd, peer

    def refuse(self, f: int) -> bytes | None:
        """The hot swap of ``f`` cannot be: its held new process is let go. Its peer, to be
        told why (None: it is gone already)."""
        peer = self._admission.drop_swap(f)
        for fd in [fd for fd, g in self._held_fd.items() if g == f]:
            del self._held_fd[fd]
        return peer
