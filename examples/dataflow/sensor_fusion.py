"""Sensor fusion with a sharded archive: a federated program that is not reinforcement
learning, whose three kinds of federate have three different shapes.

* ``sensors[i]`` (a bank, ``num_sensors`` wide): every ``period_ms`` of logical time each
  sensor reads a value (a random walk seeded by ``seed`` and its index) and sends it.
* ``fusion`` (one federate): at every tag it gathers the readings present, fuses them
  (their mean and spread), keeps a running digest of everything it fused, and sends the
  fused record to one archive shard, round robin (tick ``t`` to shard ``t % num_shards``).
  The sensors stop the federation at the tag of their ``ticks``-th reading.
* ``shards[k]`` (a bank, ``num_shards`` wide): each keeps the records it received, a digest
  of them, and, when ``$ARCHIVE_DIR`` is set, writes them there as JSON lines at shutdown.

Every federate reports its result (``reactorfed: result of ...``): the fusion's digest
covers every reading of every tick, so one seed gives the same digests in one process,
under ``reactorfed launch`` and in pods (``examples/k8s/sensor-fusion.yaml``, a federate
group per kind: a scaled bank, one pod, a fixed bank with a volume)::

    reactorfed run examples/dataflow/sensor_fusion.py:Main --fast
    reactorfed launch examples/dataflow/sensor_fusion.py:Main --fast --param num_sensors=3
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reactorfed import SHUTDOWN, Input, Output, Reactor, Timer, bank, ms, reaction


@dataclass(frozen=True)
class Args:
    num_sensors: int = 3
    num_shards: int = 2
    ticks: int = 200  # readings per sensor; the fusion stops the federation after the last
    period_ms: int = 10  # logical time between two readings
    seed: int = 1


class Sensor(Reactor):
    """A random walk, read every ``period``."""

    reading = Output(float)
    tick = Timer(offset=0, period="period")

    def __init__(self, seed: int, period_ms: int, ticks: int) -> None:
        self.rng = random.Random(seed * 1000 + (self.bank_index or 0))
        self.value = 0.0
        self.period = ms(period_ms)
        self.ticks = ticks
        self.done = 0

    @reaction(triggers=[tick], effects=[reading])
    def read(self, reading: Any) -> None:
        self.value += self.rng.gauss(0.0, 1.0)
        reading.set(round(self.value, 9))
        self.done += 1
        if self.done >= self.ticks:
            # every sensor asks at the tag of its last reading, so the federation's stop tag
            # is that one's next microstep however far ahead the sensors run (a stop asked
            # by the fusion alone would be agreed at the latest tag any federate reached)
            self.request_stop()


class Fusion(Reactor):
    """Fuses the readings of one tag and routes the record to a shard."""

    readings = Input(float, width=lambda self: self.n)
    records = Output(dict, width=lambda self: self.shards)

    def __init__(self, n: int, shards: int, ticks: int) -> None:
        self.n, self.shards, self.ticks = n, shards, ticks
        self.done = 0
        self.digest = hashlib.sha256()

    @reaction(triggers=[readings], effects=[records])
    def fuse(self, readings: Any, records: Any) -> None:
        values = [v for v in readings.values() if v is not None]
        mean = sum(values) / len(values)
        spread = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        record = {"tick": self.done, "sensors": len(values), "mean": round(mean, 9), "spread": round(spread, 9)}
        self.digest.update(json.dumps([record, values]).encode())
        records[self.done % self.shards].set(record)
        self.done += 1
        self.report_progress(done=self.done, total=self.ticks)

    @reaction(triggers=[SHUTDOWN])
    def finish(self) -> None:
        self.report_result({"ticks": self.done, "sha256": self.digest.hexdigest()})


class Shard(Reactor):
    """Keeps the records routed to it; writes them to ``$ARCHIVE_DIR`` at shutdown."""

    record = Input(dict)

    def __init__(self) -> None:
        self.kept: list[dict[str, Any]] = []

    @reaction(triggers=[record])
    def keep(self, record: Any) -> None:
        self.kept.append(record.get())

    @reaction(triggers=[SHUTDOWN])
    def finish(self) -> None:
        lines = "".join(json.dumps(r) + "\n" for r in self.kept)
        where = os.environ.get("ARCHIVE_DIR")
        if where:
            Path(where, f"shard-{self.bank_index or 0}.jsonl").write_text(lines)
        self.report_result({"records": len(self.kept), "sha256": hashlib.sha256(lines.encode()).hexdigest()})


class Main(Reactor):
    def __init__(self, args: Args = Args()) -> None:
        if min(args.num_sensors, args.num_shards, args.ticks, args.period_ms) < 1:
            raise ValueError(f"every width, ticks and period_ms must be at least 1, got {args}")
        self.sensors = bank(Sensor, args.num_sensors, args.seed, args.period_ms, args.ticks)
        self.fusion = Fusion(args.num_sensors, args.num_shards, args.ticks)
        self.shards = bank(Shard, args.num_shards)
        self.connect(self.sensors.reading, self.fusion.readings)
        self.connect(self.fusion.records, self.shards.record)


if __name__ == "__main__":
    from reactorfed import Environment

    Environment(fast=True).run(Main())
