"""The ``rti``, ``federate`` and ``launch`` subcommands of ``reactorfed``."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..federation.process.defaults import (
    DEFAULT_ADVANCE_MESSAGE_INTERVAL_NS,
    DEFAULT_HEARTBEAT_TIMEOUT_NS,
    DEFAULT_LEAD_WINDOW_NS,
    KEY_FILE_ENV,
    MEMBER_KEYS_ENV,
    MIN_HEARTBEAT_TIMEOUT_NS,
    SECRET_ENV,
)
from ..federation.process.priority import DEFAULT_REACTION_NICE, REACTION_POLICIES
from ..time.clock import SystemClock
from .loader import ProgramError, add_program_args, load_program, parse_params
from .options import (
    add_clock_sync_args,
    add_execution_args,
    add_logging_args,
    add_metrics_args,
    add_observability_args,
    clock_sync_from_args,
    duration,
    forwarded,
    lead_window,
    logdir_from_args,
    port,
    print_summary,
    stop_on_interrupt,
    threads_from_args,
    tracer_from_args,
)

__all__ = ["add_federate", "add_launch", "add_rti"]

log = logging.getLogger("reactorfed.cli")

_RAW = argparse.RawDescriptionHelpFormatter
#: the argument group of the RTI's flags for elastic banks (forwarded by ``launch`` to its RTI only)
MEMBERSHIP = "membership"

RTI_DESCRIPTION = """\
Serve as the RTI (run-time infrastructure) of a federated program: accept
exactly the federates the program declares (the main reactor's children, each
bank member on its own), each only with the key issued to it, fix a
common start time, grant tags, agree on stop tags, and watch heartbeats. The
RTI carries no payloads: federates send those to each other.

The federation is PROGRAM's, or the one --layout FILE describes (written by
`reactorfed layout PROGRAM -o FILE`): then the RTI imports neither the program
nor its libraries. `reactorfed launch` starts its RTI so.

A key per member: --key-file (the RTI's own key) and --member-keys (every
member's public key; read again when it changes: a key removed or replaced is
refused from then on). Without them, one key per federation, derived from the
shared secret ($REACTORFED_SECRET or --secret-file).
"""

FEDERATE_DESCRIPTION = """\
Run one federate of a federated program and join its RTI. The same program
file runs in one process (reactorfed run) or federated, unchanged.

