"""Workload 4: multi-agent inference, per-step gather/scatter (MPE simple_spread).

    python -m bench.marl [--quick] [--runs 3] [--agents 4,10]

One torch policy per agent; the environment steps in the driver (Ray) or in its own
reactor (reactorfed). Two layouts on each side:

* one process per agent. Ray, idiomatically: each agent is an actor; every step
  scatters the observations with one remote call per agent and gathers the actions
  with ``ray.get``. reactorfed: ``examples/rl/marl.py:Main`` as it comes, one
  federate per agent beside the environment's federate.
* all agents in one process. Ray: one actor holding every agent's policy
  (``AgentGroupWorker``), one remote call per step carrying all observations and
  returning all actions. reactorfed: ``groups=1``, one federate holding every policy
  beside the environment's federate (federated runs only). Its case,
  "agents in 1 federate", is reported against Ray's per-agent actors (peer ``ray``)
  and against Ray's single actor (peer ``ray-grouped``), like for like.

Every variant runs the same environment seeds and policy weights, so they collect the
same total reward (recorded in the result line). The raw ceilings (``bench/marl_raw.py``):
the same environment and one process per agent with no framework at all, over ZeroMQ
(``raw``), and over Unix socket pairs (``raw-unix``: reactorfed's own transport between
federates on one host, without its coordination, batching and checks).

Where the time goes: for the federated per-agent layout and the raw Unix-socket ceiling,
the CPU each process spends per step (the environment's process, and the mean agent) is
recorded on the "vs raw over Unix sockets" row (``cpu_us_per_step``), with what a
simple model predicts from it (``model_steps_per_s``): a step costs the environment's
CPU in series (the agents wait for its observations, it waits for their actions) plus
the agents' CPU spread over the cores.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch

from bench.common import Results, base_parser, progress, summarize, wait_quiet
from bench.marl_raw import drive, raw_marl, raw_marl_unix
from bench.ray_util import init_ray, shutdown_ray
from bench.rf_runner import MODES, ProgramFailed, federated_available, run_program
from reactorfed.rl import make_mpe
from reactorfed.rl.algos.dqn import greedy_action, make_qnetwork

PROGRAM = "examples/rl/marl.py:Main"


class AgentWorker:
    """The Ray actor: the same policy as reactorfed's AgentPolicy."""

    def __init__(self, obs_dim: int, num_actions: int, seed: int) -> None:
        torch.set_num_threads(1)
        self.q = make_qnetwork(obs_dim, num_actions, (64, 64), seed)
        self.q.eval()

    def ready(self) -> bool:
        return True

    def act(self, obs: np.ndarray) -> int:
        return greedy_action(self.q, obs)


class AgentGroupWorker:
    """A Ray actor holding every agent's policy (agent i seeded ``seed * 1000 + i``, as
    AgentWorker and reactorfed's AgentPolicy): one remote call acts for all agents."""

    def __init__(self, obs_dim: int, num_actions: int, num_agents: int, seed: int) -> None:
        torch.set_num_threads(1)
        self.qs = [make_qnetwork(obs_dim, num_actions, (64, 64), seed * 1000 + i) for i in range(num_agents)]
        for q in self.qs:
            q.eval()

    def ready(self) -> bool:
        return True

    def act_all(self, obs_list: list[np.ndarray]) -> list[int]:
        return [greedy_action(q, o) for q, o in zip(self.qs, obs_list, strict=True)]


def ray_marl(num_agents: int, steps: int, seed: int = 0) -> dict[str, Any]:
    ray = init_ray(num_agents)
    env = make_mpe(num_agents)
    names = list(env.possible_agents)
    obs_dim = int(env.observation_space(names[0]).shape[0])
    num_actions = int(env.action_space(names[0]).n)
    actor = ray.remote(num_cpus=1)(AgentWorker)
    agents = [actor.remote(obs_dim, num_actions, seed * 1000 + i) for i in range(num_agents)]
    ray.get([a.ready.remote() for a in agents])
    wait_quiet()
    obs, _ = env.reset(seed=seed)
    seconds, total = drive(env, names, obs, steps, seed,
                           lambda o: ray.get([a.act.remote(o[name]) for a, name in zip(agents, names, strict=True)]))
    for a in agents:
        ray.kill(a)
    shutdown_ray()
    return {"steps_per_s": steps / seconds, "total_reward": total}


