"""A federate's side of the lead window, pure: the :class:`FederateLead` part of
:class:`.federate_core.FederateCore`. The RTI decides how far ahead of its downstream
federates a federate may go (:mod:`.rti_lead`); this part holds the last tag it may
process now, which the RTI's LEAD widens, and counts how often it waited there. The core
reads :attr:`FederateLead.limit` directly on its hot paths (``acquire``): no call.
"""

from __future__ import annotations

from ...time.tag import FOREVER_T, TagT
from .rti_lead import limit_at

__all__ = ["FederateLead"]


class FederateLead:
    """Where a federate's lead window ends (see the module docstring)."""

    def __init__(self) -> None:
        #: the last tag the window lets this federate process (FOREVER: no window, or no
        #: downstream federate)
        self.limit: TagT = FOREVER_T
        #: how often it waited at the window's edge
        self.waits = 0

    def begin(self, start: int, window: int) -> None:
        """The federation started at ``start`` with a window of ``window`` ns."""
        self.limit = limit_at(start, window)

    def widen(self, tag: TagT) -> None:
        """LEAD: the window lets this federate process every tag up to ``tag``."""
        if tag > self.limit:
            self.limit = tag
