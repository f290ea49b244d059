"""The lead window, end to end (``lead_programs.py``: three timer producers, two mixers,
a sink that asks to stop after 50 rounds, at 0.49 s of logical time).

Under ``--fast`` the producers, which nothing holds back, would run ahead of their
consumers without limit: a stop would be agreed at the tag they reached (seconds of
logical time past 0.49 s), and what they send would queue at a slow sink without bound.
With a window ``W`` the run ends within ``W`` of 0.49 s, and what waits at a consumer (the
tags queued in its scheduler, the messages sent to it and not received yet) stays within
what ``W`` of logical time holds, under both coordinations.
"""

from __future__ import annotations

import threading
import time

import pytest

from reactorfed import ms, sec

from .harness import Federation, reference
from .lead_programs import PERIOD, ROUNDS, Main

pytestmark = pytest.mark.timeout(180)

ASKED = (ROUNDS - 1) * PERIOD  # the sink asks at its 50th round: 0.49 s
CONSUMERS = ("m0", "m1", "sink")


class Queues:
    """Samples, every millisecond while the federation runs, the longest queue at each
    consumer: the tags its scheduler holds, and the messages its upstream peers sent it
    that it has not received yet."""

    def __init__(self, fed: Federation) -> None:
        self.fed = fed
        self.tags = dict.fromkeys(CONSUMERS, 0)
        self.in_flight = dict.fromkeys(CONSUMERS, 0)
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        fed, layout = self.fed, self.fed.layout
        while not self._done.is_set():
            for name in CONSUMERS:
                sched, coord = fed.schedulers.get(name), fed.coords.get(name)
                if sched is None or coord is None:
                    continue
                self.tags[name] = max(self.tags[name], len(sched.queue.heap))
                me = layout.index(name)
                owed = 0
                for u in layout.direct_upstream(me):
                    up = fed.coords.get(layout.names[u])
                    if up is not None:
                        owed += up.core.reports.sent[me][0] - coord.core.received.get(u, 0)
                self.in_flight[name] = max(self.in_flight[name], owed)
            time.sleep(0.001)

    def stop(self) -> None:
        self._done.set()
        self._thread.join(5)


def run(
    window: int | None, coordination: str, slow_ms: int, timeout: int | None = None
) -> tuple[dict[str, tuple[int, int]], Queues, Federation]:
    fed = Federation(lambda: Main(slow_ms), lead_window=window, coordination=coordination)
    queues = Queues(fed)
    fed.start_all(fast=True, timeout=timeout)
    try:
        fed.wait(120)
    finally:
        queues.stop()
    assert not fed.errors, fed.errors
    assert fed.rti_error is None, fed.rti_error
    stops = {n: (r.last_tag.time, r.last_tag.microstep) for n, r in fed.results.items()}
    return stops, queues, fed


def test_one_process_stops_at_the_request() -> None:
    main = reference(Main)
    assert main.sink.stopped == (ASKED, 1)  # type: ignore[attr-defined]


@pytest.mark.parametrize("coordination", ["centralized", "decentralized"])
@pytest.mark.parametrize(
    ("window", "slow_ms"), [(sec(1), 0), (ms(100), 5)], ids=["default", "narrow, slow sink"]
)
def test_a_stop_takes_effect_within_the_window_and_queues_stay_bounded(
    window: int, slow_ms: int, coordination: str
) -> None:
    stops, queues, fed = run(window, coordination, slow_ms)
    stop = stops["sink"]
    assert all(s == stop for s in stops.values()), stops  # one agreed stop
    assert (ASKED, 1) <= stop <= (ASKED + window, 0), stops
    assert fed.programs["sink"].sink.rounds >= ROUNDS  # type: ignore[attr-defined]
    # A consumer's bound lags it by at most one period per hop; what can wait there is
    # what the window and those periods hold, from each of its two upstream peers.
    bound = 2 * (window // PERIOD + 4)
    assert max(queues.tags.values()) <= bound, (queues.tags, bound)
    assert max(queues.in_flight.values()) <= bound, (queues.in_flight, bound)
    held = sum(fed.coords[n].lead_waits for n in ("p0", "p1", "p2"))
    if slow_ms:  # the producers were held at the window's edge, and freed
        assert held > 0
        assert fed.server.core.lead.leads_sent > 0


def test_without_a_window_the_producers_run_ahead() -> None:
    """The same program with the window removed: the stop lands where the producers had
    got to, beyond the narrow window's bound, and more queues (what the window is for).
    A timeout of 2 s caps the run (the producers get seconds ahead: every tag up to the
    stop is then processed, at 5 ms a round at the sink)."""
    stops, queues, fed = run(None, "centralized", 5, timeout=sec(2))
    assert stops["p0"] > (ASKED + ms(100), 0), stops
    assert max(queues.tags.values()) > 2 * (ms(100) // PERIOD + 4), queues.tags
    assert sum(fed.coords[n].lead_waits for n in ("p0", "p1", "p2")) == 0
