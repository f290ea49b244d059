"""What a federate's grants require, pure: the :class:`GrantCounts` part of
:class:`.federate_core.FederateCore`. Every grant from the RTI says how many messages from
each upstream peer must have arrived before it is used (the peers reported them sent);
this part holds the most each grant asked, and says whether what arrived (the core's
``received``, which it only reads) meets it. The core reads :attr:`GrantCounts.met`
directly on its hot paths (``acquire``) and calls :meth:`GrantCounts.ok` only when it is
not set.
"""

from __future__ import annotations

__all__ = ["GrantCounts"]


class GrantCounts:
    """The messages the grants require from each upstream peer (see the module docstring)."""

    def __init__(self, received: dict[int, int]) -> None:
        #: upstream peer -> data messages received from it: the core's, counted there
        self._received = received
        #: upstream peer -> messages to have before using the grants
        self.required: dict[int, int] = {}
        #: every message required has arrived (see ok)
        self.met = True

    def ok(self) -> bool:
        """Whether every message the grants require has arrived. Counts only grow: once
        met, they stay met until a grant requires more (see require)."""
        if self.met:
            return True
        rec = self._received
        for u, n in self.required.items():
            if rec.get(u, 0) < n:
                return False
        self.met = True
        return True

    def require(self, counts: dict[int, int]) -> None:
        """A grant's counts: the messages from each upstream peer to have before using it."""
        req = self.required
        for u, n in counts.items():
            if n > req.get(u, 0):
                req[u] = n
                self.met = False

    def clear(self) -> None:
        """The counts start over (a member admitted): nothing is required."""
        self.required = {}
        self.met = True

    def forgive(self, u: int) -> int:
        """Upstream ``u`` failed: what it was still owed is no longer waited for. Returns
        how many messages that was."""
        got = self._received.get(u, 0)
        owed = self.required.get(u, 0) - got
        if owed > 0:
            self.required[u] = got
            self.met = False  # (look again: they may be met now)
        return max(owed, 0)
