"""Sampler and collector reactors for sample generation.

A :class:`EnvSampler` steps one environment (gymnasium or ALE) with seeded random
actions and emits what it stepped, whole: a record (:meth:`EnvRunner.record
<reactorfed.rl.envs.runner.EnvRunner.record>`: observation, action, reward, terminated,
truncated and the episode's return, one row per step), as a learner needs it. A
:class:`Collector` gathers the records through a multiport. Three patterns:

* ``step`` (open loop): every sampler steps once per microstep, driven by its own
  logical action; the collector sees one one-row record of every sampler per tag;
* ``step-sync`` (closed loop): the collector's ``go`` starts each round (after 0),
  as a central inference loop would, where the next step depends on the gathered
  steps;
* ``fragment`` (``fragment > 0``): every sampler emits ``fragment``-row records;
  with ``num_envs > 1`` each sampler steps that many copies of its environment as a
  batch (:class:`~reactorfed.rl.envs.vector.VectorEnvRunner`) and a record is shaped
  ``(fragment, num_envs)``; ``backend`` says what steps them (gymnasium's vector
  environments or EnvPool: :mod:`~reactorfed.rl.envs.backends`).

A sampler builds its environments in its startup reaction, in its own process: EnvPool
and ALE's vector environments step on threads of their own, which a federate forked from
``reactorfed launch``'s fork server (where the program is built) would not have. Each
sampler then says it is ready (``ready``), and steps one microstep later.

The collector measures throughput in its own process: from the moment every sampler is
ready (or its own startup reaction, where no ``ready`` is connected) to the last record
received. Building the environments is not timed, as Ray's actors' construction is not.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reactorfed import (
    SHUTDOWN,
    STARTUP,
    ActionHandle,
    Input,
    LogicalAction,
    MultiReader,
    Output,
    PortReader,
    PortWriter,
    Reactor,
    reaction,
)

from ..envs.backends import resolve_backend
from ..envs.runner import EnvRunner
from ..envs.vector import VectorEnvRunner, make_runner

__all__ = ["Collector", "EnvSampler"]


class EnvSampler(Reactor):
    """Steps one environment; emits a one-row record per step, or a ``fragment``-row
    record per fragment (every field of every step). Stops after ``steps`` steps."""

    go: Input[object] = Input(object)
    fragment: Output[np.ndarray] = Output(np.ndarray)
    ready: Output[bool] = Output(bool)
    again: LogicalAction[object] = LogicalAction(object)

    def __init__(
        self,
        env: str = "CartPole-v1",
        seed: int = 0,
        steps: int = 1000,
        fragment: int = 0,
        closed_loop: bool = False,
        num_envs: int = 1,
        backend: str = "gymnasium",
    ) -> None:
        if num_envs > 1 and not fragment:
            raise ValueError(f"a sampler of {num_envs} environments emits fragments: give fragment > 0")
        resolve_backend(env, backend)  # a wrong backend, or EnvPool asked for where it cannot: said now
        self.env, self.seed, self.num_envs, self.backend = env, seed, num_envs, backend
        self.runner: EnvRunner | VectorEnvRunner | None = None  # built at startup, in the sampler's process
        self.steps = steps  # rows: with num_envs copies, each row is num_envs environment steps
        self.fragment_len = fragment
        self.closed_loop = closed_loop
        self.done = 0

    @reaction(triggers=[STARTUP], effects=[ready, again])
    def start(self, ready: PortWriter[bool], again: ActionHandle) -> None:
        self.runner = make_runner(self.env, self.seed, self.num_envs, self.backend)
        ready.set(True)
        if not self.closed_loop:
            again.schedule()

    @reaction(triggers=[again, go], effects=[fragment, again])
    def step(
        self, again: ActionHandle, go: PortReader[object], fragment: PortWriter[np.ndarray]
    ) -> None:
        if self.done >= self.steps:
            return
        assert self.runner is not None
        n = min(self.fragment_len, self.steps - self.done) if self.fragment_len else 1
        fragment.set(self.runner.record(n))
        self.done += n
        if not self.closed_loop and self.done < self.steps:
            again.schedule()


class Collector(Reactor):
    """Gathers the records of ``n`` samplers; in a closed loop, starts each round.

    ``rounds`` (closed loop only) is the number of rounds to run. The measured
    result (steps, seconds, steps/s) is kept in :attr:`result` and reported at
    shutdown (:meth:`~reactorfed.Reactor.report_result`). Connect the samplers'
    ``ready`` to :attr:`ready` to time from when they are all built.
    """

    fragments: Input[np.ndarray] = Input(np.ndarray, width="n")
    ready: Input[bool] = Input(bool, width="n")
    go: Output[object] = Output(object)

    def __init__(self, n: int, rounds: int = 0) -> None:
        self.n = n
        self.rounds = rounds
        self.steps = 0
        self.rounds_done = 0
        self.t0 = self.t_last = 0  # physical time, ns (the clock's)
        self.checksum = 0.0
        self.result: dict[str, Any] = {}

    @reaction(triggers=[STARTUP], effects=[go])
    def start(self, go: PortWriter[object]) -> None:
        self.t0 = self.t_last = self.physical_time()
        if self.rounds:
            go.set(True)

    @reaction(triggers=[ready])
    def samplers_ready(self) -> None:
        # every sampler's startup (building its environments) is over: the timed part starts
        # (their first step is one microstep later)
        self.t0 = self.t_last = self.physical_time()

    @reaction(triggers=[fragments], effects=[go])
    def gather(self, fragments: MultiReader[np.ndarray], go: PortWriter[object]) -> None:
        for _, value in fragments.present():
            self.steps += value.size  # rows times copies: every environment step
        self.t_last = self.physical_time()
        self.rounds_done += 1
        if self.rounds and self.rounds_done < self.rounds:
            go.set(True)

    @reaction(triggers=[SHUTDOWN])
    def finish(self) -> None:
        seconds = (self.t_last - self.t0) / 1e9
        self.result = {
            "steps": self.steps,
            "rounds": self.rounds_done,
            "seconds": seconds,
            "steps_per_s": self.steps / seconds if seconds > 0 else 0.0,
        }
        self.report_result(self.result)
