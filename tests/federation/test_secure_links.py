"""Attacks on a federation's links, on real processes: a man in the middle (:mod:`.mitm`,
a TCP proxy of the test's own) on every TCP link of ``reactorfed rti`` and two
``reactorfed federate`` processes (src -> sink, a text and a byte array carrying a marker
every 20 ms).

* It sees no plaintext: the marker, the federation's id, never appear in what it forwards
  (and with the opt-out, they do: the test can fail).
  The opt-out, by the flag or the environment variable, is said in a warning by every
  process.
* Altered or injected bytes on a federate's data link or its link to the RTI: the receiver
  refuses them, and the federation ends, every process non-zero, with an error naming the
  link and the refusal; altered on their way back (to the client of a link), the
  federation ends too, naming the federate or link whose connection closed.
* Recorded traffic replayed on a new connection is refused; the run goes on unharmed.
* The RTI's challenge cannot be relayed: a man in the middle posing as the RTI to a
  federate and as that federate to the RTI never gets a challenge to pass on.
* A federate with the wrong secret, one of another federation and a stranger speaking
  plain ZeroMQ are refused with a reason; the run goes on unharmed.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq

from reactorfed.federation.io import transport
from reactorfed.federation.io.curve import CurveKeys, federation_keys
from reactorfed.federation.io.transport import Monitor, Server
from reactorfed.federation.wire import protocol as P

from .mitm import REPO, TappedFederation, replay
from .secure_programs import MARKER

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

PROGRAM = f"{Path(__file__).resolve().parent / 'secure_programs.py'}:Marked"
NAMES = ["src", "sink"]
#: bytes of a data connection before the payloads: greeting, CurveZMQ handshake, AUTH
PAST_HANDSHAKE = 4096


@pytest.fixture(scope="module")
def reference() -> Callable[[str], str]:
    """The sink's last line in one process, per timeout."""
    cache: dict[str, str] = {}

    def ref(timeout: str) -> str:
        if timeout not in cache:
            out = subprocess.run([sys.executable, "-m", "reactorfed", "run", PROGRAM, "--fast", "--timeout", timeout],
                                 capture_output=True, text=True, timeout=60, cwd=REPO)  # fmt: skip
            assert out.returncode == 0, out.stdout + out.stderr
            cache[timeout] = next(line for line in out.stdout.splitlines() if line.startswith("sink: "))
        return cache[timeout]

    return ref


@pytest.fixture
def federation() -> Iterator[Callable[..., TappedFederation]]:
    started: list[TappedFederation] = []

    def start(**kw: Any) -> TappedFederation:
        fed = TappedFederation(PROGRAM, NAMES, **kw)
        started.append(fed)
        return fed

    yield start
    for fed in started:
        fed.close()


def _completed(fed: TappedFederation, expected: str, timeout: float = 60) -> None:
    codes = fed.end(timeout, ["rti", *fed.names])
    assert all(c == 0 for c in codes.values()), (codes, fed.output)
    assert expected in fed.out_of("sink"), fed.output


PLAINTEXT_WARNING = "TCP links in PLAIN TEXT (--insecure-plaintext-tcp or REACTORFED_INSECURE_PLAINTEXT_TCP=1)"


@pytest.mark.parametrize("opt_out", [None, "env", "flag"], ids=["curve", "opted-out-by-env", "opted-out-by-flag"])
def test_a_man_in_the_middle_sees_no_plaintext(federation: Callable[..., TappedFederation],
                                               reference: Callable[[str], str], opt_out: str | None) -> None:
    plaintext = opt_out is not None
    env = {"REACTORFED_INSECURE_PLAINTEXT_TCP": "1"} if opt_out == "env" else {}
    flag = ["--insecure-plaintext-tcp"] if opt_out == "flag" else []
    fed = federation(args=["--timeout", "1s", *flag], env=env)
    _completed(fed, reference("1s"))
    for who in ("rti", *fed.names):  # each process says how its links run
        assert (PLAINTEXT_WARNING in fed.out_of(who)) is plaintext, (who, fed.output)
    seen = {name: tap.captured() for name, tap in fed.taps.items()}
    data = seen["data-sink"]
    assert len(data) > 51 * len(MARKER) * 40, "the payloads crossed the tap"
    for name, raw in seen.items():
        assert raw or name == "data-src", f"nothing crossed {name}"  # (src has no upstream)
        if not plaintext:
            assert MARKER.encode() not in raw, name
            assert fed.fid.encode() not in raw, name  # not even who talks to whom
            assert fed.secret.encode() not in raw, name
    if plaintext:  # the opt-out's meaning, and proof that the test sees what crosses
        assert MARKER.encode() in data and fed.fid.encode() in seen["rti-sink"]
        assert "PLAIN TEXT" in fed.out_of("rti")
    else:
        assert "CurveZMQ" in fed.out_of("rti")


