"""The policy side of each algorithm: its config (which builds both the actor and the
Learner), networks and actors, losses, and the Learner (the torch update object):
:mod:`.ppo`, :mod:`.mappo` (PPO with a centralized critic), :mod:`.appo`, :mod:`.dqn`, :mod:`.apex`. Shared: :mod:`.mlp_actor` (a numpy
MLP that acts in a sampler without torch) and :mod:`.network` (torch helpers).

The configs load without torch; the Learners load it on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_attributes
from .apex.config import ApexDQNConfig
from .appo.config import APPOConfig
from .mappo.config import MAPPOConfig
from .mlp_actor import MLPActor
from .ppo.config import PPOConfig
from .ppo.conv_config import ConvPPOConfig

if TYPE_CHECKING:
    from .apex.learner import ApexDQNLearner
    from .appo.learner import APPOLearner
    from .dqn.learner import DQNConfig, DQNLearner
    from .mappo.learner import MAPPOLearner
    from .ppo.conv_learner import ConvPPOLearner
    from .ppo.learner import PPOLearner

__getattr__ = lazy_attributes(__name__, globals(), {
    "ApexDQNLearner": "apex.learner",
    "APPOLearner": "appo.learner",
    "DQNConfig": "dqn.learner",
    "DQNLearner": "dqn.learner",
    "ConvPPOLearner": "ppo.conv_learner",
    "MAPPOLearner": "mappo.learner",
    "PPOLearner": "ppo.learner",
})

__all__ = [
    "APPOConfig",
    "APPOLearner",
    "ApexDQNConfig",
    "ApexDQNLearner",
    "ConvPPOConfig",
    "ConvPPOLearner",
    "DQNConfig",
    "DQNLearner",
    "MAPPOConfig",
    "MAPPOLearner",
    "MLPActor",
    "PPOConfig",
    "PPOLearner",
]
