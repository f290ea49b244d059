"""LF's ``federated/`` programs that are not ported, each with its reason (rendered into
docs/conformance.md): transient federates' hot swap and their decentralized variants, and
programs whose subject is C code or a C-internal API."""

from __future__ import annotations

_HOT_SWAP = (
    "tests hot swap: a second process of the transient federate `mid`, launched while the first is still "
    "present (it does not leave by itself here), takes over from it; reactorfed's RTI refuses a second "
    "process for a slot whose process is present (a duplicate); a transient federate's leave by its own "
    "stop request and its relaunch are ported (`TransientDownstreamWithTimer.lf` and the others)"
)
_TRANSIENT_LOOP_DECENTRALIZED = (
    "its subject is the timing of a zero-delay cycle between a transient federate and a persistent one "
    "under decentralized coordination (mid <-> persistence, with per-connection `absent_after` and maxwait 0; "
    "LF calls it intrinsically flaky); reactorfed refuses a transient federate (an elastic member) on a "
    "zero-delay cycle between federates (an absent member could not take part in the cycle's rounds); the "
    "centralized `TransientStatePersistence.lf` is ported with `after 0` on Persistence's reply"
)
_REALTIME_THREAD = (
    "its reactions are C code in a Python-target file (LF lists it as failing); its logic is a thread "
    "that schedules a physical action every second of real time, checked for a count after a 5 s timeout: "
    "5 s of wall clock per run, and a count that depends on the machine's timing"
)

LEFT_OUT: dict[str, str] = {
    "federated/TransientHotSwap.lf": _HOT_SWAP,
    "federated/TransientDecentralizedHotSwap.lf": _HOT_SWAP + " (under decentralized coordination)",
    "federated/TransientDecentralizedStatePersistence.lf": _TRANSIENT_LOOP_DECENTRALIZED,
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
