"""A credential per member: each member holds its own Curve25519 key, the RTI admits a key
only as the member it was issued to, a data port admits only the keys of the members that
send to it, and a withdrawn key is refused. The decisions are pure
(:mod:`reactorfed.federation.coordination.credentials`, :class:`Admission`); the rest runs
a real federation over ZeroMQ: the elastic learner and samplers in threads, and real
processes (``reactorfed rti`` and ``reactorfed federate`` with key files)."""

from __future__ import annotations

import json
import logging
import os
import stat
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import zmq

from reactorfed import ms
from reactorfed.federation.coordination.admission import NO_MAC, Admission
from reactorfed.federation.coordination.credentials import (
    KeyTable,
    claim_refusal,
    data_admission,
    keys_by_index,
)
from reactorfed.federation.errors import FederationError
from reactorfed.federation.io.curve import CurveKeys, raw_key, secure_client, secure_server
from reactorfed.federation.process.member_keys import (
    issue,
    issue_key_files,
    read_key_file,
    write_key_file,
    write_member_table,
)
from reactorfed.federation.process.runner import layout_of
from reactorfed.federation.wire import protocol as P

from .elastic_programs import Main, replayed
from .harness import Federation, wait_until

pytestmark = pytest.mark.timeout(90)

TIMEOUT = ms(400)
LONG = ms(4000)  # (runs that the test pokes at while they run)
ROOT = Path(__file__).resolve().parents[2]


def _table(**keys: CurveKeys) -> KeyTable:
    return KeyTable({n: raw_key(k.public) for n, k in keys.items()})


# -- the decisions, pure ----------------------------------------------------------------


def test_a_key_table_names_each_keys_member_and_refuses_a_shared_key() -> None:
    _, keys = issue(["learner", "samplers[0]"])
    table = _table(**{n: k for n, k in keys.items()})
    assert table.member(raw_key(keys["learner"].public)) == "learner"
    assert table.member(raw_key(keys["samplers[0]"].public)) == "samplers[0]"
    assert table.member(bytes(32)) is None
    with pytest.raises(ValueError, match=r"'learner' and 'samplers\[0\]' hold the same key"):
        KeyTable({"learner": raw_key(keys["learner"].public), "samplers[0]": raw_key(keys["learner"].public)})
    with pytest.raises(ValueError, match="not 32 bytes"):
        KeyTable({"learner": b"short"})
    newer = KeyTable({"learner": raw_key(keys["learner"].public)})
    assert table.withdrawn(newer) == ["samplers[0]"]
    assert table.missing(["learner", "samplers[0]", "samplers[1]"]) == ["samplers[1]"]


def test_a_claim_is_refused_naming_both_members() -> None:
    assert claim_refusal("learner", "learner") is None
    why = claim_refusal("samplers[0]", "learner")
    assert why is not None and "issued to 'samplers[0]'" in why and "not to 'learner'" in why
    assert claim_refusal(None, "learner") is not None


def test_a_data_port_admits_only_the_keys_of_the_members_that_send_to_it() -> None:
    layout = layout_of(Main())
    _, keys = issue(layout.names)
    by_index = keys_by_index(layout, _table(**keys))
    learner = layout.index("learner")
    samplers = [layout.index(f"samplers[{i}]") for i in range(3)]
    assert data_admission(layout, learner, by_index) == {by_index[s]: str(s) for s in samplers}
    for s in samplers:  # a sampler hears from the learner only: no other sampler's key opens its port
        assert data_admission(layout, s, by_index) == {by_index[learner]: str(learner)}


def test_the_rti_admits_a_hello_proof_and_heartbeat_only_from_the_member_whose_key_it_is() -> None:
    layout = layout_of(Main())
    door = Admission(layout, "fid", None)
    hello = P.Hello(P.PROTOCOL_VERSION, "fid", "learner", layout.digest, "tcp://127.0.0.1:1", b"n" * 16)
    refused = door.hello(b"a", hello, 0, b"r" * 16, open_=True, member="samplers[0]")
    assert isinstance(refused, P.Reject)
    assert "issued to 'samplers[0]'" in refused.reason and "not to 'learner'" in refused.reason
    keys = {0: b"k" * 32}
    challenge = door.hello(b"b", hello, 0, b"r" * 16, open_=True, member="learner", keys=keys)
    assert isinstance(challenge, P.Challenge) and challenge.mac == NO_MAC and challenge.keys == keys
    # the proof over the same connection: its key is checked again (the MAC is not: no secret)
    assert isinstance(door.proof(b"b", P.Proof(NO_MAC), "samplers[1]"), P.Reject)
    door.hello(b"c", hello, 0, b"r" * 16, open_=True, member="learner")
    assert door.proof(b"c", P.Proof(NO_MAC), "learner") == layout.index("learner")
    session = b"s" * 16
    hb = P.HbHello("fid", "learner", b"h" * 16, P.mac(session, "hb", session, "learner", b"h" * 16))
    assert door.heartbeat_hello(b"d", hb, session, running=True, member="samplers[0]") is None
    assert door.heartbeat_hello(b"e", hb, session, running=True, member="learner") == layout.index("learner")


