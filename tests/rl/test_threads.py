"""The torch thread count is a setting of the run (``--threads``, default 1), not of the
machine: one seed gives the same weights on one core and on two, the count is in the
summary and in the checkpoint, and a resume with another count is refused unless allowed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import torch

from reactorfed import Environment
from reactorfed.errors import ReactorError
from reactorfed.execution.threads import (
    ALLOW_FLAG,
    CHECKPOINT_KEY,
    DEFAULT_THREADS,
    FLAG,
    ThreadsChanged,
    apply_threads,
)
from reactorfed.rl import PPOConfig

from .conftest import EXAMPLES, load_example

PROGRAM = f"{EXAMPLES / 'ppo_cartpole.py'}:Main"
PARAMS = {"ppo.total_timesteps": 768, "seed": 5, "progress": "false"}  # 3 rounds: seconds, not minutes
RUNTIME = str(Path(__file__).resolve().parents[2] / "runtime")


def _run(tmp_path: Path, name: str, *flags: str, cpus: str | None = None, **params: Any) -> subprocess.CompletedProcess[str]:
    """``reactorfed run`` of the PPO example in a process of its own (on ``cpus`` only)."""
    cmd = [sys.executable, "-m", "reactorfed", "run", PROGRAM, "--fast", "--json", *flags]
    for k, v in {**PARAMS, "checkpoint": tmp_path / f"{name}.pt", **params}.items():
        cmd += ["--param", f"{k}={v}"]
    if cpus is not None:
        cmd = ["taskset", "-c", cpus, *cmd]
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env["PYTHONPATH"] = os.pathsep.join([RUNTIME, env.get("PYTHONPATH", "")])
    env["REACTORFED_LOGDIR"] = ""
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)


def _summary(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return summary


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("taskset") is None or len(os.sched_getaffinity(0)) < 2,
                    reason="needs taskset and two cores")
def test_one_core_and_two_give_the_same_weights(tmp_path: Path) -> None:
    """Pinned to one core and given two, the default setting runs one torch thread in both
    and ends with the same weights; two threads (what torch itself picks on two cores) end
    with others, so the test would see the machine's size leak into the weights."""
    one = _summary(_run(tmp_path, "one", cpus="0"))
    two = _summary(_run(tmp_path, "two", cpus="0,1"))
    more = _summary(_run(tmp_path, "two-threads", FLAG, "2", cpus="0,1"))
    learner = "Main.learner"
    assert one["threads"] == two["threads"] == DEFAULT_THREADS and more["threads"] == 2
    assert one["results"][learner]["torch_threads"] == two["results"][learner]["torch_threads"] == DEFAULT_THREADS
    assert one["results"][learner]["weights_sha256"] == two["results"][learner]["weights_sha256"]
    assert more["results"][learner]["weights_sha256"] != one["results"][learner]["weights_sha256"]
    assert torch.load(tmp_path / "one.pt", weights_only=False)[CHECKPOINT_KEY] == DEFAULT_THREADS
    assert torch.load(tmp_path / "two-threads.pt", weights_only=False)[CHECKPOINT_KEY] == 2


@pytest.mark.slow
def test_a_resume_with_another_thread_count_is_refused_naming_the_setting(tmp_path: Path) -> None:
    """A checkpoint written with 1 thread, resumed with --threads 2: refused, naming both
    counts and the flags; with --allow-thread-change it resumes."""
    first = _summary(_run(tmp_path, "ckpt"))
    assert first["results"]["Main.learner"]["iterations"] == 3
    more = {"ppo.total_timesteps": 1280}  # 5 rounds: 2 more after the resume
    refused = _run(tmp_path, "ckpt", FLAG, "2", resume="true", **more)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "written by a run with 1 torch threads and this run has 2 (--threads" in refused.stderr, refused.stderr
    assert f"Resume with {FLAG} 1, or pass {ALLOW_FLAG}" in refused.stderr
    assert "Traceback" not in refused.stderr  # a user's mistake, said in one line
    allowed = _run(tmp_path, "ckpt", FLAG, "2", ALLOW_FLAG, resume="true", **more)
    assert _summary(allowed)["results"]["Main.learner"]["resumed_from_iteration"] == 3
    assert f"resuming anyway ({ALLOW_FLAG})" in allowed.stderr


def test_resume_in_process_checks_the_count(tmp_path: Path) -> None:
    """The same check in a program run from Python: the learner's startup refuses the
    checkpoint (a plan learner) or its constructor does (the Q-learning example)."""
    ppo = load_example("ppo_cartpole")
    args = ppo.Args(ppo=PPOConfig(total_timesteps=256), num_samplers=1, seed=5, checkpoint=str(tmp_path / "p.pt"),
                    progress=False)
    Environment(fast=True).run(ppo.Main(args))
    assert torch.load(tmp_path / "p.pt", weights_only=False)[CHECKPOINT_KEY] == 1
    torch.set_num_threads(2)  # (the conftest sets 1 again for the next test)
    with pytest.raises(ThreadsChanged, match=r"checkpoint .* with 1 torch threads and this run has 2"):
        Environment(fast=True).run(ppo.Main(replace(args, resume=True)))

    qlearning = load_example("qlearning")
    q_args = qlearning.Args(num_samplers=1, iterations=2, seed=3, checkpoint=str(tmp_path / "q.pt"), resume=True)
    torch.set_num_threads(1)
    Environment(fast=True).run(qlearning.Main(q_args))
    torch.set_num_threads(2)
    with pytest.raises(ThreadsChanged, match="Resume with --threads 1"):
        qlearning.Main(q_args)


def test_apply_threads_sets_torch_and_the_environment() -> None:
    environ: dict[str, str] = {"OMP_NUM_THREADS": "7"}
    apply_threads(1, environ=environ)
    assert environ == {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    assert torch.get_num_threads() == 1
    with pytest.raises(ReactorError, match="--threads: expected a number >= 1"):
        apply_threads(0, environ=environ)
