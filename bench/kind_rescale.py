"""Live rescaling of synchronous PPO, APPO and Ape-X on the kind cluster, measured through
the operator: `kubectl apply` to the learner's first update, `kubectl scale` to the new
width training, and the learner's longest pause around a join and around a leave.

    python -m bench.kind_rescale                              # 3 runs of each plan, medians
    python -m bench.kind_rescale --quick --no-write --plan ppo

It needs the kind suite's cluster with the operator installed, kept:
``REACTORFED_KIND_KEEP=1 scripts/kind-test.sh -k live_scaling_plans`` leaves it
(``REACTORFED_KIND_CLUSTER`` names it, ``rf-kind-test`` by default;
``KIND_CLUSTER=rf-kind-test scripts/kind.sh delete`` removes it).

Each run applies a plan's elastic example (examples/k8s/*-elastic.yaml as the kind suite
runs it, tests/kind/live.py: small requests, no target, no checkpoint) at 2 of at most 4
samplers, with ``timeline=true``: the learner keeps a row per update, the physical time
(ns since the epoch; the kind nodes are containers on this host, so the same clock as this
script's ``time.time_ns()``) at which it took it and the members it took it from (PPO: the
fragments' senders; APPO and Ape-X: the members present). Once it trains, ``--warm-s``
later, ``kubectl scale --replicas=4``; once the two joins show in the status and the
joiners are at work, ``--settle-s`` later, ``kubectl scale --replicas=2``; once the leaves
show and the pods are gone, ``--settle-s`` later, SIGTERM to the learner's container stops
the federation at an agreed tag and its log gives the timeline. The runs go plan by plan in
turn (ppo, appo, apex, ppo, ...).

**1. Apply to the first update** (``first_update_s``): from this script's clock just before
``kubectl apply`` to the timeline's first row: images are on the nodes, so this is the
operator's passes, scheduling, the containers' start, the program's import and build, the
federation's start. Beside it ``first_tag_s``: when the status first showed the RTI
running at a tag (the operator reads the RTI's ``/status`` every 2 s: a bound, not a time).

**2. Scale to the new width training** (``new_width_s``): from just before ``kubectl
scale --replicas=4`` to the first row that has both new members; beside it
``admitted_s``, when the status first showed both joins.

**3. The learner's longest pause** around the join 2 -> 4 and the leave 4 -> 2, as
bench/rescale.py defines it in processes (``--plan``): the change shows in the timeline
from the first row after the request whose members differ from the row's before to the
first with exactly the width asked for; the longest wall time between consecutive rows from
``--window`` rows before that to ``--window`` after, less one update (the median time
between rows in the ``--settle-s`` before the request). The bar: at most one update plus
50 ms. The join is given twice, as defined and counting only the gaps that begin once the
first new process is up (``once connected``: the timestamp of its first log line, written
once its imports are done, right before it connects to the RTI; ``connected_s`` after the
request): the difference is the new pods' start-up, which here takes the cores the
learner runs on (the kind nodes are containers on one machine). The learner's own figure (``change_gaps_ms``, from its reaction before each change
of the members it sees to the one at it) is given beside, split into joins and leaves.

**Where the longest gap went** (``cpu_in_longest_gap``): the processes of the RTI, the
learner and the first samplers are this host's (the kind nodes are containers on its
kernel), so :class:`bench.cpu_watch.CpuWatch` samples their threads' scheduler counters
through the run; for each pause, each process's two busiest threads' time running, waiting
for a core (runnable, no core free) and asleep (waiting for a message) within the gap.

JSON lines in ``bench/results/kind_rescale.jsonl``. The cluster's nodes share this
machine's cores with the operator and the control plane: the figures say what a cluster on
one small machine gives, not what a cluster of real nodes would.
"""

from __future__ import annotations

import calendar
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.kind.conftest import CLUSTER, NAMESPACE, OPERATOR_NS, RELEASE, Kind
from tests.kind.federations import apply, describe
from tests.kind.live import (
    ELASTIC_PLANS,
    ElasticPlan,
    Watch,
    elastic_doc,
    results,
    signal_container,
    watching,
)