def test_launch_gives_each_process_its_own_key_file_and_no_key_on_a_command_line(tmp_path: Path) -> None:
    names = ["learner", "samplers[0]", "samplers[1]"]
    rti_flags, flags = issue_key_files(tmp_path, names)
    table = json.loads((tmp_path / "keys" / "members.json").read_text())["members"]
    secrets: set[str] = set()
    for name in names:
        path = Path(flags[name][1])
        assert flags[name] == ["--key-file", str(path)]
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        data = json.loads(path.read_text())
        member, keys, rti = read_key_file(path)
        assert member == name and set(data) == {"member", "secret_key", "rti_public_key"}
        assert keys.public.decode() == table[name] and rti is not None
        secrets.add(data["secret_key"])
    rti_path = Path(rti_flags[1])
    assert rti_flags == ["--key-file", str(rti_path), "--member-keys", str(tmp_path / "keys" / "members.json")]
    rti_secret = json.loads(rti_path.read_text())["secret_key"]
    assert len(secrets | {rti_secret}) == len(names) + 1, "every member's key is its own"
    argv = " ".join([*rti_flags, *(a for f in flags.values() for a in f)])
    assert not any(s in argv for s in [*secrets, rti_secret])
    assert not any(s in (tmp_path / "keys" / "members.json").read_text() for s in secrets)
    assert stat.S_IMODE((tmp_path / "keys").stat().st_mode) == 0o700


# -- a real federation over ZeroMQ, in threads --------------------------------------------


PRESENT = ("learner", "samplers[0]", "samplers[1]")  # (samplers[2] is absent at the start)


def _run_rest(fed: Federation, names: tuple[str, ...] = PRESENT, timeout: int = TIMEOUT) -> None:
    for name in names:
        fed.start(name, fast=False, timeout=timeout)


def _running(fed: Federation) -> bool:
    return fed.server.phase == "running" and all(
        n in fed.coords and fed.coords[n].data_port is not None for n in PRESENT)


def _ends_as_in_one_process(fed: Federation, timeout: int = TIMEOUT) -> None:
    fed.wait(timeout=40)
    assert not {k: e for k, e in fed.errors.items() if not k.startswith("impostor")}, fed.errors
    assert fed.rti_error is None, fed.rti_error
    assert fed.summary is not None
    learner = fed.programs["learner"]
    assert isinstance(learner, Main)
    assert learner.learner.trace == replayed([r.change() for r in fed.summary.membership], timeout).learner.trace


def test_a_samplers_key_cannot_join_as_the_learner(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="reactorfed.rti")
    fed = Federation(Main, keyed=True)
    _run_rest(fed, ("samplers[0]", "samplers[1]"))
    wait_until(lambda: fed.joined("samplers[0]"), what="samplers[0] to join")
    fed.start("learner", key="impostor", as_member="samplers[0]", fast=False, timeout=TIMEOUT)
    wait_until(lambda: "impostor" in fed.errors, what="the impostor's refusal")
    err = fed.errors["impostor"]
    assert isinstance(err, FederationError)
    assert "the RTI rejected federate learner" in str(err)
    assert "the connection's key was issued to 'samplers[0]', not to 'learner'" in str(err)
    assert any("rejected a federate" in r.getMessage() and "issued to 'samplers[0]'" in r.getMessage()
               for r in caplog.records), "the RTI logs the refusal and its reason"
    assert not fed.joined("learner")
    _run_rest(fed, ("learner",))  # the real learner: the federation runs as in one process
    _ends_as_in_one_process(fed)


