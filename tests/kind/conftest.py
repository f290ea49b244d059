"""The kind suite (marker ``kind``): the project's images in real containers, and a real
kind cluster from kind-config.yaml with the operator and federations in real pods.

Prerequisites: a Docker engine (``scripts/docker-engine.sh --kind``), the images
(``scripts/images.sh --local`` here, or built as docs/kubernetes.md shows), and for the
cluster tests ``scripts/kind.sh build``. Missing ones skip with the reason, and fail
under CI=true. Run it all with ``scripts/kind-test.sh``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from .prereq import missing

REPO = Path(__file__).resolve().parents[2]
T = TypeVar("T")


def docker(
    *args: str, timeout: float = 120, check: bool = True, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        ["docker", *args], capture_output=True, text=True, timeout=timeout, input=input
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"docker {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}"
        )
    return proc


def image_tags() -> dict[str, str]:
    out = subprocess.run([str(REPO / "scripts" / "images.sh"), "--print"], capture_output=True, text=True,
                         check=True, timeout=30).stdout.split()  # fmt: skip
    return dict(zip(("runtime", "runtime-gpu", "operator", "rti"), out, strict=True))


@pytest.fixture(scope="session")
def docker_engine() -> None:
    if shutil.which("docker") is None:
        missing(
            "kind: no docker client on PATH (scripts/docker-engine.sh installs Debian's docker.io)"
        )
    proc = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        missing(
            f"kind: no Docker engine answers (start one with scripts/docker-engine.sh --kind): {proc.stderr.strip()[-300:]}"
        )


@pytest.fixture(scope="session")
def images(docker_engine: None) -> dict[str, str]:
    """The three project images, by role; each must be built already."""
    tags = image_tags()
    absent = [
        t for t in tags.values() if docker("image", "inspect", t, check=False).returncode != 0
    ]
    if absent:
        missing(
            f"kind: images not built: {', '.join(absent)} (scripts/images.sh --local builds them here)"
        )
    return tags


CLUSTER = os.environ.get("REACTORFED_KIND_CLUSTER", "rf-kind-test")
KIND = REPO / "scripts" / "kind.sh"
CHART = REPO / "charts" / "reactorfed-operator"
OPERATOR_NS = "reactorfed-system"
NAMESPACE = "rl"
#: a ConfigMap the suite makes once scripts/kind.sh create has finished
WHOLE = "reactorfed-kind-suite-cluster-whole"


class Kind:
    """A kind cluster made by scripts/kind.sh, and kubectl/helm pointed at it."""

    def __init__(self, name: str) -> None:
        self.name = name
        env = {**os.environ, "KIND_CLUSTER": name}
        self.env = env
        self.bin = Path(self._script("bin-dir"))
        self.kubeconfig = Path(self._script("kubeconfig"))

    def _script(self, *args: str, timeout: float = 60) -> str:
        proc = subprocess.run(
            [str(KIND), *args], capture_output=True, text=True, timeout=timeout, env=self.env
        )
        if proc.returncode != 0:
            raise AssertionError(
                f"scripts/kind.sh {' '.join(args)} failed: {proc.stderr.strip()[-3000:]}"
            )
        return proc.stdout.strip()

    def built(self) -> bool:
        return (
            subprocess.run(
                [str(KIND), "check"], capture_output=True, timeout=60, env=self.env
            ).returncode
            == 0
        )

    def exists(self) -> bool:
        out = subprocess.run(
            [str(self.bin / "kind"), "get", "clusters"], capture_output=True, text=True, timeout=60
        )
        return self.name in out.stdout.split()

    def create(self) -> None:
        proc = subprocess.run(
            [str(KIND), "create"], capture_output=True, text=True, timeout=1800, env=self.env
        )
        if proc.returncode != 0:
            # a half-made cluster holds GBs of images in its nodes: never leave it behind
            if os.environ.get("REACTORFED_KIND_KEEP") != "1":
                self.delete()
            raise AssertionError(f"scripts/kind.sh create failed:\n{proc.stderr[-4000:]}")
        self.create_log = proc.stderr

    def delete(self) -> None:
        subprocess.run(
            [str(KIND), "delete"], capture_output=True, text=True, timeout=300, env=self.env
        )

    def run(self, tool: str, *args: str, input: str | None = None, check: bool = True,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:  # fmt: skip
        env = {**os.environ, "KUBECONFIG": str(self.kubeconfig)}
        proc = subprocess.run([str(self.bin / tool), *args], capture_output=True, text=True, input=input,
                              timeout=timeout, env=env)  # fmt: skip
        if check and proc.returncode != 0:
            raise AssertionError(
                f"{tool} {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()[-3000:]}"
            )
        return proc

    def kubectl(self, *args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
        return self.run("kubectl", *args, **kw)

    def helm(self, *args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
        return self.run("helm", *args, **kw)

    def get_json(self, *args: str) -> Any:
        return json.loads(self.kubectl("get", *args, "-o", "json").stdout)

    def whole(self) -> bool:
        """Whether this cluster's creation finished (the marker the suite leaves then)."""
        return self.kubectl("get", "configmap", WHOLE, "-n", "kube-system", check=False).returncode == 0

    def nodes(self) -> dict[str, dict]:
        return {n["metadata"]["name"]: n for n in self.get_json("nodes")["items"]}


