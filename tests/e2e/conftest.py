"""Session fixtures for the e2e tests: a real control plane, the chart, the operator.

Skips (with the reason) when Go or the cached binaries are missing, and fails instead under
CI=true; build them with ``scripts/k8s-tools.sh`` (scripts/test.sh does that).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bench.ports import free_port

from ..kind.prereq import missing
from .controlplane import ControlPlane, ControlPlaneError, dies_with_this_process, wait_for

REPO = Path(__file__).resolve().parents[2]
TOOLS = REPO / "scripts" / "k8s-tools.sh"
CHART = REPO / "charts" / "reactorfed-operator"
OPERATOR_NS = "reactorfed-system"
NAMESPACE = "rf-e2e"
RELEASE = "reactorfed"
SA = "reactorfed-reactorfed-operator"
METRICS_NS = "monitoring"


def _tool_paths() -> tuple[Path, Path]:
    if os.environ.get("REACTORFED_K8S_BIN"):
        bin_dir = Path(os.environ["REACTORFED_K8S_BIN"])
        return bin_dir, bin_dir.parent / "share" / "kwok-stages.yaml"
    out = subprocess.run([str(TOOLS), "--bin-dir"], capture_output=True, text=True, check=True, timeout=30)
    stages = subprocess.run([str(TOOLS), "--stages"], capture_output=True, text=True, check=True, timeout=30)
    return Path(out.stdout.strip()), Path(stages.stdout.strip())


@pytest.fixture(scope="session")
def k8s_tools() -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        missing("e2e: openssl is needed to make the test control plane's certificates")
    bin_dir, stages = _tool_paths()
    if subprocess.run([str(TOOLS), "--check"], capture_output=True, timeout=30).returncode != 0 and not (
        (bin_dir / "kube-apiserver").exists() and stages.exists()
    ):
        if shutil.which("go") is None:
            missing("e2e: Go is not installed, so the Kubernetes test binaries cannot be built "
                        "(install Go >= 1.26 and run scripts/k8s-tools.sh)")  # fmt: skip
        missing(f"e2e: Kubernetes test binaries are not built yet in {bin_dir}; run scripts/k8s-tools.sh")
    return bin_dir, stages


@pytest.fixture(scope="session")
def cluster(k8s_tools: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    bin_dir, stages = k8s_tools
    cp = ControlPlane(bin_dir, stages, tmp_path_factory.mktemp("control-plane"))
    try:
        cp.start()
    except (ControlPlaneError, TimeoutError, subprocess.SubprocessError) as exc:
        cp.stop()
        pytest.fail(f"could not start the test control plane: {exc}")
    try:
        yield cp
    finally:
        cp.stop()
        cp.cleanup()


def helm(cp: ControlPlane, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(cp.bin / "helm"), *args], env=cp.env(), capture_output=True, text=True,
                          timeout=timeout)  # fmt: skip
    if proc.returncode != 0:
        raise ControlPlaneError(f"helm {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc


@pytest.fixture(scope="session")
def installed(cluster: ControlPlane) -> ControlPlane:
    """The chart installed with helm (namespace scope, managing NAMESPACE)."""
    cluster.kubectl("create", "namespace", NAMESPACE)
    helm(cluster, "install", RELEASE, str(CHART), "--namespace", OPERATOR_NS, "--create-namespace",
         "--set", f"watchNamespaces={{{NAMESPACE}}}", "--set", "image.tag=e2e", "--wait=false")  # fmt: skip
    wait_for(f"the default ServiceAccount in {NAMESPACE}", lambda: cluster.kubectl(
        "get", "serviceaccount", "default", "-n", NAMESPACE, check=False).returncode == 0, 60)  # fmt: skip
    return cluster


@pytest.fixture(scope="session")
def operator_kubeconfig(installed: ControlPlane) -> Path:
    """A kubeconfig holding a token of the chart's ServiceAccount: the operator runs with
    exactly the permissions the chart grants it."""
    token = installed.kubectl("create", "token", SA, "-n", OPERATOR_NS, "--duration", "2h").stdout.strip()
    return installed.write_kubeconfig(installed.dir / "operator.kubeconfig", {"token": token}, NAMESPACE)


@pytest.fixture(scope="session")
def discovery_kubelet(installed: ControlPlane) -> Iterator[Any]:
    """Runs the operator's discovery pods (``reactorfed federates``) as local processes: the
    operator makes no federate pod before the program answered (tests/e2e/discovery.py)."""
    from .discovery import DiscoveryKubelet  # (it imports this module)

    workdir = installed.dir / "discovery"
    workdir.mkdir(exist_ok=True)
    kubelet = DiscoveryKubelet(installed, workdir)
    kubelet.start()
    try:
        yield kubelet
    finally:
        kubelet.stop()
        if kubelet.runs:
            took = ", ".join(f"{n} {s:.2f}s (exit {c})" for n, s, c in kubelet.runs)
            print(f"\ndiscovery pods run here: {took}")


@pytest.fixture(scope="session")
def operator(installed: ControlPlane, operator_kubeconfig: Path, discovery_kubelet: Any) -> Iterator[subprocess.Popen[bytes]]:
    """The operator (this checkout's code) as a subprocess with the chart's peering/RBAC (and
    the discovery pods' kubelet)."""
    env = installed.env()
    env["KUBECONFIG"] = str(operator_kubeconfig)
    env["REACTORFED_OPERATOR_INTERVAL"] = "1"
    # as the chart's Deployment sets them (networkPolicy.metricsNamespaces={monitoring})
    env["POD_NAMESPACE"] = OPERATOR_NS
    env["REACTORFED_METRICS_NAMESPACES"] = METRICS_NS
    log = installed.dir / "operator.log"
    with log.open("wb") as handle:
        proc = subprocess.Popen(
            [sys.executable, "-m", "reactorfed_operator", "--namespace", NAMESPACE,
             "--peering", "reactorfed-operator", "--priority", "200", "--liveness", f"http://127.0.0.1:{free_port()}/healthz"],
            env=env, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True,
            preexec_fn=dies_with_this_process(),
        )  # fmt: skip
    installed.procs.append(("operator", proc, log))
    try:
        def present() -> bool:  # the operator has announced itself in the chart's peering object
            installed.check_alive()
            peering = installed.get_json("kopfpeering", "reactorfed-operator", "-n", NAMESPACE)
            return any(v.get("priority") == 200 for v in (peering.get("status") or {}).values())

        try:
            wait_for("the operator to join its peering", present, 60)
        except (TimeoutError, ControlPlaneError) as exc:
            pytest.fail(f"{exc}\n{installed.log_tail('operator', 40)}")
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
    text = log.read_text(errors="replace")
    assert "Traceback" not in text, f"the operator logged an exception:\n{text[-4000:]}"


def rfed(cp: ControlPlane, name: str) -> dict:
    return json.loads(cp.kubectl("get", "reactorfederation", name, "-n", NAMESPACE, "-o", "json").stdout)
