"""A federation in threads over loopback, with its RTI server and every federate's
coordinator within reach (for tests that poke at their ports while they run)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any

from reactorfed import Environment, Reactor, VirtualClock
from reactorfed.federation import FederateConfig, RtiConfig, run_federate
from reactorfed.federation.process.defaults import DEFAULT_HEARTBEAT_TIMEOUT_NS
from reactorfed.federation.process.federate import FederateCoordinator
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
    """An RTI in a thread; federates started one by one with :meth:`start`."""

    def __init__(self, factory: Factory, *, liveness_ns: int = DEFAULT_HEARTBEAT_TIMEOUT_NS, **rti_kwargs: Any) -> None:
        self.factory = factory
        self.fid = f"test-{os.getpid()}-{threading.get_ident()}-{time.monotonic_ns()}"
        self.secret = os.urandom(16)
        self.layout = layout_of(factory())
        self.liveness_ns = liveness_ns
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

    def start(self, name: str, *, key: str | None = None, factory: Factory | None = None, fast: bool = True,
              timeout: int | None = None, **cfg: Any) -> threading.Thread:
        """Run federate ``name`` in a thread; its results are filed under ``key`` (default: name)."""
        key = key or name
        main = (factory or self.factory)()
        self.programs[key] = main

        def on_scheduler(sched: Any) -> None:
            self.coords[key] = sched.coordinator
            self.schedulers[key] = sched

        def body() -> None:
            try:
                self.results[key] = run_federate(main, name, self.config(**cfg), fast=fast, timeout=timeout,
                                                 on_scheduler=on_scheduler)
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
