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
"""

from __future__ import annotations

import numpy as np

from reactorfed import (
    STARTUP,
    Input,
    MultiReader,
    Output,
    PortWriter,
    Reactor,
    ValidationError,
    bank,
    each,
    reaction,
)

from ..contracts import Algorithm, SpaceInfo
from ..envs.backends import BACKENDS
from ..rollout import unpack_rollout
from ..training import RunConfig
from .gradient_rounds import (
    GradientRounds,
    channel_values,
    check_widths,
    mean_gradient,
    round_header,
    round_rng,
)
from .sampler import sampler_seed
from .sync import SyncSampler

__all__ = ["DataParallelPlan", "DataParallelTrainer"]


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
                 run: RunConfig | None = None, seed: int = 0, lead: bool = True, trace: bool = False) -> None:
        super().__init__(algo, space, run, seed, lead, trace)
        self.num_learners, self.num_samplers = num_learners, num_samplers

    @property
    def share(self) -> int:
        return self.bank_index or 0

    @reaction(triggers=[STARTUP], effects=[weights])
    def start(self, weights: PortWriter[np.ndarray]) -> None:
        if self.begin():
            assert self.learner is not None
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


class DataParallelPlan(Reactor):
    """The data-parallel plan for ``algo`` (a :class:`~reactorfed.rl.contracts.GradientLearner`'s:
    PPO's) on ``env``: ``num_learners`` learners, each fed every round by
    ``samplers_per_learner`` samplers of ``num_envs`` copies and ``fragment_len`` rows. A
    federated run puts each learner and each sampler in its own process. ``trace`` adds a
    hash of the weights after every step to each learner's result.

    Sampler ``i`` (of ``num_learners * samplers_per_learner``) is seeded as the synchronous
    plan's sampler ``i``, and feeds learner ``i // samplers_per_learner``."""

    def __init__(self, algo: Algorithm, env: str, *, num_learners: int = 2, samplers_per_learner: int = 1,
                 num_envs: int = 4, fragment_len: int = 32, run: RunConfig | None = None, seed: int = 0,
                 backend: str = "gymnasium", trace: bool = False) -> None:
        check_widths(self.fqn, num_learners=num_learners, samplers_per_learner=samplers_per_learner,
                     num_envs=num_envs, fragment_len=fragment_len)
        if backend not in BACKENDS:
            raise ValidationError(f"{self.fqn}: backend must be one of {BACKENDS}, got {backend!r}")
        K, S = num_learners, samplers_per_learner
        space = SpaceInfo.of_env(env)
        self.samplers = bank(SyncSampler, K * S, algo, env, space, num_envs, fragment_len,
                             seed=each(lambda i: sampler_seed(seed, i)), backend=backend)
        self.learners = bank(DataParallelTrainer, K, K, S, algo, space, run=run, seed=seed,
                             lead=each(lambda k: k == 0), trace=trace)
        self.connect(self.samplers.fragment, self.learners.fragments)  # in order: S channels a learner
        for k in range(K):
            self.connect(self.learners[k].weights, [self.samplers[i].weights for i in range(k * S, (k + 1) * S)],
                         after=0, broadcast=True)
            for j in range(K):
                self.connect(self.learners[j].header, self.learners[k].headers[j], after=0)
                self.connect(self.learners[j].gradient, self.learners[k].gradients[j], after=0)