from bench.common import Results, base_parser, progress
from bench.cpu_watch import CpuWatch, pid_of_container
from bench.rescale_timeline import (
    Row,
    between,
    first_with,
    longest_pause,
    median_gap_ms,
    rows_of,
    transition,
)

BEFORE, WIDE = 2, 4
TIMEOUT_S = 300.0
BAR_MS = 50.0
WHY_BAR = f"the issue's bar: the learner's pause around a change at most one update plus {BAR_MS:.0f} ms"
WHY_TIME = "the time a user waits on a kind cluster on this machine (no peer)"


def _wait(w: Watch, what: str, probe: Any) -> dict[str, Any]:
    return w.until(what, probe, TIMEOUT_S, interval=0.5)


def one_run(k: Kind, p: ElasticPlan, args: Any, logs: Path) -> dict[str, Any]:
    """One run of plan ``p``: its figures (see the module's doc)."""
    name = p.manifest.removesuffix(".yaml")
    with watching(k, name, logs, role="samplers", at_work_ns=p.at_work_ns) as w:
        t_apply = time.time_ns()
        apply(k, [elastic_doc(p, BEFORE, WIDE, timeline="true")])
        _wait(w, "the RTI at a tag", lambda st: (st.get("progress") or {}).get("tagNs") is not None)
        t_tag = time.time_ns()
        _wait(w, "the learner training", lambda st: w.at(BEFORE) and w.done() > 0)
        w.pinned()
        cpu = _watch_pods(w)
        time.sleep(args.warm_s)
        t_join = time.time_ns()
        assert w.scale(WIDE).returncode == 0
        new = tuple(range(BEFORE, WIDE))
        _wait(w, "the joins", lambda st: w.at(WIDE) if all(w.changes(f"samplers[{i}]", True) for i in new) else None)
        t_admitted = time.time_ns()
        t_connected = min(_started_ns(k, f"{name}-samplers-{i}") for i in new)
        _wait(w, "the new members at work", lambda st: w.at_work(new))
        time.sleep(args.settle_s)
        t_leave = time.time_ns()
        assert w.scale(BEFORE).returncode == 0
        _wait(w, "the leaves", lambda st: w.at(BEFORE) if all(
            w.changes(f"samplers[{i}]", False) for i in new) and w.slots() == list(range(BEFORE)) else None)  # fmt: skip
        t_left = time.time_ns()
        time.sleep(args.settle_s)
        t_stop = time.time_ns()
        signal_container(k, w.pod_of("learner"), "SIGTERM")
        st = _wait(w, "the federation to finish", lambda st: st if st.get("phase") in ("Succeeded", "Failed") else None)
        if st["phase"] != "Succeeded" or st.get("restarts") or st.get("incarnation") != 1:
            raise RuntimeError(f"{name} ended {st['phase']} (restarts {st.get('restarts')}):\n{describe(k, name)}")
        log = k.kubectl("logs", "-n", NAMESPACE, f"{name}-learner", timeout=120).stdout
    for c in cpu.values():
        c.stop()
    result = results(log).get("learner")
    if result is None:
        raise RuntimeError(f"{name}: the learner printed no result:\n{log[-2000:]}")
    rows = [r for r in rows_of(result) if r.wall_ns <= t_stop]
    return figures(rows, result, args.window, args.settle_s, cpu, t_apply=t_apply, t_tag=t_tag, t_join=t_join,
                   t_admitted=t_admitted, t_leave=t_leave, t_left=t_left, t_connected=t_connected)  # fmt: skip


def _watch_pods(w: Watch) -> dict[str, CpuWatch]:
    """The threads of the federation's processes running now (the RTI, the learner, the
    samplers), watched from this host, by pod name; a pod whose process cannot be seen from
    here is left out, with a note."""
    out = {}
    for pod in w.pods.values():
        cid = pod["status"]["containerStatuses"][0]["containerID"].split("://", 1)[1]
        pid = pid_of_container(cid)
        if pid is None:
            progress(f"{pod['metadata']['name']}'s process is not visible from this host: no CPU split for it")
            continue
        out[pod["metadata"]["name"].removeprefix(f"{w.name}-")] = CpuWatch(pid)
    return out


