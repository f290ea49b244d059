"""Reinforcement learning on reactors.

The rooms: :mod:`.envs` (environments and what steps them), :mod:`.algos` (the policy
side of each algorithm: config, networks and actors, losses, the Learner, the torch update
object), :mod:`.replay`, :mod:`.plans` (the execution plans: reactor programs that run
the actors in samplers and the Learner in a Trainer reactor) and :mod:`.tune` (hyperparameter
search over trials of a plan: PBT, ASHA, random and grid). Here: the contract between
algorithms and plans (:mod:`.contracts`: its ``Actor`` and ``Algorithm`` protocols are
imported from there), learning curves (:mod:`.curves`), rollouts (:mod:`.rollout`), the
run settings and training log every plan shares (:mod:`.training`), and the names a
program needs (which policy acts for which agent: :mod:`.plans.policy_mapping`).

torch is imported on first use of a torch-based name (Learners, the DQN and multi-agent
reactors): a process that only steps environments (a sampler federate) starts without it,
about 2 s and 300 MB sooner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_attributes
from .algos.apex.config import ApexDQNConfig
from .algos.apex.sync_config import SyncDQNConfig
from .algos.appo.config import APPOConfig
from .algos.mappo.config import MAPPOConfig
from .algos.ppo.config import PPOConfig
from .algos.ppo.conv_config import ConvPPOConfig
from .contracts import Learner, SpaceInfo
from .envs.backends import Backend
from .envs.runner import EnvRunner, make_env, make_mpe
from .envs.vector import VectorEnvRunner
from .plans.apex import ApexPlan
from .plans.apex_colocated import ColocatedApexPlan
from .plans.async_ import AsyncPlan
from .plans.data_parallel import DataParallelPlan
from .plans.multi_agent import MultiAgentPlan
from .plans.param_server import ParamServerPlan
from .plans.policy_mapping import PolicyMapping
from .plans.sampling import Collector, EnvSampler
from .plans.seed import SeedPlan
from .plans.sync import SyncPlan
from .replay.contracts import ReplayConfig
from .rollout import PolicyRunner, Rollout
from .training import RunConfig, TrainingLog

if TYPE_CHECKING:
    from .algos.apex.learner import ApexDQNLearner
    from .algos.dqn.learner import DQNConfig, DQNLearner
    from .algos.ppo.learner import PPOLearner
    from .plans.elastic_qlearning import ElasticDQNTrainer
    from .plans.marl import AgentGroup, AgentPolicy, MultiAgentEnv
    from .plans.qlearning import DQNTrainer, QSampler, TrainConfig

#: the names that need torch, and their module
_LAZY = {
    "ApexDQNLearner": "algos.apex.learner",
    **dict.fromkeys(["DQNConfig", "DQNLearner"], "algos.dqn.learner"),
    "PPOLearner": "algos.ppo.learner",
    **dict.fromkeys(["DQNTrainer", "QSampler", "TrainConfig"], "plans.qlearning"),
    "ElasticDQNTrainer": "plans.elastic_qlearning",
    **dict.fromkeys(["AgentGroup", "AgentPolicy", "MultiAgentEnv"], "plans.marl"),
}

__getattr__ = lazy_attributes(__name__, globals(), _LAZY)

__all__ = [
    "APPOConfig",
    "AgentGroup",
    "AgentPolicy",
    "ApexDQNConfig",
    "ApexDQNLearner",
    "ApexPlan",
    "AsyncPlan",
    "Backend",
    "Collector",
    "ColocatedApexPlan",
    "ConvPPOConfig",
    "DQNConfig",
    "DQNLearner",
    "DQNTrainer",
    "DataParallelPlan",
    "ElasticDQNTrainer",
    "EnvRunner",
    "EnvSampler",
    "Learner",
    "MAPPOConfig",
    "MultiAgentEnv",
    "MultiAgentPlan",
    "PPOConfig",
    "PPOLearner",
    "ParamServerPlan",
    "PolicyMapping",
    "PolicyRunner",
    "QSampler",
    "ReplayConfig",
    "Rollout",
    "RunConfig",
    "SeedPlan",
    "SpaceInfo",
    "SyncDQNConfig",
    "SyncPlan",
    "TrainConfig",
    "TrainingLog",
    "VectorEnvRunner",
    "make_env",
    "make_mpe",
]
