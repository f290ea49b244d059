"""The project's images, run for real: their entrypoints, their users, and a federation of
an RTI and two federates in three containers on one Docker network, talking over TCP."""

from __future__ import annotations

import json
import os
import secrets
import time
from pathlib import Path

import pytest

from .conftest import docker

pytestmark = [pytest.mark.kind, pytest.mark.timeout(600)]

PROGRAMS = Path(__file__).resolve().parents[1] / "e2e" / "programs"


@pytest.mark.parametrize("role", ["runtime", "runtime-gpu", "operator", "rti"])
def test_help_runs_as_non_root(images: dict[str, str], role: str) -> None:
    tag = images[role]
    out = docker("run", "--rm", tag, "--help", timeout=120).stdout
    assert "usage:" in out
    user = docker("image", "inspect", "-f", "{{.Config.User}}", tag).stdout.strip()
    assert user.split(":")[0].isdigit() and user.split(":")[0] != "0", user


@pytest.mark.parametrize("role", ["operator", "rti"])
def test_small_images_carry_no_torch(images: dict[str, str], role: str) -> None:
    proc = docker("run", "--rm", "--entrypoint", "python", images[role], "-c",
                  "import importlib.util, sys; sys.exit(importlib.util.find_spec('torch') is not None)", check=False)  # fmt: skip
    assert proc.returncode == 0, f"the {role} image should not carry torch"


def test_runtime_images_import_torch(images: dict[str, str]) -> None:
    for role in ("runtime", "runtime-gpu"):
        out = docker("run", "--rm", "--entrypoint", "python", images[role], "-c",
                     "import torch, gymnasium; print(torch.__version__)", timeout=180).stdout  # fmt: skip
        assert out.strip(), role


def test_three_container_federation(images: dict[str, str], tmp_path: Path) -> None:
    """RTI, samplers[0] and learner: three containers, one user-defined network, DNS names.
    The RTI runs the small image on the layout the runtime image writes, as the operator's
    RTI pod does with ``spec.rti.image``."""
    run = f"rf-test-{os.getpid()}-{secrets.token_hex(3)}"
    net = run
    secret = secrets.token_hex(16)
    image = images["runtime"]
    params = ["--param", "num_samplers=1"]  # the program's: the layout carries them to the RTI
    coordination = ["--federation-id", run, "--fast", "--timeout", "2s"]
    common = [*coordination, *params]
    mount = [
        "-v",
        f"{PROGRAMS}:/programs:ro",
        "-e",
        "PYTHONPATH=/programs",
        "-e",
        f"REACTORFED_SECRET={secret}",
    ]
    names = [f"{run}-rti", f"{run}-sampler", f"{run}-learner"]
    docker("network", "create", net)
    try:
        layout = tmp_path / "layout"
        layout.mkdir()
        layout.chmod(0o777)  # (the images' user writes it)
        docker("run", "--rm", *mount, "-v", f"{layout}:/layout", image, "layout", "counting:Main",
               *params, "--output", "/layout/layout.json", timeout=180)  # fmt: skip
        docker("run", "-d", "--name", names[0], "--network", net, "-v", f"{layout}:/layout:ro",
               "-e", f"REACTORFED_SECRET={secret}", images["rti"], "rti", "--layout", "/layout/layout.json",
               "--host", "0.0.0.0", "--port", "15045", *coordination)  # fmt: skip
        for name, federate in ((names[1], "samplers[0]"), (names[2], "learner")):
            docker("run", "-d", "--name", name, "--network", net, *mount, image,
                   "federate", "counting:Main", "--federate", federate, "--rti", f"{names[0]}:15045",
                   "--advertise-host", name, *common)  # fmt: skip
        deadline = time.monotonic() + 240
        codes: dict[str, int] = {}
        while time.monotonic() < deadline and len(codes) < 3:
            for name in names:
                if name not in codes:
                    state = json.loads(docker("inspect", "-f", "{{json .State}}", name).stdout)
                    if state["Status"] == "exited":
                        codes[name] = state["ExitCode"]
            time.sleep(0.5)
        logs = {n: docker("logs", n, check=False) for n in names}
        text = "\n".join(f"--- {n}\n{p.stdout[-3000:]}{p.stderr[-3000:]}" for n, p in logs.items())
        assert len(codes) == 3, f"not all containers finished within 240 s: {codes}\n{text}"
        assert all(c == 0 for c in codes.values()), f"exit codes {codes}\n{text}"
        # every federate stopped at the timeout's tag (2 s of logical time), and so did the RTI
        for name in names[1:]:
            out = logs[name].stdout + logs[name].stderr
            assert "stopped at 2 s +0 microsteps (timeout)" in out, f"{name}:\n{out[-2000:]}"
        rti_out = logs[names[0]].stdout + logs[names[0]].stderr
        assert "2 federates resigned" in rti_out and "last tag 2000000000 ns" in rti_out, rti_out[
            -2000:
        ]
    finally:
        docker("rm", "-f", *names, check=False)
        docker("network", "rm", net, check=False)
