"""SEED's central reactor (:mod:`reactorfed.rl.plans.seed`): the learner that also acts for
every sampler. At each tag it takes every sampler's step record, acts for all of them in
one forward pass (:class:`~reactorfed.rl.plans.seed_inference.BatchedInference`) and sends each
sampler its actions; once ``fragment_len`` steps make a fragment of every sampler's copies,
it learns from them first. Training's bookkeeping is every plan learner's
(:mod:`reactorfed.rl.training`): the stop, the progress line, the checkpoint and resume,
the result.

Nothing of torch is imported here: every federate builds the whole program, this reactor
included, and a sampler's process must not load torch. The learner and its inference are
built in the startup reaction, in the learner's own process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from reactorfed import (
    SHUTDOWN,
    STARTUP,
    ActionHandle,
    Input,
    LogicalAction,
    MultiReader,
    MultiWriter,
    Output,
    Reactor,
    ValidationError,
    reaction,
)

from ..contracts import Algorithm, Learner, SpaceInfo
from ..rollout import Rollout
from ..training import (
    RunConfig,
    TrainingLog,
    end_of_training,
    paused,
    resume_state,
    save_progress,
)
from .elastic_round import ElasticRound
from .sampler import actor_seed
from .sampler_state import CarriedStates

if TYPE_CHECKING:
    from .seed_inference import BatchedInference

__all__ = ["ElasticSeedTrainer", "SeedTrainer"]


class SeedTrainer(Reactor):
    """Acts for ``n`` samplers of ``num_envs`` copies and learns every ``fragment_len``
    steps. Stops after ``run.iterations`` updates, or once the last 100 training episodes
    average ``run.target_return``, by sending no more actions. At shutdown it saves a
    checkpoint (with ``run.checkpoint``) and reports its result: a plan learner's
    (:func:`~reactorfed.rl.training.learner_result`), its device and forward passes."""

    steps: Input[np.ndarray] = Input(np.ndarray, width="n")
    sampler_states: Input[np.ndarray] = Input(np.ndarray, width="n")
    actions: Output[np.ndarray] = Output(np.ndarray, width="n")
    restore: Output[np.ndarray] = Output(np.ndarray, width="n")

    def __init__(self, n: int, num_envs: int, fragment_len: int, algo: Algorithm, space: SpaceInfo,
                 run: RunConfig | None = None, seed: int = 0, device: str = "auto",
                 carries_samplers: bool = False) -> None:
        """``carries_samplers``: the plan connects :attr:`sampler_states` and :attr:`restore`:
        every checkpoint holds each sampler's state at the fragment's end it follows, and
        the inference's (its generator, the episodes under way, the observations to act on
        next), and a resumed run carries on from them."""
        run = run or RunConfig()
        self.carries_samplers = carries_samplers
        self.carried = CarriedStates(n)
        self.inference_state: dict[str, Any] | None = None  # at the last fragment's end
        self._resuming = False  # the inference restored: the samplers' first records are not observed
        self.n, self.num_envs, self.fragment_len = n, num_envs, fragment_len
        self.algo, self.space, self.run, self.seed, self.device = algo, space, run, seed, device
        self.learner: Learner | None = None
        self.inference: BatchedInference | None = None
        self.log = TrainingLog(run)
        self.iteration = 0
        self.resumed_from = 0
        self.over = False
        self.stats: dict[str, float] = {}
        self.result: dict[str, Any] = {}

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        from .seed_inference import BatchedInference, central_policy

        learner = self.algo.make_learner(self.space, self.seed)
        try:
            policy, device = central_policy(learner, self.device)  # (the learner moved to the device first)
        except TypeError as e:
            raise ValidationError(f"{self.fqn}: {e}") from None
        self.learner = learner
        # action draws seeded apart from the learner's minibatch order and every sampler's resets
        self.inference = BatchedInference(policy, device, self.n, self.num_envs, self.fragment_len,
                                          seed=actor_seed(self.seed))
        self.iteration, state = resume_state(learner, self.run, self.log)
        self.resumed_from = self.iteration
        if self.carries_samplers and self.iteration:
            self.carried.from_checkpoint(state, self.iteration, self.run.checkpoint)
            saved = state.get("inference")
            if self.carried.latest is not None and saved is not None:
                self.inference.restore(saved)
                self.inference_state, self._resuming = saved, True
            else:
                self.carried.latest = None  # (both, or neither: the samplers start afresh)
        self.log.start(self.fqn, self.physical_time)
        self.report_progress(self.iteration, self.run.iterations, **self.log.figures(learner.env_steps))
        # a run resumed after it had finished (or reached its target) has nothing left to do: no actions
        self.over = self.iteration >= self.run.iterations or self.log.solved

    @reaction(triggers=[sampler_states])
    def keep_states(self, sampler_states: MultiReader[np.ndarray]) -> None:
        """The samplers' states at the end of this tag's fragment (before it is learned from)."""
        self.carried.arrived(sampler_states.present())

    @reaction(triggers=[steps], effects=[actions, restore])
    def serve(self, steps: MultiReader[np.ndarray], actions: MultiWriter[np.ndarray],
              restore: MultiWriter[np.ndarray]) -> None:
        if self.over:
            return
        inference = self.inference
        assert inference is not None
        present = steps.present()
        # the plan's invariant: every sampler's record arrives at the tag of its step
        assert len(present) == self.n, f"{len(present)} of {self.n} step records at one tag"
        if self._resuming:  # the samplers' first records (fresh resets): their saved states take their place
            self._resuming = False
            self.carried.send(restore)
            for i, a in enumerate(inference.act()):
                actions[i].set(a)
            return
        rollouts = inference.observe([rec for _, rec in present])
        if rollouts is not None:
            self.learn(rollouts)
            if self.over:
                return
        for i, a in enumerate(inference.act()):
            actions[i].set(a)

    def learn(self, rollouts: list[Rollout]) -> None:
        """One update from the fragment every sampler's copies just completed (sampler
        order); the progress line, the checkpoint, and the end of training when it is."""
        learner = self.learner
        assert learner is not None
        self.stats = learner.learn(rollouts)
        self.iteration += 1
        if self.carries_samplers:
            assert self.inference is not None
            self.carried.round_over()
            self.inference_state = self.inference.state()
        self.log.add((r for ro in rollouts for r in ro.episode_returns), self.iteration, learner.env_steps)
        self.log.write(self.iteration, learner.env_steps, self.stats, self.elapsed())
        run = self.run
        self.report_progress(self.iteration, run.iterations, **self.log.figures(learner.env_steps))
        if run.progress and self.iteration % run.progress_every == 0:
            self.log.show(self.iteration, learner.env_steps, self.stats)
        if run.checkpoint and run.checkpoint_every and self.iteration % run.checkpoint_every == 0:
            save_progress(learner, run, self.iteration, self.log, self._carried())
        self.over = self.iteration >= run.iterations or self.log.solved or paused(run, self.iteration,
                                                                                   self.resumed_from)

    @reaction(triggers=[SHUTDOWN])
    def finish(self) -> None:
        if self.learner is None or self.inference is None:
            return  # the startup failed (and said why): nothing was trained
        result = end_of_training(self.learner, self.log, self.run, self.iteration, self.resumed_from, self.stats,
                                 self._carried())
        self.result = {**result, "device": str(self.inference.device),
                       "forward_passes": self.inference.forward_passes, **self.extra_result()}
        self.report_result(self.result)

    def _carried(self) -> dict[str, Any]:
        """What a checkpoint holds beside the learner: the samplers' and the inference's
        states at the last fragment's end (both, or neither)."""
        part = self.carried.checkpoint_part(self.iteration)
        return {**part, "inference": self.inference_state} if part and self.inference_state else {}

    def extra_result(self) -> dict[str, Any]:
        """More of the result (a subclass's)."""
        return {}


