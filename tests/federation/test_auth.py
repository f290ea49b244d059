"""Membership: strangers, duplicates and impostors are rejected with a reason, and the
real federation goes on to the same result as one process. The raw clients here hold the
federation's CurveZMQ keys (insiders at the transport, impostors at the protocol); the
ones that do not are refused by the transport itself, with a reason, before the RTI reads
a byte of theirs."""

from __future__ import annotations

import os
from typing import Any

import pytest
import zmq

from reactorfed import sec
from reactorfed.federation import FederationError
from reactorfed.federation.io.curve import CurveKeys, federation_keys, secure_client
from reactorfed.federation.wire import protocol as P

from .harness import Federation, reference, wait_until
from .programs import OtherPipeline, Pipeline, Spy

pytestmark = pytest.mark.timeout(60)


def keys(fed: Federation) -> CurveKeys:
    return federation_keys(fed.secret, fed.fid)


def dealer(endpoint: str, curve: CurveKeys | None = None) -> zmq.Socket[Any]:
    """A raw client; with ``curve``, holding those keys (else: plain text)."""
    s = zmq.Context.instance().socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    s.setsockopt(zmq.RCVTIMEO, 5000)
    if curve is not None:
        secure_client(s, curve)
    s.connect(endpoint)
    return s


def hello(fed: Federation, name: str, nonce: bytes = b"n" * 16, **over: Any) -> bytes:
    fields = {"version": P.PROTOCOL_VERSION, "fid": fed.fid, "name": name, "digest": fed.layout.digest,
              "endpoint": "tcp://127.0.0.1:1", **over}
    return P.pack(P.HELLO, *fields.values(), nonce)


def test_intruders_are_rejected_with_a_reason_and_the_federation_goes_on() -> None:
    expected = reference(Pipeline, timeout=sec(1)).sink.trace  # type: ignore[attr-defined]
    fed = Federation(Pipeline)
    fed.start("src", timeout=sec(1))
    wait_until(lambda: fed.joined("src"), what="src to join")
    intruders: dict[str, tuple[dict[str, Any], str]] = {
        "wrong secret": ({"name": "relay", "secret": os.urandom(16)}, "do not share a secret"),
        "duplicate": ({"name": "src"}, "duplicate federate 'src': it has already joined"),
        "unknown": ({"name": "spy", "factory": Spy}, "no federate 'spy' in this federation"),
        # (another federation id: other keys, refused by the transport)
        "wrong federation": ({"name": "relay", "federation_id": "someone-else"}, "do not share a secret"),
        "other program": ({"name": "relay", "factory": OtherPipeline}, "federate 'relay' runs a different program"),
    }
    for key, (kw, _) in intruders.items():
        fed.start(kw.pop("name"), key=key, timeout=sec(1), join_timeout_ns=10 * 10**9, **kw)
    wait_until(lambda: all(k in fed.errors for k in intruders), what="every intruder to be turned away")
    for key, (_, reason) in intruders.items():
        err = fed.errors[key]
        assert isinstance(err, FederationError), (key, err)
        assert reason in str(err), (key, str(err))
    assert fed.server.phase == "joining" and fed.joined("src") and not fed.joined("relay")

    # a raw client with the wrong secret: the RTI itself refuses its proof
    s = dealer(fed.endpoint, keys(fed))
    s.send(hello(fed, "relay"))
    msg = P.parse(s.recv())
    assert isinstance(msg, P.Challenge)
    s.send(P.pack(P.PROOF, os.urandom(32)))
    msg = P.parse(s.recv())
    assert isinstance(msg, P.Reject) and "failed authentication" in msg.reason
    s.close()

    fed.start("relay", timeout=sec(1))
    fed.start("sink", timeout=sec(1))
    fed.wait(30)
    assert not {k: e for k, e in fed.errors.items() if k not in intruders}
    assert fed.rti_error is None and fed.summary is not None and fed.summary.federates == 3
    # the RTI refused the others' messages; the transport, the two without the keys
    assert fed.summary.rejected >= len(intruders) - 2
    assert fed.server.status()["handshakes_refused"] >= 2
    assert fed.programs["sink"].sink.trace == expected  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("over", "reason"),
    [
        ({"version": P.PROTOCOL_VERSION + 1}, "protocol version"),
        ({"endpoint": "ipc:///tmp/x"}, "bad data endpoint"),
        ({"digest": "0" * 32}, "different program"),
        ({"name": ""}, "no federate ''"),
    ],
)
def test_handshake_refusals(over: dict[str, Any], reason: str) -> None:
    fed = Federation(Pipeline, join_timeout_ns=10**9)
    try:
        s = dealer(fed.endpoint, keys(fed))
        s.send(hello(fed, over.pop("name", "src"), **over))
        msg = P.parse(s.recv())
        assert isinstance(msg, P.Reject) and reason in msg.reason
        s.close()
    finally:
        fed.wait(10)
    # nobody joined: the RTI gives up at its join timeout, naming who is missing
    assert isinstance(fed.rti_error, FederationError)
    assert "did not join" in str(fed.rti_error) and "src, relay, sink" in str(fed.rti_error)


def test_a_federate_that_joins_after_the_start_is_rejected() -> None:
    fed = Federation(Pipeline)
    fed.start_all(fast=False, timeout=sec(2))
    wait_until(fed.running, what="the federation to start")
    fed.start("relay", key="late", timeout=sec(1))
    wait_until(lambda: "late" in fed.errors, what="the late federate to be rejected")
    assert "duplicate federate 'relay'" in str(fed.errors["late"])
    s = dealer(fed.endpoint, keys(fed))
    s.send(hello(fed, "sink"))
    msg = P.parse(s.recv())
    assert isinstance(msg, P.Reject) and "already joined" in msg.reason
    s.close()
    fed.wait(30)
    assert set(fed.errors) == {"late"} and fed.summary is not None and fed.summary.federates == 3


@pytest.mark.parametrize("who", ["plaintext", "another federation's keys"])
def test_strangers_without_the_key_never_reach_the_rti(who: str) -> None:
    """A well-formed HELLO, from a client without this federation's key: refused by the
    transport (the RTI's log says why), never read by the RTI, never answered."""
    fed = Federation(Pipeline, join_timeout_ns=10 * 10**9)
    try:
        s = dealer(fed.endpoint, None if who == "plaintext" else federation_keys(os.urandom(16), fed.fid))
        s.setsockopt(zmq.RCVTIMEO, 1000)
        s.send(hello(fed, "src"))
        wait_until(lambda: fed.server.status()["handshakes_refused"] >= 1, what="the refusal")
        with pytest.raises(zmq.Again):
            s.recv()  # no challenge, no reject: nothing at all
        s.close()
        assert fed.server.messages == 0 and not fed.server.admission.pending
        fed.start_all(timeout=sec(1))
        fed.wait(30)
        assert fed.rti_error is None and not fed.errors and fed.summary is not None
    finally:
        fed.wait(10)
