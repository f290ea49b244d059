"""Hello, reactors: a weather station in four reactors.

A bank of ``width`` sensors samples on a timer every 100 ms; an averager gathers the
bank's readings through a multiport at the same tag; a display receives each average
through a connection delayed by ``delay`` and prints it with both the time it was
measured and the time it is shown, flagging averages above ``threshold``. Startup and
shutdown reactions greet and sum up. Everything is deterministic: the same lines, in
the same order, every run (in fast mode or in real time).

    reactorfed run examples/hello.py:Main --fast --timeout 1s
    reactorfed run examples/hello.py:Main --timeout 2s --param width=5 --param delay=20ms
"""

from __future__ import annotations

from reactorfed import (
    SHUTDOWN,
    STARTUP,
    Input,
    MultiReader,
    Output,
    PortReader,
    PortWriter,
    Reactor,
    Timer,
    bank,
    format_duration,
    ms,
    reaction,
)


class Sensor(Reactor):
    """Samples every 100 ms. Sensor i reads 20 + i degrees plus a slow warming trend and
    a fixed wobble (integer arithmetic: the values are the same everywhere)."""

    sample = Timer(offset=0, period=ms(100))
    reading = Output(float)

    def __init__(self) -> None:
        self.count = 0

    @reaction(triggers=[sample], effects=[reading])
    def measure(self, reading: PortWriter[float]) -> None:
        i = self.bank_index or 0
        wobble = ((self.count * 7 + i * 3) % 5 - 2) / 10
        reading.set(round(20 + i + 0.25 * self.count + wobble, 2))
        self.count += 1


class Averager(Reactor):
    """Averages the readings present at a tag."""

    readings = Input(float, width="width")
    average = Output(tuple)

    def __init__(self, width: int) -> None:
        self.width = width

    @reaction(triggers=[readings], effects=[average])
    def combine(self, readings: MultiReader[float], average: PortWriter[tuple[int, int, float]]) -> None:
        present = readings.present()  # [(channel, value)] of the channels present
        mean = sum(v for _, v in present) / len(present)
        average.set((self.elapsed(), len(present), round(mean, 3)))


class Display(Reactor):
    shown = Input(tuple)

    def __init__(self, threshold: float, greeting: str) -> None:
        self.threshold = threshold
        self.greeting = greeting
        self.lines = 0
        self.hottest = float("-inf")

    @reaction(triggers=[STARTUP])
    def hello(self) -> None:
        print(f"{self.greeting}! the display starts at {format_duration(self.elapsed())}")

    @reaction(triggers=[shown])
    def show(self, shown: PortReader[tuple[int, int, float]]) -> None:
        value = shown.get()
        assert value is not None  # it triggered this reaction: it is present
        measured, n, mean = value
        flag = "  <- above threshold" if mean > self.threshold else ""
        print(
            f"t={format_duration(self.elapsed()):>7}: mean of {n} sensors {mean:6.3f} C "
            f"(measured at {format_duration(measured)}){flag}"
        )
        self.lines += 1
        self.hottest = max(self.hottest, mean)

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        hottest = f", hottest {self.hottest:.3f} C" if self.lines else ""
        print(f"shutdown at {format_duration(self.elapsed())}: {self.lines} averages shown{hottest}")


class Main(Reactor):
    """The station. Parameters (``--param KEY=VALUE``): ``width`` sensors, the display's
    ``delay`` (a duration, e.g. 20ms), the ``threshold`` in C, and the ``greeting``."""

    def __init__(self, width: int = 3, delay: int = ms(50), threshold: float = 22.5, greeting: str = "hello") -> None:
        self.sensors = bank(Sensor, width)
        self.averager = Averager(width)
        self.display = Display(threshold, greeting)
        self.connect(self.sensors.reading, self.averager.readings)
        self.connect(self.averager.average, self.display.shown, after=delay)
