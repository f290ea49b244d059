"""The federation's error, in a module of its own: the coordinator and the modules it
delegates to (receiving, joining) all raise it."""

from __future__ import annotations

from ..errors import ReactorError

__all__ = ["FederationError", "LinkDownError", "SendError"]


class FederationError(ReactorError):
    """The federation cannot go on: rejected, aborted, a peer or the RTI is gone."""


class LinkDownError(FederationError):
    """A data link from an upstream peer closed before that peer finished: messages on it
    may be lost. Found by the receiving federate, which tells the RTI (a FAIL): nobody
    else can see it."""


class SendError(FederationError):
    """A value this federate cannot send on a link (it cannot be encoded, or is larger than
    a federate takes in one message). Found by the sender, which tells the RTI (a FAIL),
    naming the link."""
