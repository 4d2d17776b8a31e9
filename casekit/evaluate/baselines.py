"""Baseline submissions written from built cases: the calibration solvers (which must pass) and
the trivial cheaters (which must fail the accuracy gate)."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

from casekit.build.cheaters import KINDS as CHEATERS
from casekit.build.cheaters import applicable, cheater
from casekit.evaluate.store import CaseStore
from casekit.jsonio import atomic_write_bytes
from casekit.solvers.settings import SolveSettings
from casekit.tracks import TRACKS

KINDS = ("calibration", *CHEATERS)


def calibration_settings(record: dict[str, Any]) -> dict[str, Any]:
    known = {f.name for f in fields(SolveSettings)}
    return {k: v for k, v in record["evaluation_metadata"]["calibration_config"].items() if k in known}


def write_baselines(store: CaseStore, out: Path, kinds: tuple[str, ...], track: str) -> dict[str, int]:
    """out/<kind>/<case_id>/solver.py for each kind; returns how many each kind got."""
    counts = dict.fromkeys(kinds, 0)
    t = TRACKS.get(track)
    for case_id, record in sorted(store.records.items()):
        for kind in kinds:
            if kind == "calibration":
                files = t.calibration_submission(calibration_settings(record), record["case_spec"])
            elif t.language == "python" and applicable(kind, record["case_spec"]):  # cheaters are Python
                files = cheater(kind)
            else:
                continue
            for name, data in files.items():
                atomic_write_bytes(out / kind / case_id / name, data)
            counts[kind] += 1
    return counts
