"""The conformance suite's one way to run a ported Lingua Franca test program.

Each ported program is a pytest test decorated with :func:`lf_test`, which names the LF
source it ports (a path under LF's ``test/Python/src/``). The registry it fills is what
``docs/conformance.md`` is generated from (see ``table.py``), so the table cannot drift
from the tests.

LF test programs check themselves: a reaction that finds a deviation exits with an
error. A port keeps those checks as exceptions raised in reactions (a failed reaction
ends the run with :class:`~reactorfed.ReactionFailed`), and keeps the program's
structure and timing: the same reactors, connections, delays, timers and timeout.

Programs run on a virtual clock: logical time still never runs ahead of (virtual)
physical time unless the program says ``fast``, but waiting costs no wall time.
Federated programs run once in one process and once federated (an RTI and a federate
per top-level child, over loopback); their checks must pass both ways.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest

from reactorfed import Environment, Reactor, RunSummary, VirtualClock

#: The LF commit the ported programs were read at (lf-lang/lingua-franca).
LF_COMMIT = "d5251718496b6e50fdd0e1c2abb781382bd7a1a6"
LF_ROOT = "test/Python/src/"

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Ported:
    source: str  # path under test/Python/src/, e.g. "federated/DistributedCount.lf"
    test: str  # module::function of the test that runs it
    federated: bool


#: source path -> the test that ports it
REGISTRY: dict[str, Ported] = {}


#: LF's other test suites whose programs are ported too, apart from the Python target's
OTHER_SUITES = ("C", "Cpp")
#: (suite, source path under test/<suite>/src/) -> the test that ports it
OTHER_REGISTRY: dict[tuple[str, str], Ported] = {}


def lf_test(source: str, *, federated: bool = False, suite: str = "Python") -> Callable[[F], F]:
    """Mark a test as the port of LF's ``test/<suite>/src/<source>`` (the Python target's
    suite unless ``suite`` names one of :data:`OTHER_SUITES`).

    ``federated=True`` says the test runs the program federated as well as in one
    process (required for programs under ``federated/``).
    """
    assert source.endswith(".lf") and not source.startswith(("/", "test/")), source
    assert suite == "Python" or suite in OTHER_SUITES, suite
    registry: dict[Any, Ported] = REGISTRY if suite == "Python" else OTHER_REGISTRY
    key: Any = source if suite == "Python" else (suite, source)

    def mark(fn: F) -> F:
        test = f"{fn.__module__.rsplit('.', 1)[-1]}::{fn.__name__}"
        prev = registry.get(key)
        assert prev is None or prev.test == test, f"{suite}:{source} is ported twice: {prev} and {test}"
        registry[key] = Ported(source, test, federated)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return fn(*args, **kwargs)

        wrapper.lf_source = source  # type: ignore[attr-defined]
        return pytest.mark.lf(source)(wrapper)  # type: ignore[no-any-return]

    return mark


def run(main: Reactor, *, timeout: int | None = None, fast: bool = False, workers: int = 1,
        keepalive: bool | None = None, clock: Any = None) -> RunSummary:
    """Run a ported program in one process, as LF would with the same target properties
    (``timeout``, ``fast``, ``keepalive``: as in LF, on by default when the program has
    physical actions), on a virtual clock unless one is given."""
    env = Environment(fast=fast, timeout=timeout, workers=workers, keepalive=keepalive,
                      clock=clock if clock is not None else VirtualClock())
    return env.run(main)


def run_local(main: Reactor, *, timeout: int | None = None, fast: bool = False) -> RunSummary:
    """Run a federated program in one process, with ``keepalive`` on, as LF's federates
    always have it (they end at the timeout or a stop request, never by starvation)."""
    return run(main, timeout=timeout, fast=fast, keepalive=True)


def run_federated(factory: Callable[[], Reactor], *, timeout: int | None = None, fast: bool = True,
                  trusted_pickle: bool = False, wait_s: float = 30.0,
                  summaries: dict[str, RunSummary] | None = None,
                  coordination: str = "centralized") -> dict[str, Reactor]:
    """Run ``factory()``'s program federated: an RTI and one federate per top-level child
    (bank members each on their own), in threads of this process over real sockets.
    Returns each federate's copy of the program (its own reactor is the one that ran) and
    fills ``summaries`` with each federate's run summary when given. Any federate's or the
    RTI's failure fails the test with its error.

    ``trusted_pickle=True`` lets federates send arbitrary Python objects: LF's Python
    target pickles every value it sends between federates; reactorfed sends plain data
    and arrays without pickle, and pickles only where the federation opts in.

    ``coordination="decentralized"``: LF's ``coordination: decentralized`` (no grant from
    the RTI; each federate's maxwait, see :mod:`reactorfed.model.maxwait`)."""
    from tests.federation.harness import Federation

    fed = Federation(factory, coordination=coordination)
    fed.start_all(fast=fast, timeout=timeout, trusted_pickle=trusted_pickle)
    fed.wait(wait_s)
    if fed.rti_error is not None:
        raise AssertionError(f"the RTI failed: {fed.rti_error!r}; federates: {fed.errors!r}") from fed.rti_error
    if fed.errors:
        name, err = next(iter(fed.errors.items()))
        raise AssertionError(f"federate {name} failed: {err!r}") from err
    if summaries is not None:
        summaries.update(fed.results)
    return fed.programs