def _launched(plaintext: bool, env: dict[str, str], reference: Callable[[str], str]) -> str:
    """``reactorfed launch`` of the marked program for 1 s, every link TCP (``plaintext``:
    with ``--insecure-plaintext-tcp``), this environment and ``env``: its output, once it
    ended well with the one-process output."""
    env = {**{k: v for k, v in os.environ.items() if k != "REACTORFED_INSECURE_PLAINTEXT_TCP"}, **env}
    out = subprocess.run([sys.executable, "-m", "reactorfed", "launch", PROGRAM, "--fast", "--timeout", "1s",
                          "--no-progress", "--no-unix-sockets", "--no-shm",
                          *(["--insecure-plaintext-tcp"] if plaintext else [])],
                         capture_output=True, text=True, timeout=90, cwd=REPO, env=env)  # fmt: skip
    text = out.stdout + out.stderr
    assert out.returncode == 0, text
    assert f"[sink] {reference('1s')}" in text, text
    return text


@pytest.mark.parametrize("flag", [False, True], ids=["default", "opted-out"])
def test_launch_passes_the_opt_out_on_and_every_process_says_so(reference: Callable[[str], str],
                                                                flag: bool) -> None:
    """``reactorfed launch --insecure-plaintext-tcp``: the RTI and every federate run their
    TCP links (all of them here) in plain text and each says so in a warning; the output is
    the one-process output either way. Without the flag: CurveZMQ, and no warning. Either
    way the RTI listens on the loopback only."""
    text = _launched(flag, {}, reference)
    for who in ("rti", *NAMES):
        warned = [line for line in text.splitlines() if line.startswith(f"[{who}]") and PLAINTEXT_WARNING in line]
        assert len(warned) == (1 if flag else 0), (who, text)
        assert all(" WARNING " in line for line in warned), warned
    assert ("(PLAIN TEXT: trusted single host only)" if flag else "(CurveZMQ)") in text, text
    assert "listening on tcp://127.0.0.1:" in text, text  # launch's RTI: the loopback only


@pytest.mark.parametrize("flag", [False, True], ids=["keys", "opted-out"])
def test_launch_passes_on_no_credential_it_inherits(reference: Callable[[str], str], flag: bool,
                                                    tmp_path: Path) -> None:
    """A shell that holds another federation's credentials (a key file, a member table, a
    shared secret) launches a federation of its own: ``reactorfed launch`` issues its own
    and gives its processes none of those, with keys and in plain text alike."""
    other = tmp_path / "other.key"
    other.write_text(json.dumps({"member": "sink", "secret_key": "x" * 40, "rti_public_key": "y" * 40}))
    _launched(flag, {"REACTORFED_KEY_FILE": str(other), "REACTORFED_MEMBER_KEYS": str(tmp_path / "members.json"),
                     "REACTORFED_SECRET": "another-federation's-secret"}, reference)


