"""The parameter-server execution plan, as a reactor program: ``K`` gradient workers, each
with its own samplers, send each step's gradient to one server, which averages them,
applies the optimizer and sends the weights back (Li et al. 2014's parameter server,
synchronous; RLlib's learner-group with one optimizer).

::

    samplers[i].fragment --------------------------> workers[i // S].fragments[i mod S]
    workers[k].header    --(after 0)---------------> server.headers[k]
    server.schedule      --(after 0, broadcast)----> workers[k].schedule
    workers[k].gradient  --(after 0)---------------> server.gradients[k]
    server.params        --(after 0, broadcast)----> workers[k].params
    server.weights       --(after 0, broadcast)----> samplers[i].weights

A round, in microsteps of one logical time: the samplers deliver their fragments to their
worker, which computes GAE on its share with the weights it holds and sends the server
its header (transitions, finished episodes' returns); the server plans the round from all
headers (as each data-parallel learner does: :mod:`~reactorfed.rl.plans.data_parallel`)
and sends every worker the schedule (round, env steps so far, every share's transitions);
each worker plans its share alike and sends its first minibatch's gradient. Then, step
after step, the server adds the gradients in worker order, divides by ``K``, clips and
steps its optimizer, and sends every worker the new parameters, flagged whether another
step follows; a worker loads them and, if so, sends its next gradient. After the last
step the server broadcasts the policy to every sampler (with the parameters to the
workers, which arrive first), and the next round starts.

Workers hold no optimizer state and nothing to save: their minibatch orders come from a
generator of (seed, worker, round), and their counters from the schedule. The server
holds the optimizer, the checkpoint and the training log.

**Against the data-parallel plan.** With the same seed, widths and settings, worker ``k``
computes exactly data-parallel learner ``k``'s gradients (the same weights, shares,
minibatches and code) and the server adds them in the same order and applies the same
step: the weights are bit-identical after every step, and the tests check it. What differs
is the traffic: a step takes two hops here (gradients in, parameters out, through one
process that carries all of it) against one all-to-all hop between learners there; one
optimizer, against ``K`` identical ones.
"""

from __future__ import annotations

import numpy as np

from reactorfed import (
    STARTUP,
    Bank,
    Input,
    MultiReader,
    MultiWriter,
    Output,
    PortReader,
    PortWriter,
    Reactor,
    ValidationError,
    bank,
    each,
    reaction,
)

from ..contracts import Algorithm, GradientLearner, SpaceInfo
from ..envs.backends import BACKENDS
from ..rollout import unpack_rollout
from ..training import RunConfig
from .gradient_rounds import (
    GradientRounds,
    channel_values,
    check_widths,
    gradient_learner,
    mean_gradient,
    round_header,
    round_rng,
)
from .sampler import sampler_seed
from .sync import SyncSampler

__all__ = ["GradientWorker", "ParamServerPlan", "ParameterServer", "WorkerGroup"]


def _flagged(params: np.ndarray, more: bool) -> np.ndarray:
    """The parameters, then 1.0 when the worker is to send another gradient (float32)."""
    return np.concatenate([params, np.array([1.0 if more else 0.0], dtype=np.float32)])


