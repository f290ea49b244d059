"""docs/tensorboard-ppo-vs-sb3.png: one reactorfed PPO run and one Stable-Baselines3 PPO run
on CartPole-v1 with the same settings, their ``rollout/ep_rew_mean`` in one chart of the
real TensorBoard, in headless Chromium.

    PYTHONPATH=runtime:. .venv/bin/python scripts/tensorboard_screenshot.py [--out OUT.png]
        [--logdir runs/tb-compare] [--seed 1] [--reuse]

1. ``reactorfed launch examples/rl/ppo_cartpole.py:Main --fast --logdir PARENT/reactorfed-ppo``
   (the RTI, a process per sampler, the learner: as users run it), and SB3's PPO with
   ``bench/training.py``'s ``ppo-cartpole`` settings (``bench/sb3_runner.py``, with SB3's
   ``tensorboard_log=PARENT/sb3-ppo``): rl-zoo's settings, both to a mean return of 475 over
   the last 100 training episodes, or the 100k-step budget. ``--reuse`` keeps the curves of
   an earlier run of this script.
2. ``tensorboard --logdir PARENT`` on a free local port (its frontend is in its wheel: no
   internet needed).
3. Chromium (Debian's, ``REACTORFED_CHROMIUM`` to override) opens the scalars dashboard
   filtered to ``rollout/ep_rew_mean``, waits for the chart to be drawn, checks that both
   runs are named on the page, and takes the screenshot.
4. Prints each run's last env step and mean return as written in its event files (read
   back with TensorBoard's own reader), and each run's own verdict.

One run each: a picture of two curves, not a benchmark (``bench/training.py`` is that).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "runtime")]

from bench.ports import free_port  # noqa: E402
from bench.rf_runner import results_by_reactor  # noqa: E402
from bench.training import CASES  # noqa: E402

TAG = "rollout/ep_rew_mean"
CASE = CASES["ppo-cartpole"]
OURS, SB3 = "reactorfed-ppo", "sb3-ppo"


def train_reactorfed(logdir: Path, seed: int) -> dict[str, Any]:
    params = {**CASE.ours, "seed": seed, CASE.budget_param: CASE.total, "target_return": CASE.threshold,
              "checkpoint": "", "progress": False}
    cmd = [sys.executable, "-m", "reactorfed.cli", "launch", CASE.program, "--fast", "--logdir", str(logdir)]
    for k, v in params.items():
        cmd += ["--param", f"{k}={v}"]
    path = os.pathsep.join(x for x in (str(ROOT / "examples" / "rl"), os.environ.get("PYTHONPATH")) if x)
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600,
                          env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": path})
    results = {k: v for k, v in results_by_reactor(proc.stdout).items() if k.endswith(".learner") or k == "learner"}
    if proc.returncode != 0 or len(results) != 1:
        sys.exit(f"reactorfed launch exited {proc.returncode}:\n{(proc.stderr or proc.stdout)[-3000:]}")
    return next(iter(results.values()))


def train_sb3(logdir: Path, seed: int) -> dict[str, Any]:
    assert CASE.sb3 is not None
    spec = {"env": CASE.env, "seed": seed, "hp": {**CASE.sb3, "tensorboard_log": str(logdir)},
            "threshold": CASE.threshold, "total": CASE.total, "threads": 1}
    proc = subprocess.run([sys.executable, "-m", "bench.sb3_runner", "--spec", json.dumps(spec)], capture_output=True,
                          text=True, cwd=ROOT, timeout=600, env={**os.environ, "OMP_NUM_THREADS": "1"})
    if proc.returncode != 0:
        sys.exit(f"bench.sb3_runner exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def last_point(logdir: Path) -> tuple[str, int, float, int]:
    """(run, step, value, points) of the last ``rollout/ep_rew_mean`` under ``logdir``, as
    TensorBoard reads it."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    found = []
    for events in sorted(logdir.rglob("events.out.tfevents.*")):
        acc = EventAccumulator(str(events.parent), size_guidance={"scalars": 0})
        acc.Reload()
        if TAG in acc.Tags()["scalars"]:
            pts = acc.Scalars(TAG)
            found.append((str(events.parent.relative_to(logdir.parent)), pts[-1].step, pts[-1].value, len(pts)))
    if len(found) != 1:
        sys.exit(f"{logdir}: {len(found)} runs with {TAG} (1 expected): {found}")
    return found[0]


