"""bench/marl_training.py's shared settings: the task, the hyperparameters both sides get by
meaning, each side's names for them, and the check that the two sides' settings are equal
(:func:`settings_differ`, before any run)."""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass
from typing import Any

from bench.rf_runner import ROOT

__all__ = ["CASES", "LAYOUT", "NAMES", "SETTINGS", "TASK", "Case", "example_settings", "reactorfed_params",
           "rllib_hp", "rows_per_round", "settings_differ"]

#: the task, on both sides (local_ratio: mpe2's default, which reactorfed's make_task keeps)
TASK = {"num_agents": 3, "max_cycles": 25, "local_ratio": 0.5}

#: the shared settings, by meaning; reactorfed's and RLlib's names follow from them
SETTINGS: dict[str, Any] = {
    "hidden": (64, 64), "activation": "tanh", "learning_rate": 7e-4, "gamma": 0.99, "gae_lambda": 0.95,
    "clip": 0.2, "epochs": 10, "minibatch": 200, "ent_coef": 0.01, "vf_coef": 0.5, "max_grad_norm": 0.5,
    "samplers": 1, "envs": 8, "steps": 25,
}

#: (reactorfed's field under the algorithm's config, RLlib's name) of each setting
NAMES: dict[str, tuple[str, str]] = {
    "learning_rate": ("learning_rate", "lr"), "gamma": ("gamma", "gamma"), "gae_lambda": ("gae_lambda", "lambda_"),
    "clip": ("clip_coef", "clip_param"), "epochs": ("update_epochs", "num_epochs"),
    "minibatch": ("minibatch_size", "minibatch_size"), "ent_coef": ("ent_coef", "entropy_coeff"),
    "vf_coef": ("vf_coef", "vf_loss_coeff"), "max_grad_norm": ("max_grad_norm", "grad_clip"),
    "hidden": ("hidden", "hidden"),
}
#: the layout: reactorfed's example parameter, RLlib's name
LAYOUT: dict[str, tuple[str, str]] = {
    "samplers": ("num_samplers", "num_env_runners"), "envs": ("num_envs", "num_envs_per_env_runner"),
    "steps": ("num_steps", "rollout_fragment_length"),
}


@dataclass(frozen=True)
class Case:
    program: str
    algo: str  # the example's field holding the algorithm's config
    title: str


CASES: dict[str, Case] = {
    "ippo": Case("examples/rl/ippo_spread.py:Main", "ppo", "IPPO (shared policy)"),
    "mappo": Case("examples/rl/mappo_spread.py:Main", "mappo", "MAPPO (shared policy, centralized critic)"),
}


def reactorfed_params(case: Case, seed: int, total: int) -> dict[str, Any]:
    """The example's ``--param`` values: every setting (the network size is the configs'
    default, checked by :func:`settings_differ`), the layout, the budget, the curve."""
    params: dict[str, Any] = {f"{case.algo}.{ours}": SETTINGS[key] for key, (ours, _) in NAMES.items()
                              if key != "hidden"}
    params.update({ours: SETTINGS[key] for key, (ours, _) in LAYOUT.items()})
    params.update({"num_agents": TASK["num_agents"], "max_cycles": TASK["max_cycles"], "seed": seed,
                   f"{case.algo}.total_timesteps": total, "curve": True, "progress": False, "checkpoint": ""})
    if case.algo == "ppo":  # (MAPPOConfig anneals nothing by default; the IPPO recipe's PPO says so too)
        params.update({"ppo.anneal_lr": False, "ppo.anneal_clip": False})
    return params


def example_settings(case: Case, seed: int = 1, total: int = 100_000) -> dict[str, Any]:
    """What the example runs with under :func:`reactorfed_params`: its ``Args`` defaults by
    ``--param`` names (a nested config's fields dotted: ``ppo.hidden``), overridden."""
    import importlib.util

    path = ROOT / case.program.split(":")[0]
    name = f"_bench_example_{path.stem}"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = sys.modules[name] = importlib.util.module_from_spec(spec)  # (dataclasses look it up)
        spec.loader.exec_module(module)
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(module.Args):
        factory = f.default_factory
        default = f.default if f.default is not dataclasses.MISSING else factory() if callable(factory) else None
        if dataclasses.is_dataclass(default):
            fields.update({f"{f.name}.{k}": v for k, v in vars(default).items()})
        else:
            fields[f.name] = default
    params = reactorfed_params(case, seed, total)
    if unknown := set(params) - set(fields):
        raise ValueError(f"{case.program}: not parameters of its Args: {sorted(unknown)}")
    return {**fields, **params}


def rllib_hp() -> dict[str, Any]:
    """RLlib's settings (:func:`bench.rllib_marl_runner.build_marl_config` takes them)."""
    hp: dict[str, Any] = {theirs: SETTINGS[key] for key, (_, theirs) in NAMES.items()}
    hp["hidden"] = list(SETTINGS["hidden"])
    hp.update({theirs: SETTINGS[key] for key, (_, theirs) in LAYOUT.items()})
    hp.update({"activation": SETTINGS["activation"], "train_batch_size_per_learner": rows_per_round(),
               "use_kl_loss": False, "vf_clip_param": 1e9, "vf_share_layers": False})
    return hp


def rows_per_round() -> int:
    """Env steps a round (an RLlib iteration): samplers x copies x steps."""
    return int(SETTINGS["samplers"] * SETTINGS["envs"] * SETTINGS["steps"])


def settings_differ(ours: dict[str, Any], algo: str, theirs: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """The settings that differ between the example's (``ours``: its fields by ``--param``
    names, ``<algo>.<field>`` for the algorithm's config) and RLlib's ``theirs``: {setting:
    (ours, theirs)}, empty when every one is the same."""
    out: dict[str, tuple[Any, Any]] = {}
    for key, (mine, other) in NAMES.items():
        a, b = ours.get(f"{algo}.{mine}"), theirs.get(other)
        if (tuple(a) if isinstance(a, list | tuple) else a) != (tuple(b) if isinstance(b, list | tuple) else b):
            out[key] = (a, b)
    for key, (mine, other) in LAYOUT.items():
        if ours.get(mine) != theirs.get(other):
            out[key] = (ours.get(mine), theirs.get(other))
    rows = ours.get("num_samplers", 0) * ours.get("num_envs", 0) * ours.get("num_steps", 0)
    if rows != theirs.get("train_batch_size_per_learner"):
        out["rows_per_round"] = (rows, theirs.get("train_batch_size_per_learner"))
    if theirs.get("activation") != SETTINGS["activation"]:
        out["activation"] = (SETTINGS["activation"], theirs.get("activation"))
    if theirs.get("vf_share_layers", False):  # (reactorfed's actor and critic are separate networks)
        out["vf_share_layers"] = (False, True)
    return out
