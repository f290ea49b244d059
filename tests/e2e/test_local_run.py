"""From ``kubectl apply`` to a finished federation: kwok runs no containers, so this test
runs every pod the operator created *locally*, with the pod's command and environment
(Secret and downward-API values resolved, the ConfigMap program written to a directory,
cluster addresses mapped to loopback, ports to free ones), and waits for all to finish.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from bench.ports import free_port

from ..kind.prereq import missing
from .conftest import NAMESPACE, REPO
from .controlplane import ControlPlane, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

NAME = "local-run"
PROGRAM = Path(__file__).parent / "programs" / "counting.py"
#: the image ``reactorfed-runtime:e2e`` stands for this checkout: where the images put it
IMAGE_ROOT = "/opt/reactorfed/"
REACTORFED = Path(sys.executable).with_name("reactorfed")


def _commands_missing() -> str | None:
    if not REACTORFED.exists():
        return f"{REACTORFED} is not installed"
    out = subprocess.run([str(REACTORFED), "--help"], capture_output=True, text=True, timeout=60)
    missing = [c for c in ("rti", "federate") if not re.search(rf"^\s+{c}\s", out.stdout, re.MULTILINE)]
    if missing:
        return f"`reactorfed {'/'.join(missing)}` does not exist yet (`reactorfed --help` lists no such command)"
    return None


def _manifest() -> str:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "counting"},
          "data": {"counting.py": PROGRAM.read_text()}}  # fmt: skip
    fed = {
        "apiVersion": "reactorfed.io/v1alpha1",
        "kind": "ReactorFederation",
        "metadata": {"name": NAME},
        "spec": {
            "program": {"image": "reactorfed-runtime:e2e", "entrypoint": "counting:Main",
                        "configMap": {"name": "counting", "key": "counting.py"}},
            "samplers": {"replicas": 3},
            "learner": {"gpus": 1},
            # real time, long enough for the operator (1 s passes) to see the RTI's progress
            "coordination": {"fast": False, "timeout": "4 s"},
        },
    }
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": [cm, fed]})


def _local_process(cp: ControlPlane, pod: dict[str, Any], ports: dict[str, int], workdir: Path) -> tuple[list[str], dict[str, str]]:
    """The pod's container command and env, made runnable on this machine. Its init
    containers (the RTI pod's layout writer) run here first, to their end, as a kubelet
    runs them before the container."""
    local_dirs = _volumes(cp, pod, workdir)
    for init in pod["spec"].get("initContainers", []):
        argv, env = _container_process(cp, pod, init, ports, local_dirs)
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"{pod['metadata']['name']}'s init container {init['name']} failed:\n{done.stderr}"
    return _container_process(cp, pod, pod["spec"]["containers"][0], ports, local_dirs)


def _volumes(cp: ControlPlane, pod: dict[str, Any], workdir: Path) -> dict[str, str]:
    """Each volume's mount path (in any of the pod's containers) -> a folder here."""
    mounts = {m["name"]: m["mountPath"] for c in [*pod["spec"].get("initContainers", []), *pod["spec"]["containers"]]
              for m in c.get("volumeMounts", [])}  # fmt: skip
    local_dirs: dict[str, str] = {}
    for volume in pod["spec"]["volumes"]:
        path = mounts.get(volume["name"])
        if path is None:
            continue
        target = workdir / pod["metadata"]["name"] / volume["name"]
        target.mkdir(parents=True, exist_ok=True)
        if "configMap" in volume:
            _write_config_map(cp, volume, target)
        elif "secret" in volume:  # (a member's key)
            data = cp.get_json("secret", volume["secret"]["secretName"], "-n", NAMESPACE)["data"]
            for key, text in data.items():
                (target / key).write_bytes(base64.b64decode(text))
        local_dirs[path] = str(target)
    return local_dirs


def _write_config_map(cp: ControlPlane, volume: dict[str, Any], target: Path) -> None:
    """A ConfigMap volume's files, each replaced whole (a reader never sees half of one)."""
    data = cp.get_json("configmap", volume["configMap"]["name"], "-n", NAMESPACE)["data"]
    for key, text in data.items():
        if not (target / key).exists() or (target / key).read_text() != text:
            (target / f".{key}.tmp").write_text(text)
            (target / f".{key}.tmp").replace(target / key)