def _started_ns(k: Kind, pod: str) -> int:
    """When ``pod``'s process wrote its first line (the container runtime's timestamp, ns
    since the epoch): its imports are done, and it connects to the RTI right after."""
    first = k.kubectl("logs", "--timestamps", "-n", NAMESPACE, pod, timeout=60).stdout.split(" ", 1)[0]
    whole, _, fraction = first.rstrip("Z").partition(".")
    seconds = calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S"))
    return seconds * 10**9 + int(fraction.ljust(9, "0")[:9])


def figures(rows: list[Row], result: dict[str, Any], window: int, settle_s: float, cpu: dict[str, CpuWatch],
            **t: int) -> dict[str, Any]:
    """A run's figures from the learner's timeline and this script's marks ``t`` (ns)."""
    firsts = [first_with(rows, i, t["t_join"]) for i in range(BEFORE, WIDE)]
    if any(f is None for f in firsts):
        raise RuntimeError(f"a new member's samples never reached the learner: {firsts}")
    settle = int(settle_s * 1e9)
    out: dict[str, Any] = {
        "first_update_s": (rows[0].wall_ns - t["t_apply"]) / 1e9,
        "first_tag_s": (t["t_tag"] - t["t_apply"]) / 1e9,
        "new_width_s": (max(f.wall_ns for f in firsts if f is not None) - t["t_join"]) / 1e9,
        "admitted_s": (t["t_admitted"] - t["t_join"]) / 1e9,
        "left_s": (t["t_left"] - t["t_leave"]) / 1e9,
        "connected_s": (t["t_connected"] - t["t_join"]) / 1e9,
    }
    # ("joined": only the gaps that begin once the first new process is up: without the new
    # pods' start-up, which on one machine takes the learner's cores and on real nodes would not)
    for change, since, final, after in (("join", t["t_join"], frozenset(range(WIDE)), 0),
                                        ("joined", t["t_join"], frozenset(range(WIDE)), t["t_connected"]),
                                        ("leave", t["t_leave"], frozenset(range(BEFORE)), 0)):  # fmt: skip
        start, end = transition(rows, since, final)
        pause = longest_pause(rows, start, end, window, 0, since_ns=after)
        update = median_gap_ms(between(rows, since - settle, since))
        out[change] = {"gap_ms": pause.longest_gap_ms, "update_ms": update, "at": pause.at,
                       "pause_ms": max(0.0, pause.longest_gap_ms - update)}  # fmt: skip
        # where the longest gap went: each process's busiest threads in it
        gap_end = start + pause.at
        out[change]["cpu"] = {pod: [vars(x) for x in c.split(rows[gap_end - 1].wall_ns, rows[gap_end].wall_ns)[:2]]
                              for pod, c in sorted(cpu.items())}  # fmt: skip
    # the learner's own gaps, by the direction of the change each preceded
    widths = [w for _, _, w in result.get("membership") or []]
    gaps = result.get("change_gaps_ms") or []
    out["change_gaps_ms"] = {
        "join": [g for g, a, b in zip(gaps, widths, widths[1:], strict=False) if b > a],
        "leave": [g for g, a, b in zip(gaps, widths, widths[1:], strict=False) if b < a],
    }
    return out