class _OnTheWire:
    """A man in the middle who follows ZeroMQ's framing (ZMTP 3: a 64-byte greeting, then
    frames of a flags byte, a 1- or 8-byte size and a body; only the bodies are encrypted)
    in the first connection's stream, and past the handshake either flips one bit in the
    middle of a frame's body or inserts a frame of its own between two frames: a MESSAGE
    command claiming a nonce far ahead, with a made-up box."""

    def __init__(self, action: str, skip_frames: int = 8) -> None:
        self.action = action
        self.skip = skip_frames  # frames left before acting: the handshake's and a few payloads'
        self.stream = bytearray()  # what the first connection sent so far
        self.pos = 64  # where the next frame starts, in the stream
        self.flip_at: int | None = None
        self.done = False

    def __call__(self, conn: int, offset: int, chunk: bytes) -> bytes:
        if conn != 0 or self.done:
            return chunk
        self.stream += chunk
        end = len(self.stream)
        out = bytearray(chunk)
        while not self.done:
            if self.flip_at is not None:
                if self.flip_at < end:
                    out[self.flip_at - offset] ^= 0x01
                    self.done = True
                break
            head = 9 if self.pos < end and self.stream[self.pos] & 0x02 else 2
            if self.pos + head > end:
                break  # the next frame's header has not all come yet
            raw = self.stream[self.pos + 1:self.pos + head]
            size = int.from_bytes(raw, "big")
            if self.skip > 0 or (self.action == "inject" and self.pos < offset):
                self.skip -= 1  # (a boundary already forwarded: the next one)
                self.pos += head + size
                continue
            if self.action == "flip":
                self.flip_at = self.pos + head + size // 2
                continue
            body = b"\x07MESSAGE" + (1 << 40).to_bytes(8, "big") + bytes(40)
            out[self.pos - offset:self.pos - offset] = bytes([0x04, len(body)]) + body
            self.done = True
        return bytes(out)


@pytest.mark.parametrize("action", ["flip", "inject"], ids=["altered", "injected"])
def test_altered_or_injected_bytes_end_the_federation_naming_the_link(
        federation: Callable[..., TappedFederation], action: str) -> None:
    mangler = _OnTheWire(action)
    fed = federation(args=["--timeout", "20s"], mangle={"data-sink": mangler})
    codes = fed.end(30)
    assert mangler.done, "the stream never reached the point to act"
    assert all(c != 0 for c in codes.values()), (codes, fed.output)
    sink = fed.out_of("sink")
    assert "refused a connection to the data port" in sink, fed.output
    assert "the data link from src to sink closed before src finished" in sink, fed.output
    rti = fed.out_of("rti")
    assert "federation failed: federate sink failed: LinkDownError: the data link from src to sink" in rti, fed.output
    assert "this port refused a connection then" in rti, fed.output
    assert "the federation was aborted" in fed.out_of("src"), fed.output
    print(f"\n{action}: the sink said: "
          f"{next(line for line in sink.splitlines() if 'refused a connection' in line)}")


@pytest.mark.parametrize("action", ["flip", "inject"], ids=["altered", "injected"])
def test_altered_or_injected_bytes_to_the_rti_end_the_federation_naming_the_refusal(
        federation: Callable[..., TappedFederation], action: str) -> None:
    mangler = _OnTheWire(action)
    fed = federation(args=["--timeout", "20s"], mangle={"rti-sink": mangler})
    codes = fed.end(40)
    assert mangler.done, "the stream never reached the point to act"
    assert all(c != 0 for c in codes.values()), (codes, fed.output)
    rti = fed.out_of("rti")
    assert "refused a connection to the RTI: its bytes do not open with this federation's key" in rti, fed.output
    verdict = ("federate sink stopped responding (its connection to the RTI closed: the process ended, or answered "
               "no heartbeat for 3000 ms); the RTI refused a connection then: its bytes do not open with this "
               "federation's key")
    assert f"federation failed: {verdict}" in rti, fed.output
    for name in fed.names:
        out = fed.out_of(name)
        if name == "sink":
            # The sink's own connection is the broken one: it reads the RTI's ABORT if its
            # reconnection carried it before the RTI closed, else it says it lost the RTI.
            assert (f"the federation was aborted: {verdict}" in out
                    or "lost the RTI: the connection to tcp://127.0.0.1:" in out), fed.output
        else:
            assert f"the federation was aborted: {verdict}" in out, fed.output


