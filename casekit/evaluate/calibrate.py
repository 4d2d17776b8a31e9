"""``casekit calibrate-timing``: the calibration solvers re-timed on this machine.

For users who want absolute runtime thresholds for their hardware instead of paired timing: each
case's calibration solver runs ``repeats`` times here (fresh state per run, as every run) and its
median becomes that case's t_reference; ``casekit evaluate --timing file --timing-file FILE``
then gates on ``alpha_time * t_reference`` without re-timing.  The file records the machine, so a
table from another machine is recognisable as such.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from casekit.build.machine import machine
from casekit.errors import CasekitError, UsageError
from casekit.evaluate.baselines import calibration_settings
from casekit.evaluate.store import CaseStore
from casekit.evaluate.verdicts import RunScorer, grid_mask
from casekit.execution import execute
from casekit.jsonio import atomic_write_text, dumps
from casekit.runner.limits import Limits
from casekit.tracks import TRACKS

FORMAT = "casekit-timing/1"


def calibrate_timing(store: CaseStore, track_name: str, out: Path, *, repeats: int = 5, runner: str = "local",
                     progress: Callable[[str, float], None] = lambda case, t: None) -> dict[str, Any]:
    if repeats < 1:
        raise UsageError("--repeats must be at least 1")
    if not store.records:
        raise UsageError(f"{store.root} holds no built cases for the {track_name} track")
    track = TRACKS.get(track_name)
    table: dict[str, Any] = {"format": FORMAT, "track": track_name, "machine": machine(), "repeats": repeats,
                             "cases": {}}
    for case_id, record in sorted(store.records.items()):
        spec = record["case_spec"]
        files = track.calibration_submission(calibration_settings(record), spec)
        scorer = RunScorer(spec, store.reference(case_id).load(spec), grid_mask(spec, case_id))
        limits = Limits(timeout_sec=float(record["evaluation_config"]["timeout_sec"]))
        with tempfile.TemporaryDirectory(prefix="casekit-timing-") as tmp:
            ex = execute(track, files, spec, Path(tmp) / "a", repeats=repeats, limits=limits, runner=runner,
                         hide=(store.root,), check=scorer)
        if ex.failure or ex.runtime is None:
            why = f"{ex.failed_run}: {ex.failure[1]}" if ex.failure else "no timing"
            raise CasekitError(f"the calibration solver of {case_id} fails on this machine: {why}", case_id=case_id)
        table["cases"][case_id] = {"t_reference": ex.runtime, "runs": ex.solve_times,
                                   "t_base": float(record["evaluation_metadata"]["t_base"])}
        progress(case_id, ex.runtime)
    atomic_write_text(out, dumps(table, indent=2))
    return table


def read_timing_file(path: Path, track: str) -> dict[str, float]:
    """case id -> t_reference from a ``calibrate-timing`` file (checked)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path} cannot be read as a timing file: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("cases"), dict):
        raise UsageError(f"{path} is not a timing file", valid=f"the output of casekit calibrate-timing ({FORMAT})")
    if data.get("track") != track:
        raise UsageError(f"{path} times the {data.get('track')!r} track, not {track!r}")
    out = {}
    for case_id, entry in data["cases"].items():
        t = entry.get("t_reference") if isinstance(entry, dict) else None
        if not isinstance(t, (int, float)) or not t > 0:
            raise UsageError(f"{path}: case {case_id} has no positive t_reference")
        out[str(case_id)] = float(t)
    return out
