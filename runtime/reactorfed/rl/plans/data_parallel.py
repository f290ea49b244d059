"""The data-parallel execution plan, as a reactor program: ``K`` learners, each with its
own samplers, take every gradient step together on the average of their gradients
(synchronous data parallelism: DD-PPO's, or PyTorch DDP's, exchange between learners).

::

    samplers[i].fragment ---------------------------> learners[i // S].fragments[i mod S]
    learners[k].weights  --(after 0, broadcast)-----> samplers[kS .. kS + S - 1].weights
    learners[j].header   --(after 0)----------------> learners[k].headers[j]     (every j, k)
    learners[j].gradient --(after 0)----------------> learners[k].gradients[j]   (every j, k)

A round, in microsteps of one logical time (``m`` = the round's first):

- ``m``: learner ``k``'s ``S`` samplers deliver their fragments (sampled with the weights
  of the round before); it computes GAE on its share and sends every learner (itself
  included) its header: its transitions and the returns of the episodes that finished.
- ``m + 1``: every learner holds every header. From them alone (so identically) each
  plans the round: env steps, learning rate and clip range count every share; each epoch
  cuts each share into the same number of minibatches (the most any share needs at
  ``minibatch_size``), drawn by a generator of (seed, share, round); and the returns go
  into each learner's training log in learner order, so all decide alike when to stop.
  Each computes the gradient of its first minibatch and sends it to every learner.
- ``m + 2``, ``m + 3``, ...: every learner holds every gradient of the step; each adds
  them in learner order, divides by ``K`` (:func:`~reactorfed.rl.plans.gradient_rounds.mean_gradient`),
  clips and applies the same optimizer step, and sends its next minibatch's gradient.
  After the last step each broadcasts its policy to its own samplers, and the next
  round starts one microstep later.

So every learner applies the same bits to the same weights and optimizer state at every
step: the ``K`` learners hold bit-identical weights after every step (the tests check
their digests after each one), and one seed fixes them in one process and federated.

**An all-to-all exchange, not a ring.** Each learner sends its flat gradient to every
learner, ``K (K - 1)`` messages a step, each carried at once: the step costs one
microstep, one hop between federates. A ring all-reduce sends ``2 (K - 1)`` messages of
``1 / K`` of the gradient each per learner (the least bandwidth) but takes ``2 (K - 1)``
hops in turn, each a microstep and a round of the federation's coordination. PPO's
gradients here are tens of kilobytes, so a step is bound by hops, not bandwidth, for any
``K`` that fits a machine's cores; a ring would pay for bandwidth it does not need.
Adding in learner order, not as each arrives, is what makes the sums identical everywhere.

Every learner starts from the same weights (one ``seed``) and, resumed, from the lead's
(learner 0's) checkpoint, the only one written; learner 0 also shows progress. The
result of every learner carries the (global) iterations, env steps and digest.

``minibatch_size`` is each learner's: a step averages ``K`` minibatches, so ``K`` learners
at ``minibatch_size / K`` take the synchronous plan's steps over as many transitions. With
``K = 1`` this is not the synchronous plan bit for bit: an epoch here is cut into nearly
equal minibatches (the synchronous plan's last one may be short), in orders drawn per
round rather than from the learner's own stream.

**Elastic samplers.** With ``max_samplers`` the samplers are one elastic bank of 1 to
``max_samplers`` members (``num_learners * samplers_per_learner`` at the start, or
``initial_samplers``) that join
and leave while it trains, each round as wide as the members present
(:class:`ElasticDataParallelTrainer`). Slot ``i`` is dealt to learner ``i mod K``, on its
channel ``i // K``: a fixed deal, by slot, not by arrival. Why one bank dealt by slot
rather than a bank per learner or a deal of the members present: the main reactor's
banks alone may be elastic, and one bank is what ``kubectl scale`` and the operator act
on; a deal by slot keeps every connection static (a member's fragments always go to one
learner, its weights come from it: no fragment crosses to every learner) and needs no
agreement, so nothing about the deal can differ between a run and its replay. Dealt by
``i mod K``, the first slots, the ones a bank fills first, spread over the learners (with
one sampler a learner this is the fixed plan's deal, and the same weights).

A round then is each learner's own elastic round
(:class:`~reactorfed.rl.plans.elastic_round.ElasticRound`): its weights reach its members
present ``period`` later (0: the next microstep), and at that tag (its logical action, the
same for every learner, since all send their weights at one tag) it takes the fragments of
those still present and sends its header, whatever it holds. A learner whose members are
all absent holds no share: its header says 0 transitions, and it takes no gradient of its
own; every learner sees that in the headers, so each step's mean is over the gradients of
the learners that hold a share, in learner order, and every learner, that one too, applies
it: the weights stay bit-identical, and the all-reduce's order depends on the membership
alone. A round in which no learner holds a share (every member asked left) is asked again
by all of them at once. The membership at each tag is the RTI's record's, so a replay gives
the same shares, the same sums, the same weights.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reactorfed import (
    STARTUP,
    ActionHandle,
    Bank,
    Elastic,
    Input,
    LogicalAction,
    MultiReader,
    MultiWriter,
    Output,
    PortWriter,
    Reactor,
    ValidationError,
    bank,
    each,
    elastic_bank,
    reaction,
)

from ..contracts import Algorithm, SpaceInfo
from ..envs.backends import BACKENDS
from ..rollout import unpack_rollout
from ..training import RunConfig
from .elastic_round import ElasticRound
from .gradient_rounds import (
    GradientRounds,
    channel_values,
    check_widths,
    mean_gradient,
    read_headers,
    round_header,
    round_rng,
)
from .sampler import sampler_seed
from .sync import ElasticSyncSampler, SyncSampler

__all__ = ["DataParallelPlan", "DataParallelTrainer", "ElasticDataParallelTrainer"]


class DataParallelTrainer(GradientRounds):
    """Learner ``k`` of ``num_learners``, fed by ``num_samplers`` samplers of its own (see
    the module's docstring for the round)."""

    fragments: Input[np.ndarray] = Input(np.ndarray, width="num_samplers")
    weights: Output[np.ndarray] = Output(np.ndarray)
    header: Output[np.ndarray] = Output(np.ndarray)
    headers: Input[np.ndarray] = Input(np.ndarray, width="num_learners")
    gradient: Output[np.ndarray] = Output(np.ndarray)
    gradients: Input[np.ndarray] = Input(np.ndarray, width="num_learners")

    def __init__(self, num_learners: int, num_samplers: int, algo: Algorithm, space: SpaceInfo,
                 run: RunConfig | None = None, seed: int = 0, lead: bool = True, trace: bool = False,
                 carried: int = 0) -> None:
        super().__init__(algo, space, run, seed, lead, trace, carried)
        self.num_learners, self.num_samplers = num_learners, num_samplers

    @property
    def share(self) -> int:
        return self.bank_index or 0

    @reaction(triggers=[STARTUP], effects=[weights, GradientRounds.restore])
    def start(self, weights: PortWriter[np.ndarray], restore: MultiWriter[np.ndarray]) -> None:
        if self.begin():
            assert self.learner is not None
            self.carried.send(restore)  # (the lead's, before the weights, in each sampler)
            weights.set(self.learner.payload())
            self.sent_weights()

    @reaction(triggers=[fragments], effects=[header])
    def prepare(self, fragments: MultiReader[np.ndarray], header: PortWriter[np.ndarray]) -> None:
        assert self.learner is not None
        rollouts = [unpack_rollout(p) for p in channel_values(fragments, self.num_samplers, "fragments")]
        self.took(rollouts)
        header.set(round_header(self.learner.prepare(rollouts), rollouts))

    @reaction(triggers=[headers], effects=[gradient])
    def plan(self, headers: MultiReader[np.ndarray], gradient: PortWriter[np.ndarray]) -> None:
        assert self.learner is not None
        self.plan_round(channel_values(headers, self.num_learners, "headers"),
                        round_rng(self.seed, self.share, self.iteration))
        gradient.set(self.learner.gradient())

    @reaction(triggers=[gradients], effects=[gradient, weights])
    def step(self, gradients: MultiReader[np.ndarray], gradient: PortWriter[np.ndarray],
             weights: PortWriter[np.ndarray]) -> None:
        assert self.learner is not None
        if self.apply(mean_gradient(channel_values(gradients, self.num_learners, "gradients"))):
            gradient.set(self.learner.gradient())
        elif self.end_round():
            weights.set(self.learner.payload())
            self.sent_weights()


class ElasticDataParallelTrainer(DataParallelTrainer):
    """Learner ``k`` of ``num_learners`` when the samplers are the members of the main
    reactor's elastic bank ``bank`` of ``max_samplers`` slots, slot ``i`` dealt to learner
    ``i mod K`` (its channel ``i // K``), the weights reaching them ``period`` later (see
    the module). Its result adds ``incomplete_iterations`` (rounds whose fragments were not
    those of its members asked and still present: none in a correct run),
    ``rounds_sat_out`` (rounds it held no share of), and its
    :class:`~reactorfed.rl.plans.elastic_round.ElasticRound`'s part: ``samples_by_member``
    (its own members'), ``membership`` (the bank's width), ``rounds_asked_again``,
    ``change_gaps_ms``."""

    round_end: LogicalAction[object] = LogicalAction(object)

    def __init__(self, bank: str, num_learners: int, max_samplers: int, algo: Algorithm, space: SpaceInfo,
                 run: RunConfig | None = None, seed: int = 0, lead: bool = True, trace: bool = False,
                 period: int = 0) -> None:
        super().__init__(num_learners, -(-max_samplers // num_learners), algo, space, run, seed, lead, trace)
        self.rounds = ElasticRound(bank, period, timeline=self.run.timeline)
        self.incomplete_iterations = self.sat_out = 0
        self.sharing: list[int] = []  # the learners that hold a share of the round under way

    def dealt(self, members: tuple[int, ...]) -> tuple[int, ...]:
        """This learner's of the bank's ``members``."""
        return tuple(i for i in members if i % self.num_learners == self.share)

    def _send(self, now: tuple[int, ...], weights: PortWriter[np.ndarray], round_end: ActionHandle) -> None:
        assert self.learner is not None
        weights.set(self.learner.payload())
        self.sent_weights()
        self.rounds.ask(self.dealt(now), round_end)

    @reaction(triggers=[STARTUP], effects=[DataParallelTrainer.weights, round_end])
    def start(self, weights: PortWriter[np.ndarray], round_end: ActionHandle) -> None:
        now = self.rounds.look(self)
        if self.begin():
            self._send(now, weights, round_end)

    @reaction(triggers=[DataParallelTrainer.fragments, round_end], effects=[DataParallelTrainer.header])
    def prepare(self, fragments: MultiReader[np.ndarray], header: PortWriter[np.ndarray]) -> None:
        assert self.learner is not None
        now = self.rounds.look(self)
        k = self.num_learners
        present = [(c * k + self.share, v) for c, v in fragments.present()]
        if not self.rounds.complete(present, self.dealt(now)):
            self.incomplete_iterations += 1  # (a fragment missing, or one not asked for)
        if not present:  # no share this round: the others learn without this learner's gradient
            header.set(round_header(0, []))
            return
        rollouts = [unpack_rollout(v) for _, v in present]
        self.took(rollouts)
        self.rounds.row(self, [i for i, _ in present])
        for (i, _), ro in zip(present, rollouts, strict=True):
            self.rounds.took(i, ro.transitions)
        header.set(round_header(self.learner.prepare(rollouts), rollouts))

    @reaction(triggers=[DataParallelTrainer.headers],
              effects=[DataParallelTrainer.gradient, DataParallelTrainer.weights, round_end])
    def plan(self, headers: MultiReader[np.ndarray], gradient: PortWriter[np.ndarray],
             weights: PortWriter[np.ndarray], round_end: ActionHandle) -> None:
        assert self.learner is not None
        values = channel_values(headers, self.num_learners, "headers")
        counts, _ = read_headers(values)
        if not any(counts):  # every member asked left before its weights arrived: all ask again
            now = self.rounds.look(self)
            self.rounds.rounds_asked_again += 1
            self._send(now, weights, round_end)
            return
        self.sharing = [j for j, n in enumerate(counts) if n]
        mine = self.share in self.sharing
        if not mine:
            self.sat_out += 1
        self.plan_round(values, round_rng(self.seed, self.share, self.iteration) if mine else None)
        if mine:
            gradient.set(self.learner.gradient())

    @reaction(triggers=[DataParallelTrainer.gradients],
              effects=[DataParallelTrainer.gradient, DataParallelTrainer.weights, round_end])
    def step(self, gradients: MultiReader[np.ndarray], gradient: PortWriter[np.ndarray],
             weights: PortWriter[np.ndarray], round_end: ActionHandle) -> None:
        assert self.learner is not None
        present = gradients.present()
        # the plan's invariant: every learner holding a share sends its gradient at each step
        assert [j for j, _ in present] == self.sharing, f"gradients of {[j for j, _ in present]}, {self.sharing} expected"
        if self.apply(mean_gradient([g for _, g in present])):
            if self.share in self.sharing:
                gradient.set(self.learner.gradient())
        elif self.end_round():
            self._send(self.rounds.look(self), weights, round_end)

    def extra_result(self) -> dict[str, Any]:
        r = self.rounds.result()
        k = self.num_learners
        r["samples_by_member"] = {i: c for i, c in r["samples_by_member"].items() if int(i) % k == self.share}
        return {"incomplete_iterations": self.incomplete_iterations, "rounds_sat_out": self.sat_out, **r}


class DataParallelPlan(Reactor):
    """The data-parallel plan for ``algo`` (a :class:`~reactorfed.rl.contracts.GradientLearner`'s:
    PPO's) on ``env``: ``num_learners`` learners, each fed every round by
    ``samplers_per_learner`` samplers of ``num_envs`` copies and ``fragment_len`` rows. A
    federated run puts each learner and each sampler in its own process. ``trace`` adds a
    hash of the weights after every step to each learner's result.

    Sampler ``i`` (of ``num_learners * samplers_per_learner``) is seeded as the synchronous
    plan's sampler ``i``, and feeds learner ``i // samplers_per_learner``.

    With ``max_samplers`` (> 0) the samplers are one elastic bank of 1 to ``max_samplers``,
    ``initial_samplers`` at the start (0: ``num_learners * samplers_per_learner``; fewer than
    ``num_learners`` leaves learners without samplers until some join), sampler ``i``
    feeding learner ``i mod num_learners``, the weights reaching them ``period`` later (see
    the module)."""

    def __init__(self, algo: Algorithm, env: str, *, num_learners: int = 2, samplers_per_learner: int = 1,
                 num_envs: int = 4, fragment_len: int = 32, run: RunConfig | None = None, seed: int = 0,
                 backend: str = "gymnasium", trace: bool = False, max_samplers: int = 0, period: int = 0,
                 initial_samplers: int = 0) -> None:
        check_widths(self.fqn, num_learners=num_learners, samplers_per_learner=samplers_per_learner,
                     num_envs=num_envs, fragment_len=fragment_len)
        if backend not in BACKENDS:
            raise ValidationError(f"{self.fqn}: backend must be one of {BACKENDS}, got {backend!r}")
        K, S = num_learners, samplers_per_learner
        space = SpaceInfo.of_env(env)
        self.samplers: Bank[SyncSampler]
        self.learners: Bank[DataParallelTrainer]
        if max_samplers:
            self._elastic(algo, env, space, K, num_envs, fragment_len, run, seed, backend, trace, max_samplers,
                          period, initial_samplers or K * S)
            return
        # with checkpoints, every sampler's state goes to the lead with its fragment, and back on a resume
        snapshots = bool(run is not None and run.checkpoint)
        self.samplers = bank(SyncSampler, K * S, algo, env, space, num_envs, fragment_len,
                             seed=each(lambda i: sampler_seed(seed, i)), backend=backend, snapshots=snapshots)
        self.learners = bank(DataParallelTrainer, K, K, S, algo, space, run=run, seed=seed,
                             lead=each(lambda k: k == 0), trace=trace,
                             carried=each(lambda k: K * S if snapshots and k == 0 else 0))
        self.connect(self.samplers.fragment, self.learners.fragments)  # in order: S channels a learner
        if snapshots:
            self.connect(self.samplers.state, self.learners[0].sampler_states)
            self.connect(self.learners[0].restore, self.samplers.restore, after=0)
        for k in range(K):
            self.connect(self.learners[k].weights, [self.samplers[i].weights for i in range(k * S, (k + 1) * S)],
                         after=0, broadcast=True)
            for j in range(K):
                self.connect(self.learners[j].header, self.learners[k].headers[j], after=0)
                self.connect(self.learners[j].gradient, self.learners[k].gradients[j], after=0)

    def _elastic(self, algo: Algorithm, env: str, space: SpaceInfo, K: int, num_envs: int, fragment_len: int,
                 run: RunConfig | None, seed: int, backend: str, trace: bool, max_samplers: int, period: int,
                 initial: int) -> None:
        """The samplers one elastic bank of ``initial`` members at the start, slot ``i`` dealt to
        learner ``i mod K`` (see the module)."""
        check_widths(self.fqn, initial_samplers=initial)
        if not isinstance(max_samplers, int) or isinstance(max_samplers, bool) or max_samplers < initial:
            raise ValidationError(f"{self.fqn}: max_samplers must be an int >= the samplers at the start "
                                  f"({initial}), got {max_samplers!r}")
        if not isinstance(period, int) or isinstance(period, bool) or period < 0:
            raise ValidationError(f"{self.fqn}: period must be an int >= 0 (ns), got {period!r}")
        width = Elastic(min=1, max=max_samplers, initial=initial)
        self.samplers = elastic_bank(ElasticSyncSampler, width, algo, env, space, num_envs, fragment_len,
                                     seed=each(lambda i: sampler_seed(seed, i)), backend=backend)
        self.learners = bank(ElasticDataParallelTrainer, K, "samplers", K, max_samplers, algo, space, run=run,
                             seed=seed, lead=each(lambda k: k == 0), trace=trace, period=period)
        for i in range(max_samplers):
            self.connect(self.samplers[i].fragment, self.learners[i % K].fragments[i // K])
        for k in range(K):
            self.connect(self.learners[k].weights, [self.samplers[i].weights for i in range(k, max_samplers, K)],
                         after=period, broadcast=True)
            for j in range(K):
                self.connect(self.learners[j].header, self.learners[k].headers[j], after=0)
                self.connect(self.learners[j].gradient, self.learners[k].gradients[j], after=0)
