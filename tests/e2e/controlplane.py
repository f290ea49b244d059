"""A real, throwaway Kubernetes control plane on loopback for the e2e tests.

etcd + kube-apiserver (serving certs from a throwaway CA, a client-cert admin in
``system:masters``, service-account issuer and keys, RBAC) + kube-controller-manager
(garbage collection, service accounts, tokens) + kube-scheduler + kwok (fake nodes: CPU
nodes and a GPU node with ``nvidia.com/gpu`` capacity, a label and a taint; scheduled pods
are reported Running but no container runs). Binaries come from scripts/k8s-tools.sh.

Every wait is bounded; failures carry the tail of the component's log.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import ssl
import subprocess
import time
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from bench.ports import free_port

__all__ = ["CPU_NODES", "GPU_NODE", "ControlPlane", "ControlPlaneError", "dies_with_this_process", "wait_for"]

CPU_NODES = ("cpu-0", "cpu-1", "cpu-2")
GPU_NODE = "gpu-0"
GPU_LABEL = ("reactorfed.io/accelerator", "nvidia")
T = TypeVar("T")


class ControlPlaneError(RuntimeError):
    pass


def dies_with_this_process() -> Callable[[], None]:
    """A ``preexec_fn`` that makes the child die with the process spawning it. The control
    plane's processes run in sessions of their own (a Ctrl-C to the tests does not reach
    them; :meth:`ControlPlane.stop` ends them): without it, a pytest worker killed outright
    (a timeout, a crash) would leave etcd, the API server and the rest running for good."""
    parent = os.getpid()
    prctl = ctypes.CDLL("libc.so.6", use_errno=True).prctl  # (loaded here: the child only calls it)

    def die_with_parent() -> None:  # pragma: no cover - runs in the child
        with contextlib.suppress(Exception):
            prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)

    return die_with_parent


def wait_for(what: str, probe: Callable[[], T | None], timeout: float, interval: float = 0.25) -> T:
    """Poll ``probe`` until it returns something truthy; raise after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while True:
        try:
            value = probe()
            if value:
                return value
        except Exception as exc:  # keep polling; report the last error
            last_error = exc
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}" + (
                f" (last error: {last_error})" if last_error else ""))  # fmt: skip
        time.sleep(interval)


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


