"""The tuners' decision rules alone (no reactors, no training): PBT's ranking, exploit and
explore; ASHA's rungs and promotions; random and grid search's configurations. Each is a
function of the reports it is given, so one seed gives one history."""

from __future__ import annotations

import math

import numpy as np

from reactorfed.rl.tune import (
    ASHA,
    PBT,
    ASHAConfig,
    Choice,
    Directive,
    IntUniform,
    LogUniform,
    PBTConfig,
    Report,
    Search,
    SearchConfig,
    SearchSpace,
    Uniform,
)

SPACE = SearchSpace({"learning_rate": LogUniform(1e-4, 1e-2), "clip_coef": Uniform(0.1, 0.3)})


def report(slot: int, iteration: int, metric: float, hparams: dict, trial: int | None = None) -> Report:
    return Report(slot, slot if trial is None else trial, iteration, 1, {"mean_return_100": metric, "episodes": 1.0,
                                                                          "env_steps": 0.0}, hparams, b"state%d" % slot)


def pbt_round(pbt: PBT, iteration: int, metrics: list[float]) -> tuple[list, list]:
    reps = [report(s, iteration, m, pbt.hparams[s]) for s, m in enumerate(metrics)]
    return pbt.decide(reps)


def test_pbt_exploits_the_worst_quarter_from_the_best() -> None:
    pbt = PBT(PBTConfig(population=4, perturbation_interval=5, iterations=20), SPACE, seed=7)
    starts, decisions = pbt.begin(4)
    assert [d.kind for _, d in starts] == ["start"] * 4 and [d.until for _, d in starts] == [5] * 4
    assert len({d.seed for _, d in starts}) == 4
    out, decisions = pbt_round(pbt, 5, [10.0, 40.0, math.nan, 30.0])
    by_slot = dict(out)
    assert decisions[0].kind == "rank" and decisions[0].ranking == [1, 3, 0, 2]  # NaN ranks last
    exploit = [d for d in decisions if d.kind == "exploit"]
    assert [d.trial for d in exploit] == [2] and exploit[0].donor == 1
    assert by_slot[2].state == b"state1" and by_slot[2].until == 10
    # explore: each value the donor's x0.8 or x1.2 (within range) or drawn afresh
    for name, value in by_slot[2].hparams.items():
        assert SPACE.domains[name].low <= value <= SPACE.domains[name].high  # type: ignore[union-attr]
    assert all(by_slot[s].state is None and by_slot[s].hparams == pbt.hparams[s] for s in (0, 1, 3))


def test_pbt_waits_for_the_whole_population_and_stops_at_the_budget() -> None:
    pbt = PBT(PBTConfig(population=3, perturbation_interval=2, iterations=4), SPACE, seed=1)
    pbt.begin(3)
    reps = [report(s, 2, float(s), pbt.hparams[s]) for s in range(3)]
    assert pbt.decide(reps[:1]) == ([], [])  # one report: no round yet
    out, _ = pbt.decide(reps[1:])
    assert len(out) == 3 and pbt.round == 1
    assert pbt.progress() == (2, 4, {"best_mean_return_100": 2.0, "mean_return": 2.0})  # (the population's)
    out, decisions = pbt_round(pbt, 4, [1.0, 2.0, 3.0])
    assert {d.kind for _, d in out} == {"stop"}
    assert [d.kind for d in decisions].count("complete") == 3
    assert pbt.progress() == (4, 4, {"best_mean_return_100": 3.0, "mean_return": 3.0})


def test_pbt_target_stops_the_population() -> None:
    pbt = PBT(PBTConfig(population=2, perturbation_interval=2, iterations=100, target=475.0), SPACE, seed=1)
    pbt.begin(2)
    out, _ = pbt_round(pbt, 2, [480.0, 20.0])
    assert {d.kind for _, d in out} == {"stop"} and pbt.summary()["solved_at_iteration"] == 2


