"""casekit's DOLFINx calibration side by side with the anchor's oracle (printed, never asserted).

The anchor is PDEAgent-Bench (github.com/YusanX/pde-agent-bench): its records ship with one
DOLFINx "oracle" solver per family (``pdebench/oracle/``), whose ``solve(oracle_config)`` times
itself (``baseline_time``: mesh, spaces, forms, solve and grid sampling, after the imports) and
is its runtime baseline.  This script needs a checkout of that repository (optional: nothing else
in casekit does):

    git clone https://github.com/YusanX/pde-agent-bench ../pde-agent-bench
    .venv/bin/pip install pygmsh meshio        # the anchor's oracle meshes with them
    python benchmarks/bench_anchor.py --anchor ../pde-agent-bench [CASE_ID ...] [--repeats 5]

For every record id (default: the eight below) it imports the record with casekit's importer
(``casekit import pdeagent-bench --repair``: same PDE, domain, manufactured solution, grid and
mesh resolution -- the anchor's ``mesh.resolution`` N becomes N times the diameter cells across,
so the two meshes have the same h), then, in each of ``--repeats`` rounds, in alternating
order:

* **casekit**: the case's calibration solver timed as the build times ``t_base`` (casekit's
  harness in a fresh process with an empty JIT cache, from after the track's imports to the exit
  of the process), but outside the sandbox, whose cgroup would give it another CPU share than the
  anchor's process under load;
* **anchor**: ``OracleSolver().solve(oracle_config)`` on the original record, in a fresh process
  with an empty JIT cache (the state every casekit run starts from), timed by the anchor itself.

With ``--match-dofs``, casekit's mesh is first refined or coarsened (untimed runs) until its
degrees of freedom are closest to the anchor's: the imported mesh size is the anchor's h, but
gmsh's unstructured meshes at h have about 16 % more triangles than the anchor's structured unit
square and 15 % fewer tetrahedra than its structured cube.  ``--match-error`` then refines it in
steps of 1 % until casekit's error is at most the anchor's: the times then compare solves of
equal or better accuracy (two meshers' meshes of the same number of unknowns differ by a few per
cent in error, either way).

Both solutions are sampled with casekit's sampler on the record's evaluation grid and scored by
casekit against the manufactured solution (relative L2 over the points inside the exact domain),
so the two errors are comparable; the anchor's own grid sampling (NaN at grid points just outside
its polygonal mesh) and its own error are not used.  Printed per case: the degrees of freedom,
the error and the median time of each, and the ratio anchor / casekit (at least 1 when casekit's
calibration is as fast).  ``--anchor-cache warm`` times the anchor with a JIT cache filled by an
untimed run (how a second run on the anchor's machine would see it; casekit never runs warm).

Shims (the anchor targets DOLFINx 0.10 with a full PETSc; casekit's environment is DOLFINx 0.11
from the ``dolfinx-solver-real`` wheel), applied in the anchor's process, none in its tree:

* the wheel's PETSc has no hypre: ``pc_type hypre`` becomes ``gamg`` (PETSc's own algebraic
  multigrid; the same method class: AMG-preconditioned Krylov) in every option dictionary given
  to ``LinearProblem`` and ``NonlinearProblem``;
* there is no h5py: the anchor's gmsh -> meshio -> XDMF file -> DOLFINx round trip for gmsh
  domains is replaced by building the same mesh in memory from the same points and cells
  (``dolfinx.mesh.create_mesh``), which is slightly faster than the file round trip;
* the FEM function the anchor samples first (its solution) is kept, to be sampled by casekit
  after the anchor's timer has stopped.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
HARNESS = REPO / "casekit" / "runner" / "harness_python.py"
#: poisson, 3-D poisson, 3-D heat, 3-D convection-diffusion, Navier-Stokes, and one case each on an
#: annulus (curved boundaries), a star and an L-shape (linear elasticity)
DEFAULT_CASES = ("poisson_basic", "poisson_3d_smooth_trig", "heat_3d_basic_decay", "cd_3d_basic_diffusion",
                 "navier_stokes_basic", "poisson_annulus_sinsin", "poisson_star_5pt_sinsin",
                 "le_exp_lshape_sinusoidal")
THREADS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

#: run in a fresh interpreter: argv = anchor checkout, oracle_config.json, case_spec.json; writes
#: solution.npz and meta.json (casekit's artifacts) in the working directory
ANCHOR_RUN = r'''
import dolfinx_solver  # noqa: F401  (before dolfinx)
import json, sys
anchor, config_path, spec_path = sys.argv[1:4]
sys.path.insert(0, anchor)
import numpy as np
import basix.ufl, meshio
from dolfinx import fem, mesh as dmesh
from dolfinx.fem import petsc as fpetsc
from mpi4py import MPI

def no_hypre(cls):
    init = cls.__init__
    def __init__(self, *args, petsc_options=None, **kwargs):
        if petsc_options and petsc_options.get("pc_type") == "hypre":
            petsc_options = {k: ("gamg" if k == "pc_type" else v) for k, v in petsc_options.items()
                             if not k.startswith("pc_hypre")}
        init(self, *args, petsc_options=petsc_options, **kwargs)
    cls.__init__ = __init__
no_hypre(fpetsc.LinearProblem)
no_hypre(fpetsc.NonlinearProblem)

MESHES = {}
def write(name, m, *args, **kwargs):  # meshio.write of the anchor's XDMF round trip
    MESHES[str(name)] = m
class XDMFFile:
    def __init__(self, comm, name, mode):
        self.m = MESHES.pop(str(name))
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        return False
    def read_mesh(self, name="Grid"):
        (kind, cells), = self.m.cells_dict.items()
        pts = np.ascontiguousarray(self.m.points)
        element = basix.ufl.element("Lagrange", kind, 1, shape=(pts.shape[1],))
        return dmesh.create_mesh(MPI.COMM_WORLD, cells.astype(np.int64), element, pts)
meshio.write = write

from pdebench.oracle import OracleSolver
import pdebench.oracle.oracle  # noqa: F401  (imports every family module)
import pdebench.oracle.common as common
common.XDMFFile = XDMFFile
SAMPLED = []
def keep(fn):
    def wrapper(u, *args, **kwargs):
        if not SAMPLED:
            SAMPLED.append(u)
        return fn(u, *args, **kwargs)
    return wrapper
for mod in [m for n, m in sys.modules.items() if n.startswith("pdebench.oracle.") and m is not common]:
    for name, value in list(vars(mod).items()):
        if callable(value) and "sample" in name and getattr(value, "__module__", "") == common.__name__:
            setattr(mod, name, keep(value))

config = json.load(open(config_path))
result = OracleSolver().solve(config)
u = SAMPLED[0]
V = u.function_space
dofs = result.num_dofs
if V.dofmap.index_map.size_global == dofs:  # the anchor counts blocks of a vector space
    dofs *= V.dofmap.index_map_bs
sys.path.insert(0, __import__("os").environ["CASEKIT_REPO"])
from casekit.solvers.artifacts import OutputGrid
from casekit.tracks.dolfinx.solvers.sampling import evaluate
spec = json.load(open(spec_path))
grid = OutputGrid(spec)
grid.write(grid.assemble(evaluate(u, grid.points[grid.inside])), result.baseline_time,
           {"dofs": int(dofs), "anchor_error": float(result.baseline_error), "solver_info": result.solver_info})
'''


def fail(message: str) -> None:
    print(f"bench_anchor: {message}", file=sys.stderr)
    raise SystemExit(2)


#: what the anchor's oracle imports beyond casekit's DOLFINx environment
ANCHOR_NEEDS = ("pygmsh", "meshio")


def check_anchor(path: Path) -> Path:
    import importlib.util

    missing = [m for m in ANCHOR_NEEDS if importlib.util.find_spec(m) is None]
    if missing:
        fail(f"the anchor's oracle needs {', '.join(missing)}, which casekit does not: "
             f"{Path(sys.executable).parent / 'pip'} install {' '.join(missing)}")
    if not path.exists():
        fail(f"the anchor checkout {path} does not exist; fetch it first: "
             f"git clone https://github.com/YusanX/pde-agent-bench {path}")
    if not (path / "pdebench" / "oracle" / "oracle.py").is_file():
        fail(f"{path} is not a PDEAgent-Bench checkout (no pdebench/oracle/oracle.py); "
             "pass the repository's root (github.com/YusanX/pde-agent-bench)")
    return path.resolve()


class Case:
    """One record: the anchor's oracle_config and casekit's imported, derived case."""

    def __init__(self, record: dict[str, Any]) -> None:
        from casekit.build import references
        from casekit.build.pipeline import source_settings
        from casekit.derive import derive
        from casekit.importers import IMPORTERS
        from casekit.model.source import CaseSource
        from casekit.validate import check_source

        self.id = record["id"]
        self.config = record["oracle_config"]
        imported = IMPORTERS.get("pdeagent-bench")(record, repair=True)
        # a record the import does not keep for fairness (its forcing is a multiple of the
        # solution, say) still times the same solve: only a case casekit cannot build stops here
        problems = [p for p in check_source(imported.source) if not p.check.startswith("leak")]
        if problems:
            raise SystemExit(f"bench_anchor: {self.id} does not import cleanly: {problems[0].render()}")
        source = CaseSource.from_dict(imported.source)
        self.derived = derive(source)
        self.spec = self.derived.case_spec()
        self.settings = source_settings(source)
        self.mask = references.grid_mask(self.derived)
        self.reference = references.manufactured(self.derived)
        self.casekit: list[tuple[float, float, int]] = []  # (seconds, error, dofs) per round
        self.anchor: list[tuple[float, float, int]] = []

    def score(self, out: Path) -> tuple[float, int]:
        from casekit.scoring import metrics
        from casekit.scoring.artifacts import load_meta, load_solution

        arrays = load_solution(out, self.spec, self.mask)
        info = load_meta(out).get("solver_info", {})
        return metrics.rel_l2(arrays, self.reference, self.mask), int(info.get("dofs", -1))


def run_casekit(case: Case, work: Path) -> None:
    """One timed run of the calibration solver: casekit's harness, timed as the sandbox times it
    (from the harness's start signal, after the track's imports, to the exit of the process), in
    a fresh process with an empty JIT cache -- outside the sandbox, so that both sides run in the
    same cgroup under the same load."""
    from casekit.tracks import TRACKS
    from casekit.tracks.base import THREAD_ENV

    track = TRACKS.get("dolfinx")
    work.mkdir(parents=True)
    for name, data in track.calibration_files(case.settings, case.spec).items():
        (work / name).write_bytes(data)
    (work / "case_spec.json").write_text(json.dumps(case.spec))
    r_fd, w_fd = os.pipe()
    env = {"PATH": f"{track.python().parent}:/usr/bin:/bin", "HOME": str(work),  # type: ignore[attr-defined]
           "XDG_CACHE_HOME": str(work / "xdg"), **THREAD_ENV, "CASEKIT_TIMING_FD": str(w_fd),
           "CASEKIT_PRELOAD": ",".join(track.preload)}  # type: ignore[attr-defined]
    proc = subprocess.Popen([str(track.python()), "-s", str(HARNESS)], cwd=work, env=env,  # type: ignore[attr-defined]
                            pass_fds=(w_fd,), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    os.close(w_fd)
    started = os.read(r_fd, 1)
    start = time.monotonic()
    _, err = proc.communicate()
    seconds = time.monotonic() - start
    os.close(r_fd)
    if proc.returncode != 0 or not started:
        raise SystemExit(f"bench_anchor: casekit's calibration failed on {case.id}: {err.decode()[-2500:]}")
    error, dofs = case.score(work)
    case.casekit.append((seconds, error, dofs))


def run_anchor(case: Case, anchor: Path, work: Path, cache: Path | None) -> None:
    work.mkdir(parents=True, exist_ok=True)
    (work / "config.json").write_text(json.dumps(case.config))
    (work / "spec.json").write_text(json.dumps(case.spec))
    xdg = cache or work / "xdg"
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(work), "XDG_CACHE_HOME": str(xdg),
           "CASEKIT_REPO": str(REPO), **THREADS}

    def once() -> None:
        r = subprocess.run([sys.executable, "-c", ANCHOR_RUN, str(anchor), "config.json", "spec.json"], cwd=work,
                           env=env, capture_output=True, text=True, timeout=1800)
        if r.returncode != 0:
            raise SystemExit(f"bench_anchor: the anchor's oracle failed on {case.id}: {r.stderr[-2500:]}")

    if cache is not None and not cache.exists():
        once()  # fills the JIT cache, untimed
    once()
    error, dofs = case.score(work)
    seconds = json.loads((work / "meta.json").read_text())["wall_time_sec"]
    case.anchor.append((seconds, error, dofs))


def match_dofs(case: Case, anchor: Path, root: Path) -> None:
    """Refine or coarsen casekit's mesh (``cells_across``, untimed runs) until its degrees of
    freedom are closest to the anchor's (the importer's mesh size gives the same h, but not the
    same number of cells as the anchor's structured squares and cubes)."""
    run_anchor(case, anchor, root / f"match-an-{case.id}", None)
    target, tried = case.anchor[-1][2], {}
    n = case.settings["cells_across"]
    for i in range(4):
        if n in tried:
            break
        case.settings = {**case.settings, "cells_across": n}
        run_casekit(case, root / f"match-ck-{case.id}-{i}")
        tried[n] = case.casekit[-1][2]
        n = max(2, round(n * (target / tried[n]) ** (1 / case.derived.dim)))
    best = min(tried, key=lambda k: abs(tried[k] - target))
    case.settings = {**case.settings, "cells_across": best}
    case.casekit.clear()
    case.anchor.clear()
    print(f"{case.id}: cells_across {best} ({tried[best]} dofs; the anchor's {target})", file=sys.stderr)