def _monitored_dealer(keys: CurveKeys, server_key: bytes, endpoint: str) -> tuple[zmq.Socket[Any], zmq.Socket[Any]]:
    ctx = zmq.Context.instance()
    s = ctx.socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    secure_client(s, keys, server_key)
    addr = f"inproc://keys-test-monitor-{time.monotonic_ns()}"
    s.monitor(addr, zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_HANDSHAKE_FAILED_AUTH
              | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL)
    m = ctx.socket(zmq.PAIR)
    m.setsockopt(zmq.LINGER, 0)
    m.connect(addr)
    s.connect(endpoint)
    return s, m


def _handshake(m: zmq.Socket[Any]) -> int:
    """The first handshake event of a monitored socket (its outcome)."""
    assert m.poll(10_000), "no handshake event within 10 s"
    from zmq.utils.monitor import parse_monitor_message

    return int(parse_monitor_message(m.recv_multipart())["event"])


def _close(*socks: zmq.Socket[Any]) -> None:
    for s in socks:
        if s.type == zmq.DEALER:
            s.disable_monitor()
        s.close(linger=0)


def test_a_member_cannot_open_or_pose_as_a_link_it_is_not_on() -> None:
    fed = Federation(Main, keyed=True)
    _run_rest(fed, timeout=LONG)
    wait_until(lambda: _running(fed), timeout=20, what="the federation to run")
    s0, s1, learner = (fed.keys[n] for n in ("samplers[0]", "samplers[1]", "learner"))
    # samplers[0] sends nothing to samplers[1]: its key does not open samplers[1]'s data port
    sock, mon = _monitored_dealer(s0, s1.public, fed.data_endpoint("samplers[1]"))
    try:
        assert _handshake(mon) == zmq.EVENT_HANDSHAKE_FAILED_AUTH
    finally:
        _close(sock, mon)
    # its key opens the learner's port (it sends there), but only as itself: claiming to be
    # samplers[1] (with the session, which a member knows), it is refused and nothing counts
    inbound = fed.coords["learner"]._inbound
    before = inbound.rejected
    sock, mon = _monitored_dealer(s0, learner.public, fed.data_endpoint("learner"))
    try:
        assert _handshake(mon) == zmq.EVENT_HANDSHAKE_SUCCEEDED
        me, dst = fed.layout.index("samplers[1]"), fed.layout.index("learner")
        session = fed.server.session
        sock.send(P.Auth(me, P.mac(session, "data", session, me, dst)).pack())
        wait_until(lambda: inbound.rejected > before, what="the learner to refuse the claim")
    finally:
        _close(sock, mon)
    # a member's own key cannot pose as another's data port: a client expects the port's key
    ctx = zmq.Context.instance()
    fake = ctx.socket(zmq.ROUTER)
    fake.setsockopt(zmq.LINGER, 0)
    secure_server(fake, s0, lambda key: "anyone")
    port = fake.bind_to_random_port("tcp://127.0.0.1")
    sock, mon = _monitored_dealer(s1, learner.public, f"tcp://127.0.0.1:{port}")
    try:
        assert _handshake(mon) != zmq.EVENT_HANDSHAKE_SUCCEEDED
        assert not fake.poll(200), "nothing reaches a server that does not hold the expected key"
    finally:
        _close(sock, mon, fake)
    _ends_as_in_one_process(fed, LONG)


def test_a_withdrawn_key_is_refused(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="reactorfed.security")
    fed = Federation(Main, keyed=True)
    _run_rest(fed, timeout=LONG)
    wait_until(lambda: _running(fed), timeout=20, what="the federation to run")
    fed.withdraw("samplers[2]")  # the slot is released: its key is withdrawn
    # (a refused key is tried again until the join timeout: the table may not have it yet)
    fed.start("samplers[2]", key="impostor", fast=False, timeout=TIMEOUT, join_timeout_ns=3_000_000_000)
    wait_until(lambda: "impostor" in fed.errors, timeout=20, what="the withdrawn key's refusal")
    assert "the RTI refused its key" in str(fed.errors["impostor"]), fed.errors["impostor"]
    assert not fed.joined("samplers[2]")
    assert any("samplers[2] was withdrawn" in r.getMessage() for r in caplog.records)
    _ends_as_in_one_process(fed, LONG)


