"""The federation's error, in a module of its own: the coordinator and the modules it
delegates to (receiving, joining) all raise it."""

from __future__ import annotations

from ..errors import ReactorError

__all__ = ["FederationError"]


class FederationError(ReactorError):
    """The federation cannot go on: rejected, aborted, a peer or the RTI is gone."""
