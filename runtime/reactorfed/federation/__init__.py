"""Federated execution: a program split into federates, coordinated by an RTI.

The names below load their modules on first use: importing ``reactorfed.federation``
(as ``reactorfed``'s command line does to list its commands) loads neither ZeroMQ nor
msgpack nor numpy until a federation actually runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_attributes

if TYPE_CHECKING:
    from .coordination.layout import Layout
    from .errors import FederationError
    from .process.clock_sync import ClockSyncOptions
    from .process.defaults import CREDENTIAL_ENV_VARS, KEY_FILE_ENV, MEMBER_KEYS_ENV, SECRET_ENV
    from .process.federate_config import FederateConfig
    from .process.layout_file import LayoutFile
    from .process.member_keys import MemberCredentials, RtiCredentials, issue_key_files
    from .process.rti_server import RtiConfig, RtiSummary
    from .process.runner import layout_of, run_federate, run_rti, serve_rti
    from .process.threads import ThreadedRun, run_threads
    from .wire.codec import CodecError

#: public name -> the module (relative to this package) that defines it
_HOME = {
    "CREDENTIAL_ENV_VARS": "process.defaults",
    "KEY_FILE_ENV": "process.defaults",
    "MEMBER_KEYS_ENV": "process.defaults",
    "SECRET_ENV": "process.defaults",
    "ClockSyncOptions": "process.clock_sync",
    "CodecError": "wire.codec",
    "FederateConfig": "process.federate_config",
    "FederationError": "errors",
    "Layout": "coordination.layout",
    "LayoutFile": "process.layout_file",
    "MemberCredentials": "process.member_keys",
    "RtiConfig": "process.rti_server",
    "RtiCredentials": "process.member_keys",
    "RtiSummary": "process.rti_server",
    "ThreadedRun": "process.threads",
    "issue_key_files": "process.member_keys",
    "layout_of": "process.runner",
    "run_federate": "process.runner",
    "run_rti": "process.runner",
    "run_threads": "process.threads",
    "serve_rti": "process.runner",
}

__all__ = [
    "CREDENTIAL_ENV_VARS",
    "KEY_FILE_ENV",
    "MEMBER_KEYS_ENV",
    "SECRET_ENV",
    "ClockSyncOptions",
    "CodecError",
    "FederateConfig",
    "FederationError",
    "Layout",
    "LayoutFile",
    "MemberCredentials",
    "RtiConfig",
    "RtiCredentials",
    "RtiSummary",
    "ThreadedRun",
    "issue_key_files",
    "layout_of",
    "run_federate",
    "run_rti",
    "run_threads",
    "serve_rti",
]
assert sorted(__all__) == sorted(_HOME)


__getattr__ = lazy_attributes(__name__, globals(), _HOME)


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOME])
