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
    "federated/failing/ClockSync.lf": (
        "tests LF's runtime clock synchronization between federates (`clock-sync: on`, artificial clock "
        "offsets, C code reading `_lf_clock_sync_offset`; LF lists it as failing); reactorfed has no clock "
        "synchronization: federates agree on tags, and hosts keep their own clocks"
    ),
    "federated/failing/DistributedNetworkOrder.lf": (
        "calls `send_timed_message`, an internal C API of LF's federated runtime, to put two messages on "
        "the network with the same intended tag (C code; LF lists it as failing); reactorfed has no such "
        "call: messages between federates come only from connections"
    ),
    "federated/failing/LoopDistributedCentralized.lf": _REALTIME_THREAD,
    "federated/failing/LoopDistributedDouble.lf": _REALTIME_THREAD + " (with two connections each way)",
    "federated/failing/LoopDistributedDecentralized.lf": (
        _REALTIME_THREAD + " (under decentralized coordination, with an STP handler and STP offsets)"
    ),
    "federated/failing/TopLevelArtifacts.lf": (
        "puts reactions, ports, an action and state in the federated (top-level) reactor, which LF "
        "replicates in every federate (LF lists it as failing); a reactorfed federated program's main "
        "reactor only contains federates and connects them (anything else is refused at assembly, with "
        "a message saying so)"
    ),
}