A key per member: --key-file (this federate's own key and the RTI's public
key). Without it, one key per federation, derived from the shared secret
($REACTORFED_SECRET or --secret-file).
"""

LAUNCH_DESCRIPTION = """\
Run a program federated on this machine: start an RTI and one process per
federate (the main reactor's children; each bank member on its own), print
their output prefixed with their name and a progress line, and exit non-zero
naming the process that failed if any does. A fresh keypair is issued to the
RTI and to each federate, each in a file of its own that only it is given.
Every process gets --threads torch threads (default 1), however many cores
the machine has: a seed gives the same weights on any machine.
"""

EXAMPLES = """\
examples:
  reactorfed launch examples/pipeline.py:Main --fast --timeout 1s
  REACTORFED_SECRET=s3cret reactorfed rti examples/pipeline.py:Main --federation-id demo --port 15045
  reactorfed layout examples/pipeline.py:Main -o pipeline.json   # (or the RTI on the layout alone:)
  REACTORFED_SECRET=s3cret reactorfed rti --layout pipeline.json --federation-id demo --port 15045
  REACTORFED_SECRET=s3cret reactorfed federate examples/pipeline.py:Main --federate sink \\
      --federation-id demo --rti tcp://rti.example:15045 --advertise-host $POD_IP
"""


def _heartbeat_timeout(text: str) -> int:
    v = duration(text)
    if v < MIN_HEARTBEAT_TIMEOUT_NS:
        raise argparse.ArgumentTypeError(f"must be at least {MIN_HEARTBEAT_TIMEOUT_NS // 1_000_000_000}s (a loaded "
                                         "machine delays the heartbeats' answers by a good fraction of a second)")
    return v


def _at_least(least: str) -> Callable[[str], int]:
    """A duration flag's type that refuses less than ``least`` (as a user writes it)."""
    floor = duration(least)

    def at_least(text: str) -> int:
        v = duration(text)
        if v < floor:
            raise argparse.ArgumentTypeError(f"must be at least {least}")
        return v

    return at_least


def _common(p: argparse.ArgumentParser, *, launch: bool = False, rti: bool = False) -> None:
    add_program_args(p, optional=rti)
    add_execution_args(p)
    add_observability_args(p)
    g = p.add_argument_group("federation")
    if not launch:
        g.add_argument("--federation-id", default=os.environ.get("REACTORFED_FEDERATION_ID", "reactorfed"),
                       help="the federation's name; the RTI and every federate must agree (default: "
                       "$REACTORFED_FEDERATION_ID or 'reactorfed')")
        g.add_argument("--secret-file", type=Path, default=None,
                       help="file holding the shared secret (default: $REACTORFED_SECRET), when the members share one "
                       "key; not needed with --key-file")
        g.add_argument("--key-file", type=Path, default=_env_path(KEY_FILE_ENV),
                       help="this member's own key (a JSON file `reactorfed launch` or the operator writes: its secret "
                       "key, and for a federate the RTI's public key); with it, no shared secret "
                       "(default: $REACTORFED_KEY_FILE)")
    g.add_argument("--heartbeat-timeout", type=_heartbeat_timeout, default=DEFAULT_HEARTBEAT_TIMEOUT_NS, metavar="DURATION",
                   help="declare a process dead when its connection answers nothing for this long, at least 1s "
                   "(default: 3s). The heartbeats are ZeroMQ's own, answered by its I/O thread, not the "
                   "interpreter: a process busy in a long reaction still answers; one that died is found at "
                   "once from its closed connection")
    g.add_argument("--silence-timeout", type=_at_least("10s"), default=None, metavar="DURATION",
                   help="also declare a process dead when its program (not its connection) sends nothing for this "
                   "long, at least 10s (default: never). Off by default: a program's silence cannot tell a hung "
                   "process from one starved of CPU or busy in a long reaction (256 federates busy in numpy on "
                   "2 cores are silent for 30s and more); a process that died or stopped is found without it")
    g.add_argument("--join-timeout", type=_at_least("1s"), default=60_000_000_000, metavar="DURATION",
                   help="how long the RTI waits, from its start, for every federate to join, and a federate for "
                   "the RTI to accept it (default: 60s). Raise it for wide federations on few cores, where each "
                   "federate's interpreter takes seconds to start and import its libraries")
    g.add_argument("--coordination", choices=("centralized", "decentralized"), default="centralized",
                   help="centralized (default): the RTI grants every tag a federate with upstream peers "
                   "processes (besides their promises); decentralized (LF's coordination: decentralized): each "
                   "federate advances on its upstream peers' promises or once its maxwait has passed, late "
                   "messages go to tardy handlers, and only the members of cycles get grants (what promises "
                   "around a cycle cannot give). The RTI's choice; it tells the federates")
    add_clock_sync_args(g)
    g.add_argument("--lead-window", type=lead_window, default=DEFAULT_LEAD_WINDOW_NS, metavar="DURATION",
                   help="how far in logical time a federate may run ahead of the slowest federate downstream of it "
                   "(default: 1s; 'none' removes the limit; it applies under --fast only: in real time physical time "
                   "bounds the lead). Under --fast, producers that nothing holds back "
                   "(timers, no upstream) would otherwise run ahead of their consumers without limit: what they "
                   "send queues at a slow consumer without bound, and a stop requested downstream is agreed at the "
                   "tag they reached, which every federate must then process. With a window W, what queues at a "
                   "consumer is what W of logical time holds, and a stop takes effect within W of the request. "
                   "Widen it for pipelines whose stages need more overlap than W (it costs nothing while no "
                   "federate is W ahead). The RTI's choice; it tells the federates")
    g.add_argument("--advance-message-interval", type=_at_least("1ms"), default=DEFAULT_ADVANCE_MESSAGE_INTERVAL_NS,
                   metavar="DURATION",
                   help="LF's advance-message-interval: a federate whose outputs a physical action (or an arrival "
                   "on a physical connection) can reach promises its downstream peers nothing before physical "
                   "time plus the least delay of such a path, and renews that promise this often while it waits "
                   f"(default: {DEFAULT_ADVANCE_MESSAGE_INTERVAL_NS // 1_000_000}ms, reactor-c's; at least 1ms). Those "
                   "peers lag physical time by up to this much; a shorter interval sends more messages")
    g.add_argument("--no-peer-grants", action="store_true",
                   help="federates wait for the RTI's grants only, instead of also computing them from the "
                   "reports their upstream peers relay (slower; for comparison; no effect on the RTI)")
    g.add_argument("--no-shm", action="store_true",
                   help="send every payload with the other messages (over the Unix socket or TCP), also between "
                   "federates on one host (by default large numpy/torch payloads to a peer at the same address go "
                   "through shared memory, the faster way for streams of them)")
    g.add_argument("--reaction-sched", choices=REACTION_POLICIES, default="batch",
                   help="with --fast, the CPU scheduling policy of the thread that runs reactions, once joined "
                   "(default: batch). batch (SCHED_BATCH) and idle (SCHED_IDLE): a federate woken by a message does "
                   "not preempt the one that sent it mid-batch (closed loops run ~25%% faster on 2 cores); idle "
                   "also lets every normal thread of the host run first (the threads answering heartbeats never "
                   "wait behind busy reactions), but on a shared host the reactions then get only spare CPU, and "
                   "it did not reduce false alarms among 256 busy federates on 2 cores. normal keeps the default "
                   "policy. Real-time runs never change it")
    g.add_argument("--reaction-nice", type=_reaction_nice, default=DEFAULT_REACTION_NICE, metavar="N",
                   help="once joined, a federate runs its reactions N nice levels below its other threads "
                   f"(default: {DEFAULT_REACTION_NICE}; 0 to keep them level): the threads that answer heartbeats "
                   "and handshakes, and the RTI, then get the CPU ahead of busy reactions, so that hundreds of "
                   "busy federates on a few cores are not taken for dead")
    g.add_argument("--no-unix-sockets", action="store_true",
                   help="send data to peers on this host over TCP too (by default a federate reaches a peer "
                   "on its host through the peer's Unix socket: no ZeroMQ I/O thread, faster closed loops)")
    g.add_argument("--insecure-plaintext-tcp", action="store_true",
                   help="for a trusted single host only: every TCP link (RTI <-> federates, federate -> federate) in "
                   "PLAIN TEXT, neither encrypted nor authenticated by CurveZMQ, so that anyone on the network path "
                   "can read and alter the federation's messages. Every process of the federation must agree "
                   "(launch passes it on); each one says so in a warning. The same as $REACTORFED_INSECURE_PLAINTEXT_TCP=1 (default: off, every TCP link is CurveZMQ)")
    add_logging_args(p.add_argument_group("output"))


def _membership_args(p: argparse.ArgumentParser) -> None:
    """The RTI's flags for elastic banks (``launch`` passes them on to its RTI)."""
    g = p.add_argument_group(MEMBERSHIP, "elastic banks: members that join and leave a running federation")
    g.add_argument("--membership", type=Path, default=None, metavar="FILE",
                   help="replay a recorded membership schedule instead of taking join and leave requests: every "
                   "member joins and leaves at the tag the record has (a member's process may connect at any "
                   "time; it waits for its tag). FILE: what --membership-out wrote, a JSON list of changes "
                   "({\"tag\": [ns after the start, microstep], \"member\": \"samplers[2]\", \"joined\": true}), or "
                   "a saved /status document. With the same program and parameters, the federates get the same "
                   "inputs at the same tags as in the recorded run")
    g.add_argument("--membership-out", type=Path, default=None, metavar="FILE",
                   help="when the federation ends, write the RTI's record of every join and leave (with the "
                   "program's digest) to FILE, in the format --membership reads: a run's replay is one flag away")


def _reaction_nice(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = -1
    if not 0 <= n <= 19:
        raise argparse.ArgumentTypeError(f"must be a whole number from 0 to 19, got {text!r}")
    return n


def _env_path(var: str) -> Path | None:
    value = os.environ.get(var, "")
    return Path(value) if value else None


def _secret(args: argparse.Namespace) -> bytes:
    if args.secret_file is not None:
        try:
            data = args.secret_file.read_bytes().strip()
        except OSError as e:
            raise ProgramError(f"--secret-file: {e}") from None
    else:
        data = os.environ.get(SECRET_ENV, "").encode()
    if len(data) < 8:
        raise ProgramError("the federation needs a shared secret of 8 bytes or more: set REACTORFED_SECRET or --secret-file")
    return data


def _rti_credentials(args: argparse.Namespace) -> Any:
    """The RTI's own key and the member table (``--key-file``, ``--member-keys``), or None
    (one key per federation, from the shared secret)."""
    from ..federation.process.member_keys import RtiCredentials, read_key_file

    if args.key_file is None:
        if args.member_keys is not None:
            raise ProgramError("--member-keys needs --key-file (the RTI's own key)")
        return None
    if args.member_keys is None:
        raise ProgramError("--key-file needs --member-keys (the members' public keys) on the RTI")
    if _plaintext(args):
        raise ProgramError("--key-file: keys have no use in plain text (--insecure-plaintext-tcp)")
    try:
        _, keys, _ = read_key_file(args.key_file)
        return RtiCredentials(keys, path=args.member_keys)
    except ValueError as e:
        raise ProgramError(str(e)) from None


def _member_credentials(args: argparse.Namespace) -> Any:
    """This federate's own key and the RTI's public key (``--key-file``), or None (one key
    per federation, from the shared secret). The file must have been issued to this federate."""
    from ..federation.process.member_keys import MemberCredentials, read_key_file

    if args.key_file is None:
        return None
    if _plaintext(args):
        raise ProgramError("--key-file: keys have no use in plain text (--insecure-plaintext-tcp)")
    try:
        name, keys, rti = read_key_file(args.key_file)
    except ValueError as e:
        raise ProgramError(str(e)) from None
    if name != args.federate:
        raise ProgramError(f"--key-file {args.key_file} was issued to {name!r}, not to federate {args.federate!r}")
    if rti is None:
        raise ProgramError(f"--key-file {args.key_file} has no rti_public_key (a federate's key file names the RTI's)")
    return MemberCredentials(keys, rti)


def _plaintext(args: argparse.Namespace) -> bool:
    """TCP links in plain text: asked for by the flag or by the environment variable it
    stands for (either is enough: a launcher's environment reaches every process)."""
    from ..federation.io.curve import plaintext_opted_out

    return bool(args.insecure_plaintext_tcp) or plaintext_opted_out()


def add_rti(sub: Any) -> None:
    p = sub.add_parser("rti", help="serve as the RTI of a federated program", description=RTI_DESCRIPTION,
                       epilog=EXAMPLES, formatter_class=_RAW)
    _common(p, rti=True)
    p.add_argument("--layout", type=Path, default=None, metavar="FILE",
                   help="serve the federation FILE describes instead of PROGRAM's: what `reactorfed layout PROGRAM "
                   "-o FILE` wrote (its federates, links, elastic banks and digest). The RTI then imports neither the "
                   "program nor its libraries (torch): `launch` starts its RTI so")
    g = p.add_argument_group("network")
    g.add_argument("--host", default="0.0.0.0", help="address to listen on (default: 0.0.0.0)")
    g.add_argument("--port", type=port, default=15045, help="port to listen on; 0 picks a free one (default: 15045)")
    g.add_argument("--ready-file", type=Path, default=None, help=argparse.SUPPRESS)
    g.add_argument("--member-keys", type=Path, default=_env_path(MEMBER_KEYS_ENV),
                   help="with --key-file: the members' public keys, {\"members\": {name: key}} (read again when "
                   "the file changes: a member removed or given a new key is refused with its old one from then on; "
                   "default: $REACTORFED_MEMBER_KEYS)")
    _membership_args(p)
    add_metrics_args(p)
    p.set_defaults(func=cmd_rti)


def cmd_rti(args: argparse.Namespace) -> int:
    from ..federation.process.rti_server import RtiConfig
    from ..federation.process.runner import serve_rti

    threads_from_args(args)
    served = _served(args)
    layout = served.layout
    if args.membership is not None:
        _check_recorded_for(args.membership, layout.digest)
    creds = _rti_credentials(args)
    cfg = RtiConfig(args.federation_id, b"" if creds is not None else _secret(args), host=args.host, port=args.port,
                    liveness_ns=args.heartbeat_timeout, silence_ns=args.silence_timeout,
                    join_timeout_ns=args.join_timeout, membership=args.membership,
                    insecure_plaintext_tcp=_plaintext(args), coordination=args.coordination,
                    lead_window=None if args.lead_window == "none" else args.lead_window, credentials=creds,
                    **clock_sync_from_args(args).rti())

    def ready(endpoint: str, status_port: int | None) -> None:
        if args.ready_file is not None:  # for `launch`: where to find the RTI
            tmp = args.ready_file.with_suffix(".tmp")
            tmp.write_text(json.dumps({"endpoint": endpoint, "status_port": status_port}))
            tmp.rename(args.ready_file)

    tracer = tracer_from_args(args, "rti", SystemClock(), "rti")
    try:
        summary = serve_rti(layout, cfg, metrics_port=args.metrics_port, metrics_addr=args.metrics_addr,
                            on_bound=ready, tracer=tracer, diagram=served.diagram)
    finally:
        if tracer is not None:
            tracer.close()
    if args.membership_out is not None:
        _write_record(args.membership_out, layout.digest, [r.json() for r in summary.membership])
    print(summary, flush=True)
    return 0


def _served(args: argparse.Namespace) -> Any:
    """The federation an RTI serves: read from ``--layout`` (the program is not imported),
    or PROGRAM's, built here (a :class:`~reactorfed.federation.process.layout_file.LayoutFile`)."""
    from ..errors import ValidationError
    from ..federation.process.layout_file import LayoutFile

    if args.layout is None:
        if args.program is None:
            raise ProgramError("which federation: give PROGRAM or --layout FILE")
        return LayoutFile.of(load_program(args.program, parse_params(args.params)),
                             diagram=args.metrics_port is not None)
    if args.program is not None or args.params:
        raise ProgramError("--layout FILE stands for PROGRAM and its --param values: give one or the other")
    try:
        return LayoutFile.read(args.layout)
    except ValidationError as e:
        raise ProgramError(f"--layout: {e}") from None


def _check_recorded_for(path: Path, digest: str) -> None:
    """A record that --membership-out wrote names its program's digest: one for another
    program is refused here, naming both (the entries are checked when the RTI loads them)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise ProgramError(f"--membership {path}: {e}") from None
    recorded = data.get("digest") if isinstance(data, dict) else None
    if recorded is not None and recorded != digest:
        raise ProgramError(f"--membership {path}: recorded for another program (its digest {recorded}, this "
                           f"program's {digest})")


def _write_record(path: Path, digest: str, record: list[dict[str, Any]]) -> None:
    """The RTI's membership record, as --membership reads it (written whole, then renamed:
    a reader never sees half a file)."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(json.dumps({"digest": digest, "membership": record}, indent=1) + "\n")
        tmp.rename(path)
    except OSError as e:
        raise ProgramError(f"--membership-out {path}: {e}") from None
    log.info("membership record (%d changes) written to %s", len(record), path)


def add_federate(sub: Any) -> None:
    p = sub.add_parser("federate", help="run one federate and join its RTI", description=FEDERATE_DESCRIPTION,
                       epilog=EXAMPLES, formatter_class=_RAW)
    _common(p)
    g = p.add_argument_group("network")
    g.add_argument("--federate", required=True, metavar="NAME", help="which federate: a child of the main reactor, e.g. learner or samplers[3]")
    g.add_argument("--rti", required=True, metavar="ADDRESS", help="the RTI: tcp://HOST:PORT or HOST:PORT")
    g.add_argument("--bind-host", default=None, help="address for this federate's data port (default: 127.0.0.1, or 0.0.0.0 with --advertise-host)")
    g.add_argument("--data-port", type=port, default=0, metavar="PORT",
                   help="port of this federate's data endpoint, where upstream peers connect (default: 0, any free port)")
    g.add_argument("--advertise-port", type=port, default=None, metavar="PORT",
                   help="port peers are told to connect to, when a proxy or a NodePort forwards it to --data-port "
                   "(default: the port listened on)")
    g.add_argument("--advertise-host", default=os.environ.get("REACTORFED_ADVERTISE_HOST"),
                   help="address peers use to reach this federate (in Kubernetes: the pod IP; default: $REACTORFED_ADVERTISE_HOST or the bind address)")
    g.add_argument("--checkpoint-dir", type=Path, default=None, help="directory where reactors may keep checkpoints ($REACTORFED_CHECKPOINT_DIR)")
    g.add_argument("--trusted-pickle", action="store_true",
                   help="accept pickled payloads from peers (runs code from the network: only in a trusted federation)")
    add_metrics_args(p)
    p.set_defaults(func=cmd_federate)


def cmd_federate(args: argparse.Namespace) -> int:
    threads_from_args(args)
    from ..federation.io.transport import shutdown

    logdir_from_args(args, args.program)
    from ..federation.process.federate_config import FederateConfig
    from ..federation.process.runner import run_federate

    if args.checkpoint_dir is not None:
        os.environ["REACTORFED_CHECKPOINT_DIR"] = str(args.checkpoint_dir)
    # Set by the fork server: the program built once, before forking. Not when this
    # federate has a checkpoint directory: constructors may read it from the environment.
    prepared = getattr(args, "preloaded", None)
    if prepared is not None and args.checkpoint_dir is None and prepared.matches(args.program, args.params):
        main, layout = prepared.main, prepared.layout
    else:
        main, layout = load_program(args.program, parse_params(args.params)), None
    rti = args.rti if args.rti.startswith("tcp://") else f"tcp://{args.rti}"
    bind = args.bind_host or ("0.0.0.0" if args.advertise_host else "127.0.0.1")
    creds = _member_credentials(args)
    cfg = FederateConfig(args.federation_id, b"" if creds is not None else _secret(args), rti, bind_host=bind,
                         advertise_host=args.advertise_host, credentials=creds,
                         data_port=args.data_port, advertise_port=args.advertise_port,
                         liveness_ns=args.heartbeat_timeout, silence_ns=args.silence_timeout,
                         join_timeout_ns=args.join_timeout, advance_message_interval_ns=args.advance_message_interval,
                         trusted_pickle=args.trusted_pickle,
                         peer_grants=not args.no_peer_grants, unix_sockets=not args.no_unix_sockets,
                         insecure_plaintext_tcp=_plaintext(args), **clock_sync_from_args(args).federate())
    if args.no_shm:
        cfg.shm_bytes = 0
    # The first Ctrl-C or SIGTERM: an elastic bank's member leaves (at a tag the federation
    # agrees on; the others go on, and this process ends with 0), any other federate stops
    # the federation. A member asked before its scheduler exists leaves once it does.
    member = _elastic_member(main, args.federate)
    holder: dict[str, Any] = {}
    lock = threading.Lock()

    def act(sched: Any) -> None:
        if member:
            sched.coordinator.request_leave()
        else:
            sched.request_stop()

    def on_interrupt() -> None:
        with lock:
            holder["asked"] = True
            sched = holder.get("sched")
        if sched is not None:
            act(sched)

    def on_scheduler(sched: Any) -> None:
        with lock:
            holder["sched"] = sched
            asked = holder.get("asked", False)
        if asked and member:
            act(sched)

    what = "leaving the federation at a tag it agrees on" if member else "stopping at the next tag"
    clock = SystemClock()
    tracer = tracer_from_args(args, args.federate, clock, "federate")
    try:
        with stop_on_interrupt(on_interrupt, what):
            summary = run_federate(main, args.federate, cfg, fast=args.fast, timeout=args.timeout, workers=args.workers,
                                   metrics_port=args.metrics_port, metrics_addr=args.metrics_addr, layout=layout,
                                   reaction_nice=args.reaction_nice, reaction_sched=args.reaction_sched if args.fast else "normal",
                                   on_scheduler=on_scheduler, clock=clock, tracer=tracer)
    finally:
        # Before the process exits: let the last payloads and the resignation leave.
        shutdown(cfg.liveness_ns / 1e9 + 1)
        if tracer is not None:
            tracer.close()
    print_summary(summary, False)
    return 0


def _elastic_member(main: Any, federate: str) -> bool:
    """Whether ``federate`` (a name such as ``samplers[2]``) is a slot of an elastic bank
    (``mid``: a transient federate, its bank's only slot)."""
    from ..model.elastic import elastic_banks

    return any(federate.startswith(f"{attr}[") or federate == attr for attr in elastic_banks(main))


def add_launch(sub: Any) -> None:
    p = sub.add_parser("launch", help="run a program federated as local processes (RTI + one per federate)",
                       description=LAUNCH_DESCRIPTION, epilog=EXAMPLES, formatter_class=_RAW)
    _common(p, launch=True)
    _membership_args(p)
    g = p.add_argument_group("launcher")
    g.add_argument("--no-progress", action="store_true", help="no progress line")
    g.add_argument("--no-fork-server", action="store_true",
                   help="start every federate as a new interpreter (by default they are forked from one process "
                   "that has imported the program: Python's start-up and imports are paid once, not per federate)")
    p.set_defaults(func=cmd_launch, parser=p)


def cmd_launch(args: argparse.Namespace) -> int:
    from ..federation.process.launch import launch
    from ..federation.process.layout_file import LayoutFile

    threads_from_args(args)
    # Computed here once: the RTI is handed it and never imports the program.
    served = LayoutFile.of(load_program(args.program, parse_params(args.params)))
    layout = served.layout
    logdir_from_args(args, args.program, SystemClock())  # (the federates inherit it)
    names, again = _launched(layout, args.membership)
    log.info("launching %s: RTI + %d federates (%s)", args.program, len(names), ", ".join(names))
    result = launch(args.program, names, params=args.params, run_args=forwarded(args.parser, args),
                    rti_args=forwarded(args.parser, args, (MEMBERSHIP, "observability")), relaunch=again,
                    progress=False if args.no_progress else None, timeout_ns=args.timeout,
                    fork_server=not args.no_fork_server, threads=args.threads, layout=served)
    if result.code == 0:
        log.info("federation finished in %.2f s", result.wall_s)
    else:
        log.error("federation failed: %s", result.message)
    print(f"reactorfed launch: {'ok' if result.code == 0 else 'FAILED'} in {result.wall_s:.2f} s ({result.message})",
          file=sys.stderr if result.code else sys.stdout, flush=True)
    return result.code


def _launched(layout: Any, membership: Path | None) -> tuple[list[str], dict[str, int]]:
    """The federates ``launch`` starts, and how many more times each is started once its
    process ended well. An elastic bank starts at its initial width; replaying a schedule
    (``--membership``), every slot that joins in it starts too (it waits for its tag), and
    a slot that joins again gets a new process when the one before has left."""
    initial = layout.initial_members()
    if membership is None:
        return [n for f, n in enumerate(layout.names) if f in initial], {}
    from ..federation.process.rti_members import load_schedule

    if not layout.elastic:
        raise ProgramError(f"--membership {membership}: the program has no elastic bank: nothing to replay")
    _check_recorded_for(membership, layout.digest)
    slots = {g.name: g.slots for g in layout.elastic}
    joins: dict[int, int] = {}
    for ch in load_schedule(layout, membership) or []:
        if ch.joined:
            f = slots[ch.bank][ch.index]
            joins[f] = joins.get(f, 0) + 1
    names = [n for f, n in enumerate(layout.names) if f in initial or f in joins]
    again = {layout.names[f]: k - (f not in initial) for f, k in joins.items() if k - (f not in initial) > 0}
    return names, again