def test_a_connection_opened_before_its_key_was_withdrawn_cannot_join(caplog: pytest.LogCaptureFixture) -> None:
    """A connection made with samplers[2]'s key while it was current (the ZAP handler
    admitted it then) and kept open: once the key is withdrawn, a HELLO over it claiming
    samplers[2] (whose slot is open) is refused, and the slot stays empty."""
    caplog.set_level(logging.WARNING, logger="reactorfed.rti")
    fed = Federation(Main, keyed=True)
    _run_rest(fed, timeout=LONG)
    wait_until(lambda: _running(fed), timeout=20, what="the federation to run")
    sock, mon = _monitored_dealer(fed.keys["samplers[2]"], fed.rti_keys.public, fed.endpoint)
    try:
        assert _handshake(mon) == zmq.EVENT_HANDSHAKE_SUCCEEDED
        fed.withdraw("samplers[2]")
        wait_until(lambda: fed.server.cfg.credentials.admit(raw_key(fed.keys["samplers[2]"].public)) is None,
                   what="the RTI to read the new table")
        sock.send(P.Hello(P.PROTOCOL_VERSION, fed.fid, "samplers[2]", fed.layout.digest, "tcp://127.0.0.1:1",
                          os.urandom(16)).pack())
        assert sock.poll(10_000), "no answer to the HELLO"
        reply = P.parse(sock.recv())
        assert isinstance(reply, P.Reject), reply
        assert "its connection's key is no member's now (withdrawn since the connection opened)" in reply.reason
    finally:
        _close(sock, mon)
    assert not fed.joined("samplers[2]")
    assert any("withdrawn since the connection opened" in r.getMessage() for r in caplog.records)
    _ends_as_in_one_process(fed, LONG)


def test_a_data_connection_opened_before_its_key_was_withdrawn_cannot_authenticate(
        caplog: pytest.LogCaptureFixture) -> None:
    """The same at a data port: a connection to the learner's port made with samplers[2]'s
    key while the learner admitted it, kept open; once the key is withdrawn (the RTI's KEYS
    reached the learner), an AUTH over it claiming samplers[2] is refused naming the
    withdrawal."""
    caplog.set_level(logging.WARNING, logger="reactorfed.federate")
    fed = Federation(Main, keyed=True)
    _run_rest(fed, timeout=LONG)
    wait_until(lambda: _running(fed), timeout=20, what="the federation to run")
    learner, me = fed.coords["learner"], fed.layout.index("samplers[2]")
    assert learner.data_port is not None and me in learner.data_port.keys
    sock, mon = _monitored_dealer(fed.keys["samplers[2]"], fed.keys["learner"].public, fed.data_endpoint("learner"))
    try:
        assert _handshake(mon) == zmq.EVENT_HANDSHAKE_SUCCEEDED
        fed.withdraw("samplers[2]")
        wait_until(lambda: me not in learner.data_port.keys, timeout=20, what="the learner to learn the new keys")
        inbound = learner._inbound
        before = inbound.rejected
        session, dst = fed.server.session, fed.layout.index("learner")
        sock.send(P.Auth(me, P.mac(session, "data", session, me, dst)).pack())
        wait_until(lambda: inbound.rejected > before, what="the learner to refuse the AUTH")
    finally:
        _close(sock, mon)
    assert any("its key was withdrawn since its connection opened" in r.getMessage() for r in caplog.records)
    _ends_as_in_one_process(fed, LONG)


def test_a_key_the_rti_learns_late_joins_within_the_join_timeout(caplog: pytest.LogCaptureFixture) -> None:
    """A slot's key issued a moment ago, not yet in the RTI's table (a ConfigMap reaches
    the RTI's volume with a lag): the federate is refused, says so at INFO, connects again,
    and joins once the table has its key."""
    caplog.set_level(logging.INFO, logger="reactorfed.federate")
    fed = Federation(Main, keyed=True)
    fed.withdraw("samplers[2]")
    _run_rest(fed, timeout=LONG)
    wait_until(lambda: _running(fed), timeout=20, what="the federation to run")
    fed.start("samplers[2]", fast=False, timeout=LONG, join_timeout_ns=30_000_000_000)
    wait_until(lambda: any("does not admit its key yet" in r.getMessage() for r in caplog.records), timeout=20,
               what="the refusal of the key not yet in the table")
    assert not fed.joined("samplers[2]") and "samplers[2]" not in fed.errors
    write_member_table(fed.table, fed.keys)  # the table catches up
    wait_until(lambda: fed.joined("samplers[2]") or "samplers[2]" in fed.errors, timeout=20,
               what="samplers[2] to join")
    assert fed.joined("samplers[2]"), fed.errors
    _ends_as_in_one_process(fed, LONG)