class ElasticSeedTrainer(SeedTrainer):
    """SEED's learner when its samplers are the members of the main reactor's elastic bank
    ``bank`` (``n`` slots, its maximum width): a fragment is acted for the members present
    when it is decided, at the end of the fragment before, and its first actions reach them
    ``period`` later (:attr:`first`; 0: the next microstep); its other steps follow a
    microstep apart, as the fixed plan's.

    A new process's first step record (its startup's, at its join) waits for the next
    fragment; one that leaves during a fragment sends no more records: its rows of that
    fragment are not learned from (``steps_dropped``, by member and incarnation as
    ``samples_by_member``), the others' are. A fragment whose samplers all left is
    abandoned (``fragments_abandoned``); when nobody waits for a fragment, the next first
    record starts one. The learner's own logical action marks the tag each step's records
    are due at, so it runs there even when none comes. Which members a fragment takes is
    decided by the membership at its tags alone, so the RTI's record replayed gives the same
    fragments, the same draws, the same weights. The result adds
    :class:`~reactorfed.rl.plans.elastic_round.ElasticRound`'s ``samples_by_member``,
    ``membership`` and ``change_gaps_ms``."""

    #: a fragment's first actions, sent ``period`` ahead (the connection's delay: the samplers
    #: learn of the next fragment from a message in flight, not from the learner's clock alone)
    first: Output[np.ndarray] = Output(np.ndarray, width="n")
    due: LogicalAction[object] = LogicalAction(object)

    def __init__(self, bank: str, n: int, num_envs: int, fragment_len: int, algo: Algorithm, space: SpaceInfo,
                 run: RunConfig | None = None, seed: int = 0, device: str = "auto", period: int = 0) -> None:
        super().__init__(n, num_envs, fragment_len, algo, space, run=run, seed=seed, device=device)
        self.period = period
        self.rounds = ElasticRound(bank, period, timeline=self.run.timeline)
        self.idle = True  # no fragment under way: the next first record starts one
        self.ready: set[int] = set()  # members whose observations wait for the next fragment
        #: bank index -> env steps of rows not learned from, by incarnation (as samples_by_member)
        self.dropped: dict[str, list[int]] = {}
        self.abandoned = 0

    @reaction(triggers=[SeedTrainer.steps, due], effects=[SeedTrainer.actions, first, due])
    def serve(self, steps: MultiReader[np.ndarray], actions: MultiWriter[np.ndarray], first: MultiWriter[np.ndarray],
              due: ActionHandle) -> None:
        now = self.rounds.look(self)
        inference = self.inference
        if self.over or inference is None:
            return
        records = dict(steps.present())
        if due.is_present:  # the outcome of the last actions is due now
            self._step(inference, records, actions, due)
        for i, rec in sorted(records.items()):  # first records: new processes' (their startup's)
            inference.arrive(i, rec)
            self.ready.add(i)
        if self.idle and not self.over:
            self.ready &= set(now)  # (one that left waits no more: a new process will arrive anew)
            batch = [i for i in now if i in self.ready]
            if batch:
                self.idle = False
                self.ready -= set(batch)
                inference.start(batch)
                self._act(inference, first, due, self.period)

    def _step(self, inference: BatchedInference, records: dict[int, np.ndarray], actions: MultiWriter[np.ndarray],
              due: ActionHandle) -> None:
        """The records of the step under way (taken out of ``records``): the fragment goes on,
        ends (learned from), or is abandoned."""
        for i in inference.batch:
            if i not in records:  # it left (or its process died) before the step's outcome came
                counts = self.dropped.setdefault(str(i), [])
                counts += [0] * (len(self.rounds.samples[i]) - len(counts))  # (one count per incarnation)
                counts[-1] += inference.drop(i)
        batch = inference.batch
        if not batch:
            self.abandoned += 1
            self.idle = True
            return
        rollouts = inference.observe([records.pop(i) for i in batch])
        if rollouts is None:
            self._act(inference, actions, due, 0)
            return
        self.idle = True
        self.rounds.row(self, batch)
        for i, ro in zip(batch, rollouts, strict=True):
            self.rounds.took(i, ro.transitions)
        self.learn(rollouts)
        self.ready.update(batch)

    @staticmethod
    def _act(inference: BatchedInference, out: MultiWriter[np.ndarray], due: ActionHandle, delay: int) -> None:
        """Act for the batch; the records are due ``delay`` later (the connection's)."""
        for i, a in zip(inference.batch, inference.act(), strict=True):
            out[i].set(a)
        due.schedule(delay=delay)

    def extra_result(self) -> dict[str, Any]:
        r = {k: v for k, v in self.rounds.result().items() if k != "rounds_asked_again"}
        by_member = r["samples_by_member"]
        dropped = {i: c + [0] * (len(by_member[i]) - len(c)) for i, c in sorted(self.dropped.items())}
        return {**r, "steps_dropped": dropped, "fragments_abandoned": self.abandoned}
