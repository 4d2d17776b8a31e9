"""The repaired PDEAgent-Bench build in numbers (printed, never asserted): what ``nox -s dataset``
produced on every track, next to the paper's figures.

    python benchmarks/dataset_tables.py [--build build/dataset] [--sources cases/pdeagent-bench]
        [--records ../shared/data/pdeagent-bench-v2.jsonl]

Prints, as Markdown tables:

* the build per track: cases built, rejected and failed, with their reasons grouped, and the
  build's time (the sum of the cases' stage times: the wall time of a one-worker build);
* per family and track: e_base median / 95th percentile / max and t_base median, beside the
  paper's per-family e_base (PAPER_E_BASE, from the paper's Table 2);
* the kept cases per family and math type beside the original records' (the paper's Table 3
  distribution), math types as casekit assigns them;
* per track, the full build's time projected from the cases built so far: per family, the mean
  of their stage times times the family's cases (for a build that could not finish here).

``--pick K`` prints K case files per family instead (evenly spaced through each family), to
build a stratified part first:

    casekit build $(python benchmarks/dataset_tables.py --pick 2) --track dolfinx --build-dir build/dataset
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
#: the paper's DOLFINx calibration per family: (cases, median e_base, 95th percentile, max)
PAPER_E_BASE = {
    "poisson": (91, 8.0e-5, 3.5e-4, 1.2e-3), "helmholtz": (62, 2.5e-4, 9.0e-4, 1.8e-2),
    "biharmonic": (57, 3.0e-4, 1.2e-3, 2.5e-2), "linear_elasticity": (63, 2.0e-4, 8.0e-4, 8.0e-3),
    "heat": (50, 1.5e-4, 5.0e-4, 2.0e-3), "convection_diffusion": (84, 3.0e-4, 4.5e-4, 3.5e-2),
    "reaction_diffusion": (64, 2.8e-4, 7.2e-4, 2.2e-2), "stokes": (61, 3.5e-4, 2.0e-3, 4.0e-2),
    "navier_stokes": (28, 5.0e-4, 5.0e-3, 4.9e-2), "burgers": (43, 3.0e-4, 1.8e-3, 2.8e-2),
    "wave": (42, 2.0e-4, 8.0e-4, 1.0e-2),
}
#: the paper's cases per track (its tracks run 645, 510 and 313 cases)
PAPER_TRACKS = {"dolfinx": 645, "firedrake": 510, "dealii": 313}


def statuses(build: Path, track: str) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((build / track).glob("*/status.json"))]


def reason_class(reason: str) -> str:
    """A rejection or failure reason without its case-specific numbers and names."""
    text = re.sub(r"\[log: [^\]]*\]", "", reason)
    text = re.sub(r"[-+]?\d+(\.\d+)?(e[-+]?\d+)?", "#", text)
    return text.strip()[:160]


def build_table(build: Path, tracks: list[str]) -> None:
    print("\n## Build per track\n")
    print("| track | cases | built | rejected | failed | build time (sum of case stages) |")
    print("|---|---|---|---|---|---|")
    for track in tracks:
        rows = statuses(build, track)
        c = Counter(r["status"] for r in rows)
        total = sum(sum(r.get("stage_seconds", {}).values()) for r in rows)
        print(f"| {track} | {len(rows)} | {c['built']} | {c['rejected']} | {c['failed']} | {total / 3600:.2f} h |")
    for track in tracks:
        reasons = Counter((r["status"], reason_class(r["reason"])) for r in statuses(build, track)
                          if r["status"] in ("rejected", "failed"))
        if reasons:
            print(f"\n{track}, not built:\n")
            print("| status | reason | cases |")
            print("|---|---|---|")
            for (status, why), n in reasons.most_common():
                print(f"| {status} | {why} | {n} |")


def family_table(build: Path, tracks: list[str]) -> None:
    print("\n## Calibration per family and track (built cases)\n")
    head = "| family | paper: cases, e_base median / p95 / max |"
    for track in tracks:
        head += f" {track}: n, e_base median / p95 / max, t_base median |"
    print(head)
    print("|" + "---|" * (2 + len(tracks)))
    by: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for track in tracks:
        for r in statuses(build, track):
            if r["status"] == "built":
                by[(r["family"], track)].append(r)
    for family, (n, med, p95, mx) in PAPER_E_BASE.items():
        line = f"| {family} | {n}, {med:.1e} / {p95:.1e} / {mx:.1e} |"
        for track in tracks:
            rows = by.get((family, track), [])
            if not rows:
                line += " 0 |"
                continue
            e = np.array([r["e_base"] for r in rows])
            t = np.array([r["t_base"] for r in rows])
            line += (f" {len(rows)}, {np.median(e):.1e} / {np.percentile(e, 95):.1e} / {e.max():.1e}, "
                     f"{np.median(t):.2f} s |")
        print(line)


def family_sources(sources: Path) -> dict[str, list[Path]]:
    out: dict[str, list[Path]] = {}
    for path in sorted(sources.glob("*/*.yaml")):
        out.setdefault(path.parent.name, []).append(path)
    return out


def pick(sources: Path, k: int) -> list[Path]:
    """``k`` case files per family, evenly spaced through the family's sorted files."""
    chosen = []
    for files in family_sources(sources).values():
        n = min(k, len(files))
        chosen += [files[(i * len(files)) // n] for i in range(n)]
    return chosen


def projection_table(build: Path, sources: Path, tracks: list[str]) -> None:
    """The full build of every case on each track, from the mean time per case of each family
    so far (one worker: the sum of stage times; N workers on one machine divide the untimed part
    only -- the timed calibrations take the machine-wide lock)."""
    counts = {family: len(files) for family, files in family_sources(sources).items()}
    print("\n## Full build projected from the cases built so far (one worker)\n")
    print("| track | family | cases | done | s per case | projected |")
    print("|---|---|---|---|---|---|")
    for track in tracks:
        per: dict[str, list[float]] = defaultdict(list)
        for r in statuses(build, track):
            per[r["family"]].append(sum(r.get("stage_seconds", {}).values()))
        everything = [t for ts in per.values() for t in ts]
        if not everything:
            continue
        total = 0.0
        for family, n in sorted(counts.items()):
            ts = per.get(family) or everything  # no case of the family yet: the track's mean
            mean = float(np.mean(ts))
            total += mean * n
            mark = "" if per.get(family) else " (track mean)"
            print(f"| {track} | {family} | {n} | {len(per.get(family, []))} | {mean:.0f}{mark} | "
                  f"{mean * n / 3600:.2f} h |")
        print(f"| {track} | all | {sum(counts.values())} | {len(everything)} | | **{total / 3600:.1f} h** |")


def distribution_table(sources: Path, records: Path) -> None:
    from casekit.families import FAMILIES
    from casekit.model.source import load_source_dict

    paper: Counter[tuple[str, str]] = Counter()
    for line in records.read_text().splitlines():
        if line.strip():
            rec = json.loads(line)
            cls = rec.get("pde_classification", {})
            math = cls.get("math_type")
            family = cls.get("equation_family") or rec.get("oracle_config", {}).get("pde", {}).get("type", "?")
            paper[(family, ",".join(math) if isinstance(math, list) else str(math))] += 1
    kept: Counter[tuple[str, str]] = Counter()
    for path in sorted(sources.glob("*/*.yaml")):
        src = load_source_dict(path)
        family = FAMILIES.get(src["family"])
        transient = bool((src.get("pde") or {}).get("time"))
        kept[(src["family"], ",".join(family.math_types(transient)))] += 1
    print("\n## Cases per family and math type (the paper's records; the kept cases)\n")
    print("| family | math type | paper | kept |")
    print("|---|---|---|---|")
    for key in sorted(set(paper) | set(kept)):
        print(f"| {key[0]} | {key[1]} | {paper.get(key, 0)} | {kept.get(key, 0)} |")
    print(f"| all | | {sum(paper.values())} | {sum(kept.values())} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", type=Path, default=REPO / "build" / "dataset")
    ap.add_argument("--sources", type=Path, default=REPO / "cases" / "pdeagent-bench")
    ap.add_argument("--records", type=Path, default=REPO.parent / "shared" / "data" / "pdeagent-bench-v2.jsonl")
    ap.add_argument("--pick", type=int, default=0, metavar="K", help="print K case files per family and stop")
    args = ap.parse_args()
    if args.pick:
        print("\n".join(str(p) for p in pick(args.sources, args.pick)))
        return
    tracks = sorted(p.name for p in args.build.iterdir() if p.is_dir() and p.name != "cache") \
        if args.build.is_dir() else []
    if tracks:
        build_table(args.build, tracks)
        family_table(args.build, tracks)
        projection_table(args.build, args.sources, tracks)
    else:
        print(f"no build in {args.build} (nox -s dataset builds it)")
    if args.records.is_file():
        distribution_table(args.sources, args.records)
    else:
        print(f"no records at {args.records} (--records FILE)")


if __name__ == "__main__":
    main()
