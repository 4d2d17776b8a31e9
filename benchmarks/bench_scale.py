"""Scale: builds and evaluations on 1 and 2 local workers and on a Dask LocalCluster of 1 and 2
workers (printed, never asserted).

The subset is the committed sample's all-family, all-domain subset: for every family
``--per-family`` cases (default 3, so 33), chosen so that every domain template appears.  Each
configuration builds it into a fresh build directory (no shared stage cache, so every
configuration does all the work; a Dask configuration runs on a LocalCluster started before
the measurement, as a running cluster is used), builds it again with only the timed calibrations cached (the
untimed stages alone: derivation, validation, meshing, references, cheater trials, records), and
then evaluates ``--submissions`` attempts (the cases' calibration solvers as submissions of
several systems, ``--eval-repeats`` timed runs each).  Printed per configuration: wall times,
the share of the build outside the FEM solves (of its tasks' time, and of its wall time x
workers), the evaluation's overhead per attempt and per sandboxed run (outside every timed
region), and the speed-ups of 2 workers over 1.  "outside runs" sums the sandboxed runs' own
wall times, which overlap while a series is staged (``casekit.execution.run_series``), so it
is a lower bound.  Then a projection, from the measured
per-task costs, of the wall time of the 645-case build on three tracks and of 10 systems x 3
attempts on N workers.

    python benchmarks/bench_scale.py [--per-family 3] [--submissions 100]
        [--configs local:1,local:2,dask:1,dask:2] [--out build/bench-scale] [--track dolfinx] [--repeats 3]
        [--eval-repeats 1]
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from casekit.build.pipeline import BuildOptions
from casekit.build.run import build
from casekit.evaluate.baselines import write_baselines
from casekit.evaluate.run import EvalOptions, evaluate
from casekit.evaluate.store import open_store
from casekit.executors import ExecutorOptions
from casekit.model.source import load_source_dict

REPO = Path(__file__).resolve().parent.parent
#: the paper's dataset: cases, and cases per track (DOLFINx all; Firedrake and deal.II a part)
PAPER_CASES = {"dolfinx": 645, "firedrake": 510, "dealii": 313}


def subset(per_family: int) -> list[Path]:
    """``per_family`` cases of every family, greedily covering every domain template."""
    by_family: dict[str, list[tuple[str, Path]]] = defaultdict(list)
    for path in sorted((REPO / "cases").glob("*/*.yaml")):
        src = load_source_dict(path)
        by_family[src["family"]].append((src["domain"]["template"], path))
    seen: set[str] = set()
    out = []
    for family in sorted(by_family):
        pool = list(by_family[family])
        for _ in range(min(per_family, len(pool))):
            pick = next((p for p in pool if p[0] not in seen), pool[0])
            pool.remove(pick)
            seen.add(pick[0])
            out.append(pick[1])
    return out


def run_config(kind: str, workers: int, paths: list[Path], submissions: int, out: Path, track: str,
               repeats: int = 1, eval_repeats: int = 1) -> dict[str, Any]:
    root = out / f"{kind}-{workers}"
    shutil.rmtree(root, ignore_errors=True)
    cluster = None
    if kind == "dask":  # a running cluster, as users keep one: its start-up is not the build's
        from distributed import LocalCluster

        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    try:
        return _measure(kind, workers, paths, submissions, root, track, repeats, eval_repeats,
                        ExecutorOptions(kind, workers, scheduler=cluster.scheduler_address if cluster else None))
    finally:
        if cluster is not None:
            cluster.close()


def _measure(kind: str, workers: int, paths: list[Path], submissions: int, root: Path, track: str,
             repeats: int, eval_repeats: int, executor: ExecutorOptions) -> dict[str, Any]:
    t0 = time.monotonic()
    outcomes = build(paths, BuildOptions(root / "build", track, repeats=repeats), executor=executor)
    build_wall = time.monotonic() - t0
    built = [o for o in outcomes if o.status == "built"]
    task = sum(sum(o.stage_seconds.values()) for o in outcomes)
    solve = sum(o.solve_seconds for o in outcomes)
    runs = sum(o.process_seconds for o in outcomes)
    # the untimed stages alone: the same build again with only the timed calibrations cached
    # (derivation, validation, meshing, references, cheater trials and records are redone)
    for stage in ("reference", "trial"):
        shutil.rmtree(root / "build" / "cache" / stage, ignore_errors=True)
    t0 = time.monotonic()
    build(paths, BuildOptions(root / "build", track, repeats=repeats), executor=executor)
    untimed_wall = time.monotonic() - t0

    row = {"config": f"{kind}:{workers}", "workers": workers, "cases": len(outcomes), "built": len(built),
           "build_wall": build_wall, "build_task_seconds": task, "build_solve_seconds": solve,
           "build_run_seconds": runs, "untimed_wall": untimed_wall, "attempts": 0, "eval_repeats": eval_repeats}
    if submissions <= 0:  # builds only
        return row
    store = open_store(root / "build", track)
    write_baselines(store, root / "subs", ("calibration",), track)
    systems = max(1, round(submissions / max(len(store.records), 1)))
    dirs = []
    for i in range(systems):  # the same calibration code under several system names
        d = root / "systems" / f"system_{i + 1}"
        shutil.copytree(root / "subs" / "calibration", d)
        dirs.append(d)
    t0 = time.monotonic()
    verdicts = evaluate(EvalOptions(store, dirs, root / "eval", track, repeats=eval_repeats, executor=executor))
    eval_wall = time.monotonic() - t0
    timed = sum(sum(v["runtime"]["runs"]) for v in verdicts if v["runtime"])
    cal_timed = sum(sum(runs) for runs in {v["case_id"]: v["timing"]["reference_runs"] for v in verdicts}.values())
    return {**row, "attempts": len(verdicts),
            "attempt_runs": sum(len(v["runtime"]["runs"]) for v in verdicts if v["runtime"]),
            "passed": sum(v["passed"] for v in verdicts), "eval_wall": eval_wall,
            "eval_timed_seconds": timed + cal_timed,
            "calibration_runs": sum(len(runs) for runs in {v["case_id"]: v["timing"]["reference_runs"]
                                                           for v in verdicts}.values())}


def report(rows: list[dict[str, Any]]) -> None:
    """Per configuration: the build (wall, share of task time outside the FEM solves' timed
    regions and outside the sandboxed solver runs altogether, speed-up over 1 worker of the same
    kind), the untimed stages alone (wall, speed-up),
    and the evaluation (wall, overhead per attempt: wall x workers minus every timed region, over
    the attempts, so the paired calibration runs' overhead is shared by the attempts; speed-up)."""
    print(f"\n{'config':>8s} {'cases':>5s} {'build s':>8s} {'non-FEM':>8s} {'of wall':>8s} {'non-run':>8s} "
          f"{'speed-up':>8s} "
          f"{'untimed s':>9s} {'speed-up':>8s} {'attempts':>8s} {'eval s':>7s} {'overhead/attempt':>16s} "
          f"{'per run':>8s} {'speed-up':>8s}")
    base = {r["config"].split(":")[0]: r for r in rows if r["workers"] == 1}
    for r in rows:
        b = base.get(r["config"].split(":")[0])
        non_fem = 1 - r["build_solve_seconds"] / r["build_task_seconds"] if r["build_task_seconds"] else float("nan")
        non_fem_wall = 1 - r["build_solve_seconds"] / (r["build_wall"] * r["workers"])
        non_run = 1 - r.get("build_run_seconds", float("nan")) / r["build_task_seconds"] \
            if r["build_task_seconds"] else float("nan")
        sb = b["build_wall"] / r["build_wall"] if b else float("nan")
        su = b["untimed_wall"] / r["untimed_wall"] if b else float("nan")
        line = (f"{r['config']:>8s} {r['built']:>2d}/{r['cases']:<2d} {r['build_wall']:8.1f} {100 * non_fem:7.1f}% "
                f"{100 * non_fem_wall:7.1f}% {100 * non_run:7.1f}% {sb:8.2f} {r['untimed_wall']:9.1f} {su:8.2f} "
                f"{r['attempts']:8d} ")
        if r["attempts"]:
            outside = r["eval_wall"] * r["workers"] - r["eval_timed_seconds"]
            overhead = outside / r["attempts"]
            per_run = outside / max(r.get("attempt_runs", r["attempts"]) + r["calibration_runs"], 1)
            se = b["eval_wall"] / r["eval_wall"] if b and b["attempts"] else float("nan")
            line += f"{r['eval_wall']:7.1f} {overhead:14.2f} s {per_run:6.2f} s {se:8.2f}"
        else:
            line += f"{'-':>7s} {'-':>16s} {'-':>8s} {'-':>8s}"
        print(line)
    one = next((r for r in rows if r["workers"] == 1), None)
    if one is None:
        return
    per_case = one["build_wall"] / max(one["cases"], 1)
    per_attempt = one["eval_wall"] / one["attempts"] if one["attempts"] else float("nan")
    print("\nprojection from one worker's measured cost per task "
          f"({per_case:.1f} s per case built, {per_attempt:.1f} s per attempt evaluated; DOLFINx costs for every "
          "track, the other tracks measured slower or faster per family in bench_build):")
    print(f"{'workers':>8s} {'build 645 + 510 + 313 cases':>28s} {'10 systems x 3 attempts x 645':>30s}")
    for n in (1, 2, 8, 32, 128):
        b = sum(PAPER_CASES.values()) * per_case / n
        e = 10 * 3 * 645 * per_attempt / n
        print(f"{n:8d} {b / 3600:26.1f} h {e / 3600:28.1f} h")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-family", type=int, default=3)
    ap.add_argument("--submissions", type=int, default=100, help="attempts to evaluate (0: builds only)")
    ap.add_argument("--configs", default="local:1,local:2,dask:1,dask:2")
    ap.add_argument("--track", default="dolfinx")
    ap.add_argument("--out", type=Path, default=REPO / "build" / "bench-scale")
    ap.add_argument("--repeats", type=int, default=3, help="timed calibration runs per case (casekit build: 3)")
    ap.add_argument("--eval-repeats", type=int, default=1,
                    help="timed runs per attempt in the evaluation (casekit evaluate: 3)")
    args = ap.parse_args()
    paths = subset(args.per_family)
    print(f"{len(paths)} cases, {args.submissions} submissions, configurations {args.configs}", flush=True)
    rows = []
    for cfg in args.configs.split(","):
        kind, _, n = cfg.partition(":")
        rows.append(run_config(kind, int(n or 1), paths, args.submissions, args.out, args.track, args.repeats,
                               args.eval_repeats))
        print(json.dumps(rows[-1]), flush=True)
        (args.out / "scale.json").write_text(json.dumps(rows, indent=1))
    report(rows)


if __name__ == "__main__":
    main()
