"""Learning curves as TensorBoard event files, with the scalar names users of
Stable-Baselines3 and CleanRL know (``rollout/ep_rew_mean``, ``train/approx_kl``,
``time/fps`` ...) plus what only reactorfed knows (``reactorfed/logical_time_s``, the
policy lag). Written with torch's ``SummaryWriter`` (the writer SB3 uses: the same event
files, and torch is already in every learner's process; tensorboardX would be one more
package to do the same), which flushes from its own thread.

A log directory that cannot be written is said once; training goes on without curves.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..observe import LOGDIR_ENV

__all__ = ["LOGDIR_ENV", "Curves", "due", "scalar_names"]

log = logging.getLogger("reactorfed.rl")


#: a learner's statistic -> the scalar SB3 writes for it (and its sign: SB3's
#: ``entropy_loss`` is minus the entropy)
_TRAIN: dict[str, tuple[str, float]] = {
    "policy_loss": ("train/policy_gradient_loss", 1.0),
    "value_loss": ("train/value_loss", 1.0),
    "entropy": ("train/entropy_loss", -1.0),
    "approx_kl": ("train/approx_kl", 1.0),
    "clip_fraction": ("train/clip_fraction", 1.0),
    "clipfrac": ("train/clip_fraction", 1.0),
    "explained_variance": ("train/explained_variance", 1.0),
    "loss": ("train/loss", 1.0),
    "learning_rate": ("train/learning_rate", 1.0),
    "lr": ("train/learning_rate", 1.0),
    "q_mean": ("train/q_mean", 1.0),
}


def scalar_names(stats: Mapping[str, float]) -> dict[str, float]:
    """A learner's statistics under SB3's names (``train/...``); one SB3 does not write
    goes under ``train/`` with its own name."""
    out: dict[str, float] = {}
    for k, v in stats.items():
        name, sign = _TRAIN.get(k, (f"train/{k}", 1.0))
        out[name] = sign * float(v)
    return out


def due(iteration: int) -> bool:
    """Whether iteration ``iteration`` writes a point: every one of the first 200, then
    every 10th to 2,000, every 100th to 20,000, every 1,000th after (a point costs a
    learner about 0.7 ms; a learner that updates every millisecond would spend most of
    its time writing them). Fixed by the iteration, so every run of a seed has the same
    points."""
    stride = 1 if iteration < 200 else 10 if iteration < 2_000 else 100 if iteration < 20_000 else 1_000
    return iteration % stride == 0


class Curves:
    """One learner's event files under ``logdir/name``."""

    def __init__(self, logdir: str | os.PathLike[str], name: str = "learner") -> None:
        self.path = Path(logdir) / name
        self._writer: Any = None
        self.failed = False
        #: the last iteration's point when it was not due: written at close, so a curve
        #: ends where training did
        self._held: tuple[int, Mapping[str, float]] | None = None
        try:
            from torch.utils.tensorboard import SummaryWriter

            self.path.mkdir(parents=True, exist_ok=True)
            self._writer = SummaryWriter(log_dir=str(self.path), flush_secs=5)
        except (OSError, ImportError) as e:
            self._fail(e)

    def _fail(self, e: BaseException) -> None:
        self.failed = True
        self._writer = None
        log.warning("no learning curves: cannot write TensorBoard files in %s (%s); training goes on", self.path, e)

    def write(self, step: int, scalars: Mapping[str, float]) -> None:
        """``scalars`` at x = ``step`` (env steps, as SB3's x-axis)."""
        w = self._writer
        if w is None:
            return
        try:
            for k, v in scalars.items():
                if v is not None and not (isinstance(v, float) and math.isnan(v)):
                    w.add_scalar(k, v, step)
        except OSError as e:
            self._fail(e)

    def point(self, iteration: int, step: int, scalars: Mapping[str, float]) -> None:
        """Iteration ``iteration``'s ``scalars`` at x = ``step``: written when the iteration
        is :func:`due`, else held, and written at :meth:`close` if no later one came."""
        if due(iteration):
            self._held = None
            self.write(step, scalars)
        else:
            self._held = (step, scalars)

    def close(self) -> None:
        if self._held is not None:
            self.write(*self._held)
            self._held = None
        if self._writer is not None:
            try:
                self._writer.close()
            except OSError as e:
                self._fail(e)
