"""APPO: PPO's clipped loss on V-trace targets, for the asynchronous plan (the Learner
loads torch on first use)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...._lazy import lazy_attributes
from .config import APPOConfig
from .vtrace import VTrace, vtrace

if TYPE_CHECKING:
    from .learner import APPOLearner

__getattr__ = lazy_attributes(__name__, globals(), {"APPOLearner": "learner"})

__all__ = ["APPOConfig", "APPOLearner", "VTrace", "vtrace"]
