"""Defaults the federation's processes and the command line share, written once here (a
module that imports nothing, so that the command line's help loads nothing heavy)."""

from __future__ import annotations

__all__ = ["CREDENTIAL_ENV_VARS", "DEFAULT_ADVANCE_MESSAGE_INTERVAL_NS", "DEFAULT_HEARTBEAT_TIMEOUT_NS", "DEFAULT_LEAD_WINDOW_NS", "DEFAULT_METRICS_ADDR",
           "KEY_FILE_ENV", "MEMBER_KEYS_ENV", "MIN_HEARTBEAT_TIMEOUT_NS", "SECRET_ENV"]

#: a connection that answers nothing, not even ZeroMQ's heartbeats, for this long is dead
#: (``--heartbeat-timeout``; ``RtiConfig.liveness_ns``, ``FederateConfig.liveness_ns``)
DEFAULT_HEARTBEAT_TIMEOUT_NS = 3_000_000_000
#: the shortest ``--heartbeat-timeout``: a ping answered takes a wakeup of each side's I/O
#: thread, and on a machine with more runnable threads than cores a wakeup waits for a
#: core (a process sleeping 1 ms at a time woke up to 211 ms late on 2 cores beside a
#: CurveZMQ flood and a test suite): below a second, healthy processes are declared dead
MIN_HEARTBEAT_TIMEOUT_NS = 1_000_000_000

#: how far (logical time) a federate may run ahead of the federates downstream of it
#: (``--lead-window``; ``RtiConfig.lead_window``; see :mod:`..coordination.rti_lead`). A
#: second: dozens of periods of the RL plans' timers (1 to 16 ms), so their pipelines
#: keep their overlap, while what queues at a slow consumer and how far past a stop
#: request the federation runs stay bounded by it
DEFAULT_LEAD_WINDOW_NS = 1_000_000_000

#: LF's ``advance-message-interval`` (``--advance-message-interval``;
#: ``FederateConfig.advance_message_interval_ns``): a federate whose outputs a physical action
#: reaches promises no further than physical time allows, and renews that promise this
#: often while it waits; its downstream peers lag physical time by up to this much.
#: reactor-c's default
DEFAULT_ADVANCE_MESSAGE_INTERVAL_NS = 10_000_000

#: where ``--metrics-port`` listens unless ``--metrics-addr`` says otherwise: the metrics
#: and status endpoints carry no authentication, so by default only this machine reaches
#: them. In a pod the operator binds them to every interface, and the federation's
#: NetworkPolicy admits only the operator's namespace and the scraper's
DEFAULT_METRICS_ADDR = "127.0.0.1"

#: the environment variables that carry a process's credentials when no option names them:
#: the shared secret (plain text, or the operator's compatibility mode; ``--secret-file``),
#: the process's own key file (``--key-file``) and the RTI's member table
#: (``--member-keys``). ``reactorfed launch`` issues its own and passes on none it inherits;
#: the operator sets them in its pods and refuses a program's env that names one
SECRET_ENV = "REACTORFED_SECRET"
KEY_FILE_ENV = "REACTORFED_KEY_FILE"
MEMBER_KEYS_ENV = "REACTORFED_MEMBER_KEYS"
CREDENTIAL_ENV_VARS = (SECRET_ENV, KEY_FILE_ENV, MEMBER_KEYS_ENV)
