"""A credential per member as manifests: each federate's pod mounts its own key Secret and
nothing of another member's, the RTI's pod its key and the member table, the files read as
the runtime reads ``reactorfed launch``'s, and a released slot's key leaves the table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import zmq

from reactorfed.federation.io.curve import raw_key
from reactorfed.federation.process.member_keys import RtiCredentials, read_key_file
from reactorfed_operator.manifests import pod_name
from reactorfed_operator.member_keys import (
    IssuedKey,
    member_key_secret,
    member_table,
    rti_key_secret,
    with_member_key,
    with_rti_keys,
)
from reactorfed_operator.pods import federation_pods

from .helpers import make_fed


def _key() -> IssuedKey:
    pk, sk = zmq.curve_keypair()
    return IssuedKey(pk.decode(), sk.decode())


def _env(pod: dict) -> dict[str, dict]:
    return {e["name"]: e for e in pod["spec"]["containers"][0]["env"]}


def test_each_pod_mounts_its_own_key_and_the_rti_the_table(tmp_path: Path) -> None:
    fed = make_fed(samplers={"replicas": 2})
    pods = federation_pods(fed, incarnation=1)
    members = [p["metadata"]["annotations"]["reactorfed.io/federate"] for p in pods[1:]]
    assert members == ["samplers[0]", "samplers[1]", "learner"]
    rti, keys = _key(), {m: _key() for m in members}
    secrets = {m: member_key_secret(fed, m, keys[m], rti.public) for m in members}
    table = member_table(fed, {m: k.public for m, k in keys.items()})
    for m, keyed in zip(members, pods[1:], strict=True):  # (the pods mount their keys as made)
        env = _env(keyed)
        assert "REACTORFED_SECRET" not in env, "no shared secret in a member's pod"
        assert env["REACTORFED_KEY_FILE"]["value"] == "/etc/reactorfed/key/key.json"
        mounted = [v for v in keyed["spec"]["volumes"] if "secret" in v]
        assert [v["secret"]["secretName"] for v in mounted] == [f"{pod_name(fed, m)}-key"]
        assert secrets[m]["metadata"]["name"] == f"{pod_name(fed, m)}-key"
        text = secrets[m]["stringData"]["key.json"]
        assert keys[m].secret in text and rti.secret not in text
        assert not any(keys[o].secret in text for o in members if o != m), "no other member's secret key"
        # the runtime reads it as it reads launch's key files
        path = tmp_path / f"{m}.json"
        path.write_text(text)
        name, curve, rti_key = read_key_file(path)
        assert (name, curve.public.decode(), rti_key) == (m, keys[m].public, raw_key(rti.public))
    keyed_rti = pods[0]
    env = _env(keyed_rti)
    assert "REACTORFED_SECRET" not in env
    assert env["REACTORFED_MEMBER_KEYS"]["value"] == "/etc/reactorfed/members/members.json"
    volumes = {v["name"]: v for v in keyed_rti["spec"]["volumes"]}
    assert volumes["rti-key"]["secret"]["secretName"] == "pong-rti-key"
    assert volumes["member-keys"]["configMap"]["name"] == "pong-member-keys"
    mounts = keyed_rti["spec"]["containers"][0]["volumeMounts"]
    assert not any("subPath" in m for m in mounts), "a subPath mount would never see the table change"
    data = table["data"]["members.json"]
    assert not any(k.secret in data for k in [rti, *keys.values()]), "the table holds public keys only"
    (tmp_path / "members.json").write_text(data)
    creds = RtiCredentials(read_key_file(_written(tmp_path, rti_key_secret(fed, rti)))[1],
                           path=tmp_path / "members.json")
    assert creds.admit(raw_key(keys["learner"].public)) == "learner"
    assert creds.admit(raw_key(rti.public)) is None


def _written(tmp_path: Path, secret: dict) -> Path:
    path = tmp_path / secret["metadata"]["name"]
    path.write_text(secret["stringData"]["key.json"])
    return path


def test_no_mount_of_a_pod_is_inside_another() -> None:
    """A mount point inside a read-only mount (the RTI's layout) cannot be made: the
    container would not start."""
    fed = make_fed(samplers={"replicas": 1, "maxReplicas": 2}, checkpoint={"size": "1Gi"})
    for pod in federation_pods(fed, incarnation=1):
        for c in [*pod["spec"].get("initContainers", []), *pod["spec"]["containers"]]:
            paths = [m["mountPath"].rstrip("/") + "/" for m in c.get("volumeMounts", [])]
            nested = [(a, b) for a in paths for b in paths if a != b and b.startswith(a)]
            assert not nested, (pod["metadata"]["name"], c["name"], nested)


def test_the_compatibility_mode_s_pods_are_keyed_only_when_asked() -> None:
    """spec.secretRef: the pods read the shared secret; the functions that key a pod leave
    the pod given as it was."""
    fed = make_fed(samplers={"replicas": 1}, secretRef={"name": "shared"})
    rti, sampler = federation_pods(fed, incarnation=1)[:2]
    keyed = with_member_key(sampler, fed, "samplers[0]")
    assert "REACTORFED_SECRET" in _env(sampler) and "REACTORFED_SECRET" not in _env(keyed)
    assert "REACTORFED_SECRET" in _env(rti) and "REACTORFED_MEMBER_KEYS" in _env(with_rti_keys(rti, fed))


def test_bad_tables_and_pods_are_refused() -> None:
    fed = make_fed(samplers={"replicas": 1})
    k = _key()
    with pytest.raises(ValueError, match="same public key"):
        member_table(fed, {"learner": k.public, "samplers[0]": k.public})
    with pytest.raises(ValueError, match="'rti'"):
        member_table(fed, {"rti": k.public})
    with pytest.raises(ValueError, match="40 characters"):
        IssuedKey("short", k.secret)
    pod = federation_pods(fed, incarnation=1)[1]
    with pytest.raises(ValueError, match="is not federate 'learner'"):
        with_member_key(pod, fed, "learner")
    assert k.secret not in repr(k)
    assert json.loads(member_key_secret(fed, "learner", k, k.public)["stringData"]["key.json"])["member"] == "learner"