class ControlPlane:
    """Start with :meth:`start`, stop with :meth:`stop` (idempotent)."""

    def __init__(self, bin_dir: Path, stages: Path, workdir: Path) -> None:
        self.bin = bin_dir
        self.stages = stages
        self.dir = workdir
        self.pki = workdir / "pki"
        self.procs: list[tuple[str, subprocess.Popen[bytes], Path]] = []
        self.etcd_port = free_port()
        self.peer_port = free_port()
        self.api_port = free_port()
        self.kubeconfig = workdir / "admin.kubeconfig"

    # -- helpers ----------------------------------------------------------------
    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.api_port}"

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["KUBECONFIG"] = str(self.kubeconfig)
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        env.pop("HTTPS_PROXY", None)
        env.pop("https_proxy", None)
        env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
        env["HELM_CACHE_HOME"] = str(self.dir / "helm" / "cache")
        env["HELM_CONFIG_HOME"] = str(self.dir / "helm" / "config")
        env["HELM_DATA_HOME"] = str(self.dir / "helm" / "data")
        return env

    def kubectl(
        self, *args: str, input: str | None = None, check: bool = True, timeout: float = 60,
        kubeconfig: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:  # fmt: skip
        env = self.env()
        if kubeconfig is not None:
            env["KUBECONFIG"] = str(kubeconfig)
        proc = subprocess.run(
            [str(self.bin / "kubectl"), *args], input=input, env=env, capture_output=True, text=True, timeout=timeout
        )
        if check and proc.returncode != 0:
            raise ControlPlaneError(f"kubectl {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
        return proc

    def get_json(self, *args: str) -> Any:
        return json.loads(self.kubectl("get", *args, "-o", "json").stdout)

    def _spawn(self, name: str, argv: Sequence[str]) -> subprocess.Popen[bytes]:
        log = self.dir / f"{name}.log"
        handle = log.open("wb")
        proc = subprocess.Popen(argv, stdout=handle, stderr=subprocess.STDOUT, env=self.env(), cwd=self.dir,
                                start_new_session=True, preexec_fn=dies_with_this_process())  # fmt: skip
        handle.close()
        self.procs.append((name, proc, log))
        return proc

    def log_tail(self, name: str, lines: int = 30) -> str:
        path = self.dir / f"{name}.log"
        if not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def check_alive(self) -> None:
        for name, proc, _ in self.procs:
            if proc.poll() is not None:
                raise ControlPlaneError(f"{name} exited with {proc.returncode}:\n{self.log_tail(name)}")

    # -- setup --------------------------------------------------------------------
    def _certs(self) -> None:
        p = self.pki
        p.mkdir(parents=True)
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
                 "-days", "2", "-subj", "/CN=reactorfed-e2e-ca", cwd=p)  # fmt: skip
        san = "subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
        (p / "serving.ext").write_text(san + "\nextendedKeyUsage=serverAuth\n")
        (p / "client.ext").write_text("extendedKeyUsage=clientAuth\n")
        for name, subj, ext in (
            ("apiserver", "/CN=kube-apiserver", "serving.ext"),
            ("admin", "/O=system:masters/CN=reactorfed-e2e-admin", "client.ext"),
        ):
            _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
                     "-subj", subj, cwd=p)  # fmt: skip
            _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                     "-out", f"{name}.crt", "-days", "2", "-extfile", ext, cwd=p)  # fmt: skip
        _openssl("genrsa", "-out", "sa.key", "2048", cwd=p)
        _openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=p)
        self.write_kubeconfig(self.kubeconfig, user={
            "client-certificate": str(p / "admin.crt"), "client-key": str(p / "admin.key")})  # fmt: skip

    def write_kubeconfig(self, path: Path, user: dict[str, str], namespace: str = "default") -> Path:
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "e2e", "cluster": {"server": self.server, "certificate-authority": str(self.pki / "ca.crt")}}],
            "users": [{"name": "user", "user": user}],
            "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": "user", "namespace": namespace}}],
            "current-context": "e2e",
        }
        path.write_text(json.dumps(config, indent=1))
        path.chmod(0o600)
        return path

    def _ready(self, path: str = "/readyz") -> bool:
        ctx = ssl.create_default_context(cafile=str(self.pki / "ca.crt"))
        ctx.load_cert_chain(str(self.pki / "admin.crt"), str(self.pki / "admin.key"))
        opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=ctx), urllib.request.ProxyHandler({}))
        with opener.open(self.server + path, timeout=2) as resp:
            return bool(resp.status == 200)

    def start(self, timeout: float = 120) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self._certs()
        p = self.pki
        self._spawn("etcd", [
            str(self.bin / "etcd"), "--name", "e2e", "--data-dir", str(self.dir / "etcd"),
            "--listen-client-urls", f"http://127.0.0.1:{self.etcd_port}",
            "--advertise-client-urls", f"http://127.0.0.1:{self.etcd_port}",
            "--listen-peer-urls", f"http://127.0.0.1:{self.peer_port}",
            "--initial-advertise-peer-urls", f"http://127.0.0.1:{self.peer_port}",
            "--initial-cluster", f"e2e=http://127.0.0.1:{self.peer_port}",
            "--unsafe-no-fsync", "--quota-backend-bytes", str(1 << 30), "--log-level", "warn",
        ])  # fmt: skip
        self._spawn("kube-apiserver", [
            str(self.bin / "kube-apiserver"),
            "--etcd-servers", f"http://127.0.0.1:{self.etcd_port}",
            "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
            "--secure-port", str(self.api_port), "--cert-dir", str(self.dir / "apiserver-certs"),
            "--tls-cert-file", str(p / "apiserver.crt"), "--tls-private-key-file", str(p / "apiserver.key"),
            "--client-ca-file", str(p / "ca.crt"),
            "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
            "--service-account-key-file", str(p / "sa.pub"),
            "--service-account-signing-key-file", str(p / "sa.key"),
            "--authorization-mode", "Node,RBAC",
            "--service-cluster-ip-range", "10.96.0.0/16",
            "--allow-privileged", "--profiling=false", "--endpoint-reconciler-type", "none", "--enable-priority-and-fairness=false",
            "--storage-media-type", "application/json", "--v", "1",
        ])  # fmt: skip
        try:
            wait_for("kube-apiserver /readyz", lambda: self.check_alive() or self._ready(), timeout)
        except TimeoutError as exc:
            raise ControlPlaneError(f"{exc}\n--- kube-apiserver:\n{self.log_tail('kube-apiserver')}\n--- etcd:\n"
                                    f"{self.log_tail('etcd')}") from exc  # fmt: skip
        kc = str(self.kubeconfig)
        self._spawn("kube-controller-manager", [
            str(self.bin / "kube-controller-manager"), "--kubeconfig", kc,
            "--authentication-kubeconfig", kc, "--authorization-kubeconfig", kc,
            "--leader-elect=false", "--secure-port=0", "--cluster-name", "reactorfed-e2e",
            "--service-account-private-key-file", str(p / "sa.key"), "--root-ca-file", str(p / "ca.crt"),
            "--concurrent-gc-syncs", "5", "--v", "1",
        ])  # fmt: skip
        self._spawn("kube-scheduler", [
            str(self.bin / "kube-scheduler"), "--kubeconfig", kc,
            "--authentication-kubeconfig", kc, "--authorization-kubeconfig", kc,
            "--leader-elect=false", "--secure-port=0", "--v", "1",
        ])  # fmt: skip
        self._spawn("kwok", [
            str(self.bin / "kwok"), "--kubeconfig", kc, "--config", str(self.stages),
            "--manage-all-nodes=false", "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
            "--disregard-status-with-annotation-selector=kwok.x-k8s.io/status=custom",
            "--node-lease-duration-seconds=40", "--cidr=10.244.0.1/16", "--node-ip=10.0.0.1",
        ])  # fmt: skip
        self._nodes()
        try:
            wait_for("the default ServiceAccount", lambda: self.check_alive() or self.kubectl(
                "get", "serviceaccount", "default", "-n", "default", check=False).returncode == 0, timeout)  # fmt: skip
            wait_for("every node Ready", self._nodes_ready, timeout)
        except TimeoutError as exc:
            logs = "\n".join(f"--- {n}:\n{self.log_tail(n, 15)}" for n, _, _ in self.procs)
            raise ControlPlaneError(f"{exc}\n{logs}") from exc

    def _nodes(self) -> None:
        def node(name: str, labels: dict[str, str], capacity: dict[str, str], taints: list[dict[str, str]]) -> dict:
            return {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
                    "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                               "kubernetes.io/arch": "amd64", "type": "kwok", **labels},
                },
                "spec": {"taints": taints} if taints else {},
                "status": {"capacity": capacity, "allocatable": capacity},
            }

        cpu = {"cpu": "16", "memory": "64Gi", "pods": "110"}
        items = [node(n, {"node-role.kubernetes.io/worker": ""}, cpu, []) for n in CPU_NODES]
        items.append(node(GPU_NODE, {GPU_LABEL[0]: GPU_LABEL[1]}, {**cpu, "nvidia.com/gpu": "4"},
                          [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]))  # fmt: skip
        self.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))

    def _nodes_ready(self) -> bool:
        self.check_alive()
        nodes = self.get_json("nodes")["items"]
        ready = [
            n for n in nodes
            if any(c["type"] == "Ready" and c["status"] == "True" for c in n.get("status", {}).get("conditions", []))
        ]  # fmt: skip
        return len(ready) == len(CPU_NODES) + 1

    def stop(self) -> None:
        for _name, proc, _log in reversed(self.procs):
            if proc.poll() is None:
                proc.terminate()
        for _name, proc, _log in reversed(self.procs):
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        self.procs.clear()

    def cleanup(self) -> None:
        shutil.rmtree(self.dir / "etcd", ignore_errors=True)