def screenshot(parent: Path, runs: list[str], out: Path) -> None:
    from playwright.sync_api import sync_playwright

    port = free_port()
    shown = os.path.relpath(parent, ROOT) if parent.is_relative_to(ROOT) else str(parent)  # (the page names it)
    tb = subprocess.Popen([sys.executable, "-m", "tensorboard.main", "--logdir", shown, "--host", "127.0.0.1",
                           "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:  # until TensorBoard has loaded both runs' tag
            try:
                with urllib.request.urlopen(f"{base}/data/plugin/scalars/tags", timeout=2) as r:
                    tags = json.load(r)
                if all(TAG in tags.get(run, {}) for run in runs):
                    break
            except OSError:
                pass
            if tb.poll() is not None or time.monotonic() > deadline:
                err = tb.stderr.read().decode() if tb.poll() is not None and tb.stderr else ""
                sys.exit(f"tensorboard did not serve both runs' {TAG} ({runs}) within 60 s: {err[-2000:]}")
            time.sleep(0.5)
        exe = os.environ.get("REACTORFED_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=exe, headless=True, args=["--no-sandbox"])
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 820})
                # the scalars dashboard, its tag filter (a URL parameter of the dashboard) set to the one tag
                page.goto(f"{base}/#scalars&tagFilter={TAG.replace('/', '%2F')}&_smoothingWeight=0")
                page.wait_for_selector("tf-scalar-card", timeout=60_000)
                page.wait_for_selector("vz-line-chart2 svg, vz-line-chart2 canvas", timeout=60_000)
                page.wait_for_load_state("networkidle", timeout=60_000)
                time.sleep(2)  # the chart's last draw after its data arrived
                # the run selector names both runs (Playwright's text locators see into the shadow DOM)
                missing = [r for r in runs if page.get_by_text(r, exact=True).count() == 0]
                if missing:
                    sys.exit(f"the page does not name the runs {missing}")
                # the chart expanded to the pane's width; the picture: the sidebar and that card
                card = page.locator("tf-scalar-card").first
                card.locator("paper-icon-button").first.click()
                time.sleep(2)
                box = card.bounding_box()
                height = max(620, int(box["y"] + box["height"]) + 16) if box else 820
                out.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(out), clip={"x": 0, "y": 0, "width": 1400, "height": min(height, 820)})
            finally:
                browser.close()
    finally:
        tb.terminate()
        tb.wait(10)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "tensorboard-ppo-vs-sb3.png")
    p.add_argument("--logdir", type=Path, default=ROOT / "runs" / "tb-compare", help="the parent of both runs' logs")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--reuse", action="store_true", help="keep the curves already under --logdir (no training)")
    args = p.parse_args(argv)
    parent: Path = args.logdir.resolve()
    ours_dir, sb3_dir = parent / OURS, parent / SB3
    saved = parent / "verdicts.json"
    verdicts: dict[str, str] = json.loads(saved.read_text()) if args.reuse and saved.exists() else {}
    if not args.reuse:
        shutil.rmtree(parent, ignore_errors=True)
        t0 = time.perf_counter()
        r = train_reactorfed(ours_dir, args.seed)
        verdicts[OURS] = (f"reached {CASE.threshold:g} at {r['reached_env_steps']:,} env steps" if r.get("reached")
                          else f"not reached; mean {r['mean_return_100']:.1f}") + \
            f" ({r['env_steps']:,} steps in all, {r['seconds']:.1f} s training, {time.perf_counter() - t0:.0f} s wall)"
        t0 = time.perf_counter()
        s = train_sb3(sb3_dir, args.seed)
        verdicts[SB3] = (f"reached {CASE.threshold:g} at {s['env_steps']:,} env steps" if s["reached"] else "not reached") + \
            f" ({s['train_seconds']:.1f} s training, {time.perf_counter() - t0:.0f} s wall)"
        saved.write_text(json.dumps(verdicts))
    points = {name: last_point(d) for name, d in ((OURS, ours_dir), (SB3, sb3_dir))}
    screenshot(parent, [pt[0] for pt in points.values()], args.out)
    print(f"{CASE.title}, seed {args.seed}, target {CASE.threshold:g} (last 100 training episodes), "
          f"budget {CASE.total:,} env steps")
    for name, (run, step, value, n) in points.items():
        print(f"{run}: last {TAG} {value:.1f} at {step:,} env steps ({n} points)"
              + (f"; {verdicts[name]}" if name in verdicts else ""))
    print(args.out)


if __name__ == "__main__":
    main()
