"""Attacks on a federation's links, on real processes: a man in the middle (:mod:`.mitm`,
a TCP proxy of the test's own) on every TCP link of ``reactorfed rti`` and two
``reactorfed federate`` processes (src -> sink, a text and a byte array carrying a marker
every 20 ms).

* It sees no plaintext: the marker, the federation's id, never appear in what it forwards
  (and with the opt-out, they do: the test can fail).
* Altered or injected bytes: the receiver refuses them, and the federation ends, every
  process non-zero, with an error naming the link.
* Recorded traffic replayed on a new connection is refused; the run goes on unharmed.
* A federate with the wrong secret, one of another federation and a stranger speaking
  plain ZeroMQ are refused with a reason; the run goes on unharmed.
"""

from __future__ import annotations

import contextlib
import re
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

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


@pytest.mark.parametrize("plaintext", [False, True], ids=["curve", "opted-out"])
def test_a_man_in_the_middle_sees_no_plaintext(federation: Callable[..., TappedFederation],
                                               reference: Callable[[str], str], plaintext: bool) -> None:
    env = {"REACTORFED_INSECURE_PLAINTEXT_TCP": "1"} if plaintext else {}
    fed = federation(args=["--timeout", "1s"], env=env)
    _completed(fed, reference("1s"))
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


def test_recorded_traffic_replayed_is_refused(federation: Callable[..., TappedFederation],
                                              reference: Callable[[str], str]) -> None:
    fed = federation(args=["--timeout", "3s"])
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
    _completed(fed, reference("3s"))


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
