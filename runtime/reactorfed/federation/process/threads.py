"""A whole federation in one process, one thread per federate plus the RTI, over real
ZeroMQ sockets on loopback. For tests and notebooks: every federate gets its own
instance of the program, exactly as separate processes would."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...execution.environment import RunSummary
from ...model.reactor import Reactor
from ...time.clock import Clock
from ..coordination.credentials import KeyTable
from ..errors import FederationError
from ..io.curve import plaintext_opted_out, raw_key
from .clock_sync import ClockSyncOptions
from .defaults import DEFAULT_HEARTBEAT_TIMEOUT_NS, DEFAULT_LEAD_WINDOW_NS
from .federate_config import FederateConfig
from .member_keys import MemberCredentials, RtiCredentials, issue
from .rti_server import RtiConfig, RtiSummary
from .runner import layout_of, run_federate, run_rti

__all__ = ["ThreadedRun", "run_threads"]


@dataclass
class ThreadedRun:
    rti: RtiSummary | None = None
    summaries: dict[str, RunSummary] = field(default_factory=dict)
    #: each federate's own instance of the program (inspect its reactors' state)
    programs: dict[str, Reactor] = field(default_factory=dict)
    errors: dict[str, BaseException] = field(default_factory=dict)
    #: grants each federate computed itself from the reports its peers relayed
    peer_grants: dict[str, int] = field(default_factory=dict)
    #: payloads each federate sent through shared memory
    shm_payloads: dict[str, int] = field(default_factory=dict)
    #: downstream peers each federate sent to over their Unix sockets
    unix_links: dict[str, int] = field(default_factory=dict)
    #: each federate's clock (a SyncedClock under clock synchronization: its offset)
    clocks: dict[str, Clock] = field(default_factory=dict)

    def raise_errors(self) -> None:
        if self.errors:
            name, err = next(iter(self.errors.items()))
            raise FederationError(f"{name} failed: {err}") from err


def run_threads(
    factory: Callable[[], Reactor],
    *,
    fast: bool = True,
    timeout: int | None = None,
    workers: int = 1,
    join_timeout_s: float = 60.0,
    liveness_ns: int = DEFAULT_HEARTBEAT_TIMEOUT_NS,
    trusted_pickle: bool = False,
    peer_grants: bool = True,
    unix_sockets: bool = True,
    coordination: str = "centralized",
    clock_sync: ClockSyncOptions | None = None,
    lead_window: int | None = DEFAULT_LEAD_WINDOW_NS,
) -> ThreadedRun:
    """Run ``factory()``'s program federated in threads; wait for the end. ``clock_sync``:
    LF's clock synchronization (None: off). ``lead_window``: how far (ns of logical time) a
    federate may run ahead of those downstream of it (None: without limit;
    :class:`.rti_config.RtiConfig`)."""
    sync = ClockSyncOptions(mode="off") if clock_sync is None else clock_sync
    fid = f"threads-{os.getpid()}-{threading.get_ident()}"
    names = layout_of(factory()).names
    # a key per member, as `launch` issues them: no secret is shared (in plain text, opted
    # out by the environment, there are no keys: a shared secret says who belongs)
    plain = plaintext_opted_out()
    secret = os.urandom(16) if plain else b""
    rti_keys, member_keys = issue(names)
    table = KeyTable({n: raw_key(k.public) for n, k in member_keys.items()})
    out = ThreadedRun()
    bound = threading.Event()
    endpoint: list[str] = []

    def on_bound(e: str, status_port: int | None) -> None:
        endpoint.append(e)
        bound.set()

    def rti() -> None:
        try:
            out.rti = run_rti(factory(), RtiConfig(fid, secret, port=0, liveness_ns=liveness_ns,
                                                   coordination=coordination, lead_window=lead_window,
                                                   credentials=None if plain else RtiCredentials(rti_keys, table),
                                                   **sync.rti()),
                              on_bound=on_bound)
        except BaseException as e:
            out.errors["rti"] = e
            bound.set()

    def fed(name: str) -> None:
        main = factory()
        out.programs[name] = main
        cfg = FederateConfig(fid, secret, endpoint[0], liveness_ns=liveness_ns, trusted_pickle=trusted_pickle,
                             peer_grants=peer_grants, unix_sockets=unix_sockets,
                             credentials=None if plain else MemberCredentials(member_keys[name],
                                                                              raw_key(rti_keys.public)),
                             **sync.federate())
        scheds: list[Any] = []
        try:
            out.summaries[name] = run_federate(main, name, cfg, fast=fast, timeout=timeout, workers=workers,
                                               on_scheduler=scheds.append)
        except BaseException as e:
            out.errors[name] = e
        finally:
            if scheds:
                out.peer_grants[name] = scheds[0].coordinator.local_grants
                out.shm_payloads[name] = scheds[0].coordinator.shm_messages
                out.unix_links[name] = scheds[0].coordinator.unix_links
                out.clocks[name] = scheds[0].clock

    t = threading.Thread(target=rti, name="rti", daemon=True)
    t.start()
    if not bound.wait(join_timeout_s) or not endpoint:
        t.join(5)
        out.errors.setdefault("rti", FederationError("the RTI did not start"))
        return out
    threads = [threading.Thread(target=fed, args=(n,), name=n, daemon=True) for n in names]
    for th in threads:
        th.start()
    for th in [*threads, t]:
        th.join(join_timeout_s)
        if th.is_alive():
            out.errors.setdefault(th.name, FederationError(f"{th.name} did not finish within {join_timeout_s} s"))
    return out


