"""Execution plans: the reactor programs that run an algorithm's actors (samplers) and its
Learner (inside a *Trainer* reactor, named for its role in the plan). Synchronous
(:mod:`.sync`), asynchronous (:mod:`.async_`), Ape-X (:mod:`.apex`, shards colocated:
:mod:`.apex_colocated`), SEED (:mod:`.seed`), data-parallel (:mod:`.data_parallel`),
parameter server (:mod:`.param_server`), multi-agent training (:mod:`.multi_agent`, its environment reactor
:mod:`.multi_agent_sampler`), multi-agent inference (:mod:`.marl`), DQN on
synchronized rounds (:mod:`.qlearning`, elastic: :mod:`.elastic_qlearning`) and sampling
patterns (:mod:`.sampling`). A plan whose samplers are an elastic bank keeps its rounds
with :mod:`.elastic_round` (the synchronous plan's, Q-learning's, SEED's fragments, each
data-parallel learner's; the asynchronous and Ape-X plans its account of the members). The DQN, multi-agent and SEED-inference reactors need torch,
loaded on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_attributes
from .apex import ApexPlan, ApexSampler, ElasticApexSampler, priority_lag_bound, weights_lag_bound
from .apex_colocated import ColocatedApexPlan, ColocatedReplay
from .apex_trainer import ApexTrainer, ElasticApexTrainer
from .async_ import AsyncPlan, AsyncSampler, AsyncTrainer, ElasticAsyncSampler, ElasticAsyncTrainer
from .data_parallel import DataParallelPlan, DataParallelTrainer, ElasticDataParallelTrainer
from .elastic_round import ElasticRound
from .multi_agent import MultiAgentPlan, PolicyTrainer, policy_seed
from .multi_agent_sampler import MultiAgentSampler, central_rows
from .param_server import GradientWorker, ParameterServer, ParamServerPlan
from .sampler import PlanSampler
from .sampling import Collector, EnvSampler
from .seed import ElasticSeedSampler, SeedPlan, SeedSampler, step_dtype
from .seed_trainer import ElasticSeedTrainer, SeedTrainer
from .sync import ElasticSyncSampler, ElasticSyncTrainer, SyncPlan, SyncSampler, SyncTrainer
from .trainer import PlanTrainer

if TYPE_CHECKING:
    from .elastic_qlearning import ElasticDQNTrainer
    from .marl import AgentGroup, AgentPolicy, MultiAgentEnv
    from .qlearning import DQNTrainer, QSampler, TrainConfig, weights_digest
    from .seed_inference import BatchedInference

__getattr__ = lazy_attributes(__name__, globals(), {
    **dict.fromkeys(["DQNTrainer", "QSampler", "TrainConfig", "weights_digest"], "qlearning"),
    "ElasticDQNTrainer": "elastic_qlearning",
    **dict.fromkeys(["AgentGroup", "AgentPolicy", "MultiAgentEnv"], "marl"),
    "BatchedInference": "seed_inference",
})

__all__ = [
    "AgentGroup",
    "AgentPolicy",
    "ApexPlan",
    "ApexSampler",
    "ApexTrainer",
    "AsyncPlan",
    "AsyncSampler",
    "AsyncTrainer",
    "BatchedInference",
    "Collector",
    "ColocatedApexPlan",
    "ColocatedReplay",
    "DQNTrainer",
    "DataParallelPlan",
    "DataParallelTrainer",
    "ElasticApexSampler",
    "ElasticApexTrainer",
    "ElasticAsyncSampler",
    "ElasticAsyncTrainer",
    "ElasticDQNTrainer",
    "ElasticDataParallelTrainer",
    "ElasticRound",
    "ElasticSeedSampler",
    "ElasticSeedTrainer",
    "ElasticSyncSampler",
    "ElasticSyncTrainer",
    "EnvSampler",
    "GradientWorker",
    "MultiAgentEnv",
    "MultiAgentPlan",
    "MultiAgentSampler",
    "ParamServerPlan",
    "ParameterServer",
    "PlanSampler",
    "PlanTrainer",
    "PolicyTrainer",
    "QSampler",
    "SeedPlan",
    "SeedSampler",
    "SeedTrainer",
    "SyncPlan",
    "SyncSampler",
    "SyncTrainer",
    "TrainConfig",
    "central_rows",
    "policy_seed",
    "priority_lag_bound",
    "step_dtype",
    "weights_digest",
    "weights_lag_bound",
]
