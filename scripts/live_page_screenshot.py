"""docs/live-page.png: the RTI's live page while Q-learning trains federated, its samplers
an elastic bank (2 of 4 at the start, a third joining), in headless Chromium.

    PYTHONPATH=runtime .venv/bin/python scripts/live_page_screenshot.py [OUT.png]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = "examples/rl/qlearning.py:Main"
PARAMS = ["-p", "max_samplers=4", "-p", "num_samplers=2", "-p", "round_ms=20", "-p", "iterations=100000"]


def main() -> None:
    from playwright.sync_api import sync_playwright

    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "live-page.png"
    env = {**os.environ, "REACTORFED_SECRET": os.urandom(16).hex(), "OMP_NUM_THREADS": "1", "REACTORFED_LOGDIR": ""}
    common = [*PARAMS, "--federation-id", "qlearning-demo", "--timeout", "120s"]
    procs: list[subprocess.Popen[bytes]] = []

    def start(*args: str) -> None:
        procs.append(subprocess.Popen([sys.executable, "-m", "reactorfed", *args], cwd=ROOT, env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

    with tempfile.TemporaryDirectory() as tmp:
        ready = Path(tmp) / "rti.json"
        try:
            start("rti", PROGRAM, *common, "--port", "0", "--metrics-port", "0", "--ready-file", str(ready))
            while not ready.exists():
                time.sleep(0.05)
            info = json.loads(ready.read_text())
            for name in ("learner", "samplers[0]", "samplers[1]"):
                start("federate", PROGRAM, *common, "--federate", name, "--rti", info["endpoint"])
            time.sleep(5)
            start("federate", PROGRAM, *common, "--federate", "samplers[2]", "--rti", info["endpoint"])
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=os.environ.get("REACTORFED_CHROMIUM", "/usr/bin/chromium"),
                                             args=["--no-sandbox"])
                page = browser.new_page(viewport={"width": 1400, "height": 820})
                page.goto(f"http://127.0.0.1:{info['status_port']}/?interval=500")
                time.sleep(40)
                page.screenshot(path=str(out), full_page=True)
                browser.close()
        finally:
            for p in procs:
                p.kill()
                p.wait()
    print(out)


if __name__ == "__main__":
    main()
