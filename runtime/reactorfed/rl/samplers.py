"""Sampler and collector reactors for sample generation.

A :class:`EnvSampler` steps one environment (gymnasium or ALE) with seeded random
actions and emits observations; a :class:`Collector` gathers them through a
multiport. Three patterns:

* ``step`` (open loop): every sampler steps once per microstep, driven by its own
  logical action; the collector sees one observation of every sampler per tag;
* ``step-sync`` (closed loop): the collector's ``go`` starts each round (after 0),
  as a central inference loop would, where the next step depends on the gathered
  observations;
* ``fragment`` (``fragment > 0``): every sampler emits ``fragment``-step rollouts;
  with ``num_envs > 1`` each sampler steps that many copies of its environment as a
  batch (:class:`~reactorfed.rl.vector.VectorEnvRunner`) and a fragment's observations
  are shaped ``(fragment, num_envs, ...)``.

The collector measures throughput in its own process: from its startup reaction
(samplers start work one microstep later) to the last observation received.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from .. import SHUTDOWN, STARTUP, Input, LogicalAction, Output, Reactor, reaction
from ..action import ActionHandle
from ..port import MultiReader, PortReader, PortWriter
from .envs import EnvRunner
from .vector import make_runner

__all__ = ["Collector", "EnvSampler"]


class EnvSampler(Reactor):
    """Steps one environment; emits one observation per step, or ``fragment``-step
    observation arrays. Stops after ``steps`` steps."""

    go: Input[object] = Input(object)
    obs: Output[np.ndarray] = Output(np.ndarray)
    again: LogicalAction[object] = LogicalAction(object)

    def __init__(
        self,
        env: str = "CartPole-v1",
        seed: int = 0,
        steps: int = 1000,
        fragment: int = 0,
        closed_loop: bool = False,
        num_envs: int = 1,
    ) -> None:
        if num_envs > 1 and not fragment:
            raise ValueError(f"a sampler of {num_envs} environments emits fragments: give fragment > 0")
        self.runner = make_runner(env, seed, num_envs)
        self.steps = steps  # rows: with num_envs copies, each row is num_envs environment steps
        self.fragment = fragment
        self.closed_loop = closed_loop
        self.done = 0

    @reaction(triggers=[STARTUP], effects=[again])
    def start(self, again: ActionHandle) -> None:
        if not self.closed_loop:
            again.schedule()

    @reaction(triggers=[again, go], effects=[obs, again])
    def step(
        self, again: ActionHandle, go: PortReader[object], obs: PortWriter[np.ndarray]
    ) -> None:
        if self.done >= self.steps:
            return
        if self.fragment:
            n = min(self.fragment, self.steps - self.done)
            obs.set(self.runner.rollout(n).obs)
            self.done += n
        else:
            assert isinstance(self.runner, EnvRunner)
            o, _, _ = self.runner.step()
            obs.set(o)
            self.done += 1
        if not self.closed_loop and self.done < self.steps:
            again.schedule()


class Collector(Reactor):
    """Gathers observations from ``n`` samplers; in a closed loop, starts each round.

    ``rounds`` (closed loop only) is the number of rounds to run. The measured
    result (steps, seconds, steps/s) is kept in :attr:`result` and reported at
    shutdown (:meth:`~reactorfed.Reactor.report_result`).
    """

    obs: Input[np.ndarray] = Input(np.ndarray, width="n")
    go: Output[object] = Output(object)

    def __init__(self, n: int, fragment: int = 0, rounds: int = 0, num_envs: int = 1) -> None:
        self.n = n
        self.fragment = fragment
        self.num_envs = num_envs  # environment copies per sampler: each fragment row is that many steps
        self.rounds = rounds
        self.steps = 0
        self.rounds_done = 0
        self.t0 = 0.0
        self.t_last = 0.0
        self.checksum = 0.0
        self.result: dict[str, Any] = {}

    @reaction(triggers=[STARTUP], effects=[go])
    def start(self, go: PortWriter[object]) -> None:
        self.t0 = self.t_last = time.perf_counter()
        if self.rounds:
            go.set(True)

    @reaction(triggers=[obs], effects=[go])
    def gather(self, obs: MultiReader[np.ndarray], go: PortWriter[object]) -> None:
        for _, value in obs.present():
            self.steps += len(value) * self.num_envs if self.fragment else 1
        self.t_last = time.perf_counter()
        self.rounds_done += 1
        if self.rounds and self.rounds_done < self.rounds:
            go.set(True)

    @reaction(triggers=[SHUTDOWN])
    def finish(self) -> None:
        seconds = self.t_last - self.t0
        self.result = {
            "steps": self.steps,
            "rounds": self.rounds_done,
            "seconds": seconds,
            "steps_per_s": self.steps / seconds if seconds > 0 else 0.0,
        }
        self.report_result(self.result)
