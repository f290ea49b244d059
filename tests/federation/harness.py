"""A federation in threads over loopback, with its RTI server and every federate's
coordinator within reach (for tests that poke at their ports while they run)."""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reactorfed import Environment, Reactor, VirtualClock
from reactorfed.federation import FederateConfig, RtiConfig, run_federate
from reactorfed.federation.io.curve import CurveKeys, raw_key
from reactorfed.federation.process.defaults import DEFAULT_HEARTBEAT_TIMEOUT_NS
from reactorfed.federation.process.federate import FederateCoordinator
from reactorfed.federation.process.member_keys import (
    MemberCredentials,
    RtiCredentials,
    issue,
    write_member_table,
)
from reactorfed.federation.process.rti_server import RtiServer, RtiSummary
from reactorfed.federation.process.runner import layout_of
from reactorfed.time.clock import SystemClock

Factory = Callable[[], Reactor]


def wait_until(pred: Callable[[], bool], timeout: float = 10.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.005)


def reference(factory: Factory, **kwargs: Any) -> Reactor:
    """Run ``factory()`` in one process (fast, virtual clock); return the program."""
    main = factory()
    kwargs.setdefault("fast", True)
    kwargs.setdefault("clock", VirtualClock())
    Environment(**kwargs).run(main)
    return main


class Federation:
    """An RTI in a thread; federates started one by one with :meth:`start`. ``keyed``: a
    key per member, as ``reactorfed launch`` issues them (:attr:`keys`; the RTI reads the
    member table from :attr:`table`, which :meth:`withdraw` rewrites); else one key per
    federation, from :attr:`secret`."""

    def __init__(self, factory: Factory, *, liveness_ns: int = DEFAULT_HEARTBEAT_TIMEOUT_NS, keyed: bool = False,
                 **rti_kwargs: Any) -> None:
        self.factory = factory
        self.fid = f"test-{os.getpid()}-{threading.get_ident()}-{time.monotonic_ns()}"
        self.layout = layout_of(factory())
        self.liveness_ns = liveness_ns
        self.keys: dict[str, CurveKeys] = {}
        if keyed:
            self.secret = b""
            self.rti_keys, self.keys = issue(self.layout.names)
            self._dir = tempfile.TemporaryDirectory(prefix="reactorfed-keys-")
            self.table = Path(self._dir.name) / "members.json"
            write_member_table(self.table, self.keys)
            rti_kwargs["credentials"] = RtiCredentials(self.rti_keys, path=self.table)
        else:
            self.secret = os.urandom(16)
        self.server = RtiServer(self.layout, RtiConfig(self.fid, self.secret, port=0, liveness_ns=liveness_ns, **rti_kwargs),
                                SystemClock())
        self.endpoint = self.server.bind()
        self.summary: RtiSummary | None = None
        self.rti_error: BaseException | None = None
        self.programs: dict[str, Reactor] = {}
        self.coords: dict[str, FederateCoordinator] = {}
        self.schedulers: dict[str, Any] = {}
        self.results: dict[str, Any] = {}
        self.errors: dict[str, BaseException] = {}
        self._threads: list[threading.Thread] = []
        t = threading.Thread(target=self._rti, name="rti", daemon=True)
        t.start()
        self._rti_thread = t

    def _rti(self) -> None:
        try:
            self.summary = self.server.run()
        except BaseException as e:
            self.rti_error = e

    def config(self, **kwargs: Any) -> FederateConfig:
        kwargs.setdefault("liveness_ns", self.liveness_ns)
        return FederateConfig(kwargs.pop("federation_id", self.fid), kwargs.pop("secret", self.secret), self.endpoint, **kwargs)

    def credentials(self, member: str) -> MemberCredentials:
        """The credential issued to ``member`` (a keyed federation)."""
        return MemberCredentials(self.keys[member], raw_key(self.rti_keys.public))

    def withdraw(self, member: str) -> None:
        """The issuer withdraws ``member``'s key: the member table without it."""
        write_member_table(self.table, {n: k for n, k in self.keys.items() if n != member})

    def start(self, name: str, *, key: str | None = None, factory: Factory | None = None, fast: bool = True,
              timeout: int | None = None, as_member: str | None = None, clock: Any = None,
              **cfg: Any) -> threading.Thread:
        """Run federate ``name`` in a thread; its results are filed under ``key`` (default:
        name). A keyed federation's federate holds the key issued to ``as_member`` (default: name).
        ``clock``: its clock (default: the system's)."""
        key = key or name
        if self.keys:
            cfg.setdefault("credentials", self.credentials(as_member or name))
        main = (factory or self.factory)()
        self.programs[key] = main

        def on_scheduler(sched: Any) -> None:
            self.coords[key] = sched.coordinator
            self.schedulers[key] = sched

        def body() -> None:
            try:
                self.results[key] = run_federate(main, name, self.config(**cfg), fast=fast, timeout=timeout,
                                                 on_scheduler=on_scheduler, clock=clock)
            except BaseException as e:
                self.errors[key] = e

        t = threading.Thread(target=body, name=key, daemon=True)
        t.start()
        self._threads.append(t)
        return t

    def start_all(self, **kwargs: Any) -> None:
        for name in self.layout.names:
            self.start(name, **kwargs)

    def joined(self, name: str) -> bool:
        return self.layout.index(name) in self.server.admission.control_of

    def running(self) -> bool:
        """Every federate has started and its heartbeat is up."""
        return self.server.phase == "running" and all(
            c._hb is not None and c.data_port is not None for c in (self.coords.get(n) for n in self.layout.names) if c
        ) and all(n in self.coords for n in self.layout.names)

    def data_endpoint(self, name: str) -> str:
        c = self.coords[name]
        assert c.data_port is not None
        return c.data_port.tcp.endpoint

    def wait(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        for t in [*self._threads, self._rti_thread]:
            t.join(max(0.0, deadline - time.monotonic()))
            assert not t.is_alive(), f"{t.name} did not finish within {timeout} s"