def ray_marl_grouped(num_agents: int, steps: int, seed: int = 0) -> dict[str, Any]:
    """Ray with every agent in one actor: one remote call per step, all observations in,
    all actions out."""
    ray = init_ray(1)
    env = make_mpe(num_agents)
    names = list(env.possible_agents)
    obs_dim = int(env.observation_space(names[0]).shape[0])
    num_actions = int(env.action_space(names[0]).n)
    group = ray.remote(num_cpus=1)(AgentGroupWorker).remote(obs_dim, num_actions, num_agents, seed)
    ray.get(group.ready.remote())
    wait_quiet()
    obs, _ = env.reset(seed=seed)
    seconds, total = drive(env, names, obs, steps, seed,
                           lambda o: ray.get(group.act_all.remote([o[name] for name in names])))
    ray.kill(group)
    shutdown_ray()
    return {"steps_per_s": steps / seconds, "total_reward": total}


def cpu_per_step(env_s: float, agents_s: list[float], steps: int) -> dict[str, float]:
    """CPU microseconds per environment step: the environment's process and the mean agent's."""
    return {"env": env_s / steps * 1e6, "agent": sum(agents_s) / len(agents_s) / steps * 1e6}


def model_rate(cpu_us: dict[str, float], agents: int, cores: int) -> float:
    """Steps/s if a step took the environment's CPU in series plus the agents' CPU
    spread evenly over the cores (no waiting, no switching costs)."""
    return 1e6 / (cpu_us["env"] + agents * cpu_us["agent"] / min(agents, cores))


