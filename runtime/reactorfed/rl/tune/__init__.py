"""Hyperparameter search as a reactor program: a controller reactor over a bank of trial
slots, each a training run of a plan, deciding at agreed logical tags.

:mod:`.space` (the search space), :mod:`.pbt` (population-based training), :mod:`.search`
(random and grid search), :mod:`.asha` (asynchronous successive halving), :mod:`.record`
(the decisions' JSON lines), :mod:`.contracts` (reports, directives, the scheduler's and
the learner's contracts), :mod:`.exchange` (a learner's state as bytes, for exploit),
:mod:`.trial` (a slot of the synchronous plan), :mod:`.async_trial` (of the asynchronous
plan), :mod:`.apex_trial` (of Ape-X's), :mod:`.controller` (the controller reactor),
:mod:`.program` (the two together). torch is imported when a learner is built, not here.
"""

from __future__ import annotations

from .apex_trial import ApexTrial, ApexTrialTrainer
from .asha import ASHA, ASHAConfig
from .async_trial import AsyncTrial, AsyncTrialTrainer
from .contracts import TRIAL_METRICS, Directive, Report, Scheduler, TunableLearner, trial_seed
from .controller import Controller
from .pbt import PBT, PBTConfig
from .program import TuneProgram, check_space
from .record import Decision, DecisionLog
from .search import Search, SearchConfig
from .space import (
    ApexSpace,
    APPOSpace,
    Choice,
    Domain,
    DQNSpace,
    IntUniform,
    LogUniform,
    PPOSpace,
    SearchSpace,
    Uniform,
    Value,
    space_of_ranges,
)
from .trial import SyncTrial, TrialTrainer, report_path

__all__ = [
    "ASHA",
    "PBT",
    "TRIAL_METRICS",
    "APPOSpace",
    "ASHAConfig",
    "ApexSpace",
    "ApexTrial",
    "ApexTrialTrainer",
    "AsyncTrial",
    "AsyncTrialTrainer",
    "Choice",
    "Controller",
    "DQNSpace",
    "Decision",
    "DecisionLog",
    "Directive",
    "Domain",
    "IntUniform",
    "LogUniform",
    "PBTConfig",
    "PPOSpace",
    "Report",
    "Scheduler",
    "Search",
    "SearchConfig",
    "SearchSpace",
    "SyncTrial",
    "TrialTrainer",
    "TunableLearner",
    "TuneProgram",
    "Uniform",
    "Value",
    "check_space",
    "report_path",
    "space_of_ranges",
    "trial_seed",
]