def match_error(case: Case, anchor: Path, root: Path) -> None:
    """After :func:`match_dofs`: refine casekit's mesh one step at a time (untimed runs) until its
    error is at most the anchor's, so the times compare solves of equal or better accuracy (two
    meshers' meshes of the same size differ by a few per cent in error either way)."""
    run_anchor(case, anchor, root / f"match-err-an-{case.id}", None)
    target = case.anchor[-1][1]
    n = case.settings["cells_across"]
    for i in range(12):
        case.settings = {**case.settings, "cells_across": n}
        run_casekit(case, root / f"match-err-ck-{case.id}-{i}")
        if case.casekit[-1][1] <= target:
            break
        n += max(1, round(0.01 * n))
    else:
        print(f"{case.id}: casekit's error {case.casekit[-1][1]:.3e} is still above the anchor's {target:.3e} at "
              f"cells_across {n}", file=sys.stderr)
    print(f"{case.id}: cells_across {n} for an error of at most the anchor's ({case.casekit[-1][1]:.3e} <= "
          f"{target:.3e}; {case.casekit[-1][2]} dofs)", file=sys.stderr)
    case.casekit.clear()
    case.anchor.clear()


def median(runs: list[tuple[float, float, int]], i: int) -> float:
    return statistics.median(r[i] for r in runs)


