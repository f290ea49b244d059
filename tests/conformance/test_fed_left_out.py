"""LF's ``federated/`` programs that are not ported, each with its reason (rendered into
docs/conformance.md): programs whose subject is C code or a C-internal API, or a count
that depends on the machine's timing."""

from __future__ import annotations

_REALTIME_THREAD = (
    "its reactions are C code in a Python-target file (LF lists it as failing); its logic is a thread "
    "that schedules a physical action every second of real time, checked for a count after a 5 s timeout: "
    "5 s of wall clock per run, and a count that depends on the machine's timing"
)

LEFT_OUT: dict[str, str] = {
    "federated/failing/DistributedNetworkOrder.lf": (
        "calls `send_timed_message`, an internal C API of LF's federated runtime, to put two messages on "
        "the network with the same intended tag (C code; LF lists it as failing); reactorfed has no such "
        "call: messages between federates come only from connections"
    ),
    "federated/failing/LoopDistributedCentralized.lf": _REALTIME_THREAD,
    "federated/failing/LoopDistributedDouble.lf": _REALTIME_THREAD
    + " (with two connections each way)",
    "federated/failing/LoopDistributedDecentralized.lf": (
        _REALTIME_THREAD
        + " (under decentralized coordination, with an STP handler and STP offsets)"
    ),
}
