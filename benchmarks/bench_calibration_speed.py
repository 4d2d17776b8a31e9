"""Calibration speed per track and family on a stratified sample (printed, never asserted).

    python benchmarks/bench_calibration_speed.py [--per-family 3] [--tracks ngsolve,dolfinx]
        [--repeats 3] [--baseline-tree PATH] [--only ID ...] [--families F,...] [--out FILE]

``--per-family K`` case files per family, evenly spaced through the family's sorted files (what
``dataset_tables.py --pick K`` prints).  Each case is derived, and its calibration settings are the
ones the committed DOLFINx build calibrated it with (its record's ``calibration_config``) when the
build has the case, else the case source's.  Every track's calibration solver then runs exactly as
the build times it (``casekit.execution.execute``: sandboxed, one thread, the harness's timed
region), ``--repeats`` timed runs, median.

``--baseline-tree PATH``: the first track's solver also runs from another checkout of casekit (a
``git worktree`` at the commit to compare with), its runs interleaved with this tree's so that
"before" and "after" share the machine's load.  Errors are the relative L2 distance on the grid to
the manufactured solution (the build's e_base before refinement; no-exact cases have none), and
``diff`` the relative distance between the baseline's field and this tree's.  Raw rows go to
``--out`` (JSON).  Expect minutes per case on a busy two-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np

from casekit.build import references
from casekit.build.pipeline import source_settings
from casekit.derive import derive
from casekit.execution import execute
from casekit.model.source import load_source
from casekit.runner.limits import Limits
from casekit.scoring import metrics
from casekit.scoring.artifacts import load_solution
from casekit.solvers.settings import SolveSettings
from casekit.tracks import TRACKS

REPO = Path(__file__).resolve().parent.parent
SOURCES = REPO / "cases" / "pdeagent-bench"
RECORDS = REPO / "datasets" / "pdeagent-bench-repaired" / "build" / "dolfinx"
LIMITS = Limits(timeout_sec=1800.0, memory_mb=8000)

#: writes the solver files of a track from the casekit found on PYTHONPATH (another checkout)
_FILES = """
import json, sys
from casekit.tracks import TRACKS
files = TRACKS.get(sys.argv[1]).calibration_files(json.loads(sys.argv[2]), json.load(open(sys.argv[3])))
json.dump({k: v.decode() for k, v in files.items()}, sys.stdout)
"""


def pick(per_family: int, families: set[str] | None) -> list[Path]:
    chosen = []
    for folder in sorted(p for p in SOURCES.iterdir() if p.is_dir()):
        if families and folder.name not in families:
            continue
        files = sorted(folder.glob("*.yaml"))
        n = min(per_family, len(files))
        chosen += [files[(i * len(files)) // n] for i in range(n)]
    return chosen


def settings_of(source: Any) -> tuple[dict[str, Any], float | None]:
    """(calibration settings, the committed DOLFINx build's t_base or None)."""
    record = RECORDS / source.family / f"{source.id}.json"
    if record.is_file():
        r = json.loads(record.read_text())
        if r["status"] == "built":
            meta = r["record"]["evaluation_metadata"]
            known = {f.name for f in fields(SolveSettings)}
            given = {k: v for k, v in meta["calibration_config"].items() if k in known}
            return SolveSettings.from_dict(given).to_dict(), float(meta["t_base"])
    return source_settings(source), None


def baseline_files(tree: Path, track: str, settings: dict[str, Any], spec: dict[str, Any]) -> dict[str, bytes]:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(spec, fh)
    try:
        env = {**os.environ, "PYTHONPATH": str(tree)}
        out = subprocess.run([sys.executable, "-c", _FILES, track, json.dumps(settings), fh.name], env=env,
                             check=True, capture_output=True, text=True, cwd=tree).stdout
    finally:
        os.unlink(fh.name)
    return {k: v.encode() for k, v in json.loads(out).items()}


def run(track: str, files: dict[str, bytes], spec: dict[str, Any], mask: np.ndarray, work: Path,
        ) -> tuple[float | None, dict[str, np.ndarray] | None, str]:
    """(solve seconds, arrays, failure) of one timed run."""
    ex = execute(TRACKS.get(track), files, spec, work, repeats=1, limits=LIMITS)
    if ex.failure or ex.runtime is None:
        return None, None, f"{ex.failure}"
    return ex.runtime, load_solution(work, spec, mask), ""


def bench_case(path: Path, tracks: list[str], repeats: int, baseline: Path | None) -> dict[str, Any]:
    source = load_source(path)
    source.path = path
    d = derive(source)
    spec, mask = d.case_spec(), references.grid_mask(d)
    exact = references.manufactured(d) if source.manufactured else None
    settings, t_base = settings_of(source)
    variants: list[tuple[str, str, dict[str, bytes]]] = []
    if baseline is not None:
        variants.append(("before", tracks[0], baseline_files(baseline, tracks[0], settings, spec)))
    for track in tracks:
        label = "after" if baseline is not None and track == tracks[0] else track
        variants.append((label, track, TRACKS.get(track).calibration_files(settings, spec)))
    times: dict[str, list[float]] = {label: [] for label, _, _ in variants}
    arrays: dict[str, dict[str, np.ndarray]] = {}
    failures: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="bench-cal-") as tmp:
        for i in range(repeats):  # rounds: every variant once per round, so they share the load
            for label, track, files in variants:
                if label in failures:
                    continue
                seconds, out, why = run(track, files, spec, mask, Path(tmp) / f"{label}{i}")
                if why:
                    failures[label] = why
                    continue
                times[label].append(float(seconds))  # type: ignore[arg-type]
                arrays[label] = out  # type: ignore[assignment]
    row: dict[str, Any] = {"case": source.id, "family": source.family, "manufactured": exact is not None,
                           "cells_across": settings["cells_across"], "degree": settings["degree"],
                           "dt": settings["dt"], "t_base_record": t_base, "failures": failures,
                           "seconds": {k: statistics.median(v) for k, v in times.items() if v},
                           "runs": times, "error": {}}
    for label, out in arrays.items():
        if exact is not None:
            row["error"][label] = metrics.rel_l2(out, exact, mask)
    if "before" in arrays and "after" in arrays:
        row["diff"] = metrics.rel_l2(arrays["after"], arrays["before"], mask)
    return row