@pytest.mark.parametrize("tap", ["rti-sink", "data-sink"])
def test_bytes_altered_on_their_way_back_end_the_federation(federation: Callable[..., TappedFederation],
                                                           tap: str) -> None:
    """Towards a link's client: the RTI's messages to the sink, the sink's data port's
    (ZeroMQ's heartbeats) to src. The client drops the connection (libzmq says nothing
    there), and the federation ends, every process non-zero, naming what closed."""
    mangler = _OnTheWire("flip")
    fed = federation(args=["--timeout", "20s"], mangle_back={tap: mangler})
    codes = fed.end(40)
    assert mangler.done, "the stream never reached the point to act"
    assert all(c != 0 for c in codes.values()), (codes, fed.output)
    # (the data link: whichever end sees it first says so; src, held by its lead window
    # within a second of the sink, is still sending when its connection drops)
    verdicts = (["federate sink stopped responding (its connection to the RTI closed"] if tap == "rti-sink" else
                ["federate sink failed: LinkDownError: the data link from src to sink closed before src finished",
                 "federate src failed: TransportError: tcp://"])  # fmt: skip
    rti_out = fed.out_of("rti")
    assert any(f"federation failed: {v}" in rti_out for v in verdicts), fed.output
    if tap == "data-sink" and "src failed" in rti_out:
        assert "(the connection was dropped)" in rti_out, rti_out
    if tap == "rti-sink":
        # The sink's main thread, waiting for grants on the broken connection, wakes to the
        # heartbeat thread's news and says it: the RTI's ABORT, or (when the RTI closed the
        # heartbeat's connection before its ABORT was read) the lost connection. It was not
        # left for the heartbeat thread's hard exit (exit 3, after three liveness periods).
        out = fed.out_of("sink")
        assert codes["sink"] == 1 and "did not stop in time" not in out, (codes, out)
        assert ("the federation was aborted: federate sink stopped responding" in out
                or "lost the RTI: the connection to tcp://127.0.0.1:" in out), out


def test_the_rtis_challenge_cannot_be_relayed(federation: Callable[..., TappedFederation],
                                              reference: Callable[[str], str]) -> None:
    """The relay attack on a challenge alone: a man in the middle at the address a federate
    was given for its RTI poses as the RTI to it and as it to the RTI, to pass the RTI's
    challenge to the federate and the federate's proof back. It holds a keypair of its own
    and knows the federation's public key (the worst case), not its secret key. It gets
    nothing to relay: the RTI refuses its key before reading a byte, and the federate
    refuses a server without the federation's key, saying why; the run goes on unharmed."""
    fed = federation(args=["--timeout", "6s"])
    fed.wait_for(r"received 10", "sink", timeout=30)
    public = federation_keys(fed.secret.encode(), fed.fid).public
    pk, sk = zmq.curve_keypair()
    # towards the federate: a server with the attacker's keys, where the federate looks for its RTI
    down = Server("tcp://127.0.0.1:0", curve=CurveKeys(pk, sk, "attacker"))
    down_watch = Monitor(down)
    # towards the RTI: a client presenting the attacker's key, expecting the RTI's
    sock = transport.context().socket(zmq.DEALER)
    sock.setsockopt(zmq.CURVE_SERVERKEY, public)
    sock.setsockopt(zmq.CURVE_PUBLICKEY, pk)
    sock.setsockopt(zmq.CURVE_SECRETKEY, sk)
    up = transport._Socket(sock)
    up_watch = Monitor(up)
    sock.connect(f"tcp://127.0.0.1:{fed.rti_port}")
    relayed: list[bytes] = []
    try:
        # the attacker asks for the challenge in the sink's name ...
        sock.send(P.pack(P.HELLO, P.PROTOCOL_VERSION, fed.fid, "sink", "digest", "tcp://127.0.0.1:9", b"n" * 16))
        # ... and a real federate process (the sink's program, the federation's secret) comes to it
        argv = fed.federate_argv("sink", int(down.endpoint.rsplit(":", 1)[1]), fed.taps["data-sink"].port)
        argv[argv.index("--data-port") + 1] = "0"
        victim = fed.spawn("victim", argv)
        deadline = time.monotonic() + 60
        while victim.poll() is None:  # relay whatever either side lets through
            assert time.monotonic() < deadline, fed.output
            with contextlib.suppress(zmq.Again):
                relayed.append(sock.recv(zmq.NOBLOCK))
            if (got := down.recv()) is not None:
                relayed += [bytes(f) for f in got[1]]
            time.sleep(0.01)
        up_refused, down_refused = up_watch.refused(), down_watch.refused()
    finally:
        for m in (up_watch, down_watch):
            m.close()
        up.close()
        down.close()
    assert relayed == [], "the man in the middle got something to relay"
    assert victim.returncode != 0
    said = fed.out_of("victim")
    assert re.search(r"do not share a secret: the encrypted handshake failed \d+ times", said), said
    assert any("its key is not this federation's" in r for r in up_refused), up_refused
    assert any("do not open" in r or "closed" in r for r in down_refused), down_refused
    fed.wait_for(r"refused a connection to the RTI: its key is not this federation's", "rti")
    print(f"\nthe RTI to the man in the middle: {up_refused[0]}; his server to the federate: {down_refused[0]}; "
          f"the federate: {next(line for line in said.splitlines() if 'do not share a secret' in line)}")
    _completed(fed, reference("6s"))