class ParameterServer(GradientRounds):
    """The server of ``num_workers`` gradient workers: the optimizer, the training log and
    the checkpoint (see the module's docstring)."""

    headers: Input[np.ndarray] = Input(np.ndarray, width="num_workers")
    schedule: Output[np.ndarray] = Output(np.ndarray)
    gradients: Input[np.ndarray] = Input(np.ndarray, width="num_workers")
    params: Output[np.ndarray] = Output(np.ndarray)
    weights: Output[np.ndarray] = Output(np.ndarray)

    def __init__(self, num_workers: int, algo: Algorithm, space: SpaceInfo, run: RunConfig | None = None,
                 seed: int = 0, trace: bool = False, carried: int = 0) -> None:
        super().__init__(algo, space, run, seed, lead=True, trace=trace, carried=carried)
        self.num_workers = num_workers

    @reaction(triggers=[STARTUP], effects=[params, weights, GradientRounds.restore])
    def start(self, params: PortWriter[np.ndarray], weights: PortWriter[np.ndarray],
              restore: MultiWriter[np.ndarray]) -> None:
        if self.begin():
            assert self.learner is not None
            params.set(_flagged(self.learner.flat_parameters(), False))
            self.carried.send(restore)  # (before the weights, in each sampler)
            weights.set(self.learner.payload())

    @reaction(triggers=[headers], effects=[schedule])
    def plan(self, headers: MultiReader[np.ndarray], schedule: PortWriter[np.ndarray]) -> None:
        assert self.learner is not None
        got = channel_values(headers, self.num_workers, "headers")
        before = self.learner.env_steps
        self.plan_round(got, None)
        schedule.set(np.array([self.iteration, before, *(h[0] for h in got)], dtype=np.float64))

    @reaction(triggers=[gradients], effects=[params, weights])
    def step(self, gradients: MultiReader[np.ndarray], params: PortWriter[np.ndarray],
             weights: PortWriter[np.ndarray]) -> None:
        assert self.learner is not None
        if self.apply(mean_gradient(channel_values(gradients, self.num_workers, "gradients"))):
            params.set(_flagged(self.learner.flat_parameters(), True))
        elif self.end_round():
            params.set(_flagged(self.learner.flat_parameters(), False))
            weights.set(self.learner.payload())


class GradientWorker(Reactor):
    """Worker ``k``: computes its share's gradients with the server's weights; no optimizer."""

    fragments: Input[np.ndarray] = Input(np.ndarray, width="num_samplers")
    params: Input[np.ndarray] = Input(np.ndarray)
    schedule: Input[np.ndarray] = Input(np.ndarray)
    header: Output[np.ndarray] = Output(np.ndarray)
    gradient: Output[np.ndarray] = Output(np.ndarray)

    def __init__(self, num_samplers: int, algo: Algorithm, space: SpaceInfo, seed: int = 0,
                 share: int | None = None) -> None:
        self.num_samplers, self.algo, self.space, self.seed = num_samplers, algo, space, seed
        self._share = share
        self.learner: GradientLearner | None = None

    @property
    def share(self) -> int:
        """Which share of the round this worker learns from: its bank index, or as given."""
        return self._share if self._share is not None else self.bank_index or 0

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        self.learner = gradient_learner(self.algo, self.space, self.seed, self.fqn)

    # declared before prepare: the weights that end a round are the next round's
    @reaction(triggers=[params], effects=[gradient])
    def load(self, params: PortReader[np.ndarray], gradient: PortWriter[np.ndarray]) -> None:
        assert self.learner is not None
        p = params.get()
        assert p is not None
        self.learner.load_flat_parameters(p[:-1])
        if p[-1] == 1.0:
            gradient.set(self.learner.gradient())

    @reaction(triggers=[fragments], effects=[header])
    def prepare(self, fragments: MultiReader[np.ndarray], header: PortWriter[np.ndarray]) -> None:
        assert self.learner is not None
        rollouts = [unpack_rollout(p) for p in channel_values(fragments, self.num_samplers, "fragments")]
        header.set(round_header(self.learner.prepare(rollouts), rollouts))

    @reaction(triggers=[schedule], effects=[gradient])
    def plan(self, schedule: PortReader[np.ndarray], gradient: PortWriter[np.ndarray]) -> None:
        assert self.learner is not None
        s = schedule.get()
        assert s is not None
        self.learner.env_steps = int(s[1])
        self.learner.plan_update([int(n) for n in s[2:]], round_rng(self.seed, self.share, int(s[0])))
        gradient.set(self.learner.gradient())


