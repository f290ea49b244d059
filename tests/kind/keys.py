"""Members' keys in the kind cluster: pods the test starts beside a running federation, each
holding a key the operator issued (or withdrew) and claiming a member it was not issued to,
and what the federation's RTI makes of them (test_live_scaling.py)."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

from .conftest import NAMESPACE, Kind

KEY_VOLUME = "member-key"  # (reactorfed_operator.member_keys.with_member_key's volume)
TABLE = "/etc/reactorfed/members/members.json"
FEDERATION = "reactorfed.io/federation"


def impostor(model: dict[str, Any], name: str, claims: str, key_secret: str | None = None) -> dict[str, Any]:
    """A pod made like federate pod ``model`` (its program, its key Secret mounted, or
    ``key_secret``) that runs federate ``claims`` and gives up joining after 8 s. It has the
    federation's label, as a member's pod that fell into other hands would (the federation's
    NetworkPolicy lets only its pods reach the RTI), but no owner: the operator and the
    test's watch take only the pods the federation owns."""
    spec = copy.deepcopy(model["spec"])
    for field in ("nodeName", "schedulingGates"):
        spec.pop(field, None)
    container = spec["containers"][0]
    command = list(container["command"])
    command[command.index("--federate") + 1] = claims
    container["command"] = [*command, "--join-timeout", "8s"]
    if key_secret is not None:
        for v in spec["volumes"]:
            if v["name"] == KEY_VOLUME:
                v["secret"]["secretName"] = key_secret
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NAMESPACE,
            "labels": {"app.kubernetes.io/name": "reactorfed-key-test", FEDERATION: model["metadata"]["labels"][FEDERATION],
                       "reactorfed.io/role": "impostor"}}, "spec": spec}  # fmt: skip


def start(k: Kind, *docs: dict[str, Any]) -> None:
    k.kubectl("apply", "-n", NAMESPACE, "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List",
                                                                    "items": list(docs)}))  # fmt: skip


def key_secret_copy(k: Kind, secret: str, name: str, member: str | None = None) -> dict[str, Any]:
    """A Secret ``name`` holding the key Secret ``secret`` holds now (kept past its
    withdrawal); with ``member``, its key file rewritten to name that member, as one who
    holds the key could (the command line refuses a key file issued to another member)."""
    data = k.get_json("secret", secret, "-n", NAMESPACE)["data"]
    if member is not None:
        key = json.loads(base64.b64decode(data["key.json"]))
        data = {"key.json": base64.b64encode(json.dumps({**key, "member": member}).encode()).decode()}
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": NAMESPACE},
            "type": "Opaque", "data": data}  # fmt: skip


def public_key(k: Kind, member: str, table_name: str) -> str | None:
    """``member``'s public key in the member table's ConfigMap (what the operator issued)."""
    cm = k.get_json("configmap", table_name, "-n", NAMESPACE)
    return json.loads(cm["data"]["members.json"])["members"].get(member)


def rti_table(k: Kind, rti_pod: str) -> dict[str, str]:
    """The member table as the RTI's pod sees it (its mounted file)."""
    out = k.kubectl("exec", "-n", NAMESPACE, rti_pod, "--", "python", "-c", f"print(open({TABLE!r}).read())").stdout
    return dict(json.loads(out)["members"])


def ended(k: Kind, name: str) -> tuple[str, str] | None:
    """A test pod's phase and log once it has ended, else None."""
    pod = k.get_json("pod", name, "-n", NAMESPACE)
    phase = pod["status"].get("phase")
    if phase not in ("Succeeded", "Failed"):
        return None
    return phase, k.kubectl("logs", "-n", NAMESPACE, name).stdout


def remove(k: Kind, *names: str, wait: bool = False) -> None:
    """The test's pods and Secrets of these names, deleted (gone on return with ``wait``)."""
    k.kubectl("delete", "pod,secret", *names, "-n", NAMESPACE, "--ignore-not-found", f"--wait={str(wait).lower()}",
              "--grace-period=1", check=False, timeout=120)
