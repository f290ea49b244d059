"""The conformance table: every LF program is accounted for, and the doc matches."""

from __future__ import annotations

from tests.conformance.table import DOC, all_programs, collect, render


def test_every_entry_is_an_lf_program_and_accounted_once() -> None:
    ported, left_out = collect()
    progs = set(all_programs())
    assert not set(ported) - progs, f"ported programs LF does not have: {sorted(set(ported) - progs)}"
    assert not set(left_out) - progs, f"left-out programs LF does not have: {sorted(set(left_out) - progs)}"
    both = set(ported) & set(left_out)
    assert not both, f"both ported and left out: {sorted(both)}"
    for src, why in left_out.items():
        assert len(why.strip()) > 10, f"{src} is left out without a reason"
    missing = sorted(progs - set(ported) - set(left_out))
    assert not missing, f"LF programs neither ported nor left out with a reason: {missing}"


def test_at_least_150_programs_are_ported() -> None:
    ported, _ = collect()
    assert len(ported) >= 150, len(ported)


def test_federated_programs_run_federated() -> None:
    ported, _ = collect()
    flat = [p.source for p in ported.values() if p.source.startswith("federated/") and not p.federated]
    assert not flat, f"federated programs ported without a federated run: {flat}"


def test_doc_is_generated_from_the_suite() -> None:
    assert DOC.read_text() == render(), (
        "docs/conformance.md is stale: run `python -m tests.conformance.table > docs/conformance.md`"
    )
