"""Synchronized parallel Q-learning and DQN training, as reactors.

Each iteration: the :class:`DQNTrainer` broadcasts its payload (flat
weights + epsilon), every :class:`QSampler` collects a fragment with it, the
learner adds the fragments to its replay buffer in sampler order, updates, and
broadcasts again (after 0). Everything that varies is seeded, and fragments are
consumed in channel order, so the learner's weights after ``k`` iterations are
the same in every run with one seed, in one process or federated.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from reactorfed import (
    SHUTDOWN,
    STARTUP,
    Bank,
    Input,
    MultiReader,
    MultiWriter,
    Output,
    PortWriter,
    Reactor,
    reaction,
)

from ...execution.threads import check_resume
from ..algos.dqn.learner import DQNConfig, DQNLearner
from ..algos.network import greedy_action
from ..curves import LOGDIR_ENV, Curves
from ..envs.runner import EnvRunner, Fragment, unpack_fragment
from . import sampler_state
from .q_sampler import QSampler

__all__ = ["DQNTrainer", "QSampler", "TrainConfig", "evaluate", "weights_digest"]


def weights_digest(learner: DQNLearner) -> str:
    """SHA-256 of the online network's parameters, in state-dict order (bit identity)."""
    h = hashlib.sha256()
    for k, v in learner.q.state_dict().items():
        h.update(k.encode())
        h.update(v.detach().cpu().numpy().tobytes())
    return h.hexdigest()


def evaluate(learner: DQNLearner, env: str, episodes: int, seed: int) -> float:
    """Average return of the greedy policy over ``episodes`` episodes."""
    runner = EnvRunner(env, seed=seed)
    returns: list[float] = []
    total = 0.0
    while len(returns) < episodes:
        _, r, done = runner.step(greedy_action(learner.q, runner.obs))
        total += r
        if done:
            returns.append(total)
            total = 0.0
    return float(np.mean(returns))


@dataclass(frozen=True)
class TrainConfig:
    """How a :class:`DQNTrainer` runs training (DQN's own settings are a
    :class:`~reactorfed.rl.DQNConfig`)."""

    #: stop after this many iterations (one fragment from every sampler, then updates)
    iterations: int = 1000
    #: gradient steps per iteration
    updates_per_iteration: int = 4
    #: stop once solved: the last 100 training episodes average this, and (with
    #: ``eval_episodes``) so does the greedy policy over ``eval_episodes`` episodes
    target_return: float | None = None
    #: the environment the greedy policy is evaluated on ("" with eval_episodes=0: none)
    eval_env: str = ""
    eval_episodes: int = 0
    eval_seed: int = 10_000
    #: evaluate at most every this many iterations
    eval_every: int = 5
    #: where to save the learner ("": nowhere); every ``checkpoint_every`` iterations
    #: (0: only at shutdown) and at shutdown
    checkpoint: str = ""
    checkpoint_every: int = 0
    #: start from ``checkpoint`` when it exists: the weights, the optimizer, the counters,
    #: the iteration count, the replay buffer, the recent returns and (where they are
    #: connected: :meth:`DQNTrainer.connect_samplers`) the samplers' environments carry on where
    #: the run that wrote it stopped (a federation restarted, rescaled or resumed on Kubernetes)
    resume: bool = False
    #: end this run after that many iterations (0: never), with its checkpoint, for a later
    #: ``resume`` (a pause)
    pause_after: int = 0
    #: a status line on stderr every ``progress_every`` iterations
    progress: bool = False
    progress_every: int = 10
    #: where the learner writes TensorBoard curves ("": the command line's ``--logdir``;
    #: none without either)
    logdir: str = ""
    #: keep a row per iteration in the result (``timeline``): the physical time (ns since
    #: the epoch, the clock's) at which the learner took the iteration's fragments, the
    #: tag (ns after the start, microstep), the env steps taken and the channels they came
    #: from. For benchmarks of rescaling (bench/rescale.py); timing, so no replay repeats it
    timeline: bool = False