@pytest.mark.parametrize("at_once", [False, True], ids=["after-keys", "at-once"])
def test_a_slot_given_a_fresh_key_rejoins_its_peers_learning_it(caplog: pytest.LogCaptureFixture,
                                                               at_once: bool) -> None:
    """The issuer replaces an absent slot's key (a released slot: its old key withdrawn):
    the running members learn the fresh key from the RTI (KEYS), so the slot's new process
    opens its data links with it (over CurveZMQ: no Unix sockets), and the old key opens
    none of them any more.

    ``at_once``: the new process starts as the table is written, before the RTI's periodic
    look. The RTI reads its table before it answers the HELLO and sends KEYS before the
    join's round, whose Query each member reads after KEYS; the process starts only when
    every member has answered, so no peer's port can still hold the old key when its data
    links open."""
    caplog.set_level(logging.INFO, logger="reactorfed.rti")
    fed = Federation(Main, keyed=True)
    for name in PRESENT:
        fed.start(name, fast=False, timeout=LONG, unix_sockets=False, shm_bytes=0)
    wait_until(lambda: _running(fed), timeout=20, what="the federation to run")
    # (the RTI is running once its START went out, with the keys of that moment: a table
    # written before would reach the members with START, and no "keys changed" follows)
    wait_until(lambda: any("the federation starts" in r.getMessage() for r in caplog.records), timeout=10,
               what="the RTI to start the federation")
    old = fed.keys["samplers[2]"]
    _, fresh = issue(["samplers[2]"])
    fed.keys["samplers[2]"] = fresh["samplers[2]"]
    write_member_table(fed.table, fed.keys)
    learner = fed.coords["learner"].data_port
    assert learner is not None and old.public != fresh["samplers[2]"].public
    if not at_once:
        wait_until(lambda: any("the members' keys changed" in r.getMessage() for r in caplog.records), timeout=10,
                   what="the RTI to tell the members the fresh key")
        wait_until(lambda: learner.keys.get(fed.layout.index("samplers[2]")) == raw_key(fresh["samplers[2]"].public),
                   timeout=10, what="the learner to learn the fresh key")
    fed.start("samplers[2]", fast=False, timeout=LONG, unix_sockets=False, shm_bytes=0)
    wait_until(lambda: fed.joined("samplers[2]") or "samplers[2]" in fed.errors, timeout=20,
               what="samplers[2] to join")
    assert fed.joined("samplers[2]"), fed.errors
    assert learner.keys.get(fed.layout.index("samplers[2]")) == raw_key(fresh["samplers[2]"].public)
    _ends_as_in_one_process(fed, LONG)


# -- real processes ------------------------------------------------------------------------


def _cli(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "reactorfed", *args], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _keyed_rti(tmp_path: Path, program: str, rti_flags: list[str],
               join_timeout: str) -> tuple[subprocess.Popen[str], str, dict[str, str]]:
    """``reactorfed rti`` with a key per member (``rti_flags``), once it listens: its process,
    its endpoint, and the environment for its federates (no shared secret in it)."""
    env = {k: v for k, v in os.environ.items() if k != "REACTORFED_SECRET"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "runtime"), str(ROOT)])
    ready = tmp_path / "ready.json"
    rti = _cli("rti", program, "--federation-id", "keys", "--host", "127.0.0.1", "--port", "0", "--ready-file",
               str(ready), "--join-timeout", join_timeout, *rti_flags, env=env)
    deadline = time.monotonic() + 30
    while not ready.exists():
        if rti.poll() is not None or time.monotonic() > deadline:
            rti.kill()
            raise AssertionError(f"the RTI did not start: {rti.communicate(timeout=10)[0]}")
        time.sleep(0.05)
    return rti, json.loads(ready.read_text())["endpoint"], env


def test_processes_a_samplers_key_file_cannot_join_as_the_learner(tmp_path: Path) -> None:
    """``reactorfed rti`` and ``reactorfed federate`` with key files: a sampler's key file
    is refused for the learner by the command line, and, rewritten to name the learner
    (what a compromised sampler could do), by the RTI, which says whose key it is."""
    program = "tests/federation/elastic_programs.py:Main"
    names = ["learner", "samplers[0]", "samplers[1]"]
    rti_flags, flags = issue_key_files(tmp_path, names)
    rti, endpoint, env = _keyed_rti(tmp_path, program, rti_flags, "30s")
    try:
        common = [program, "--federation-id", "keys", "--rti", endpoint, "--timeout", "100ms"]
        wrong = _cli("federate", *common, "--federate", "learner", *flags["samplers[0]"], env=env)
        out, _ = wrong.communicate(timeout=60)
        assert wrong.returncode != 0 and "was issued to 'samplers[0]', not to federate 'learner'" in out, out
        # the sampler's own secret key, in a file that claims the learner
        _, keys, _ = read_key_file(Path(flags["samplers[0]"][1]))
        forged = tmp_path / "forged.key"
        write_key_file(forged, "learner", keys, read_key_file(Path(rti_flags[1]))[1])
        impostor = _cli("federate", *common, "--federate", "learner", "--key-file", str(forged), env=env)
        out, _ = impostor.communicate(timeout=60)
        assert impostor.returncode != 0, out
        assert "the connection's key was issued to 'samplers[0]', not to 'learner'" in out, out
    finally:
        rti.kill()
        rti.communicate(timeout=10)