def refresh_config_maps(cp: ControlPlane, pod: dict[str, Any], workdir: Path) -> None:
    """Bring a running pod's ConfigMap volumes up to date, as a kubelet does (the RTI's
    member table: a key issued or withdrawn)."""
    for volume in pod["spec"]["volumes"]:
        target = workdir / pod["metadata"]["name"] / volume["name"]
        if "configMap" in volume and target.is_dir():
            _write_config_map(cp, volume, target)


def _local_path(arg: str, local_dirs: dict[str, str]) -> str:
    """A path in a mounted volume, as the folder here that stands for it; a path in the
    image's copy of the project (a program), as the path in this checkout."""
    for path, local in local_dirs.items():
        if arg == path or arg.startswith(path.rstrip("/") + "/"):
            return local + arg[len(path):]
    return f"{REPO}/{arg[len(IMAGE_ROOT):]}" if arg.startswith(IMAGE_ROOT) else arg


def _container_process(cp: ControlPlane, pod: dict[str, Any], container: dict[str, Any], ports: dict[str, int],
                       local_dirs: dict[str, str]) -> tuple[list[str], dict[str, str]]:  # fmt: skip
    env: dict[str, str] = {}
    for item in container.get("env", []):
        if "value" in item:
            env[item["name"]] = item["value"]
            continue
        source = item["valueFrom"]
        if "secretKeyRef" in source:
            ref = source["secretKeyRef"]
            secret = cp.get_json("secret", ref["name"], "-n", NAMESPACE)
            env[item["name"]] = base64.b64decode(secret["data"][ref["key"]]).decode()
        elif source.get("fieldRef", {}).get("fieldPath") == "status.podIP":
            env[item["name"]] = "127.0.0.1"
    for key, value in env.items():  # (a mounted folder, or a file in one: the key files)
        env[key] = next((local + value[len(path):] for path, local in local_dirs.items()
                         if value == path or value.startswith(path.rstrip("/") + "/")), value)

    rti_host = f"{pod['metadata']['labels']['reactorfed.io/federation']}-rti.{NAMESPACE}.svc"
    argv: list[str] = []
    args = list(container["command"])
    for i, arg in enumerate(args):
        arg = re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1), m.group(0)), arg)
        prev = args[i - 1] if i else ""
        if prev == "--port":
            arg = str(ports["rti"])
        elif prev == "--rti":
            arg = f"127.0.0.1:{ports['rti']}" if arg.startswith(rti_host + ":") else arg
        elif prev == "--metrics-port":
            arg = str(ports[pod["metadata"]["name"]])
        elif prev == "--data-port":  # one per pod there, all on one host here: any free one
            arg = "0"
        elif prev == "--host":
            arg = "127.0.0.1"
        else:  # a checkpoint folder, the layout file, the program
            arg = _local_path(arg, local_dirs)
        argv.append(arg)
    assert argv[0] == "reactorfed"
    argv[0] = str(REACTORFED)
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")}
    host_path = full_env.get("PYTHONPATH")
    full_env.update(env)
    if host_path and "PYTHONPATH" in env:  # the pod's (its program) and this host's (a checkout's runtime, first)
        full_env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], host_path])
    return argv, full_env