def test_pbt_history_is_a_function_of_the_seed_and_the_reports() -> None:
    def history(seed: int) -> list:
        pbt = PBT(PBTConfig(population=4, perturbation_interval=1, iterations=6), SPACE, seed=seed)
        rows = [d for _, d in pbt.begin(4)[0]]
        rng = np.random.default_rng(0)
        for it in range(1, 7):
            out, decisions = pbt_round(pbt, it, rng.random(4).tolist())
            rows += [d for _, d in out] + decisions
        return rows

    assert history(3) == history(3)
    assert history(3) != history(4)


def test_pbt_state_round_trips() -> None:
    pbt = PBT(PBTConfig(population=4, perturbation_interval=1, iterations=6), SPACE, seed=2)
    pbt.begin(4)
    pbt_round(pbt, 1, [1.0, 2.0, 3.0, 4.0])
    again = PBT(pbt.config, SPACE, seed=2)
    again.restore(pbt.state())
    assert pbt_round(again, 2, [4.0, 3.0, 2.0, 1.0]) == pbt_round(pbt, 2, [4.0, 3.0, 2.0, 1.0])


def test_perturb_keeps_choices_and_ints_in_their_domain() -> None:
    space = SearchSpace({"update_epochs": IntUniform(2, 20), "norm": Choice(("a", "b", "c"))})
    rng = np.random.default_rng(0)
    config: dict = {"update_epochs": 20, "norm": "c"}
    for _ in range(50):
        config = space.perturb(config, rng, (0.8, 1.2), 0.25)
        assert isinstance(config["update_epochs"], int) and 2 <= config["update_epochs"] <= 20
        assert config["norm"] in ("a", "b", "c")


def test_asha_stops_below_the_cutoff_and_refills_the_slot() -> None:
    cfg = SearchConfig(num_samples=4, slots=2, iterations=9)
    asha = ASHA(cfg, ASHAConfig(grace_period=1, reduction_factor=3), SPACE, seed=5)
    assert asha.milestones() == [1, 3]
    out, decisions = asha.begin(2)
    assert [(s, d.kind, d.trial, d.until) for s, d in out] == [(0, "start", 0, 1), (1, "start", 1, 1)]
    hp = {s: d.hparams for s, d in out}
    # both reach rung 1 at one tag: slot 0 first (recorded alone: promoted), then slot 1 (worse: stopped)
    out, decisions = asha.decide([report(1, 1, 5.0, hp[1]), report(0, 1, 20.0, hp[0])])
    kinds = [(d.kind, d.trial) for d in decisions]
    assert kinds == [("promote", 0), ("stop", 1), ("start", 2)], kinds
    assert asha.progress() == (1, 4, {"best_mean_return_100": 20.0, "mean_return": 20.0})  # trials ended of all
    assert dict(out)[0] == Directive("continue", trial=0, until=3, hparams=hp[0])
    assert dict(out)[1].kind == "start" and dict(out)[1].trial == 2
    # trial 2 at rung 1, better than the 67th percentile of the metrics before it (20, 5): promoted
    out, decisions = asha.decide([report(1, 1, 30.0, dict(out)[1].hparams, trial=2)])
    assert decisions[0].kind == "promote"


def test_search_runs_every_configuration_to_the_budget() -> None:
    grid = Search(SearchConfig(kind="grid", grid_points=2, slots=3, iterations=4), SPACE, seed=0)
    assert grid.total == 4 and grid.milestones() == []
    out, _ = grid.begin(3)
    assert grid.progress() == (0, 4, {})  # no trial has ended, nothing ranked yet
    assert [d.until for _, d in out] == [4, 4, 4]
    assert [d.hparams["learning_rate"] for _, d in out] == [1e-4, 1e-4, 1e-2]
    out, _ = grid.decide([report(s, 4, float(s), d.hparams, trial=d.trial) for s, d in out])
    assert [d.kind for _, d in out] == ["start", "stop", "stop"] and dict(out)[0].trial == 3
    rand = Search(SearchConfig(num_samples=3, slots=1), SPACE, seed=9)
    assert rand.config_of(2) == Search(SearchConfig(num_samples=3, slots=3), SPACE, seed=9).config_of(2)
