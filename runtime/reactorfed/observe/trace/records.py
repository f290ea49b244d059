"""What a trace holds: one record per event, in a per-process file of msgpack arrays.

A record is ``[kind, physical ns, tag time, tag microstep, thread, *fields]``; the
fields depend on the kind (:data:`FIELDS`). Times are integer nanoseconds (physical: the
process's clock; logical: the tag, absolute). The file begins with a header
(:data:`HEADER`: the process's name, its role, pid, host and the federation's start time
when known) and ends with a trailer (:data:`TRAILER`: how many records were written and
how many were dropped because the buffer was full or the file could not be written).
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ACTION", "COUNTER", "DEADLINE_MISS", "FIELDS", "GRANT", "HEADER", "JOIN", "KIND_NAMES", "LEAVE", "PROMISE",
    "REACTION_END", "REACTION_START", "RECV", "SEND", "STOP", "SUFFIX", "TRAILER", "USER", "VERSION",
]

VERSION: Final = 1
#: a trace file's name is ``<process>`` + this
SUFFIX: Final = ".rftrace"

HEADER: Final = 0
TRAILER: Final = 1
REACTION_START: Final = 2
REACTION_END: Final = 3
ACTION: Final = 4
SEND: Final = 5
RECV: Final = 6
GRANT: Final = 7
PROMISE: Final = 8
JOIN: Final = 9
LEAVE: Final = 10
STOP: Final = 11
DEADLINE_MISS: Final = 12
USER: Final = 13
# (14: the recorder's THREAD record, a thread's name)
COUNTER: Final = 15

#: each kind's fields after the common five
FIELDS: Final[dict[int, tuple[str, ...]]] = {
    HEADER: ("version", "process", "role", "pid", "host"),
    TRAILER: ("written", "dropped"),
    REACTION_START: ("reaction", "level"),
    REACTION_END: ("reaction", "level"),
    ACTION: ("action", "delay"),  # scheduled at the tag, with that extra delay
    SEND: ("link", "peer", "size"),  # the tag is the message's
    RECV: ("link", "peer", "size"),
    GRANT: ("federate", "provisional"),  # the tag granted (the RTI's record: to whom)
    PROMISE: ("peer",),
    JOIN: ("member",),
    LEAVE: ("member",),
    STOP: ("reason",),
    DEADLINE_MISS: ("reaction",),
    USER: ("name", "value"),
    COUNTER: ("name", "value"),  # a series' value from now on (an int: a count, ns), e.g. a learner's policy lag
}

KIND_NAMES: Final[dict[int, str]] = {
    HEADER: "header", TRAILER: "trailer", REACTION_START: "reaction start", REACTION_END: "reaction end",
    ACTION: "action scheduled", SEND: "send", RECV: "receive", GRANT: "grant", PROMISE: "promise",
    JOIN: "join", LEAVE: "leave", STOP: "stop", DEADLINE_MISS: "deadline miss", USER: "user",
    COUNTER: "counter",
}
