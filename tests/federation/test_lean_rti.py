"""The RTI needs only its federation's layout: ``reactorfed launch`` hands it the layout as a
file (``reactorfed rti --layout``), and the RTI imports neither the program nor torch;
the main job ends without noise."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = [pytest.mark.timeout(240)]

PROGRAM = f"{Path(__file__).with_name('lean_programs.py')}:Main"
SECRET = "lean-rti-test-secret"


def _env(imports: Path) -> dict[str, str]:
    return {**os.environ, "LEAN_PROGRAM_IMPORTS": str(imports), "REACTORFED_SECRET": SECRET}


def _importers(imports: Path) -> list[list[str]]:
    """The command line of each process that imported the program (argv[0] left out)."""
    return [line.split()[1:] for line in imports.read_text().splitlines()] if imports.exists() else []


def test_launch_starts_an_rti_that_imports_neither_the_program_nor_torch(tmp_path: Path) -> None:
    imports = tmp_path / "imports.txt"
    proc = subprocess.run([sys.executable, "-m", "reactorfed", "launch", PROGRAM, "--fast", "--timeout", "100ms",
                           "--no-progress"], env=_env(imports), capture_output=True, text=True, timeout=200)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert '[consumer] reactorfed: result of Main.consumer: {"total": 264.0}' in proc.stdout
    who = [argv[0] for argv in _importers(imports)]
    assert "launch" in who, who  # (the program did record its imports)
    assert "rti" not in who, who
    # Nothing after the launcher's verdict, and nothing alarming anywhere: the RTI never
    # loaded torch, and the processes that did end without the interpreter's teardown noise.
    out = proc.stdout + proc.stderr
    assert proc.stdout.rstrip().endswith("(all processes finished)"), proc.stdout[-500:]
    assert proc.stderr.strip() == "" or all(" INFO " in line for line in proc.stderr.strip().splitlines()), proc.stderr
    for noise in ("leaked", "Traceback", "Warning", "WARNING", "semaphore"):
        assert noise not in out, out


def _imported(stderr: str) -> set[str]:
    """The modules ``python -X importtime`` reports."""
    return {m.group(1).strip() for m in re.finditer(r"^import time:\s+\d+ \|\s+\d+ \|\s*(.+)$", stderr, re.MULTILINE)}


def test_an_rti_given_a_layout_file_serves_the_program_without_importing_it(tmp_path: Path) -> None:
    """``reactorfed layout`` writes the file; an RTI given it (python -X importtime: every
    module it imports) admits the program's federates (the digest in the file is the
    program's) and runs them to the end, and loads neither the program, torch nor numpy."""
    imports, layout, ready = tmp_path / "imports.txt", tmp_path / "layout.json", tmp_path / "ready.json"
    env = _env(imports)
    made = subprocess.run([sys.executable, "-m", "reactorfed", "layout", PROGRAM, "-o", str(layout)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    assert json.loads(layout.read_text())["layout"]["federates"] == ["producer", "consumer"]
    assert 'data-fqn="Main.consumer"' in json.loads(layout.read_text())["diagram"]
    rti = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "reactorfed", "rti", "--layout", str(layout),
                            "--federation-id", "lean", "--host", "127.0.0.1", "--port", "0", "--metrics-port", "0",
                            "--metrics-addr", "127.0.0.1", "--ready-file", str(ready)],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not ready.exists() and rti.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ready.exists(), rti.communicate(timeout=10)
        bound = json.loads(ready.read_text())
        endpoint = bound["endpoint"]
        # the live page draws the program from the file's drawing
        with urllib.request.urlopen(f"http://127.0.0.1:{bound['status_port']}/diagram.svg", timeout=10) as r:
            assert r.read().decode() == json.loads(layout.read_text())["diagram"]
        feds = [subprocess.Popen([sys.executable, "-m", "reactorfed", "federate", PROGRAM, "--federate", name,
                                  "--federation-id", "lean", "--rti", endpoint, "--fast", "--timeout", "50ms"],
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                for name in ("producer", "consumer")]
        outs = [f.communicate(timeout=150)[0] for f in feds]
        assert [f.returncode for f in feds] == [0, 0], outs
        out, err = rti.communicate(timeout=30)
    finally:
        if rti.poll() is None:
            rti.kill()
    assert rti.returncode == 0, err[-3000:]
    assert "RTI: 2 federates resigned" in out
    loaded = _imported(err)
    assert "reactorfed.federation.process.rti_server" in loaded  # (importtime did report)
    assert not {"torch", "numpy", "lean_programs"} & loaded, sorted(loaded)
    assert not [m for m in loaded if m.startswith(("torch.", "numpy."))]
    assert [argv[0] for argv in _importers(imports)] == ["layout", "federate", "federate"]


def _rti(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "reactorfed", "rti", *args, "--port", "0", "--join-timeout", "1s"],
                          env={**os.environ, "REACTORFED_SECRET": SECRET}, capture_output=True, text=True, timeout=120)


def test_the_rti_takes_a_program_or_a_layout_file_and_names_a_bad_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"layout": {"format": 1, "federates": ["a"], "digest": "d", "maxwait": [0],
                                          "links": [[0, 0, 3, None, "x", "y", 0]], "physical": [], "elastic": []}}))
    for args, says in (((), "give PROGRAM or --layout FILE"),
                       (("prog.py:Main", "--layout", str(bad)), "give one or the other"),
                       (("--layout", str(tmp_path / "none.json")), "none.json"),
                       (("--layout", str(bad)), f"--layout: layout file {bad}: links[0] must be")):
        r = _rti(*args)
        assert r.returncode == 2 and says in r.stderr, (args, r.stderr)