def test_processes_a_member_table_change_withdraws_a_key(tmp_path: Path) -> None:
    """The RTI reads the member table again when it changes: a key replaced there (a slot
    given a new key) is refused, and the new one admitted."""
    names = ["learner", "samplers[0]", "samplers[1]"]
    _, flags = issue_key_files(tmp_path, names)
    table = tmp_path / "keys" / "members.json"
    from reactorfed.federation.process.member_keys import RtiCredentials

    creds = RtiCredentials(read_key_file(Path(flags["learner"][1]))[1], path=table)
    old = read_key_file(Path(flags["samplers[1]"][1]))[1]
    assert creds.admit(raw_key(old.public)) == "samplers[1]"
    members = {n: read_key_file(Path(flags[n][1]))[1] for n in names}
    _, fresh = issue(["samplers[1]"])
    write_member_table(table, {**members, "samplers[1]": fresh["samplers[1]"]})
    assert creds.admit(raw_key(old.public)) is None
    assert creds.admit(raw_key(fresh["samplers[1]"].public)) == "samplers[1]"


def test_processes_a_federate_waits_for_its_key_to_reach_the_rti(tmp_path: Path) -> None:
    """``reactorfed federate`` whose key the RTI's table does not hold yet connects again
    until it does (within its join timeout), and the federation runs to its end."""
    program = "tests/federation/elastic_programs.py:Main"
    names = ["learner", "samplers[0]", "samplers[1]"]
    rti_flags, flags = issue_key_files(tmp_path, names)
    table = Path(rti_flags[rti_flags.index("--member-keys") + 1])
    members = {n: read_key_file(Path(flags[n][1]))[1] for n in names}
    write_member_table(table, {n: k for n, k in members.items() if n != "samplers[1]"})
    rti, endpoint, env = _keyed_rti(tmp_path, program, [*rti_flags, "--metrics-port", "0"], "60s")
    status = f"http://127.0.0.1:{json.loads((tmp_path / 'ready.json').read_text())['status_port']}/status"
    procs: dict[str, subprocess.Popen[str]] = {}
    try:
        common = [program, "--federation-id", "keys", "--rti", endpoint, "--timeout", "100ms", "--fast",
                  "--join-timeout", "60s"]
        procs = {n: _cli("federate", *common, "--federate", n, *flags[n], env=env) for n in names}
        # samplers[1] is refused (however long its interpreter takes to start), and tries again
        wait_until(lambda: json.loads(urllib.request.urlopen(status, timeout=5).read())["handshakes_refused"] > 0,
                   timeout=60, what="the RTI to refuse samplers[1]'s key")
        assert procs["samplers[1]"].poll() is None, procs["samplers[1]"].communicate()[0]
        write_member_table(table, members)
        outs = {n: p.communicate(timeout=60)[0] for n, p in procs.items()}
        assert all(p.returncode == 0 for p in procs.values()), outs
        assert "does not admit its key yet" in outs["samplers[1]"], outs["samplers[1]"]
        rti_out, _ = rti.communicate(timeout=30)
        assert rti.returncode == 0, rti_out
    finally:
        for p in [rti, *procs.values()]:
            if p.poll() is None:
                p.kill()
                p.communicate(timeout=10)


def test_a_key_per_member_and_plain_text_exclude_each_other() -> None:
    from reactorfed.federation import FederateConfig, MemberCredentials, RtiConfig, RtiCredentials

    rti, keys = issue(["learner"])
    with pytest.raises(ValueError, match="exclude each other"):
        FederateConfig("f", b"", "tcp://127.0.0.1:1", insecure_plaintext_tcp=True,
                       credentials=MemberCredentials(keys["learner"], raw_key(rti.public)))
    with pytest.raises(ValueError, match="exclude each other"):
        RtiConfig("f", b"", insecure_plaintext_tcp=True, credentials=RtiCredentials(rti, _table(**keys)))
