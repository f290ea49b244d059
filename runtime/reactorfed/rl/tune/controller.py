"""The controller reactor: the one place a tuner decides. It gives every slot of the trials'
bank its first directive at startup, and each time reports arrive (the reports of one tag,
in slot order) asks its :class:`~reactorfed.rl.tune.contracts.Scheduler` what follows,
records the decisions (:class:`~reactorfed.rl.tune.record.DecisionLog`, JSON lines) and
sends the directives. It never reads physical time: what it decides at a tag depends on the
reports of that tag, which logical time fixes whichever trial runs slower.

With a checkpoint folder it saves itself after each decision (``DIR/controller.pt``: the
scheduler's state, the last directive sent to each slot, the report each answered, the
length of the record); resuming, it tells each slot which of its checkpoints to load and
sends the last directive again, and the record carries on from that length.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from reactorfed import SHUTDOWN, STARTUP, Input, MultiReader, MultiWriter, Output, Reactor, reaction

from ..training import write_checkpoint
from .contracts import Directive, Report, Scheduler
from .record import Decision, DecisionLog

__all__ = ["Controller"]


class Controller(Reactor):
    """Decides for ``n`` slots with ``scheduler``. ``decisions``: the record's file ("":
    in memory); ``checkpoint_dir``: where it saves itself ("": nowhere); ``resume``: start
    from that checkpoint when there is one; ``progress``: a line on stderr per decision;
    ``pause_after``: end this run after deciding on reports that many times (0: never),
    its checkpoint the place a resumed run carries on from (a budget of rounds per session);
    ``stop_when_done``: ask the federation to stop once every slot has been told to stop
    (trials whose samplers run on clocks of their own: nothing else ends the run)."""

    reports: Input[object] = Input(object, width="n")
    directives: Output[object] = Output(object, width="n")

    def __init__(self, n: int, scheduler: Scheduler, *, decisions: str = "", checkpoint_dir: str = "",
                 resume: bool = False, progress: bool = False, pause_after: int = 0,
                 stop_when_done: bool = False) -> None:
        self.n, self.scheduler, self.pause_after, self.stop_when_done = n, scheduler, pause_after, stop_when_done
        self.decided = 0  # decisions on reports in this run
        self.checkpoint_dir, self.resume, self.progress = checkpoint_dir, resume, progress
        self.log = DecisionLog(decisions)
        self.last: dict[int, dict[str, Any]] = {}  # the last directive sent to each slot (wire form)
        self.answered: dict[int, int] = {}  # each slot's latest report (its key; absent: none yet)
        self.waiting: set[int] = set()  # slots whose latest report has no answer yet
        self.resumed = False
        self.result: dict[str, Any] = {}

    @property
    def checkpoint_path(self) -> Path:
        return Path(self.checkpoint_dir) / "controller.pt"

    @reaction(triggers=[STARTUP], effects=[directives])
    def start(self, directives: MultiWriter[object]) -> None:
        if self.resume and self.checkpoint_dir and self.checkpoint_path.exists():
            self._resume(directives)
            return
        self.log.open(0)
        out, decisions = self.scheduler.begin(self.n)
        self._send(out, decisions, directives)

    @reaction(triggers=[reports], effects=[directives])
    def decide(self, reports: MultiReader[object], directives: MultiWriter[object]) -> None:
        reps = []
        for slot, value in reports.present():
            assert isinstance(value, dict)
            r = Report.of(value)
            assert r.slot == slot, (r.slot, slot)
            reps.append(r)
            self.answered[slot] = r.key
            self.waiting.add(slot)
        out, decisions = self.scheduler.decide(reps)
        self._send(out, decisions, directives)
        if decisions:
            done, total, figures = self.scheduler.progress()
            self.report_progress(done, total, **figures)  # (the population's, not one trial's)
            self.decided += 1
            if self.decided == self.pause_after:
                if self.progress:
                    print(f"tune: pausing after {self.decided} decisions (resume=true carries on)", file=sys.stderr,
                          flush=True)
                self.request_stop()

    def _send(self, out: list[tuple[int, Directive]], decisions: list[Decision],
              directives: MultiWriter[object]) -> None:
        t = self.elapsed_tag()
        self.log.add((t.time, t.microstep), decisions)
        for slot, d in out:
            wire = d.wire()
            self.last[slot] = wire
            self.waiting.discard(slot)
            directives[slot].set(wire)
        if self.checkpoint_dir:
            self._save()
        if self.progress and decisions:
            self._show(decisions)
        if self.stop_when_done and out and all(self.last.get(s, {}).get("kind") == "stop" for s in range(self.n)):
            self.request_stop()

    def _show(self, decisions: list[Decision]) -> None:
        parts = []
        for d in decisions:
            metric = "" if d.metric is None else f" {d.metric:.1f}"
            if d.kind == "exploit":
                parts.append(f"trial {d.trial}{metric} <- trial {d.donor} {_short(d.hparams)}")
            elif d.kind == "rank":
                parts.append(f"best trial {d.trial}{metric} ranking {d.ranking}")
            elif d.kind != "keep":
                parts.append(f"{d.kind} trial {d.trial}{metric}" + (f" {_short(d.hparams)}" if d.kind == "start" else ""))
        print(f"tune iteration {decisions[0].iteration}: " + "; ".join(parts), file=sys.stderr, flush=True)

    # -- checkpoints -----------------------------------------------------------------------
    def _save(self) -> None:
        write_checkpoint(self.checkpoint_path, {
            "scheduler": self.scheduler.state(), "last": self.last, "answered": self.answered,
            "waiting": sorted(self.waiting), "decisions": len(self.log.lines)})

    def _resume(self, directives: MultiWriter[object]) -> None:
        import torch

        state: dict[str, Any] = torch.load(self.checkpoint_path, weights_only=False)  # (this run's own file)
        self.scheduler.restore(state["scheduler"])
        self.last = {int(k): v for k, v in state["last"].items()}
        self.answered = {int(k): int(v) for k, v in state["answered"].items()}
        self.waiting = set(state["waiting"])
        self.log.open(int(state["decisions"]))
        self.resumed = True
        for slot in range(self.n):
            key = self.answered.get(slot)
            last = self.last.get(slot)
            if key is None:  # no report from it yet: its first directive again
                if last is not None:
                    directives[slot].set(last)
                continue
            then = None if slot in self.waiting else last  # waiting: its report is the scheduler's already
            directives[slot].set(Directive("resume", key=key, then=then).wire())
        if self.progress:
            print(f"tune: resumed from {self.checkpoint_path} ({len(self.log.lines)} decisions)", file=sys.stderr,
                  flush=True)

    @reaction(triggers=[SHUTDOWN])
    def finish(self) -> None:
        self.result = {"decisions": len(self.log.lines), "decisions_sha256": self.log.digest(),
                       "resumed": self.resumed, "paused": 0 < self.pause_after == self.decided,
                       **self.scheduler.summary()}
        if self.log.path:
            self.result["decisions_file"] = str(Path(self.log.path).resolve())
        if self.progress:
            print(f"tune: done: {self.result}", file=sys.stderr, flush=True)
        self.report_result(self.result)


def _short(hparams: dict[str, Any]) -> str:
    return " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in hparams.items())
