"""LF's ``federated/`` programs that are not ported, each with its reason (rendered into
docs/conformance.md): a transient program whose outcome is a race of physical times, and
programs whose subject is C code or a C-internal API."""

from __future__ import annotations

_TRANSIENT_LOOP_DECENTRALIZED = (
    "its outcome is a race of physical times, by design (LF calls it intrinsically flaky: its maxwaits and "
    "`absent_after`s \"cover the flakiness most of the time\"), and here the race is lost every time: `mid` "
    "(maxwait 0) and Persistence (maxwait 200 ms) are a zero-delay cycle under decentralized coordination. "
    "reactorfed starts a tag at its time + maxwait + the largest `absent_after` of the federate's inputs "
    "(LF starts it at time + maxwait, none at the start tag, and applies each `absent_after` at the reaction "
    "that reads its port), so Persistence takes up each of `mid`'s tags 400 ms after its time; `mid` waits "
    "for Persistence's word on `in_from_persistence` until then too (its `absent_after`), and only then sends "
    "`out_to_persistence`, which reaches Persistence just after its own wait for it (200 + 200 ms) ended: a "
    "tardy event, on which the program's tardy handlers exit (ported and run here: a tardy "
    "`in_from_persistence` at (0, 1)). LF's per-port rule would give it LF's odds; a transient federate on a "
    "zero-delay cycle is supported (`TransientStatePersistence.lf` and its physical-connection variant, ported "
    "with LF's zero-delay cycle), and so are transient federates under decentralized coordination (the four "
    "other decentralized transient programs)"
)
_REALTIME_THREAD = (
    "its reactions are C code in a Python-target file (LF lists it as failing); its logic is a thread "
    "that schedules a physical action every second of real time, checked for a count after a 5 s timeout: "
    "5 s of wall clock per run, and a count that depends on the machine's timing"
)

LEFT_OUT: dict[str, str] = {
    "federated/TransientDecentralizedStatePersistence.lf": _TRANSIENT_LOOP_DECENTRALIZED,
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