def table(cases: list[Case]) -> None:
    print(f"\n{'case':<26s} {'dofs casekit':>12s} {'dofs anchor':>11s} {'err casekit':>11s} {'err anchor':>10s} "
          f"{'t_base [s]':>10s} {'anchor [s]':>10s} {'anchor/t_base':>13s}")
    for c in cases:
        tc, ta = median(c.casekit, 0), median(c.anchor, 0)
        print(f"{c.id:<26s} {c.casekit[-1][2]:>12d} {c.anchor[-1][2]:>11d} {median(c.casekit, 1):>11.2e} "
              f"{median(c.anchor, 1):>10.2e} {tc:>10.2f} {ta:>10.2f} {ta / tc:>13.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cases", nargs="*", default=list(DEFAULT_CASES), help="record ids (default: the eight)")
    ap.add_argument("--anchor", type=Path, default=os.environ.get("PDEAGENT_BENCH"),
                    help="a checkout of github.com/YusanX/pde-agent-bench (default: $PDEAGENT_BENCH)")
    ap.add_argument("--records", type=Path, help="the records (default: ANCHOR/data/benchmark_v2.jsonl)")
    ap.add_argument("--repeats", type=int, default=3, help="interleaved rounds (default 3)")
    ap.add_argument("--anchor-cache", choices=("cold", "warm"), default="cold",
                    help="the anchor's JIT cache: empty in every run (default, as casekit's) or filled once")
    ap.add_argument("--match-dofs", action="store_true",
                    help="size casekit's mesh to the anchor's degrees of freedom first (default: the imported size)")
    ap.add_argument("--match-error", action="store_true",
                    help="then refine it until its error is at most the anchor's (implies --match-dofs)")
    ap.add_argument("--json", type=Path, help="also write every run's (seconds, error, dofs) here")
    args = ap.parse_args()
    if args.anchor is None:
        print("bench_anchor: skipped (optional): pass --anchor PATH, a checkout of "
              "github.com/YusanX/pde-agent-bench, or set PDEAGENT_BENCH")
        return
    anchor = check_anchor(args.anchor)
    records_path = args.records or anchor / "data" / "benchmark_v2.jsonl"
    if not records_path.is_file():
        fail(f"no records at {records_path} (--records FILE)")
    records = {}
    with records_path.open() as fh:
        for line in fh:
            if line.strip():
                rec = json.loads(line)
                records[rec["id"]] = rec
    unknown = [c for c in args.cases if c not in records]
    if unknown:
        fail(f"no record {', '.join(unknown)} in {records_path}")
    cases = [Case(records[c]) for c in args.cases]
    with tempfile.TemporaryDirectory(prefix="casekit-anchor-") as tmp:
        root = Path(tmp)
        if args.match_dofs or args.match_error:
            for case in cases:
                match_dofs(case, anchor, root)
                if args.match_error:
                    match_error(case, anchor, root)
        for r in range(args.repeats):
            for i, case in enumerate(cases):
                cache = root / "cache" / case.id if args.anchor_cache == "warm" else None
                sides = [lambda c=case, w=root / f"ck-{case.id}-{r}": run_casekit(c, w),
                         lambda c=case, w=root / f"an-{case.id}-{r}", k=cache: run_anchor(c, anchor, w, k)]
                for side in sides if (r + i) % 2 == 0 else sides[::-1]:  # alternate who runs first
                    side()
                print(f"round {r + 1}/{args.repeats} {case.id}: casekit {case.casekit[-1][0]:.2f} s "
                      f"(error {case.casekit[-1][1]:.2e}), anchor {case.anchor[-1][0]:.2f} s "
                      f"(error {case.anchor[-1][1]:.2e})", file=sys.stderr, flush=True)
    table(cases)
    if args.json:
        args.json.write_text(json.dumps({c.id: {"casekit": c.casekit, "anchor": c.anchor} for c in cases}, indent=1))


if __name__ == "__main__":
    main()
