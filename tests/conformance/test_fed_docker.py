"""Ports of LF's ``docker/`` programs: LF's tests of its Docker generation (a Dockerfile per
program or federate, a docker-compose file, an RTI image). The containers are LF's
deployment and have no counterpart here (reactorfed's images and its Kubernetes operator
are tested elsewhere); the programs inside them are ported as plain or federated
programs. The ``docker/federated/`` ones that import a ``federated/`` program's reactors
run with that program's port (see ``test_fed_count``, ``test_fed_multiport``,
``test_fed_struct`` and ``test_fed_stop``)."""

from __future__ import annotations

from typing import Any

import pytest

from reactorfed import (
    SHUTDOWN,
    STARTUP,
    Input,
    LogicalAction,
    Output,
    Reactor,
    Tag,
    Timer,
    ms,
    reaction,
    sec,
)
from tests.conformance.harness import lf_test, run, run_federated, run_local
from tests.conformance.test_fed_struct import _Hello

pytestmark = pytest.mark.timeout(60)

# -- DockerComposeConfig.lf ----------------------------------------------------------------------


class _Client(Reactor):
    server_message = Input(int)
    client_message = Output(int)

    def __init__(self, STP_offset: int = sec(2)) -> None:
        self.STP_offset = STP_offset
        self.started = False
        self.values: list[int] = []

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        self.started = True  # "Client Startup!"

    @reaction(triggers=[server_message], effects=[client_message])
    def answer(self, server_message: Any, client_message: Any) -> None:
        val = server_message.get() + 1
        self.values.append(val)
        if val == 49:
            self.request_stop()  # "client done"
        if val < 49:
            client_message.set(val)


class _Server(Reactor):
    server_message = Output(int)
    client_message = Input(int)

    def __init__(self, STP_offset: int = sec(2)) -> None:
        self.STP_offset = STP_offset
        self.values: list[int] = []
        self.done_at: Tag | None = None
        self.stopped_at: Tag | None = None

    @reaction(triggers=[STARTUP], effects=[server_message])
    def start(self, server_message: Any) -> None:
        server_message.set(0)  # "Server Startup!"

    @reaction(triggers=[client_message], effects=[server_message])
    def answer(self, client_message: Any, server_message: Any) -> None:
        val = client_message.get() + 1
        self.values.append(val)
        if val == 48:
            self.done_at = self.elapsed_tag()  # "server done"
            server_message.set(val)
            self.request_stop()
        if val < 48:
            server_message.set(val)

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        self.stopped_at = self.elapsed_tag()


class _DockerComposeConfig(Reactor):
    def __init__(self, STP_offset: int = sec(2)) -> None:
        self.client = _Client()
        self.server = _Server()
        self.connect(self.server.server_message, self.client.server_message, after=ms(100))
        self.connect(self.client.client_message, self.server.client_message)


def _check_compose(server: _Server, client: _Client) -> None:
    # The server sends 2k at (100k ms); the client answers 2k + 1 at once, 100 ms later.
    assert client.started
    assert client.values == list(range(1, 48, 2)) and server.values == list(range(2, 49, 2))
    assert server.done_at == Tag(ms(2400), 0) and server.stopped_at == Tag(ms(2400), 1)


@lf_test("docker/DockerComposeConfig.lf", federated=True)
def test_docker_compose_config() -> None:
    """LF's test of a docker-compose override file (shared memory sizes, volumes) for its
    federates' containers. The program, a client and a server counting up in turn (100 ms
    from server to client) until the server reaches 48 and stops, is ported, and runs
    decentralized as in LF. Its reactors' parameters named ``STP_offset`` (2 s, used by
    no handler) were LF's old way of setting a safe-to-advance offset; LF now reads
    ``@maxwait``, so its federates have the default, forever: each waits for the other's
    word, and the result is centralized coordination's (also checked). LF's program only
    prints; the test checks the values and the stop tag."""
    main = _DockerComposeConfig()
    run_local(main)
    _check_compose(main.server, main.client)
    for coordination in ("decentralized", "centralized"):
        progs = run_federated(_DockerComposeConfig, coordination=coordination)
        _check_compose(progs["server"].server, progs["client"].client)  # type: ignore[attr-defined]


# -- FilesPropertyContainerized.lf -----------------------------------------------------------------


class _FilesProperty(Reactor):
    t = Timer(ms(1))

    def __init__(self) -> None:
        # The preamble imports hello.py, which LF's ``files`` property puts beside the
        # program (in its container); here it is this module's import of _Hello.
        self.hello = _Hello
        self.passed = False
        self.checked = False

    @reaction(triggers=[t])
    def tick(self) -> None:
        self.passed = True

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        assert self.passed, "Failed to import file listed in files target property"
        self.checked = True


@lf_test("docker/FilesPropertyContainerized.lf")
def test_files_property_containerized() -> None:
    """A main reactor (one process) whose file listed in ``files`` must be importable inside
    its container: the timer at 1 ms passes, unless the import stopped the program."""
    main = _FilesProperty()
    run(main)
    assert main.checked


# -- HelloWorldContainerized.lf (HelloWorld.lf's HelloWorld2) ---------------------------------------


class _HelloWorld2(Reactor):
    def __init__(self) -> None:
        self.success = False
        self.checked = False

    @reaction(triggers=[STARTUP])
    def start(self) -> None:
        self.success = True  # "Hello World."

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        assert self.success, "ERROR: startup reaction not executed."
        self.checked = True


class _HelloWorldContainerized(Reactor):
    def __init__(self) -> None:
        self.a = _HelloWorld2()


@lf_test("docker/HelloWorldContainerized.lf")
def test_hello_world_containerized() -> None:
    """HelloWorld.lf's HelloWorld2 in a container: a main reactor, one process."""
    main = _HelloWorldContainerized()
    run(main)
    assert main.a.checked


# -- PingPongContainerized.lf (PingPong.lf's Ping and Pong) ----------------------------------------


class _Ping(Reactor):
    receive = Input(int)
    send = Output(int)
    serve = LogicalAction()

    def __init__(self, count: int = 10) -> None:
        self.pings_left = count

    @reaction(triggers=[STARTUP, serve], effects=[send])
    def ping(self, send: Any) -> None:
        send.set(self.pings_left)
        self.pings_left -= 1

    @reaction(triggers=[receive], effects=[serve])
    def again(self, receive: Any, serve: Any) -> None:
        if self.pings_left > 0:
            serve.schedule(delay=0)
        else:
            self.request_stop()


class _Pong(Reactor):
    receive = Input(int)
    send = Output(int)

    def __init__(self, expected: int = 10) -> None:
        self.expected = expected
        self.count = 0
        self.checked = False

    @reaction(triggers=[receive], effects=[send])
    def pong(self, receive: Any, send: Any) -> None:
        self.count += 1
        send.set(receive.get())

    @reaction(triggers=[SHUTDOWN])
    def bye(self) -> None:
        assert self.count == self.expected, (
            f"ERROR: Pong expected to receive {self.expected} inputs, but it received {self.count}."
        )
        self.checked = True


class _PingPongContainerized(Reactor):
    def __init__(self) -> None:
        self.ping = _Ping()
        self.pong = _Pong()
        self.connect(self.ping.send, self.pong.receive)
        self.connect(self.pong.send, self.ping.receive)


@lf_test("docker/PingPongContainerized.lf")
def test_ping_pong_containerized() -> None:
    """PingPong.lf's Ping and Pong in a container (a main reactor, ``fast``): ten pings in
    superdense time, each answered at the same tag."""
    main = _PingPongContainerized()
    run(main, fast=True)
    assert main.pong.checked and main.pong.count == 10