def main(argv: list[str] | None = None) -> Results:
    p = base_parser(__doc__ or "")
    p.add_argument("--agents", default="4,10")
    p.add_argument("--steps", type=int, default=2000)
    args = p.parse_args(argv)
    runs = 1 if args.quick else args.runs
    steps = 300 if args.quick else args.steps
    modes = MODES if federated_available() else ("single",)
    res = Results("marl", args.out)
    for n in (int(x) for x in args.agents.split(",")):
        ray_v: list[float] = []
        ray_grouped_v: list[float] = []
        raw_v: list[float] = []
        raw_unix_v: list[float] = []
        ours: dict[str, list[float]] = {m: [] for m in modes}
        grouped_v: list[float] = []  # reactorfed federated, groups=1
        cpu: dict[str, list[dict[str, float]]] = {"reactorfed": [], "raw-unix": []}  # per run: cpu_per_step
        rewards: dict[str, set[float]] = {"ray": set(), "ray-grouped": set(), "raw": set(), "raw-unix": set(),
                                          "grouped": set(), **{m: set() for m in modes}}
        for run in range(runs):
            progress(f"marl: {n} agents, run {run + 1}/{runs}")
            r = ray_marl(n, steps)
            ray_v.append(r["steps_per_s"])
            rewards["ray"].add(round(r["total_reward"], 6))
            if "federated" in modes:  # only the grouped federated case is compared with it
                r = ray_marl_grouped(n, steps)
                ray_grouped_v.append(r["steps_per_s"])
                rewards["ray-grouped"].add(round(r["total_reward"], 6))
            r = raw_marl(n, steps)
            raw_v.append(r["steps_per_s"])
            rewards["raw"].add(round(r["total_reward"], 6))
            r = raw_marl_unix(n, steps)
            raw_unix_v.append(r["steps_per_s"])
            cpu["raw-unix"].append(cpu_per_step(r["cpu_s"]["env"], r["cpu_s"]["agents"], steps))
            rewards["raw-unix"].add(round(r["total_reward"], 6))
            for mode in modes:
                try:
                    o = run_program(PROGRAM, {"num_agents": n, "steps": steps}, mode, expect={"steps": steps})
                except ProgramFailed as e:
                    progress(f"reactorfed {mode} failed: {e}")
                    continue
                ours[mode].append(o["steps_per_s"])
                rewards[mode].add(round(o["total_reward"], 6))
                if mode == "federated" and "env" in o["cpu_s"]:
                    agents_s = [v for k, v in o["cpu_s"].items() if k.startswith("agents[")]
                    if len(agents_s) == n:
                        cpu["reactorfed"].append(cpu_per_step(o["cpu_s"]["env"], agents_s, steps))
            if "federated" in modes:
                try:
                    o = run_program(PROGRAM, {"num_agents": n, "steps": steps, "groups": 1}, "federated",
                                    expect={"steps": steps})
                except ProgramFailed as e:
                    progress(f"reactorfed federated, agents in 1 federate, failed: {e}")
                else:
                    grouped_v.append(o["steps_per_s"])
                    rewards["grouped"].add(round(o["total_reward"], 6))
        for mode, vs in ours.items():
            if vs:
                res.add(f"{n} agents {mode}", "steps_per_s", float(np.median(vs)), "ray", float(np.median(ray_v)),
                        "higher", len(vs), same_rewards_as_ray=rewards[mode] == rewards["ray"])
                res.add(f"{n} agents {mode} vs raw", "steps_per_s", float(np.median(vs)), "raw", float(np.median(raw_v)),
                        "higher", len(vs))
                where = _where_the_time_goes(n, cpu) if mode == "federated" else {}
                res.add(f"{n} agents {mode} vs raw over Unix sockets", "steps_per_s", float(np.median(vs)), "raw-unix",
                        float(np.median(raw_unix_v)), "higher", len(vs), **where)
                if where:
                    c, m = where["cpu_us_per_step"], where["model_steps_per_s"]
                    progress(f"marl: {n} agents, CPU per step (median of runs): reactorfed environment "
                             f"{c['reactorfed']['env']:,.0f} us, agent {c['reactorfed']['agent']:,.0f} us; raw "
                             f"{c['raw-unix']['env']:,.0f} us, {c['raw-unix']['agent']:,.0f} us. Model (environment "
                             f"in series + agents over {os.cpu_count()} cores): reactorfed {m['reactorfed']:,.0f} steps/s "
                             f"(measured {np.median(vs):,.0f}), raw {m['raw-unix']:,.0f} (measured {np.median(raw_unix_v):,.0f})")
        if grouped_v:
            case = f"{n} agents federated, agents in 1 federate"
            res.add(case, "steps_per_s", float(np.median(grouped_v)), "ray", float(np.median(ray_v)),
                    "higher", len(grouped_v), same_rewards_as_ray=rewards["grouped"] == rewards["ray"])
            res.add(f"{case} (vs Ray, agents in 1 actor)", "steps_per_s", float(np.median(grouped_v)), "ray-grouped",
                    float(np.median(ray_grouped_v)), "higher", len(grouped_v),
                    same_rewards_as_ray=rewards["grouped"] == rewards["ray-grouped"] == rewards["ray"])
        # The ceilings themselves against Ray: what a process per agent reaches here without a framework.
        res.add(f"{n} agents raw (no framework)", "steps_per_s", float(np.median(raw_v)), "ray", float(np.median(ray_v)),
                "higher", len(raw_v), same_rewards_as_ray=rewards["raw"] == rewards["ray"])
        res.add(f"{n} agents raw over Unix sockets (no framework)", "steps_per_s", float(np.median(raw_unix_v)), "ray",
                float(np.median(ray_v)), "higher", len(raw_unix_v), same_rewards_as_ray=rewards["raw-unix"] == rewards["ray"])
    res.write()
    res.plot("Multi-agent inference: env steps/s (ratio > 1: reactorfed ahead)")
    progress("\n" + summarize(res.rows))
    return res


def _where_the_time_goes(n: int, cpu: dict[str, list[dict[str, float]]]) -> dict[str, Any]:
    """The rows' extra fields: median CPU per step of each side and the model's rates."""
    if not all(cpu.values()):
        return {}
    med = {side: {k: float(np.median([c[k] for c in runs])) for k in ("env", "agent")} for side, runs in cpu.items()}
    cores = os.cpu_count() or 1
    return {"cpu_us_per_step": {side: {k: round(v, 1) for k, v in c.items()} for side, c in med.items()},
            "model_steps_per_s": {side: round(model_rate(c, n, cores), 1) for side, c in med.items()}}


if __name__ == "__main__":
    main()
