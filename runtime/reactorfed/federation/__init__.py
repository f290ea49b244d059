"""Federated execution: a program split into federates, coordinated by an RTI."""

from .codec import CodecError
from .errors import FederationError
from .federate import FederateConfig
from .layout import Layout
from .rti_server import RtiConfig, RtiSummary
from .runner import layout_of, run_federate, run_rti
from .threads import ThreadedRun, run_threads

__all__ = [
    "CodecError",
    "FederateConfig",
    "FederationError",
    "Layout",
    "RtiConfig",
    "RtiSummary",
    "ThreadedRun",
    "layout_of",
    "run_federate",
    "run_rti",
    "run_threads",
]
