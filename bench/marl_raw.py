"""The raw ceilings of workload 4: the environment in this process and one process per
agent, exchanging observations and actions with no framework, over ZeroMQ PUSH/PULL
(:func:`raw_marl`) or over Unix socket pairs (:func:`raw_marl_unix`, the leaner transport
reactorfed itself uses between federates on one host). The same environment seeds and
policies (seeded as reactorfed's AgentPolicy) as bench/marl.py, so the total reward
matches.

    python -m bench.marl_raw AGENTS STEPS [zmq|unix]   # prints {"steps_per_s": ..., "total_reward": ...}
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from bench.common import wait_quiet


def _agent(index: int, seed: int, port_in: int, port_out: int, obs_dim: int, num_actions: int) -> None:
    import torch
    import zmq

    from reactorfed.rl.algos.dqn import greedy_action, make_qnetwork

    torch.set_num_threads(1)
    q = make_qnetwork(obs_dim, num_actions, (64, 64), seed)
    q.eval()
    ctx = zmq.Context()
    pull = ctx.socket(zmq.PULL)
    pull.connect(f"tcp://127.0.0.1:{port_in}")
    push = ctx.socket(zmq.PUSH)
    push.connect(f"tcp://127.0.0.1:{port_out}")
    while (b := pull.recv()) != b"stop":
        action = int(greedy_action(q, np.frombuffer(b, dtype=np.float32)))
        push.send(index.to_bytes(2, "little") + action.to_bytes(2, "little"))


def drive(env: Any, names: list[str], obs: dict[str, np.ndarray], steps: int, seed: int,
          act: Callable[[dict[str, np.ndarray]], list[int]]) -> tuple[float, float]:
    """Step ``env`` from ``obs`` (just reset with ``seed``) ``steps`` times with
    ``act(observations)``, starting a new episode (seed + episodes) when one ends, as
    reactorfed's MultiAgentEnv does; returns (seconds, total reward)."""
    episodes, total = 0, 0.0
    t0 = time.perf_counter()
    for _ in range(steps):
        obs, rewards, _, _, _ = env.step(dict(zip(names, act(obs), strict=True)))
        total += float(sum(rewards.values()))
        if not env.agents:
            episodes += 1
            obs, _ = env.reset(seed=seed + episodes)
    return time.perf_counter() - t0, total


def _mpe(num_agents: int) -> tuple[Any, list[str], int, int]:
    """The environment, its agents' names, their observation size and number of actions."""
    from reactorfed.rl import make_mpe

    env = make_mpe(num_agents)
    names = list(env.possible_agents)
    return env, names, int(env.observation_space(names[0]).shape[0]), int(env.action_space(names[0]).n)


def raw_marl(num_agents: int, steps: int, seed: int = 0) -> dict[str, Any]:
    import zmq

    env, names, obs_dim, num_actions = _mpe(num_agents)
    ctx = zmq.Context()
    back = ctx.socket(zmq.PULL)
    port_back = back.bind_to_random_port("tcp://127.0.0.1")
    outs, procs = [], []
    spawn = mp.get_context("spawn")
    for i in range(num_agents):
        s = ctx.socket(zmq.PUSH)
        port = s.bind_to_random_port("tcp://127.0.0.1")
        outs.append(s)
        pr = spawn.Process(target=_agent, args=(i, seed * 1000 + i, port, port_back, obs_dim, num_actions), daemon=True)
        pr.start()
        procs.append(pr)
    # Actions come back in any order through one PULL socket: each names its agent.
    obs, _ = env.reset(seed=seed)

    def round_trip(o: dict[str, np.ndarray]) -> list[int]:
        for s, name in zip(outs, names, strict=True):
            s.send(np.asarray(o[name], dtype=np.float32).tobytes())
        actions = [0] * len(names)
        for _ in names:
            b = back.recv()
            actions[int.from_bytes(b[:2], "little")] = int.from_bytes(b[2:], "little")
        return actions

    round_trip(obs)  # the agents' processes are up once they all answered
    wait_quiet()
    seconds, total = drive(env, names, obs, steps, seed, round_trip)
    for s in outs:
        s.send(b"stop")
    for pr in procs:
        pr.join(10)
    return {"steps_per_s": steps / seconds, "total_reward": total}


def _unix_agent(seed: int, sock: socket.socket, obs_dim: int, num_actions: int, cpu: Any = None) -> None:
    import torch

    from reactorfed.rl.algos.dqn import greedy_action, make_qnetwork

    torch.set_num_threads(1)
    q = make_qnetwork(obs_dim, num_actions, (64, 64), seed)
    q.eval()
    n = obs_dim * 4
    buf = bytearray(n)
    c0 = None
    while sock.recv_into(buf, n, socket.MSG_WAITALL) == n:  # the driver closing its end: 0
        if c0 is None:
            c0 = time.process_time_ns()
        sock.sendall(int(greedy_action(q, np.frombuffer(buf, dtype=np.float32))).to_bytes(2, "little"))
    if cpu is not None and c0 is not None:
        cpu.put(time.process_time_ns() - c0)  # this agent's CPU from its first observation on


def raw_marl_unix(num_agents: int, steps: int, seed: int = 0) -> dict[str, Any]:
    """As :func:`raw_marl`, over one Unix socket pair per agent (blocking reads, no poller).
    Also the CPU seconds each process spent stepping: ``cpu_s`` = {"env": the driver's,
    "agents": each agent's}."""
    env, names, obs_dim, num_actions = _mpe(num_agents)
    pairs = [socket.socketpair() for _ in names]
    spawn = mp.get_context("spawn")
    cpu = spawn.Queue()
    procs = []
    for i, (_, theirs) in enumerate(pairs):
        pr = spawn.Process(target=_unix_agent, args=(seed * 1000 + i, theirs, obs_dim, num_actions, cpu), daemon=True)
        pr.start()
        procs.append(pr)
    socks = [mine for mine, _ in pairs]
    for _, theirs in pairs:
        theirs.close()
    obs, _ = env.reset(seed=seed)

    def round_trip(o: dict[str, np.ndarray]) -> list[int]:
        for s, name in zip(socks, names, strict=True):
            s.sendall(np.asarray(o[name], dtype=np.float32).tobytes())
        return [int.from_bytes(s.recv(2, socket.MSG_WAITALL), "little") for s in socks]

    round_trip(obs)  # the agents' processes are up once they all answered
    wait_quiet()
    c0 = time.process_time_ns()
    seconds, total = drive(env, names, obs, steps, seed, round_trip)
    env_cpu = time.process_time_ns() - c0
    for s in socks:
        s.close()
    agents_cpu = [cpu.get(timeout=10) / 1e9 for _ in procs]
    for pr in procs:
        pr.join(10)
    return {"steps_per_s": steps / seconds, "total_reward": total, "cpu_s": {"env": env_cpu / 1e9, "agents": agents_cpu}}


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    fn = raw_marl_unix if sys.argv[3:] == ["unix"] else raw_marl
    print(json.dumps(fn(int(sys.argv[1]), int(sys.argv[2]))))
