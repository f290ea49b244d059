"""A training run's bookkeeping, for any plan's learner: when to stop, the returns of the
last 100 finished training episodes, the time and steps at which they first reach a
target, the progress display (and what a learner reports of its progress: :meth:`TrainingLog.figures`),
and what a checkpoint carries of it.

The target is judged as the issue's benchmarks judge it: the mean return of the last
100 *finished training episodes* (not of the episodes of the latest iteration only).
"""

from __future__ import annotations

import bisect
import json
import math
import os
import sys
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ..execution.threads import check_resume, current_threads, record
from ..model.attachment import running_scheduler
from ..observe.trace.records import COUNTER
from .curves import LOGDIR_ENV, Curves, scalar_names

if TYPE_CHECKING:
    from ..execution.scheduler import Scheduler
    from ..model.reactor import Reactor
    from ..observe.histograms import Histogram

__all__ = ["LAG_ITERATION_BOUNDS", "LAG_NS_BOUNDS", "PolicyLag", "RunConfig", "TrainingLog", "end_of_training", "learner_result", "paused", "resume_from_checkpoint", "resume_state", "save_progress", "verdict", "write_checkpoint"]


class Trained(Protocol):
    """What a result reads of a learner (an on-policy :class:`~reactorfed.rl.contracts.Learner`
    or a :class:`~reactorfed.rl.replay.contracts.ReplayLearner`)."""

    env_steps: int
    updates: int

    def digest(self) -> str: ...

    def save(self, path: str | Path, extra: dict[str, Any] | None = None) -> Path: ...

    def load_checkpoint(self, path: str | Path) -> dict[str, Any]: ...


@dataclass(frozen=True)
class RunConfig:
    """How a plan's learner runs training (the algorithm's own settings are apart)."""

    #: stop after this many iterations (one update each)
    iterations: int = 1000
    #: stop once the last 100 training episodes average at least this (None: never)
    target_return: float | None = None
    #: where to save the learner ("": nowhere); every ``checkpoint_every`` iterations (0: only
    #: at shutdown), and at shutdown
    checkpoint: str = ""
    checkpoint_every: int = 0
    #: start from ``checkpoint`` when it exists: weights, optimizer, counters, the iteration
    #: and the recent returns carry on; so do the samplers' environments where the plan
    #: saves them (docs/training.md, "Resuming: what a checkpoint holds")
    resume: bool = False
    #: end this run after that many updates (0: never), with its checkpoint, for a later
    #: ``resume`` (a pause; the tune recipes' ``pause_after`` counts decisions)
    pause_after: int = 0
    #: a status line on stderr every ``progress_every`` iterations
    progress: bool = False
    progress_every: int = 10
    #: keep the learning curve (seconds, env steps, mean return of the last 100) per
    #: iteration in the result
    curve: bool = False
    #: an elastic plan's learner keeps a row per update in the result (``timeline``: when it
    #: began, its tag, the env steps, the members; :meth:`ElasticRound.row
    #: <reactorfed.rl.plans.elastic_round.ElasticRound.row>`). For benchmarks of rescaling
    #: (bench/rescale.py); timing, so no replay repeats it
    timeline: bool = False
    #: where the learner writes TensorBoard curves ("": the command line's ``--logdir``,
    #: in the environment as REACTORFED_LOGDIR; no curves without either)
    logdir: str = ""


