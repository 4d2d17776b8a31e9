"""Evaluator overhead per submission (printed, never asserted).

For a small and a large evaluation grid (2-D and 3-D), a submission that does almost nothing
(writes a field of the right shape) is run the way the evaluator runs every submission: prepare,
an isolated run in the local sandbox, artifact checks, the error and the auxiliary metrics.  The
table shows, per run, the sandbox overhead (the run's wall time minus its timed region), the
check + metric time, and both relative to a one-second solve, so the overhead can be weighed
against typical runtimes (t_base medians are ~0.3-30 s).

    python benchmarks/bench_evaluator.py
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from casekit.authoring.builder import build_source
from casekit.derive import derive
from casekit.execution import execute
from casekit.model.source import CaseSource
from casekit.runner.limits import Limits
from casekit.scoring import metrics
from casekit.scoring.artifacts import load_meta, load_solution
from casekit.tracks import TRACKS

SUBMISSION = b'''import json, numpy as np

def solve(case_spec):
    g = case_spec["eval_grid"]
    b = g["bbox"]
    axes = {"x": np.linspace(b[0], b[1], g["nx"]), "y": np.linspace(b[2], b[3], g["ny"])}
    shape = (g["ny"], g["nx"])
    if "nz" in g:
        axes["z"] = np.linspace(b[4], b[5], g["nz"])
        shape = (g["nz"],) + shape
    np.savez("solution.npz", u=np.ones(shape), **axes)
    json.dump({"wall_time_sec": 0.0, "status": "ok"}, open("meta.json", "w"))
'''

GRIDS = [("unit_square", {"nx": 64, "ny": 64}), ("unit_square", {"nx": 512, "ny": 512}),
         ("unit_cube", {"nx": 32, "ny": 32, "nz": 32}), ("unit_cube", {"nx": 96, "ny": 96, "nz": 96})]


def main() -> None:
    track = TRACKS.get("dolfinx")
    print(f"{'grid':>14s} {'points':>9s} {'run wall':>9s} {'solve':>7s} {'sandbox':>8s} {'checks':>7s} "
          f"{'overhead':>9s} {'vs 1 s solve':>12s}")
    for domain, grid in GRIDS:
        src = build_source("poisson", domain, {}, seed=1)
        src["eval_grid"] = grid
        d = derive(CaseSource.from_dict(src))
        spec = d.case_spec()
        ref = {"u": np.full(d.grid.shape, 2.0)}
        mask = d.domain.inside(d.grid.points()).reshape(d.grid.shape)
        walls, solves, checks = [], [], []
        with tempfile.TemporaryDirectory() as tmp:
            ex = execute(track, {"solver.py": SUBMISSION}, spec, Path(tmp) / "a", repeats=3,
                         limits=Limits(timeout_sec=120))
            assert ex.ok, ex.failure
            for r in ex.runs[1:]:
                walls.append(r.wall_seconds)
                solves.append(r.solve_seconds or 0.0)
            for _ in range(3):
                t0 = time.perf_counter()
                arrays = load_solution(Path(tmp) / "a", spec, mask)
                load_meta(Path(tmp) / "a")
                metrics.rel_l2(arrays, ref, mask)
                metrics.auxiliary(arrays, ref, mask)
                checks.append(time.perf_counter() - t0)
        wall, solve, check = (statistics.median(v) for v in (walls, solves, checks))
        sandbox = wall - solve
        overhead = sandbox + check
        label = "x".join(str(grid[k]) for k in ("nx", "ny", "nz") if k in grid)
        print(f"{label:>14s} {int(np.prod(d.grid.shape)):9d} {wall:9.3f} {solve:7.3f} {sandbox:8.3f} {check:7.3f} "
              f"{overhead:9.3f} {overhead / 1.0:11.0%}")
    print("sandbox = run wall time - timed region (namespace set-up, interpreter and library imports, copy-out); "
          "checks = artifact checks + error + auxiliary metrics")


if __name__ == "__main__":
    main()