class WorkerGroup(Reactor):
    """A gradient worker and its ``num_samplers`` samplers, as one reactor (one federate):
    the ports a worker and its samplers have towards the server."""

    params: Input[np.ndarray] = Input(np.ndarray)
    schedule: Input[np.ndarray] = Input(np.ndarray)
    weights: Input[np.ndarray] = Input(np.ndarray)
    header: Output[np.ndarray] = Output(np.ndarray)
    gradient: Output[np.ndarray] = Output(np.ndarray)

    def __init__(self, num_samplers: int, algo: Algorithm, env: str, space: SpaceInfo, num_envs: int,
                 fragment_len: int, seed: int, backend: str) -> None:
        k = self.bank_index or 0
        self.samplers = bank(SyncSampler, num_samplers, algo, env, space, num_envs, fragment_len,
                             seed=each(lambda i: sampler_seed(seed, k * num_samplers + i)), backend=backend)
        # (the worker's share index is its group's: it draws the flat plan's worker k's minibatches)
        self.worker = GradientWorker(num_samplers, algo, space, seed=seed, share=k)
        self.connect(self.samplers.fragment, self.worker.fragments)
        self.connect(self.weights, self.samplers.weights, broadcast=True)
        self.connect(self.params, self.worker.params)
        self.connect(self.schedule, self.worker.schedule)
        self.connect(self.worker.header, self.header)
        self.connect(self.worker.gradient, self.gradient)


class ParamServerPlan(Reactor):
    """The parameter-server plan for ``algo`` (a :class:`~reactorfed.rl.contracts.GradientLearner`'s:
    PPO's) on ``env``: ``num_workers`` gradient workers, each fed every round by
    ``samplers_per_worker`` samplers of ``num_envs`` copies and ``fragment_len`` rows, and
    one server. A federated run puts the server, each worker and each sampler in its own
    process; with ``colocate``, each worker and its samplers in one (a :class:`WorkerGroup`),
    the shape the Kubernetes operator places: a bank (``workers``) and one more pod
    (``server``). The weights are the same either way. ``trace`` adds a hash of the weights
    after every step to the server's result.

    Sampler ``i`` is seeded as the data-parallel plan's sampler ``i``, and feeds worker
    ``i // samplers_per_worker``."""

    def __init__(self, algo: Algorithm, env: str, *, num_workers: int = 2, samplers_per_worker: int = 1,
                 num_envs: int = 4, fragment_len: int = 32, run: RunConfig | None = None, seed: int = 0,
                 backend: str = "gymnasium", trace: bool = False, colocate: bool = False) -> None:
        check_widths(self.fqn, num_workers=num_workers, samplers_per_worker=samplers_per_worker,
                     num_envs=num_envs, fragment_len=fragment_len)
        if backend not in BACKENDS:
            raise ValidationError(f"{self.fqn}: backend must be one of {BACKENDS}, got {backend!r}")
        K, S = num_workers, samplers_per_worker
        space = SpaceInfo.of_env(env)
        self.workers: Bank[WorkerGroup] | Bank[GradientWorker]
        # with checkpoints (samplers of their own), every sampler's state goes to the server
        # with its fragment, and back on a resume
        snapshots = bool(run is not None and run.checkpoint) and not colocate
        if colocate:
            self.workers = bank(WorkerGroup, K, S, algo, env, space, num_envs, fragment_len, seed, backend)
        else:
            self.samplers = bank(SyncSampler, K * S, algo, env, space, num_envs, fragment_len,
                                 seed=each(lambda i: sampler_seed(seed, i)), backend=backend, snapshots=snapshots)
            self.workers = bank(GradientWorker, K, S, algo, space, seed=seed)
            self.connect(self.samplers.fragment, self.workers.fragments)  # in order: S channels a worker
        self.server = ParameterServer(K, algo, space, run=run, seed=seed, trace=trace,
                                      carried=K * S if snapshots else 0)
        if snapshots:
            self.connect(self.samplers.state, self.server.sampler_states)
            self.connect(self.server.restore, self.samplers.restore, after=0)
        # the policy goes to every sampler: in the workers' groups, or directly
        self.connect(self.server.weights, self.workers.weights if colocate else self.samplers.weights, after=0,
                     broadcast=True)
        self.connect(self.workers.header, self.server.headers, after=0)
        self.connect(self.server.schedule, self.workers.schedule, after=0, broadcast=True)
        self.connect(self.workers.gradient, self.server.gradients, after=0)
        self.connect(self.server.params, self.workers.params, after=0, broadcast=True)
