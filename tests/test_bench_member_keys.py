"""bench/member_keys.py runs the same chain with a key per member and with a shared secret,
and measures each (the figures are the benchmark's; here only that both modes run as said)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from bench.member_keys import NAMES, run_chain
from bench.processes import Federation

pytestmark = [pytest.mark.timeout(180)]


def test_a_federation_by_hand_gets_a_key_per_member_or_a_shared_secret(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REACTORFED_KEY_FILE", str(tmp_path / "someone-else.key"))  # (never passed on)
    keyed = Federation(tmp_path, "bench/federation_programs.py:TagChain", {"n": 1}, [], "k", members=NAMES)
    try:
        assert "REACTORFED_SECRET" not in keyed.env and "REACTORFED_KEY_FILE" not in keyed.env
        for name in NAMES:
            flags = keyed.key_flags[name]
            assert flags[0] == "--key-file" and Path(flags[1]).is_file()
        assert "--member-keys" in keyed.rti.popen.args
    finally:
        keyed.kill()
    (tmp_path / "s").mkdir()
    shared = Federation(tmp_path / "s", "bench/federation_programs.py:TagChain", {"n": 1}, [], "s")
    try:
        assert len(shared.env["REACTORFED_SECRET"]) >= 32 and not shared.key_flags
    finally:
        shared.kill()
    assert os.environ["REACTORFED_KEY_FILE"]  # (the test's own setting, untouched)


@pytest.mark.parametrize("keyed", [True, False], ids=["per-member", "shared"])
def test_each_mode_runs_the_chain_and_reports_its_figures(keyed: bool) -> None:
    r = run_chain(keyed, 200, 1024, quiet=False)
    assert set(r) == {"join_s", "per_tag_us", "frames_per_s"}
    assert 0 < r["join_s"] < 60 and r["per_tag_us"] > 0 and r["frames_per_s"] > 0