def test_applied_federation_runs_to_completion(installed: ControlPlane, operator: subprocess.Popen[bytes],
                                               tmp_path: Path) -> None:  # fmt: skip
    reason = _commands_missing()
    if reason:
        missing(f"local run of the created pods: {reason}")
    cp = installed
    cp.kubectl("apply", "-n", NAMESPACE, "-f", "-", input=_manifest())

    def created() -> dict[str, dict[str, Any]] | None:
        items = cp.get_json("pods", "-n", NAMESPACE, "-l", f"reactorfed.io/federation={NAME},reactorfed.io/role!=discovery")["items"]
        return {p["metadata"]["name"]: p for p in items} if len(items) == 5 else None

    pods = wait_for("the operator to create 5 pods", created, 60)
    ports = {name: free_port() for name in pods} | {"rti": free_port()}
    procs: dict[str, subprocess.Popen[str]] = {}
    logs: dict[str, Path] = {}
    order = sorted(pods, key=lambda n: pods[n]["metadata"]["labels"]["reactorfed.io/role"] != "rti")
    try:
        for name in order:
            argv, env = _local_process(cp, pods[name], ports, tmp_path)
            logs[name] = tmp_path / f"{name}.log"
            with logs[name].open("w") as handle:
                procs[name] = subprocess.Popen(argv, env=env, stdout=handle, stderr=subprocess.STDOUT, text=True,
                                               start_new_session=True)  # fmt: skip
        # The RTI pod's IP is kwok's fiction: point the operator at the local RTI instead.
        url = f"http://127.0.0.1:{ports[f'{NAME}-rti']}/status"
        cp.kubectl("annotate", "rfed", NAME, "-n", NAMESPACE, f"reactorfed.io/status-url={url}")
        rti_status: Any = None
        seen_progress: dict[str, Any] = {}
        table = ""  # `kubectl get rfed` once it showed the learner's progress
        deadline = time.monotonic() + 180
        while any(p.poll() is None for p in procs.values()) and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(url, timeout=1) as resp:
                    rti_status = json.loads(resp.read())
            except (OSError, ValueError):
                pass
            progress = (cp.get_json("rfed", NAME, "-n", NAMESPACE).get("status") or {}).get("progress") or {}
            if progress.get("elapsedNs"):
                seen_progress = progress
            if progress.get("doneText") and not table:
                table = cp.kubectl("get", "rfed", NAME, "-n", NAMESPACE).stdout
            time.sleep(0.3)
        report = "\n".join(f"--- {n} (exit {p.poll()}):\n{logs[n].read_text()[-2000:]}" for n, p in procs.items())
        assert all(p.poll() == 0 for p in procs.values()), f"the federation did not finish cleanly:\n{report}"
        assert rti_status is not None and {"phase", "tag", "elapsed_ns", "federates"} <= set(rti_status), rti_status
        assert len(rti_status["federates"]) == 4, rti_status  # 3 samplers + the learner
        # the operator polled the RTI and showed its logical time in the status (and kubectl get)
        assert seen_progress.get("logicalTime", "").endswith("s"), seen_progress
        assert seen_progress.get("federatesConnected") is not None, seen_progress
        # the learner's own progress, federate -> RTI -> operator: the Progress and Return columns
        assert seen_progress.get("total") == 400 and seen_progress.get("done", 0) > 0, seen_progress
        assert seen_progress["doneText"] == f"{seen_progress['done']}/400"
        assert "mean_return" in seen_progress.get("figures", {}), seen_progress
        header, row = table.splitlines()[:2]
        assert header.split()[3:5] == ["PROGRESS", "RETURN"], table
        assert row.split()[3].endswith("/400") and float(row.split()[4]) > 0, table

        # Report the exits as a kubelet would (kwok leaves annotated pods' status to us):
        # the operator marks the federation Succeeded.
        for name in pods:
            cp.kubectl("annotate", "pod", name, "-n", NAMESPACE, "kwok.x-k8s.io/status=custom")
            terminated = {"exitCode": 0, "reason": "Completed"}
            cp.kubectl("patch", "pod", name, "-n", NAMESPACE, "--subresource=status", "--type=merge", "-p",
                       json.dumps({"status": {"phase": "Succeeded", "containerStatuses": [{
                           "name": pods[name]["spec"]["containers"][0]["name"], "image": "reactorfed-runtime:e2e",
                           "imageID": "", "ready": False, "restartCount": 0,
                           "state": {"terminated": terminated}}]}}))  # fmt: skip

        def succeeded() -> bool:
            return (cp.get_json("rfed", NAME, "-n", NAMESPACE).get("status") or {}).get("phase") == "Succeeded"

        wait_for("the federation to be Succeeded", succeeded, 60)
        row = cp.kubectl("get", "rfed", NAME, "-n", NAMESPACE, "--no-headers").stdout.split()
        assert row[1] == "Succeeded", row
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait(timeout=10)
        cp.kubectl("delete", "rfed", NAME, "-n", NAMESPACE, "--wait=false", check=False)
