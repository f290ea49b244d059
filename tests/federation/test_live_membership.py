"""Live rescaling end to end (issue 19): a real federation in threads over ZeroMQ (the RTI
server and every federate's driver), a learner fed by an elastic bank of samplers. A
sampler asks to leave while it runs: the others go on, the learner sees the narrower bank
from the agreed tag, and the RTI's record has the leave. Replayed in one process from that
record, the program gives the learner exactly the trace it had in the federation."""

from __future__ import annotations

import pytest

from reactorfed import ms
from reactorfed.federation.errors import FederationError
from reactorfed.federation.process.rti_config import RtiSummary

from .elastic_programs import Main, replayed
from .harness import Federation, wait_until

TIMEOUT = ms(600)


def _replayed(summary: RtiSummary) -> Main:
    """The same program in one process, with the federated run's record as its schedule."""
    return replayed([r.change() for r in summary.membership], TIMEOUT)


def _federated_leave() -> tuple[Federation, Main]:
    """The federation with samplers[0] and [1] present; samplers[1] asks to leave once the
    learner has seen some steps. Returns the federation, ended, and the learner's program."""
    fed = Federation(Main)
    for name in ("learner", "samplers[0]", "samplers[1]"):  # (samplers[2] stays absent)
        fed.start(name, fast=False, timeout=TIMEOUT)
    wait_until(lambda: "learner" in fed.programs and len(fed.programs["learner"].learner.trace) >= 10,
               timeout=20, what="the learner's first steps")
    wait_until(lambda: "samplers[1]" in fed.coords, what="samplers[1]'s driver")
    fed.coords["samplers[1]"].request_leave()
    fed.wait(timeout=30)
    assert not fed.errors, fed.errors
    assert fed.rti_error is None, fed.rti_error
    assert not fed.coords["learner"].core.membership.dropped, "nothing from a sender that did not fail is late"
    main = fed.programs["learner"]
    assert isinstance(main, Main)
    return fed, main


def test_a_member_leaves_mid_run_and_the_replay_gives_the_same_learner_trace() -> None:
    fed, main = _federated_leave()
    summary = fed.summary
    assert summary is not None
    # Case A: the leave is in the record, and the learner sees it from its tag on.
    assert len(summary.membership) == 1, summary.membership
    rec = summary.membership[0]
    assert (rec.member, rec.bank, rec.index, rec.joined) == ("samplers[1]", "samplers", 1, False)
    leave = rec.tag
    trace = main.learner.trace
    before = [s for s in trace if (s[0], s[1]) < leave]
    after = [s for s in trace if (s[0], s[1]) >= leave]
    assert len(before) >= 10 and after, (leave, len(before), len(after))
    assert all(s[3] == (0, 1) and [i for i, _ in s[2]] == [0, 1] for s in before), before
    assert all(s[3] == (0,) and [i for i, _ in s[2]] == [0] for s in after), after
    # every step of samplers[0] arrived, to the end
    assert [v for s in trace for i, v in s[2] if i == 0] == list(range(1, len(trace) + 1))
    assert trace[-1][0] == TIMEOUT
    # the sampler that left ran its steps before the leave, and none after
    left = fed.programs["samplers[1]"]
    assert isinstance(left, Main)
    assert left.samplers[1].n == len(before)

    # Case B: the same program in one process, with the record as its schedule.
    replay = _replayed(summary)
    assert replay.learner.trace == trace


def test_a_leave_request_outside_an_elastic_bank_is_refused_at_once() -> None:
    fed = Federation(Main)
    try:
        fed.start("learner", fast=False, timeout=ms(50))
        wait_until(lambda: "learner" in fed.coords, what="the learner's driver")
        with pytest.raises(FederationError, match="learner is not a member of an elastic bank"):
            fed.coords["learner"].request_leave()
    finally:
        for name in ("samplers[0]", "samplers[1]"):
            fed.start(name, fast=False, timeout=ms(50))
        fed.wait(timeout=30)


def test_a_member_joins_mid_run_and_the_replay_gives_the_same_learner_trace() -> None:
    """Case C: samplers[2], absent at the start, connects mid-run and asks to join: it runs
    from its Admit's tag, the learner sends it weights over the link its CHANGE's address
    opened, and the replay of the record gives the learner the same trace."""
    fed = Federation(Main)
    for name in ("learner", "samplers[0]", "samplers[1]"):
        fed.start(name, fast=False, timeout=TIMEOUT)
    wait_until(lambda: "learner" in fed.programs and len(fed.programs["learner"].learner.trace) >= 10,
               timeout=20, what="the learner's first steps")
    fed.start("samplers[2]", fast=False, timeout=TIMEOUT)
    fed.wait(timeout=30)
    assert not fed.errors, fed.errors
    assert fed.rti_error is None, fed.rti_error
    summary = fed.summary
    assert summary is not None
    assert len(summary.membership) == 1, summary.membership
    rec = summary.membership[0]
    assert (rec.member, rec.index, rec.joined) == ("samplers[2]", 2, True)
    main = fed.programs["learner"]
    assert isinstance(main, Main)
    trace = main.learner.trace
    before = [s for s in trace if (s[0], s[1]) < rec.tag]
    after = [s for s in trace if (s[0], s[1]) >= rec.tag]
    assert len(before) >= 10 and after, (rec.tag, len(before), len(after))
    assert all(s[3] == (0, 1) for s in before) and all(s[3] == (0, 1, 2) for s in after)
    assert (after[0][0], after[0][1]) == rec.tag and (2, 2001) in after[0][2], "its first step, at its join"
    assert not fed.coords["learner"].core.membership.dropped, "the joiner's first step is waited for, not late"
    joiner = fed.programs["samplers[2]"]
    assert isinstance(joiner, Main)
    assert joiner.samplers[2].n == sum(1 for s in after for i, _ in s[2] if i == 2) > 0
    assert joiner.samplers[2].weights, "the learner's weights reached the joiner"

    replay = _replayed(summary)
    assert replay.learner.trace == trace
    assert replay.samplers[2].weights == joiner.samplers[2].weights