class DQNTrainer(Reactor):
    """Replay buffer + DQN learner; gathers ``n`` fragments per iteration.

    Stops after ``train.iterations`` iterations, or (with ``train.target_return``) once
    solved: when the mean training return of the last 100 episodes reaches the target,
    the greedy policy is evaluated over ``train.eval_episodes`` episodes (at most every
    ``train.eval_every`` iterations) and training stops if that average reaches it too
    (without ``eval_episodes``, the training mean decides). At shutdown the learner
    reports its result (iterations, env steps, returns, the weights' digest, the final
    greedy evaluation) with :meth:`~reactorfed.Reactor.report_result` and keeps it in
    :attr:`result`.
    """

    fragments: Input[np.ndarray] = Input(np.ndarray, width="n")
    sampler_states: Input[np.ndarray] = Input(np.ndarray, width="n")
    weights: Output[np.ndarray] = Output(np.ndarray)
    restore: Output[np.ndarray] = Output(np.ndarray, width="n")

    def __init__(
        self,
        n: int,
        obs_dim: int,
        num_actions: int,
        *,
        dqn: DQNConfig | None = None,
        train: TrainConfig = TrainConfig(),
        seed: int = 0,
    ) -> None:
        self.n = n
        self.train = train
        self.eval_env = train.eval_env
        self.eval_episodes = train.eval_episodes
        self.eval_seed = train.eval_seed
        self.eval_every = train.eval_every
        self.eval_return = float("nan")
        self.last_eval = -train.eval_every
        self.learner = DQNLearner(obs_dim, num_actions, dqn, seed=seed, device=torch.device("cpu"))
        self.iterations = train.iterations
        self.updates_per_iteration = train.updates_per_iteration
        self.target_return = train.target_return
        self.checkpoint = train.checkpoint
        self.checkpoint_every = train.checkpoint_every
        self.progress = train.progress
        self.progress_every = train.progress_every
        self.iteration = 0
        self.incomplete_iterations = 0
        self.recent: deque[float] = deque(maxlen=100)
        self.episodes = 0
        self.t0 = self.t_last = 0  # physical time, ns (the clock's)
        self.result: dict[str, Any] = {}
        self.resumed_from = 0
        #: with ``train.timeline``: [wall ns, tag ns, microstep, env steps, [channels]] per iteration
        self.timeline: list[list[Any]] = []
        self.curves: Curves | None = None  # TensorBoard, from the start (see begin_training)
        self.solved = False
        self.carried = sampler_state.CarriedStates(n)  # the samplers' states (where they are connected)
        if train.resume and train.checkpoint and Path(train.checkpoint).exists():
            state = torch.load(train.checkpoint, map_location="cpu", weights_only=False)
            check_resume(state, train.checkpoint)
            self.learner.load_state(state)
            self.iteration = self.resumed_from = int(state.get("iteration", 0))
            self.episodes = int(state.get("episodes", 0))
            self._resume_rest(state)
            if self.progress:
                print(f"resumed from {train.checkpoint} at iteration {self.iteration} "
                      f"({self.learner.env_steps} env steps)", file=sys.stderr, flush=True)  # fmt: skip

    def begin_training(self) -> None:
        """Start the run's clock and its curves (the start reaction's first step, a
        subclass's too)."""
        logdir = self.train.logdir or os.environ.get(LOGDIR_ENV, "")
        self.curves = Curves(logdir, self.fqn) if logdir else None  # (before the clock starts)
        self.t0 = self.t_last = self.physical_time()
        self._report()

    def _report(self) -> None:
        """This run's progress for a person (:meth:`~reactorfed.Reactor.report_progress`)."""
        self.report_progress(self.iteration, self.iterations, **self.progress_figures())

    def progress_figures(self) -> dict[str, float]:
        """The figures of :meth:`_report` (a subclass may add some)."""
        return {"env_steps": self.learner.env_steps, "mean_return": self.mean_return}

    def _resume_rest(self, state: dict[str, Any]) -> None:
        """What a checkpoint holds beside the learner (those of older versions lack some:
        the replay then starts empty, the samplers' environments afresh)."""
        self.recent.extend(float(r) for r in state.get("recent_returns", ()))
        self.last_eval = int(state.get("last_eval", self.last_eval))
        self.eval_return = float(state.get("eval_return", self.eval_return))
        self.solved = bool(state.get("solved", False))
        if "replay" in state:
            self.learner.buffer.restore(state["replay"])
        if "samplers" in state:  # (a plan without them connected saves none, and needs none)
            self.carried.from_checkpoint(state, self.iteration, self.checkpoint)

    def _save(self) -> None:
        extra: dict[str, Any] = {
            "iteration": self.iteration, "episodes": self.episodes, "recent_returns": list(self.recent),
            "last_eval": self.last_eval, "eval_return": self.eval_return, "solved": self.solved,
            "replay": self.learner.buffer.state(), **self.carried.checkpoint_part(self.iteration)}
        self.learner.save(self.checkpoint, extra=extra)

    def connect_samplers(self, parent: Reactor, samplers: Bank[QSampler]) -> None:
        """In ``parent``'s ``__init__``: each sampler's state to this learner with its
        fragment, and back on a resume (samplers built with ``snapshots``; a fixed bank)."""
        parent.connect(samplers.state, self.sampler_states)
        parent.connect(self.restore, samplers.restore, after=0)

    @property
    def mean_return(self) -> float:
        return float(np.mean(self.recent)) if self.recent else float("nan")

    @reaction(triggers=[STARTUP], effects=[weights, restore])
    def start(self, weights: PortWriter[np.ndarray], restore: MultiWriter[np.ndarray]) -> None:
        self.begin_training()
        # Resumed from a run that had done every iteration or was solved (restarted after it
        # finished, say by a rescale on Kubernetes): there is nothing left to train; sending
        # weights would start one more iteration.
        if self.iteration < self.iterations and not self.solved:
            if self.resumed_from:
                self.carried.send(restore)  # (before the weights, in each sampler)
            weights.set(self.learner.payload())

    @reaction(triggers=[sampler_states])
    def keep_states(self, sampler_states: MultiReader[np.ndarray]) -> None:
        """The samplers' states of this tag's fragments (before they are learned from)."""
        self.carried.arrived(sampler_states.present())

    @reaction(triggers=[fragments], effects=[weights])
    def learn(self, fragments: MultiReader[np.ndarray], weights: PortWriter[np.ndarray]) -> None:
        present = fragments.present()
        if len(present) != self.n:
            # in a correct run every sampler's fragment arrives at the same tag
            self.incomplete_iterations += 1
        if self.train_iteration(present):
            weights.set(self.learner.payload())

    def train_iteration(self, present: list[tuple[int, np.ndarray]]) -> bool:
        """One iteration from the fragments ``present`` (by channel, in channel order): the
        replay buffer, the updates, progress, checkpoint, the target's check. Whether to
        send the weights for another."""
        row: list[Any] | None = None
        if self.train.timeline:  # (taken as the learner takes the fragments: before its work on them)
            tag = self.elapsed_tag()
            row = [self.physical_time(), tag.time, tag.microstep, self.learner.env_steps, [i for i, _ in present]]
            self.timeline.append(row)
        for i, packed in present:
            frag = unpack_fragment(packed)
            self._took(i, frag)
            self.learner.observe(frag)
            self.recent.extend(frag.episode_returns)
            self.episodes += len(frag.episode_returns)
        if row is not None:
            row[3] = self.learner.env_steps - row[3]  # (the steps these fragments held)
        self.learner.update(self.updates_per_iteration)
        self.iteration += 1
        self.carried.round_over()
        self.t_last = self.physical_time()
        self._report()
        if self.curves is not None:
            steps = self.learner.env_steps
            self.curves.point(self.iteration, steps, {
                "rollout/ep_rew_mean": self.mean_return, "rollout/exploration_rate": self.learner.epsilon,
                "train/loss": self.learner.last_loss, "time/fps": steps / max((self.t_last - self.t0) / 1e9, 1e-9),
                "time/iterations": self.iteration, "reactorfed/logical_time_s": self.elapsed() / 1e9})
        if self.progress and self.iteration % self.progress_every == 0:
            self._show()
        solved = False
        if (
            self.target_return is not None
            and len(self.recent) == self.recent.maxlen
            and self.mean_return >= self.target_return
            and self.iteration - self.last_eval >= self.eval_every
        ):
            # the training episodes look solved: does the greedy policy agree?
            self.last_eval = self.iteration
            if self.eval_episodes:
                self.eval_return = evaluate(self.learner, self.eval_env, self.eval_episodes, self.eval_seed)
                solved = self.eval_return >= self.target_return
                if self.progress:
                    print(f"  greedy evaluation: {self.eval_return:.1f} over {self.eval_episodes} episodes",
                          file=sys.stderr, flush=True)
            else:
                solved = True
        self.solved = solved
        # (after the target's check: the checkpoint holds this iteration's evaluation)
        if self.checkpoint and self.checkpoint_every and self.iteration % self.checkpoint_every == 0:
            self._save()
        paused = self.train.pause_after and self.iteration - self.resumed_from >= self.train.pause_after
        return self.iteration < self.iterations and not solved and not paused

    def _show(self) -> None:
        dt = max((self.t_last - self.t0) / 1e9, 1e-9)
        print(
            f"iter {self.iteration:5d}/{self.iterations}  steps {self.learner.env_steps:7d}  "
            f"episodes {self.episodes:5d}  return(100) {self.mean_return:6.1f}  "
            f"eps {self.learner.epsilon:.3f}  loss {self.learner.last_loss:8.4f}  "
            f"{self.learner.env_steps / dt:7.0f} steps/s",
            file=sys.stderr,
            flush=True,
        )

    def _verdict(self) -> str:
        """One line for a person: did training reach its target, and at what cost."""
        r = self.result
        spent = f"{r['env_steps']:,} env steps, {r['iterations']} iterations, {r['seconds']:.1f} s of training"
        if "eval_return" not in r:
            return f"result: mean return of the last 100 training episodes {r['mean_return_100']:.1f} after {spent}"
        target = self.target_return
        verdict = "solved" if target is not None and r["eval_return"] >= target else "not solved"
        goal = f" (target {target:g})" if target is not None else ""
        return (f"result: {verdict}: the greedy policy averages {r['eval_return']:.1f} over "
                f"{r['eval_episodes']} episodes of {self.eval_env}{goal} after {spent}")

    def _took(self, index: int, frag: Fragment) -> None:
        """A fragment from channel ``index``, about to be used (for a subclass to count)."""

    def _extra_result(self) -> dict[str, Any]:
        """More of the result (a subclass's)."""
        return {}

    @reaction(triggers=[SHUTDOWN])
    def finish(self) -> None:
        if self.checkpoint:
            self._save()
        if self.curves is not None:
            self.curves.close()
        seconds = (self.t_last - self.t0) / 1e9
        self.result = {
            "iterations": self.iteration,
            "env_steps": self.learner.env_steps,
            "updates": self.learner.updates,
            "incomplete_iterations": self.incomplete_iterations,
            "resumed_from_iteration": self.resumed_from,
            "episodes": self.episodes,
            "mean_return_100": self.mean_return,
            "seconds": seconds,
            "weights_sha256": weights_digest(self.learner),
            "checkpoint": str(Path(self.checkpoint).resolve()) if self.checkpoint else "",
        }
        self.result.update(self._extra_result())
        if self.train.timeline:
            self.result["timeline"] = self.timeline
        if self.eval_episodes:
            if self.last_eval != self.iteration:
                self.eval_return = evaluate(self.learner, self.eval_env, self.eval_episodes, self.eval_seed)
            self.result["eval_return"] = self.eval_return
            self.result["eval_episodes"] = self.eval_episodes
        if self.progress:
            self._show()
            print(self._verdict(), file=sys.stderr, flush=True)
            print(f"done: {json.dumps(self.result)}", file=sys.stderr, flush=True)
        self.report_result(self.result)