#: the policy lag histograms' buckets (``le``): in learner iterations (0 for the
#: synchronous plans, a few for APPO, up to the replay's age for Ape-X) ...
LAG_ITERATION_BOUNDS = (0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
#: ... and in logical time, ns (shown in seconds): 1 ms to 10 s
LAG_NS_BOUNDS = tuple(int(ms * 1_000_000) for ms in (1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000))


class PolicyLag:
    """How old the weights that acted in each fragment a learner trains on are, exactly:
    the learner notes the tag and its iteration each time it sends weights; a fragment
    carries the tag its weights reached its sampler at (:attr:`Rollout.policy_tag`); the
    weights are the last ones sent at or before that tag (less the connection's delay). Lag
    in learner iterations (a histogram) and in logical time (ns, from the send to the update).

    With its ``owner`` (the learner reactor), each lag also goes, as it is observed, to the
    process's Prometheus histograms ``reactorfed_policy_lag_iterations`` and
    ``reactorfed_policy_lag_seconds`` (label ``reactor``: the owner's full name; buckets
    :data:`LAG_ITERATION_BOUNDS`, :data:`LAG_NS_BOUNDS`) and, in a traced run, to two
    counter tracks of the trace, ``<owner> policy lag (iterations)`` and ``(ns)``: a
    record each time the value changes (a counter is a step function)."""

    def __init__(self, delay: int = 0, owner: Reactor | None = None) -> None:
        #: the weights' connection's ``after`` (ns; 0: none or a microstep): weights that
        #: reached a sampler at (t, m) were sent at t - delay
        self.delay = delay
        self._sent: list[tuple[tuple[int, int], int]] = []  # (elapsed tag, iteration), in order
        self.iterations: dict[int, int] = {}  # lag in iterations -> fragments
        self.ns: list[int] = []
        self._owner = owner
        #: the run's scheduler and its histograms (made at the first lag: the scheduler is known then)
        self._hist: tuple[Scheduler, Histogram, Histogram] | None = None
        self._traced: tuple[int, int] | None = None  # the lags the trace has last

    def sent(self, tag: tuple[int, int], iteration: int) -> None:
        self._sent.append((tag, iteration))

    def observe(self, policy_tag: tuple[int, int] | None, now: tuple[int, int], iteration: int) -> int | None:
        """A fragment whose weights reached its sampler at ``policy_tag``, trained on at
        ``now`` in ``iteration``: its lag in iterations (None: not known)."""
        lag = self._observe(policy_tag, now, iteration)
        if lag is not None and self._owner is not None:
            self._publish([(lag, self.ns[-1])])
        return lag

    def _observe(self, policy_tag: tuple[int, int] | None, now: tuple[int, int], iteration: int) -> int | None:
        if policy_tag is None:
            return None
        key = (policy_tag, 1 << 62) if not self.delay else ((policy_tag[0] - self.delay, 1 << 62), 0)
        i = bisect.bisect_right(self._sent, key) - 1
        return self._count(i, now, iteration) if i >= 0 else None

    def observe_rows(self, times: np.ndarray, microsteps: np.ndarray, now: tuple[int, int], iteration: int) -> None:
        """:meth:`observe` for a batch of transitions (their weights' tags; time -1: not known)."""
        first = len(self.ns)
        lags: list[int] = []
        if not self.delay:
            for t, m in zip(times.tolist(), microsteps.tolist(), strict=True):
                if t >= 0:
                    lag = self._observe((t, m), now, iteration)
                    if lag is not None:
                        lags.append(lag)
        else:
            sent_times = np.fromiter((tag[0] for tag, _ in self._sent), dtype=np.int64, count=len(self._sent))
            known = np.asarray(times)[np.asarray(times) >= 0]
            idx = np.searchsorted(sent_times, known - self.delay, side="right") - 1
            lags = [self._count(i, now, iteration) for i in idx[idx >= 0].tolist()]
        if lags and self._owner is not None:  # (once a batch)
            self._publish(list(zip(lags, self.ns[first:], strict=True)))

    def _count(self, i: int, now: tuple[int, int], iteration: int) -> int:
        """The weights of send ``i`` acted in what ``iteration`` trains on at ``now``: their lag."""
        (sent_at, version) = self._sent[i]
        lag = iteration - version
        self.iterations[lag] = self.iterations.get(lag, 0) + 1
        self.ns.append(now[0] - sent_at[0])
        return lag

    def _publish(self, lags: list[tuple[int, int]]) -> None:
        """Lags (in iterations, in ns) to the metrics' histograms and the trace's counters
        (inside the owner's reaction)."""
        owner = self._owner
        assert owner is not None
        sched = running_scheduler(owner)
        if self._hist is None or self._hist[0] is not sched:  # (a run's scheduler has the run's histograms)
            board, labels = sched.histograms, {"reactor": owner.fqn}
            self._hist = (sched,
                          board.histogram("reactorfed_policy_lag_iterations", "Policy lag of the fragments trained on, "
                                          "in learner iterations", LAG_ITERATION_BOUNDS, labels),
                          board.histogram("reactorfed_policy_lag_seconds", "Policy lag of the fragments trained on, in "
                                          "logical time from the weights' send to the update", LAG_NS_BOUNDS, labels,
                                          unit=1_000_000_000))
            self._traced = None
        _, by_iterations, by_ns = self._hist
        for lag, ns in lags:
            by_iterations.observe(lag)
            by_ns.observe(ns)
        tracer = sched.tracer
        if tracer is None:
            return
        tag, last = sched.current_tag, self._traced
        for lag, ns in lags:
            if last is None or last[0] != lag:
                tracer.record(COUNTER, tag, f"{owner.fqn} policy lag (iterations)", lag)
            if last is None or last[1] != ns:
                tracer.record(COUNTER, tag, f"{owner.fqn} policy lag (ns)", ns)
            last = (lag, ns)
        self._traced = last

    def result(self) -> dict[str, Any]:
        if not self.ns:
            return {}
        ns = sorted(self.ns)
        return {"policy_lag_iterations": {str(k): v for k, v in sorted(self.iterations.items())},  # (JSON keys)
                "policy_lag_ns": {"min": ns[0], "median": ns[len(ns) // 2], "max": ns[-1], "fragments": len(ns)}}


class TrainingLog:
    """Episode returns and timing of one run, from the learner's side."""

    def __init__(self, run: RunConfig, window: int = 100) -> None:
        self.run = run
        self.recent: deque[float] = deque(maxlen=window)
        self.episodes = 0
        #: the learner's physical time (ns, its clock's) at the start and at the last iteration
        self.t0 = self.t_last = 0
        self._clock: Callable[[], int] | None = None
        #: (iteration, env steps, seconds) when the target was first reached
        self.reached: tuple[int, int, float] | None = None
        self.curve: list[tuple[float, int, float]] = []
        self.curves: Curves | None = None  # TensorBoard (see start)

    def start(self, name: str, clock: Callable[[], int]) -> None:
        """Training starts; ``name`` (the learner reactor's) names its curves' folder and
        ``clock`` (the learner's ``physical_time``) times the run."""
        logdir = self.run.logdir or os.environ.get(LOGDIR_ENV, "")
        if logdir and self.curves is None:
            self.curves = Curves(logdir, name)  # (before the clock starts: it imports TensorBoard's writer)
        self._clock = clock
        self.t0 = self.t_last = clock()

    def write(self, iteration: int, env_steps: int, stats: Mapping[str, float],
              logical_ns: int | None = None, extra: Mapping[str, float] | None = None) -> None:
        """The iteration's scalars to the curves (with SB3's names), if there are curves."""
        curves = self.curves
        if curves is None:
            return
        scalars = {"rollout/ep_rew_mean": self.mean_return, "time/fps": env_steps / max(self.seconds, 1e-9),
                   "time/iterations": iteration, "rollout/episodes": self.episodes, **scalar_names(stats)}
        if logical_ns is not None:
            scalars["reactorfed/logical_time_s"] = logical_ns / 1e9
        scalars.update(extra or {})
        curves.point(iteration, env_steps, scalars)

    def close(self) -> None:
        if self.curves is not None:
            self.curves.close()

    def figures(self, env_steps: int) -> dict[str, float]:
        """What a learner reports of its progress besides its iteration
        (:meth:`~reactorfed.Reactor.report_progress`): the env steps, and the mean return
        of the last 100 training episodes (left out before the first one ends)."""
        return {"env_steps": env_steps, "mean_return": self.mean_return}

    @property
    def seconds(self) -> float:
        """Seconds of training so far (a figure for people and results; kept in ns)."""
        return (self.t_last - self.t0) / 1e9

    @property
    def mean_return(self) -> float:
        return sum(self.recent) / len(self.recent) if self.recent else math.nan

    @property
    def solved(self) -> bool:
        return self.reached is not None

    def add(self, returns: Iterable[float], iteration: int, env_steps: int) -> None:
        """The returns of the episodes that finished in ``iteration``, in the plan's order."""
        for r in returns:
            self.recent.append(r)
            self.episodes += 1
        assert self._clock is not None, "TrainingLog.start comes first"
        self.t_last = self._clock()
        target = self.run.target_return
        if (self.reached is None and target is not None and len(self.recent) == self.recent.maxlen
                and self.mean_return >= target):
            self.reached = (iteration, env_steps, self.seconds)
        if self.run.curve:
            self.curve.append((round(self.seconds, 4), env_steps, self.mean_return))

    def show(self, iteration: int, env_steps: int, stats: Mapping[str, float]) -> None:
        dt = max(self.seconds, 1e-9)
        extra = "  ".join(f"{k} {stats[k]:.4g}" for k in ("policy_loss", "value_loss", "entropy", "approx_kl",
                                                                "loss", "q_mean") if k in stats)
        print(f"iter {iteration:5d}/{self.run.iterations}  steps {env_steps:7d}  episodes {self.episodes:5d}  "
              f"return(100) {self.mean_return:6.1f}  {extra}  {env_steps / dt:7.0f} steps/s",
              file=sys.stderr, flush=True)

    def state(self) -> dict[str, Any]:
        """What a checkpoint keeps of the log."""
        return {"episodes": self.episodes, "recent_returns": list(self.recent), "reached": self.reached}

    def restore(self, state: Mapping[str, Any]) -> None:
        self.episodes = int(state.get("episodes", 0))
        self.recent.extend(float(r) for r in state.get("recent_returns", ()))
        reached = state.get("reached")  # (a run that had reached its target stopped there)
        if reached is not None:
            self.reached = (int(reached[0]), int(reached[1]), float(reached[2]))

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {"episodes": self.episodes, "mean_return_100": self.mean_return,
                               "seconds": self.seconds}
        if self.run.target_return is not None:
            out["target_return"] = self.run.target_return
            out["reached"] = self.solved
            if self.reached is not None:
                out["reached_iteration"], out["reached_env_steps"], out["reached_seconds"] = self.reached
        if self.run.curve:
            out["curve"] = self.curve
        return out


def learner_result(learner: Trained, log: TrainingLog, run: RunConfig, iteration: int,
                   resumed_from: int) -> dict[str, Any]:
    """What a plan's learner reports at the end: iterations, env steps, returns, when the
    target was reached, the weights' digest (and the torch threads they were made with), the checkpoint."""
    return {
        "iterations": iteration,
        "env_steps": learner.env_steps,
        "updates": learner.updates,
        "resumed_from_iteration": resumed_from,
        **log.result(),
        "weights_sha256": learner.digest(),
        "torch_threads": current_threads(),
        "checkpoint": str(Path(run.checkpoint).resolve()) if run.checkpoint else "",
    }


def verdict(result: Mapping[str, Any], run: RunConfig) -> str:
    """One line for a person: solved or not, and what it took."""
    r = result
    spent = f"{r['env_steps']:,} env steps, {r['iterations']} iterations, {r['seconds']:.1f} s of training"
    target = run.target_return
    if target is None:
        return f"result: mean return of the last 100 training episodes {r['mean_return_100']:.1f} after {spent}"
    if "reached_env_steps" in r:
        return (f"result: solved: the last 100 training episodes average >= {target:g} after "
                f"{r['reached_env_steps']:,} env steps, {r['reached_seconds']:.1f} s ({spent} in all)")
    return f"result: not solved: the last 100 training episodes average {r['mean_return_100']:.1f} < {target:g} after {spent}"


def write_checkpoint(path: str | Path, state: dict[str, Any]) -> Path:
    """Write a learner's checkpoint atomically (a temporary file, then a rename): a run
    stopped mid-write leaves the previous checkpoint whole. It records the torch threads
    the learner ran with (a resume with another count is refused: :func:`resume_from_checkpoint`)."""
    import torch  # (only learners write checkpoints: a sampler process never imports torch)

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(record(dict(state)), tmp)
    tmp.replace(path)
    return path


def resume_from_checkpoint(learner: Trained, run: RunConfig, log: TrainingLog) -> int:
    """The iteration a plan learner carries on from: its checkpoint's, with the learner and
    ``log`` restored from it, when ``run.resume`` asks and the checkpoint exists; else 0.
    A checkpoint written with another thread count is refused (:class:`~reactorfed.execution.threads.ThreadsChanged`)
    unless the run allows it."""
    return resume_state(learner, run, log)[0]


def resume_state(learner: Trained, run: RunConfig, log: TrainingLog) -> tuple[int, Mapping[str, Any]]:
    """:func:`resume_from_checkpoint`, and the checkpoint's whole state (empty when the run
    starts afresh), for what a plan keeps there beside the learner (its samplers' state)."""
    if not (run.resume and run.checkpoint and Path(run.checkpoint).exists()):
        return 0, {}
    state = learner.load_checkpoint(run.checkpoint)
    check_resume(state, run.checkpoint)
    iteration = int(state.get("iteration", 0))
    log.restore(state)
    if run.progress:
        print(f"resumed from {run.checkpoint} at iteration {iteration} ({learner.env_steps} env steps)",
              file=sys.stderr, flush=True)
    return iteration, state


def paused(run: RunConfig, iteration: int, resumed_from: int) -> bool:
    """Whether a run that started at ``resumed_from`` ends now, at ``iteration``, for
    ``run.pause_after``."""
    return bool(run.pause_after) and iteration - resumed_from >= run.pause_after


def save_progress(learner: Trained, run: RunConfig, iteration: int, log: TrainingLog,
                  extra: Mapping[str, Any] | None = None) -> None:
    """A plan learner's checkpoint at ``run.checkpoint``: the learner's state, the iteration
    and the training log's (and a plan's ``extra``)."""
    learner.save(run.checkpoint, extra={"iteration": iteration, **log.state(), **(extra or {})})


def end_of_training(learner: Trained, log: TrainingLog, run: RunConfig, iteration: int, resumed_from: int,
                    stats: Mapping[str, float], extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What a plan learner does at shutdown: its checkpoint (with ``run.checkpoint``; a
    plan's ``extra`` in it), its result, and with ``run.progress`` the last progress line,
    the verdict and the result printed. Returns the result (to report)."""
    if run.checkpoint:
        save_progress(learner, run, iteration, log, extra)
    log.close()
    result = learner_result(learner, log, run, iteration, resumed_from)
    if run.progress:
        log.show(iteration, learner.env_steps, stats)
        print(verdict(result, run), file=sys.stderr, flush=True)
        print(f"done: {json.dumps(result)}", file=sys.stderr, flush=True)
    return result