@pytest.fixture(scope="session")
def kind_cluster(images: dict[str, str]) -> Iterator[Kind]:
    """A fresh cluster from kind-config.yaml with the project's images loaded; deleted at
    the end unless REACTORFED_KIND_KEEP=1 (then the next run reuses it)."""
    if not KIND.exists():
        missing("kind: scripts/kind.sh is missing")
    cluster = Kind(CLUSTER)
    if not cluster.built():
        missing(
            "kind: kind or its node image is not built yet (scripts/kind.sh build; scripts/kind-test.sh does it)"
        )
    keep = os.environ.get("REACTORFED_KIND_KEEP") == "1"
    if cluster.exists() and not (keep and cluster.whole()):
        # (a kept cluster whose creation failed, say before its images were loaded, is
        # kept for a look but never reused: its pods would wait for images for ever)
        cluster.delete()
    if not cluster.exists():
        t0 = time.monotonic()
        cluster.create()
        record(
            "cluster_create_s",
            time.monotonic() - t0,
            "s",
            "scripts/kind.sh create: kind create, pod network, Ready, CoreDNS, images loaded",
        )
        cluster.kubectl("create", "configmap", WHOLE, "-n", "kube-system")
    try:
        yield cluster
    finally:
        if not keep:
            cluster.delete()


RELEASE = "reactorfed"
RESTRICTED = ("pod-security.kubernetes.io/enforce=restricted", "pod-security.kubernetes.io/warn=restricted")


@pytest.fixture(scope="session")
def operator(kind_cluster: Kind, images: dict[str, str]) -> Kind:
    """The chart installed with helm: the operator runs as a pod, with its own image,
    ServiceAccount and RBAC, managing the namespace "rl". Once a session: every module
    that runs federations shares it."""
    k = kind_cluster
    for ns in (NAMESPACE, OPERATOR_NS):
        # the restricted Pod Security Standard, enforced before the first pod: every pod of
        # the operator and of every federation in the suite is admitted under it
        if k.kubectl("get", "namespace", ns, check=False).returncode != 0:
            k.kubectl("create", "namespace", ns)
        k.kubectl("label", "--overwrite", "namespace", ns, *RESTRICTED)
    if k.helm("status", RELEASE, "-n", OPERATOR_NS, check=False).returncode != 0:
        repo, tag = images["operator"].rsplit(":", 1)
        t0 = time.monotonic()
        k.helm("install", RELEASE, str(CHART), "--namespace", OPERATOR_NS, "--create-namespace",
               "--set", f"watchNamespaces={{{NAMESPACE}}}", "--set", f"image.repository={repo}",
               "--set", f"image.tag={tag}", "--set", "image.pullPolicy=Never", "--set", "reconcileInterval=2",
               "--set", "externalMetrics.enabled=true",
               "--wait", "--timeout", "5m", timeout=360)  # fmt: skip
        record(
            "helm_install_to_ready_s",
            time.monotonic() - t0,
            "s",
            "helm install ... --wait (operator pod Ready)",
        )
    # the GPU worker gets two fake nvidia.com/gpu, as docs/kubernetes.md shows (two: the
    # data-parallel plan's two learners ask for one each)
    gpu = [
        n
        for n, v in k.nodes().items()
        if v["metadata"]["labels"].get("reactorfed.io/accelerator") == "nvidia"
    ]
    k.kubectl("patch", "node", gpu[0], "--subresource=status", "--type=json",
              "-p", '[{"op":"add","path":"/status/capacity/nvidia.com~1gpu","value":"2"}]')  # fmt: skip
    return k


RESULTS = Path(
    os.environ.get(
        "REACTORFED_KIND_RESULTS", Path(tempfile.gettempdir()) / "reactorfed-kind-results.jsonl"
    )
)


def record(metric: str, value: float, unit: str, how: str) -> None:
    """One measured figure: printed (pytest -s shows it) and appended to RESULTS as JSON."""
    line = {
        "metric": metric,
        "value": round(value, 6),
        "unit": unit,
        "how": how,
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    print(f"kind-measure {json.dumps(line)}", file=sys.stderr)
    with RESULTS.open("a") as handle:
        handle.write(json.dumps(line) + "\n")


def wait_for(what: str, probe: Callable[[], T | None], timeout: float, interval: float = 0.5) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)
