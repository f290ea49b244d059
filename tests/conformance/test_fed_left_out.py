"""LF's ``federated/`` programs that are not ported, each with its reason (rendered into
docs/conformance.md): transient federates (``@transient``: a federate that leaves and
rejoins a running federation by itself, by its own stop request; see ``_TRANSIENT``), and
programs whose subject is C code or a C-internal API."""

from __future__ import annotations

_TRANSIENT = (
    "tests a transient federate (`@transient`: it leaves the running federation by its own stop "
    "request, `lf.stop()`, and another federate launches it again, which joins at its effective start "
    "tag, `lf.tag_start_effective()`); reactorfed has transient federates (`transient(...)`, elastic "
    "slots: they join and leave at agreed tags by LF's rule, and `tag_start_effective` exists), but "
    "not yet a transient federate's stop request taken as its leave (here it stops the federation; "
    "only a signal to its process, or its driver's request_leave, is a leave), which every one of "
    "these programs relies on"
)
_TRANSIENT_DECENTRALIZED = _TRANSIENT + " (under decentralized coordination)"
_REALTIME_THREAD = (
    "its reactions are C code in a Python-target file (LF lists it as failing); its logic is a thread "
    "that schedules a physical action every second of real time, checked for a count after a 5 s timeout: "
    "5 s of wall clock per run, and a count that depends on the machine's timing"
)

LEFT_OUT: dict[str, str] = {
    "federated/TransientDownstreamWithTimer.lf": _TRANSIENT,
    "federated/TransientDownstreamWithTwoUpstream.lf": _TRANSIENT,
    "federated/TransientHotSwap.lf": _TRANSIENT + " (a second instance replacing the first: hot swap)",
    "federated/TransientStatePersistence.lf": _TRANSIENT + " (its state kept by another federate across joins)",
    "federated/TransientStatePersistenceWithPhysicalConnection.lf": (
        _TRANSIENT + " (its state kept across joins), over physical connections (`~>`) between federates"
    ),
    "federated/TransientDecentralizedDownstreamWithTimer.lf": _TRANSIENT_DECENTRALIZED,
    "federated/TransientDecentralizedDownstreamWithTwoUpstream.lf": _TRANSIENT_DECENTRALIZED,
    "federated/TransientDecentralizedHotSwap.lf": _TRANSIENT_DECENTRALIZED,
    "federated/TransientDecentralizedStatePersistence.lf": _TRANSIENT_DECENTRALIZED,
    "federated/TransientDecentralizedWithPhysicalConnection.lf": (
        _TRANSIENT_DECENTRALIZED + "; its connection between federates is physical (`~>`)"
    ),
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
