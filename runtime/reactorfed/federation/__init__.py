"""Federated execution: a program split into federates, coordinated by an RTI.

The names below load their modules on first use: importing ``reactorfed.federation``
(as ``reactorfed``'s command line does to list its commands) loads neither ZeroMQ nor
msgpack nor numpy until a federation actually runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_attributes

if TYPE_CHECKING:
    from .codec import CodecError
    from .errors import FederationError
    from .federate import FederateConfig
    from .layout import Layout
    from .rti_server import RtiConfig, RtiSummary
    from .runner import layout_of, run_federate, run_rti
    from .threads import ThreadedRun, run_threads

#: public name -> the module (relative to this package) that defines it
_HOME = {
    "CodecError": "codec",
    "FederateConfig": "federate",
    "FederationError": "errors",
    "Layout": "layout",
    "RtiConfig": "rti_server",
    "RtiSummary": "rti_server",
    "ThreadedRun": "threads",
    "layout_of": "runner",
    "run_federate": "runner",
    "run_rti": "runner",
    "run_threads": "threads",
}

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
assert sorted(__all__) == sorted(_HOME)


__getattr__ = lazy_attributes(__name__, globals(), _HOME)


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOME])
