"""The decision histories of the two PBT implementations in one form, and their comparison
(bench/pbt.py): what reactorfed's controller records (``decisions.jsonl``), what Ray Tune's
``PopulationBasedTraining`` logs (``pbt_global.txt`` in the experiment's folder), and the
controller's progress lines, which time reactorfed's rounds from the outside.

A history is the list of exploits in the order they were decided, each
``{"trial", "donor", "iteration", "hparams"}``: the trial that took another's weights, the
trial it took them from, the trial's iteration then, and its new hyperparameters. Both
sides decide exactly that; reactorfed also records its rankings and keeps, which Tune does
not log.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["Exploit", "compare", "progress_round", "ray_history", "reactorfed_history", "tag_index"]

Exploit = dict[str, Any]


def tag_index(tag: str) -> int:
    """The trial's index in a Tune experiment tag (``"3_clip_param=0.15,lr=0.001"``: 3), the
    part that does not change from run to run (trial ids carry a random prefix)."""
    head = str(tag).split("_", 1)[0]
    if not head.isdigit():
        raise ValueError(f"not a Tune experiment tag (no leading trial index): {tag!r}")
    return int(head)


def ray_history(lines: Iterable[str], names: Sequence[str]) -> list[Exploit]:
    """The exploits of Tune's ``pbt_global.txt`` (one JSON list a line: [target tag, clone
    tag, target iteration, clone iteration, clone config, new config]), with the new values
    of the hyperparameters ``names`` (the mutated ones; the rest of the config is the same
    throughout). Tune logs the trial's iteration as of its previous result (one before the
    perturbation iteration it exploits at): kept as logged, since only runs of one side are
    compared."""
    out: list[Exploit] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        row = json.loads(line)
        if not (isinstance(row, list) and len(row) == 6 and isinstance(row[5], dict)):
            raise ValueError(f"pbt_global.txt line {n}: not [target, clone, iteration, clone iteration, "
                             f"old config, new config]: {line[:120]!r}")
        target, clone, iteration, _, _, new = row
        out.append({"trial": tag_index(target), "donor": tag_index(clone), "iteration": int(iteration),
                    "hparams": {k: new[k] for k in names}})
    return out


def reactorfed_history(rows: Iterable[Mapping[str, Any]]) -> list[Exploit]:
    """The exploits of reactorfed's decision record (its ``exploit`` rows)."""
    return [{"trial": int(r["trial"]), "donor": int(r["donor"]), "iteration": int(r["iteration"]),
             "hparams": dict(r["hparams"])} for r in rows if r.get("kind") == "exploit"]


def compare(a: Sequence[Any], b: Sequence[Any]) -> tuple[bool, int | None]:
    """Whether two histories are equal, and the index of the first entry where they differ
    (one history ending first differs where it ends; None when equal)."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return False, i
    if len(a) != len(b):
        return False, min(len(a), len(b))
    return True, None


def read_lines(path: str | Path) -> list[str]:
    p = Path(path)
    return p.read_text(encoding="utf-8").splitlines() if p.exists() else []


# the controller's line on stderr after each decision (``progress=true``); launched, the
# launcher puts the federate's name in front
_ROUND = re.compile(r"tune iteration (?P<it>\d+): (?P<rest>.*)$")
_BEST = re.compile(r"best trial (?P<trial>\d+) (?P<metric>-?[\d.]+|nan)")


def progress_round(line: str) -> tuple[int, float | None, bool] | None:
    """A controller progress line: (iteration, the best trial's metric or None (the first
    line, or no episode yet), whether the population stopped there: its trials complete);
    None for any other line."""
    m = _ROUND.search(line)
    if m is None:
        return None
    best = _BEST.search(m["rest"])
    metric = float(best["metric"]) if best and best["metric"] != "nan" else None
    return int(m["it"]), metric, "complete trial" in m["rest"]