def fmt(v: float | None, spec: str = ".2f") -> str:
    return "-" if v is None else format(v, spec)


def table(rows: list[dict[str, Any]], tracks: list[str], baseline: bool) -> None:
    first, others = tracks[0], tracks[1:]
    cols = (["before", "after"] if baseline else [first]) + others
    head = ["case", "family", "level"] + [f"{c} s" for c in cols]
    head += ["e before", "e after", "diff"] if baseline else [f"e {first}"]
    if others:
        head.append(f"{first} / {others[0]}")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        s = r["seconds"]
        level = f"P{r['degree']} n={r['cells_across']}" + (f" dt={r['dt']:g}" if r["dt"] else "")
        line = [r["case"], r["family"], level] + [fmt(s.get(c)) for c in cols]
        if baseline:
            line += [fmt(r["error"].get("before"), ".4e"), fmt(r["error"].get("after"), ".4e"),
                     fmt(r.get("diff"), ".1e")]
        else:
            line.append(fmt(r["error"].get(first), ".4e"))
        if others:
            mine, theirs = s.get("after" if baseline else first), s.get(others[0])
            line.append(fmt(mine / theirs if mine and theirs else None, ".1f"))
        print("| " + " | ".join(line) + " |")
        for label, why in r["failures"].items():
            print(f"|   {label} failed: {why[:200]} |")
    print()
    print("Per family, median seconds:")
    families = sorted({r["family"] for r in rows})
    print("| family | " + " | ".join(cols) + " |")
    print("|---|" + "---|" * len(cols))
    for fam in families:
        rs = [r for r in rows if r["family"] == fam]
        vals = []
        for c in cols:
            xs = [r["seconds"][c] for r in rs if c in r["seconds"]]
            vals.append(fmt(statistics.median(xs) if xs else None))
        print(f"| {fam} | " + " | ".join(vals) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--per-family", type=int, default=3)
    ap.add_argument("--families", default="", help="comma-separated families (default: all)")
    ap.add_argument("--only", nargs="*", default=[], help="case ids (among the picked cases)")
    ap.add_argument("--tracks", default="ngsolve,dolfinx")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--baseline-tree", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    tracks = args.tracks.split(",")
    families = set(args.families.split(",")) if args.families else None
    paths = [p for p in pick(args.per_family, families) if not args.only or p.stem in args.only]
    done = json.loads(args.out.read_text()) if args.out and args.out.is_file() else []
    have = {r["case"] for r in done}
    rows = list(done)
    for path in paths:
        if path.stem in have:
            continue
        print(f"... {path.stem}", file=sys.stderr, flush=True)
        rows.append(bench_case(path, tracks, args.repeats, args.baseline_tree))
        if args.out:
            args.out.write_text(json.dumps(rows, indent=1))
    table([r for r in rows if any(p.stem == r["case"] for p in paths)], tracks, args.baseline_tree is not None)


if __name__ == "__main__":
    main()