def report(res: Results, plan: str, runs: list[dict[str, Any]], failed: list[str], window: int) -> None:
    def med(path: str) -> float:
        return statistics.median(_get(r, path) for r in runs)

    def each(path: str) -> list[float]:
        return [round(_get(r, path), 3) for r in runs]

    n = len(runs)
    lost = {"failed_runs": failed} if failed else {}
    res.add(f"{plan}: kubectl apply -> the learner's first update", "first_update_s", med("first_update_s"),
            "none", 0.0, "lower", n, judged=False, why=WHY_TIME, samples=each("first_update_s"),
            first_tag_s=each("first_tag_s"), **lost)  # fmt: skip
    res.add(f"{plan}: kubectl scale {BEFORE}->{WIDE} -> the learner's first update with both new members",
            "new_width_s", med("new_width_s"), "none", 0.0, "lower", n, judged=False, why=WHY_TIME,
            samples=each("new_width_s"), admitted_s=each("admitted_s"), **lost)  # fmt: skip
    for change, label in (("join", f"join {BEFORE}->{WIDE}"), ("joined", f"join {BEFORE}->{WIDE}, once connected"),
                          ("leave", f"leave {WIDE}->{BEFORE}")):
        update = med(f"{change}.update_ms")
        pauses = each(f"{change}.pause_ms")
        res.add(f"{plan}: {label}: the learner's longest pause within {window} updates", "pause_ms",
                statistics.median(pauses), f"target: one update + {BAR_MS:.0f} ms", update + BAR_MS, "lower", n,
                judged=False, why=WHY_BAR, samples=pauses, longest_gap_ms=each(f"{change}.gap_ms"),
                update_ms=round(update, 1),
                meets_bar=all(r[change]["pause_ms"] <= r[change]["update_ms"] + BAR_MS for r in runs),
                learner_change_gaps_ms=[r["change_gaps_ms"]["leave" if change == "leave" else "join"] for r in runs],
                cpu_in_longest_gap=[r[change]["cpu"] for r in runs],
                **({"left_s": each("left_s")} if change == "leave" else {}),
                **({"connected_s": each("connected_s")} if change == "joined" else {}), **lost)  # fmt: skip


def _get(run: dict[str, Any], path: str) -> float:
    v: Any = run
    for key in path.split("."):
        v = v[key]
    return float(v)


def _load() -> str:
    """The machine's load averages, for the result lines (the figures are a note under load)."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main(argv: list[str] | None = None) -> Results:
    p = base_parser(__doc__ or "")
    p.add_argument("--no-write", action="store_true", help="print only; do not write bench/results/kind_rescale.jsonl")
    p.add_argument("--plan", choices=sorted(ELASTIC_PLANS), action="append", help="a plan (default: all three)")
    p.add_argument("--warm-s", type=float, default=5.0, help="training before the scale-up (default 5)")
    p.add_argument("--settle-s", type=float, default=5.0, help="after a change, before the next (default 5)")
    p.add_argument("--window", type=int, default=10, help="updates either side of a change (default 10)")
    args = p.parse_args(argv)
    k = Kind(CLUSTER)
    if not k.exists() or k.helm("status", RELEASE, "-n", OPERATOR_NS, check=False).returncode != 0:
        raise SystemExit(f"kind_rescale: no kind cluster {CLUSTER!r} with the operator installed: "
                         "REACTORFED_KIND_KEEP=1 scripts/kind-test.sh -k live_scaling_plans leaves one")  # fmt: skip
    plans = args.plan or sorted(ELASTIC_PLANS)
    runs = 1 if args.quick else args.runs
    res = Results("kind_rescale", args.out)
    done: dict[str, list[dict[str, Any]]] = {pl: [] for pl in plans}
    failed: dict[str, list[str]] = {pl: [] for pl in plans}
    logs = Path(tempfile.mkdtemp(prefix="reactorfed-kind-rescale-"))
    loads = [_load()]
    for i in range(runs):
        for pl in plans:
            try:
                r = one_run(k, ELASTIC_PLANS[pl], args, logs)
            except (RuntimeError, AssertionError, ValueError) as e:
                failed[pl].append(str(e).splitlines()[0])
                progress(f"run {i + 1}/{runs} {pl} FAILED: {e}")
                continue
            done[pl].append(r)
            loads.append(_load())
            progress(f"run {i + 1}/{runs} {pl}: " + json.dumps({key: v for key, v in r.items()}))
    for pl in plans:
        if done[pl]:
            report(res, pl, done[pl], failed[pl], args.window)
    res.add("machine load during the runs (1, 5, 15 min averages after each run)", "runs", float(runs), "none",
            0.0, "higher", runs, judged=False, why="context: other work shared the machine", loads=loads,
            cpus=os.cpu_count())  # fmt: skip
    if not args.no_write:
        progress(f"wrote {res.write()}")
    if not any(done.values()):
        raise SystemExit(f"kind_rescale: no complete run: {failed}")
    return res


if __name__ == "__main__":
    main()