def test_recorded_traffic_replayed_is_refused(federation: Callable[..., TappedFederation],
                                              reference: Callable[[str], str]) -> None:
    # (6 s: the replays and their refusals must come while the federation still runs, on a loaded machine too)
    fed = federation(args=["--timeout", "6s"])
    fed.wait_for(r"received 20", "sink", timeout=30)
    recorded = {"data": bytes(fed.taps["data-sink"].sent[0]), "rti": bytes(fed.taps["rti-sink"].sent[0])}
    assert len(recorded["data"]) > PAST_HANDSHAKE
    # the whole recorded stream, to the real ports (behind the taps), on new connections
    back_data = replay(recorded["data"], fed.data_ports["sink"])
    refused = fed.wait_for(r"refused a connection to the data port: ", "sink", timeout=10)
    time.sleep(1.1)  # the RTI's refusals are logged at most once a second
    back_rti = replay(recorded["rti"], fed.rti_port)
    refused += "\n" + fed.wait_for(r"refused a connection to the RTI: ", "rti", timeout=10)
    print(f"\nreplays refused:\n{refused}")
    for back in (back_data, back_rti):
        assert MARKER.encode() not in back and len(back) < 512, "only the server's part of a handshake"
    _completed(fed, reference("6s"))


def test_a_wrong_key_and_a_stranger_are_refused_with_a_reason(federation: Callable[..., TappedFederation],
                                                              reference: Callable[[str], str]) -> None:
    fed = federation(args=["--timeout", "6s"])
    fed.wait_for(r"received 10", "sink", timeout=30)
    for who, env, fid in (("wrong-secret", {"REACTORFED_SECRET": "not-the-federations-secret"}, fed.fid),
                          ("other-federation", {}, "another-federation")):  # fmt: skip
        argv = fed.federate_argv("sink", fed.rti_port, fed.taps["data-sink"].port)
        argv[argv.index(fed.fid)] = fid
        argv[argv.index("--data-port") + 1] = "0"
        fed.spawn(who, argv, {**fed.env, **env})
        assert fed.end(30, [who])[who] != 0, fed.output
        said = fed.out_of(who)
        assert re.search(r"do not share a secret: the encrypted handshake failed \d+ times", said), said
    # (the RTI logs one refusal a second: the first of the intruders' may be their probe's)
    fed.wait_for(r"refused a connection to the RTI: (its bytes do not open with this federation's key|the connection "
                 r"closed)", "rti")
    time.sleep(1.1)  # one refusal logged a second
    # A plaintext ZeroMQ peer, as raw bytes: its ZMTP greeting offers the NULL mechanism.
    # (A pyzmq DEALER would judge the mismatch too and could close first, and the RTI
    # would then see only a closed connection.) It gets the server's greeting and nothing
    # more: no byte of the federation's protocol reaches a stranger.
    null_greeting = b"\xff" + bytes(8) + b"\x7f" + b"\x03\x00" + b"NULL".ljust(20, b"\0") + b"\0" + bytes(31)
    with socket.create_connection(("127.0.0.1", fed.rti_port), timeout=10) as stranger:
        stranger.sendall(null_greeting)
        fed.wait_for(r"refused a connection to the RTI: it does not speak CurveZMQ", "rti", timeout=10)
        got = b""
        with contextlib.suppress(OSError):  # (closed by the server: a reset is fine too)
            while chunk := stranger.recv(4096):
                got += chunk
        # (libzmq sends its greeting in parts: the signature first, the rest once it read the peer's)
        assert len(got) <= 64 and got[:1] in (b"", b"\xff") and (len(got) < 17 or got[12:17] == b"CURVE"), got
    _completed(fed, reference("6s"))
