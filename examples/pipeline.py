"""A small federated pipeline: a sensor bank feeding a filter feeding a logger.

Runs the same in one process or federated (one process per top-level reactor)::

    reactorfed run examples/pipeline.py:Main --fast --timeout 1s
    reactorfed launch examples/pipeline.py:Main --fast --timeout 1s

Both print the same lines: determinism across processes is the point.
"""

from __future__ import annotations

from reactorfed import (
    SHUTDOWN,
    Input,
    MultiReader,
    Output,
    PortReader,
    PortWriter,
    Reactor,
    Timer,
    bank,
    ms,
    reaction,
)


class Sensor(Reactor):
    """Emits a deterministic pseudo-random reading every 100 ms."""

    reading = Output(int)
    tick = Timer(offset=0, period=ms(100))

    def __init__(self, seed: int = 1) -> None:
        self.state = seed * 7919 + (self.bank_index or 0)

    @reaction(triggers=[tick], effects=[reading])
    def sample(self, reading: PortWriter[int]) -> None:
        self.state = (self.state * 1103515245 + 12345) % (2**31)
        reading.set(self.state % 1000)


class Filter(Reactor):
    """Sums the readings of every sensor at each tag."""

    readings = Input(int, width="width")
    total = Output(int)

    def __init__(self, width: int = 3) -> None:
        self.width = width

    @reaction(triggers=[readings], effects=[total])
    def combine(self, readings: MultiReader[int], total: PortWriter[int]) -> None:
        total.set(sum(v for _, v in readings.present()))


class Logger(Reactor):
    total = Input(int)

    def __init__(self) -> None:
        self.count = 0

    @reaction(triggers=[total])
    def show(self, total: PortReader[int]) -> None:
        self.count += 1
        t = self.elapsed_tag()
        print(f"t={t.time // 1_000_000:>5} ms m={t.microstep} total={total.get()}", flush=True)

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        print(f"logger: {self.count} totals", flush=True)


class Main(Reactor):
    def __init__(self, sensors: int = 3, delay: int = ms(10)) -> None:
        self.sensors = bank(Sensor, sensors, seed=1)
        self.filter = Filter(width=sensors)
        self.logger = Logger()
        self.connect(self.sensors.reading, self.filter.readings)
        self.connect(self.filter.total, self.logger.total, after=delay)
