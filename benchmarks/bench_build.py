"""Build figures per track and family from a build directory (printed, never asserted).

    python benchmarks/bench_build.py [BUILD_DIR]      (default: build/, as `casekit build` writes)

Per family: cases built / rejected / failed, the median, 95th percentile and maximum of e_base
(to compare with the paper's table), the median t_base, the median time of each build stage
per case, the share of the build spent outside the FEM solves (when the build recorded it), and,
where two tracks built a case, the median cross-track distance against its bound.  Build the
sample first: `casekit build cases --track dolfinx` (then `--track dealii`).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from casekit.build.pipeline import STAGES


def load(build_dir: Path) -> dict[str, list[dict]]:
    by_track: dict[str, list[dict]] = defaultdict(list)
    for status in sorted(build_dir.glob("*/*/status.json")):
        if status.parent.parent.name in ("cache", "jit"):
            continue
        s = json.loads(status.read_text())
        if "family" not in s:  # builds before the family was recorded: take it from the id
            s["family"] = next((f for f in FAMILIES if s["case_id"].startswith(f + "_")), "?")
        by_track[status.parent.parent.name].append(s)
    return by_track


FAMILIES = ("navier_stokes", "poisson", "helmholtz", "biharmonic", "linear_elasticity", "heat",
            "convection_diffusion", "reaction_diffusion", "stokes", "burgers", "wave")


def fmt(v: float | None, spec: str = ".1e") -> str:
    return "-" if v is None or not np.isfinite(v) else format(v, spec)


def table(track: str, rows: list[dict]) -> None:
    print(f"\n## {track}: {len(rows)} cases")
    stages = sorted({k for r in rows for k in r.get("stage_seconds", {})},
                    key=lambda k: STAGES.index(k) if k in STAGES else 99)
    head = (f"{'family':22s} {'built':>5s} {'rej':>4s} {'fail':>4s} {'e_base med':>10s} {'p95':>8s} {'max':>8s} "
            f"{'t_base med':>10s} " + " ".join(f"{s[:9]:>9s}" for s in stages) + f" {'non-FEM':>8s} {'x-track':>8s}")
    print(head)
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        groups[r["family"]].append(r)
    groups["ALL"] = rows
    for fam in [*sorted(k for k in groups if k != "ALL"), "ALL"]:
        rs = groups[fam]
        built = [r for r in rs if r["status"] == "built"]
        e = np.array([r["e_base"] for r in built if r.get("e_base") is not None])
        t = np.array([r["t_base"] for r in built if r.get("t_base") is not None])
        stage = [np.median([r["stage_seconds"].get(s, 0.0) for r in built]) if built else float("nan") for s in stages]
        total = sum(sum(r["stage_seconds"].values()) for r in built)
        solve = sum(r.get("solve_seconds", 0.0) for r in built)
        non_fem = (1 - solve / total) if total and any("solve_seconds" in r for r in built) else None
        ratios = [a["distance"] / a["bound"] for r in built for a in r.get("agreement", {}).values() if a["bound"]]
        print(f"{fam:22s} {len(built):5d} {sum(r['status'] == 'rejected' for r in rs):4d} "
              f"{sum(r['status'] == 'failed' for r in rs):4d} "
              f"{fmt(np.median(e) if e.size else None):>10s} {fmt(np.percentile(e, 95) if e.size else None):>8s} "
              f"{fmt(e.max() if e.size else None):>8s} {fmt(np.median(t) if t.size else None, '.3f'):>10s} "
              + " ".join(f"{fmt(v, '.2f'):>9s}" for v in stage)
              + f" {fmt(non_fem, '.0%'):>8s} {fmt(np.median(ratios) if ratios else None, '.2f'):>8s}")
    for r in rows:
        if r["status"] in ("rejected", "failed"):
            print(f"  {r['status']}: {r['case_id']}: {r['reason'][:160]}")


def main() -> None:
    build_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("build")
    tracks = load(build_dir)
    if not tracks:
        print(f"no builds under {build_dir} (run `casekit build cases --track dolfinx --build-dir {build_dir}`)")
        return
    print(f"build directory {build_dir}; x-track = median (cross-track distance / bound), < 1 agrees")
    for track, rows in sorted(tracks.items()):
        table(track, rows)


if __name__ == "__main__":
    main()
