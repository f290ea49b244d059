"""What the lead window costs RL training: each workload federated under ``--fast``, with
the default window (1 s of logical time) and without one (``--lead-window none``), runs
interleaved, the same seed on both sides.

    python -m bench.lead_window [--quick] [--runs 5] [--only qlearning,ppo,appo]

The window keeps a federate within that much logical time of the slowest federate
downstream of it (docs/federation.md, "The lead window"): a timer-driven producer no
longer runs ahead of its consumers without bound. RL plans whose rounds are closed loops
(the learner's weights gate the next round) rarely reach its edge; an asynchronous plan,
whose samplers run on their own timers, may. The row's "ours" is the window on, its peer
the window off; a ratio near 1 means the window costs nothing. Each row also says whether
the two gave the same weights (the window changes when tags are processed, never what is
computed at them: it must not change the result).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import Results, base_parser, progress, summarize
from bench.rf_runner import ProgramFailed, run_program

#: the window off (the launcher's spelling)
NO_WINDOW = ["--lead-window", "none"]


def _workloads(quick: bool, ckpt: Path) -> dict[str, tuple[str, dict[str, Any], dict[str, Any]]]:
    """name -> (program, parameters, the result fields that must match the work asked).
    A fixed amount of work: no target return that could end a run early."""
    q_iters = 60 if quick else 300
    ppo_steps = 8_192 if quick else 40_960
    appo_steps = 8_192 if quick else 40_960
    never = 1e9
    return {
        "qlearning": ("examples/rl/qlearning.py:Main",
                      {"num_samplers": 4, "iterations": q_iters, "fragment_len": 100, "updates_per_iteration": 4},
                      {"iterations": q_iters}),
        "ppo": ("examples/rl/ppo_cartpole.py:Main",
                {"ppo.total_timesteps": ppo_steps, "target_return": never, "progress": "false",
                 "checkpoint": str(ckpt / "ppo.pt")},
                {}),
        "appo": ("examples/rl/appo_cartpole.py:Main",
                 {"total_timesteps": appo_steps, "target_return": never, "progress": "false",
                  "checkpoint": str(ckpt / "appo.pt")},
                 {}),
    }


def _seconds(result: dict[str, Any]) -> float:
    return float(result["seconds"])


def measure(name: str, program: str, params: dict[str, Any], expect: dict[str, Any], runs: int,
            run: Callable[..., dict[str, Any]] = run_program) -> dict[str, Any] | None:
    """``runs`` pairs, window on then off (alternating which goes first), each federated.
    None when a side failed every time."""
    on: list[float] = []
    off: list[float] = []
    digests: dict[str, set[str]] = {"on": set(), "off": set()}
    for i in range(runs):
        order = [("on", []), ("off", NO_WINDOW)] if i % 2 == 0 else [("off", NO_WINDOW), ("on", [])]
        for side, extra in order:
            try:
                r = run(program, params, "federated", extra=extra, expect=expect, result_of=".learner")
            except ProgramFailed as e:
                progress(f"{name}, window {side}: failed: {e}")
                continue
            (on if side == "on" else off).append(_seconds(r))
            digests[side].add(str(r.get("weights_sha256")))
        progress(f"  {name} run {i + 1}/{runs}: window on {on[-1] if on else float('nan'):.2f} s, "
                 f"off {off[-1] if off else float('nan'):.2f} s")
    if not on or not off:
        return None
    return {"on": statistics.median(on), "off": statistics.median(off), "runs": min(len(on), len(off)),
            "same_weights": len(digests["on"] | digests["off"]) == 1, "on_all": on, "off_all": off}


def main(argv: list[str] | None = None) -> Results:
    p = base_parser(__doc__ or "")
    p.add_argument("--only", default="", help="comma-separated workloads (qlearning, ppo, appo); default: all")
    p.add_argument("--checkpoints", type=Path, default=Path("runs/bench_lead_window"),
                   help="where the training runs write their checkpoints")
    args = p.parse_args(argv)
    runs = 2 if args.quick else args.runs
    args.checkpoints.mkdir(parents=True, exist_ok=True)
    work = _workloads(args.quick, args.checkpoints)
    names = [n for n in args.only.split(",") if n] or list(work)
    unknown = sorted(set(names) - set(work))
    if unknown:
        p.error(f"--only: no workload {', '.join(unknown)} (there are {', '.join(work)})")
    res = Results("lead_window", args.out)
    for name in names:
        program, params, expect = work[name]
        progress(f"lead_window: {name}, {runs} runs a side, interleaved")
        m = measure(name, program, params, expect, runs)
        if m is None:
            progress(f"{name}: a side never finished; no row")
            continue
        res.add(f"{name}, federated, --fast", "wall_s", m["on"], "no window", m["off"], "lower", m["runs"],
                same_weights=m["same_weights"], window_on_s=m["on_all"], window_off_s=m["off_all"])
    res.write()
    res.plot("RL training with the lead window (1 s) against none: wall time (ratio ~ 1: no cost)")
    progress("\n" + summarize(res.rows))
    return res


if __name__ == "__main__":
    main()
