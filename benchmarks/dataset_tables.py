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
  distribution), math types as casekit assigns them.
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
    args = ap.parse_args()
    tracks = sorted(p.name for p in args.build.iterdir() if p.is_dir() and p.name != "cache") \
        if args.build.is_dir() else []
    if tracks:
        build_table(args.build, tracks)
        family_table(args.build, tracks)
    else:
        print(f"no build in {args.build} (nox -s dataset builds it)")
    if args.records.is_file():
        distribution_table(args.sources, args.records)
    else:
        print(f"no records at {args.records} (--records FILE)")


if __name__ == "__main__":
    main()
