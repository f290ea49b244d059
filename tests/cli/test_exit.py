"""How a reactorfed process ends: with its own exit code, and without the interpreter's
teardown noise of torch's triton bindings (nanobind's "leaked" lines)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_a_process_that_loaded_torch_ends_quietly_with_its_exit_code(tmp_path: Path) -> None:
    ok = subprocess.run([sys.executable, "-m", "reactorfed", "run", "examples/rl/ppo_cartpole.py:Main", "--fast",
                         "--param", "ppo.total_timesteps=256", "--param", "progress=false",
                         "--param", f"checkpoint={tmp_path / 'ck.pt'}", "--logdir", str(tmp_path / "tb")],
                        cwd=REPO, capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr[-2000:]
    assert "leaked" not in ok.stdout + ok.stderr
    assert "result of Main.learner" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "reactorfed", "run", "examples/rl/ppo_cartpole.py:Main", "--fast",
                          "--param", "no_such_setting=1"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "no parameter 'no_such_setting'" in bad.stderr
