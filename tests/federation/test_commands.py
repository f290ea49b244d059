"""Options of ``reactorfed launch`` that reach the federate processes."""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from reactorfed import SHUTDOWN, Input, Output, Reactor, Timer, ms, reaction
from reactorfed.model.elastic import Elastic, elastic_bank

pytestmark = [pytest.mark.timeout(120), pytest.mark.skipif(not hasattr(os, "SCHED_BATCH"), reason="Linux only")]

PROGRAM = f"{Path(__file__).with_name('programs.py')}:Policies"


def policies(*args: str) -> list[int]:
    proc = subprocess.run([sys.executable, "-m", "reactorfed", "launch", PROGRAM, "--timeout", "10ms", "--no-progress",
                           *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = [int(p) for p in re.findall(r"\[[ab]\] POLICY (\d+)", proc.stdout)]
    assert len(found) == 2, proc.stdout
    return found


def test_fast_federates_run_their_reactions_under_sched_batch() -> None:
    """As fast as possible: a woken federate does not preempt the one that sent to it;
    with idle, every normal thread (the ones answering heartbeats) runs ahead of them."""
    assert policies("--fast") == [os.SCHED_BATCH] * 2
    assert policies("--fast", "--reaction-sched", "idle") == [os.SCHED_IDLE] * 2


def test_real_time_federates_and_the_opt_out_keep_the_default_policy() -> None:
    assert policies() == [os.SCHED_OTHER] * 2
    assert policies("--reaction-sched", "idle") == [os.SCHED_OTHER] * 2  # real time: never
    assert policies("--fast", "--reaction-sched", "normal") == [os.SCHED_OTHER] * 2


def _nices(*args: str) -> list[tuple[int, str]]:
    proc = subprocess.run([sys.executable, "-m", "reactorfed", "launch", PROGRAM, "--timeout", "10ms", "--no-progress",
                           *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = [(int(n), rest) for n, rest in re.findall(r"\[[ab]\] NICE (-?\d+) (.*)", proc.stdout)]
    assert len(found) == 2, proc.stdout
    return found


def test_reactions_run_below_the_threads_that_answer_heartbeats() -> None:
    """Launched federates run below the RTI (FEDERATE_NICE); once joined, the thread that
    runs reactions lowers itself further (by 10 by default) and, with --fast, alone takes
    SCHED_BATCH; ZeroMQ's I/O thread and the heartbeat thread keep the federate's level,
    so that busy reactions starve neither them nor the RTI (issue 18)."""
    from reactorfed.federation.process.launch import FEDERATE_NICE

    fed = min(19, os.getpriority(os.PRIO_PROCESS, 0) + FEDERATE_NICE)
    for own, others in _nices("--fast"):
        assert own == min(19, fed + 10)
        assert others == str(sorted({(fed, os.SCHED_OTHER)})), others  # every other thread: untouched
    assert [own for own, _ in _nices("--reaction-nice", "3")] == [min(19, fed + 3)] * 2
    assert [own for own, _ in _nices("--reaction-nice", "0")] == [fed] * 2


def test_each_federate_reports_the_cpu_time_of_its_run() -> None:
    """The launcher's output says where the federation spent its CPU, process by process."""
    proc = subprocess.run([sys.executable, "-m", "reactorfed", "launch", PROGRAM, "--timeout", "10ms", "--fast",
                           "--no-progress"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = dict(re.findall(r"^\[([ab])\] reactorfed: \d+ tags, \d+ reactions in [\d.]+ s wall, (\d+\.\d{3}) s CPU",
                            proc.stdout, re.MULTILINE))
    assert sorted(found) == ["a", "b"], proc.stdout
    assert all(float(c) > 0 for c in found.values()), found
    rti = re.search(r"^\[rti\] RTI: 2 federates resigned; .* in [\d.]+ s wall, (\d+\.\d{3}) s CPU;", proc.stdout, re.MULTILINE)
    assert rti is not None and float(rti.group(1)) > 0, proc.stdout


def _subparser(name: str) -> Any:
    from reactorfed.cli.main import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


def test_launch_forwards_every_execution_and_federation_flag_it_was_given() -> None:
    """One place rebuilds launch's flags for its children: each one a federate takes,
    given to launch, reaches the federate with the same value; defaults are not repeated."""
    from reactorfed.cli.options import forwarded

    launch = _subparser("launch")
    given = ["prog.py:Main", "--fast", "--timeout", "1500ms", "--workers", "3", "--keepalive", "--check-types",
             "--heartbeat-timeout", "7s", "--join-timeout", "2min", "--advance-message-interval", "25ms", "--no-peer-grants", "--no-shm", "--reaction-sched", "idle",
             "--no-unix-sockets", "--reaction-nice", "4", "--insecure-plaintext-tcp", "--log-level", "debug",
             "--threads", "3", "--allow-thread-change", "--clock-sync", "on", "--clock-sync-period", "10ms",
             "--clock-sync-trials", "5", "--clock-sync-attenuation", "4", "--clock-sync-test-offset", "200ms"]
    args = launch.parse_args(given)
    out = forwarded(launch, args)
    federate = _subparser("federate")
    child = federate.parse_args(["prog.py:Main", "--federate", "a", "--rti", "h:1", *out])
    for dest in ("fast", "timeout", "workers", "keepalive", "check_types", "heartbeat_timeout", "join_timeout",
                 "advance_message_interval", "no_peer_grants",
                 "no_shm", "reaction_sched", "no_unix_sockets", "reaction_nice", "insecure_plaintext_tcp", "log_level",
                 "threads", "allow_thread_change", "clock_sync", "clock_sync_period", "clock_sync_trials",
                 "clock_sync_attenuation", "clock_sync_test_offset"):
        assert getattr(child, dest) == getattr(args, dest), dest
    assert child.timeout == 1_500_000_000 and child.heartbeat_timeout == 7_000_000_000
    assert child.join_timeout == 120_000_000_000
    assert forwarded(launch, launch.parse_args(["prog.py:Main"])) == []


def test_launch_synchronizes_the_federates_clocks_with_the_rtis() -> None:
    """``--clock-sync on`` with an artificial offset: each federate's clock, (1 + its
    index) * 200 ms ahead, is found so and corrected before the start (LF's clock-sync)."""
    proc = subprocess.run([sys.executable, "-m", "reactorfed", "launch", PROGRAM, "--timeout", "50ms", "--no-progress",
                           "--clock-sync", "on", "--clock-sync-test-offset", "200ms", "--log-level", "info"],
                          capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = dict(re.findall(r"^\[(\w+)\] .*clock sync: this clock read (-?\d+) ns ahead", proc.stdout, re.MULTILINE))
    assert set(found) == {"a", "b"}, proc.stdout
    for i, name in enumerate(("a", "b")):
        assert abs(int(found[name]) - (1 + i) * 200_000_000) < 10_000_000, found


@pytest.mark.parametrize(("value", "want"), [("250ms", 250_000_000), ("none", "none"), ("0s", 0)])
def test_launch_forwards_the_lead_window_to_the_rti(value: str, want: object) -> None:
    """``--lead-window``: a duration, or ``none`` (no window), reaching the RTI as given."""
    from reactorfed.cli.options import forwarded

    launch = _subparser("launch")
    args = launch.parse_args(["prog.py:Main", "--lead-window", value])
    rti = _subparser("rti").parse_args(["prog.py:Main", *forwarded(launch, args)])
    assert args.lead_window == rti.lead_window == want
    assert _subparser("rti").parse_args(["prog.py:Main"]).lead_window == 1_000_000_000


def test_the_plaintext_opt_out_is_one_flag_named_for_what_it_is() -> None:
    """``--insecure-plaintext-tcp``: defined once for the three commands, off by default,
    its help saying it is for a trusted single host only; launch passes it to the RTI and
    to every federate (one list of forwarded flags for both)."""
    from reactorfed.cli.options import forwarded

    for command in ("launch", "rti", "federate"):
        p = _subparser(command)
        action = next(a for a in p._actions if "--insecure-plaintext-tcp" in a.option_strings)
        assert action.default is False and action.help is not None
        assert "for a trusted single host only" in action.help and "PLAIN TEXT" in action.help, command
        assert "REACTORFED_INSECURE_PLAINTEXT_TCP" in action.help, command
    launch = _subparser("launch")
    assert forwarded(launch, launch.parse_args(["prog.py:Main", "--insecure-plaintext-tcp"])) == \
        ["--insecure-plaintext-tcp"]
    rti = _subparser("rti").parse_args(["prog.py:Main", "--insecure-plaintext-tcp"])
    assert rti.insecure_plaintext_tcp is True


def test_metrics_port_is_one_flag_with_one_validation() -> None:
    for command in ("run", "rti", "federate"):
        p = _subparser(command)
        action = next(a for a in p._actions if "--metrics-port" in a.option_strings)
        assert action.type("0") == 0
        with pytest.raises(argparse.ArgumentTypeError, match="0-65535"):
            action.type("70000")
        assert any("--metrics-addr" in a.option_strings for a in p._actions), command


def test_heartbeat_timeout_below_the_floor_is_a_usage_error() -> None:
    r = subprocess.run([sys.executable, "-m", "reactorfed", "federate", PROGRAM, "--federate", "a", "--rti", "h:1",
                        "--heartbeat-timeout", "500ms"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--heartbeat-timeout: must be at least 1s" in r.stderr


def test_advance_message_interval_below_a_millisecond_is_a_usage_error() -> None:
    r = subprocess.run([sys.executable, "-m", "reactorfed", "federate", PROGRAM, "--federate", "a", "--rti", "h:1",
                        "--advance-message-interval", "500us"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--advance-message-interval: must be at least 1ms" in r.stderr


def test_join_timeout_bounds_the_rtis_wait_and_is_validated() -> None:
    """An RTI whose federates never come gives up after --join-timeout, naming them."""
    r = subprocess.run([sys.executable, "-m", "reactorfed", "rti", PROGRAM, "--port", "0", "--join-timeout", "1s"],
                       capture_output=True, text=True, timeout=60, env={**os.environ, "REACTORFED_SECRET": "s3cret-s3cret"})
    assert r.returncode != 0
    assert "did not join within 1 s: a, b" in r.stdout + r.stderr, r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-m", "reactorfed", "rti", PROGRAM, "--join-timeout", "10ms"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--join-timeout: must be at least 1s" in r.stderr


def test_launch_gives_every_process_the_runs_thread_count() -> None:
    """Every process gets the run's --threads (default 1) in OMP_NUM_THREADS, whatever the
    machine's cores and the user's environment: the count changes torch's float sums."""
    for extra, expect in (([], "1"), (["--threads", "2"], "2")):
        proc = subprocess.run([sys.executable, "-m", "reactorfed", "launch", PROGRAM, "--timeout", "10ms", "--no-progress",
                               *extra], capture_output=True, text=True, timeout=60,
                              # (the other variables as a user's shell might not have them: an
                              # in-process run of the command line earlier in this worker set them)
                              env={**{k: v for k, v in os.environ.items() if k not in ("MKL_NUM_THREADS",
                                                                                     "OPENBLAS_NUM_THREADS")},
                                   "OMP_NUM_THREADS": "3"})
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert re.findall(r"\[[ab]\] THREADS (\S+)", proc.stdout) == [expect, expect], proc.stdout
        assert "OMP_NUM_THREADS=3 ignored" in proc.stderr


# -- elastic banks: --membership, --membership-out, a member's SIGTERM ----------------------
class Sampler(Reactor):
    out = Output(int)
    inp = Input(int)
    tick = Timer(0, ms(10))

    def __init__(self) -> None:
        self.n = 0

    @reaction(triggers=[tick], effects=[out])
    def step(self, out: Any) -> None:
        self.n += 1
        out.set(self.n)
        self.report_result({"steps": self.n})  # (a member that leaves runs no shutdown)

    @reaction(triggers=[inp])
    def weights(self, inp: Any) -> None:
        pass


class Trainer(Reactor):
    ins = Input(int, width=3)
    out = Output(int)

    def __init__(self) -> None:
        self.got: dict[int, list[int]] = {}

    @reaction(triggers=[ins], effects=[out])
    def learn(self, ins: Any, out: Any) -> None:
        for i, v in ins.present():
            self.got.setdefault(i, []).append(v)
        out.set(1)

    @reaction(triggers=[SHUTDOWN])
    def done(self) -> None:
        self.report_result({str(i): v for i, v in sorted(self.got.items())})


class ElasticMain(Reactor):
    def __init__(self) -> None:
        self.learner = Trainer()
        self.samplers = elastic_bank(Sampler, Elastic(min=1, max=3, initial=2))
        self.connect(self.samplers.out, self.learner.ins)
        self.connect(self.learner.out, self.samplers.inp, broadcast=True, after=ms(3))


ELASTIC = f"{Path(__file__)}:ElasticMain"


def _results(text: str, prefix: str = "") -> dict[str, Any]:
    return {fqn: json.loads(v) for fqn, v in
            re.findall(rf"^{re.escape(prefix)}reactorfed: result of (\S+): (\{{.*\}})$", text, re.MULTILINE)}


def test_membership_flags_go_to_the_rti_alone() -> None:
    """--membership and --membership-out are the RTI's: launch passes them on to its RTI,
    never to the federates (which do not take them)."""
    from reactorfed.cli.launch import MEMBERSHIP
    from reactorfed.cli.options import forwarded

    launch = _subparser("launch")
    args = launch.parse_args(["prog.py:Main", "--fast", "--membership", "in.json", "--membership-out", "out.json"])
    assert forwarded(launch, args, (MEMBERSHIP,)) == ["--membership", "in.json", "--membership-out", "out.json"]
    assert forwarded(launch, args) == ["--fast"]
    rti = _subparser("rti").parse_args(["prog.py:Main", *forwarded(launch, args, (MEMBERSHIP,))])
    assert (rti.membership, rti.membership_out) == (Path("in.json"), Path("out.json"))
    for command in ("rti", "launch"):
        text = _subparser(command).format_help()
        assert "--membership FILE" in text and "--membership-out FILE" in text, command
    with pytest.raises(SystemExit):
        _subparser("federate").parse_args(["prog.py:Main", "--federate", "a", "--rti", "h:1", "--membership", "x"])


def test_a_membership_file_for_another_program_is_refused_naming_it(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"digest": "0" * 16, "membership": []}))
    stranger = tmp_path / "stranger.json"
    stranger.write_text(json.dumps([{"tag": [0, 1], "member": "samplers[7]", "joined": True}]))
    for command in ("launch", "rti"):
        for path, why in ((other, "recorded for another program"), (stranger, "'samplers[7]' is not a member of an elastic bank")):
            r = subprocess.run([sys.executable, "-m", "reactorfed", command, ELASTIC, "--membership", str(path),
                                *(["--port", "0"] if command == "rti" else [])],
                               capture_output=True, text=True, timeout=60,
                               env={**os.environ, "REACTORFED_SECRET": "s3cret-s3cret"})
            assert r.returncode in (1, 2) and why in r.stderr and str(path) in r.stderr, (command, r.stdout + r.stderr)
        r = subprocess.run([sys.executable, "-m", "reactorfed", command, PROGRAM, "--membership", str(stranger),
                            *(["--port", "0"] if command == "rti" else [])],
                           capture_output=True, text=True, timeout=60, env={**os.environ, "REACTORFED_SECRET": "s3cret-s3cret"})
        assert r.returncode in (1, 2) and "no elastic bank" in r.stderr, (command, r.stdout + r.stderr)


def test_sigterm_makes_an_elastic_member_leave_and_the_record_replays(tmp_path: Path) -> None:
    """SIGTERM to an elastic bank's member (how Kubernetes deletes a scaled-down pod): it
    leaves at an agreed tag and exits 0, the others run to the end; the RTI writes its
    record (--membership-out), and `launch --membership` replays it: the learner gets the
    same inputs, the member leaves at the same tag."""
    record = tmp_path / "record.json"
    env = {**os.environ, "REACTORFED_SECRET": secrets.token_hex(16)}
    ready = tmp_path / "rti.json"
    common = ["--timeout", "2s", "--federation-id", "sigterm"]
    rti = subprocess.Popen([sys.executable, "-m", "reactorfed", "rti", ELASTIC, *common, "--port", "0", "--metrics-port", "0",
                            "--ready-file", str(ready), "--membership-out", str(record)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    procs: dict[str, subprocess.Popen[str]] = {}
    try:
        deadline = time.monotonic() + 30
        while not ready.exists():
            assert rti.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        info = json.loads(ready.read_text())
        for name in ("learner", "samplers[0]", "samplers[1]"):
            procs[name] = subprocess.Popen([sys.executable, "-m", "reactorfed", "federate", ELASTIC, *common, "--federate",
                                            name, "--rti", info["endpoint"]],
                                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        while True:  # until the federation runs, some way in
            with urllib.request.urlopen(f"http://127.0.0.1:{info['status_port']}/status", timeout=5) as resp:
                st = json.loads(resp.read())
            if st["phase"] == "running" and st["elapsed_ns"] > 300_000_000:
                break
            assert time.monotonic() < deadline and all(p.poll() is None for p in procs.values()), st
            time.sleep(0.02)
        procs["samplers[1]"].send_signal(signal.SIGTERM)
        out = {name: p.communicate(timeout=60)[0] for name, p in procs.items()}
        rti_out = rti.communicate(timeout=30)[0]
    finally:
        for p in (rti, *procs.values()):
            if p.poll() is None:
                p.kill()
    codes = {name: p.returncode for name, p in procs.items()}
    assert codes == dict.fromkeys(procs, 0) and rti.returncode == 0, (codes, out, rti_out)
    assert "SIGTERM: leaving the federation" in out["samplers[1]"], out["samplers[1]"]
    changes = json.loads(record.read_text())["membership"]
    assert [(c["member"], c["joined"]) for c in changes] == [("samplers[1]", False)], changes
    leave = changes[0]["tag"]
    assert 300_000_000 < leave[0] < 2_000_000_000, leave
    got = _results(out["learner"])["ElasticMain.learner"]
    assert got["0"] == list(range(1, 202)), "samplers[0] ran to the end, every step arrived"
    # every step samplers[1] took before its leave arrived, and it took none after
    assert got["1"] == list(range(1, _results(out["samplers[1]"])["ElasticMain.samplers[1]"]["steps"] + 1))
    period = 10_000_000  # its steps are at the multiples of 10 ms before the leave's tag
    before = leave[0] // period + 1 if leave[1] > 0 else -(-leave[0] // period)
    assert len(got["1"]) == before, (leave, len(got["1"]))

    again = tmp_path / "again.json"
    r = subprocess.run([sys.executable, "-m", "reactorfed", "launch", ELASTIC, "--timeout", "2s", "--fast", "--no-progress",
                        "--membership", str(record), "--membership-out", str(again)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[samplers[2]]" not in r.stdout, "launch starts an elastic bank at its initial width"
    assert _results(r.stdout, "[learner] ")["ElasticMain.learner"] == got
    assert json.loads(again.read_text())["membership"] == changes
