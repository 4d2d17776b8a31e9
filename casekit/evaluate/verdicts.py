"""Scoring one executed attempt into a verdict record (``schemas/verdict.schema.json``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from casekit.domains import resolve
from casekit.execution import Execution
from casekit.grid import Grid
from casekit.scoring import metrics
from casekit.scoring.artifacts import ArtifactError, load_meta, load_reference, load_solution
from casekit.scoring.gates import gate


def grid_mask(case_spec: dict[str, Any]) -> np.ndarray:
    dom = case_spec["domain"]
    return Grid.from_spec(case_spec["eval_grid"]).mask(resolve(dom["type"], dom["geometry_params"]).inside)


def verdict(record: dict[str, Any], reference: Path, ex: Execution, *, track: str, system: str,
            attempt: int) -> dict[str, Any]:
    spec = record["case_spec"]
    meta_cfg = record["evaluation_metadata"]
    tau_acc = float(meta_cfg["thresholds"]["tau_acc"])
    tau_time = float(meta_cfg["thresholds"]["tau_time"])
    failure = ex.failure
    error = None
    aux: dict[str, float] = {}
    diagnostics: dict[str, Any] = {}
    if failure is None:
        mask = grid_mask(spec)
        try:
            assert ex.artifacts is not None
            solution = load_solution(ex.artifacts, spec, mask)
            meta = load_meta(ex.artifacts)
            ref = load_reference(reference, spec)
            error = metrics.rel_l2(solution, ref, mask)
            aux = metrics.auxiliary(solution, ref, mask)
            diagnostics = _diagnostics(meta, ex.runtime)
        except ArtifactError as exc:
            failure = (exc.category, exc.message)
    runtime = ex.runtime if failure is None else None
    g = gate(failure is None, error, tau_acc, runtime, tau_time)
    if failure is None and g.stage == "F-Acc":
        failure = ("accuracy", f"error {error:.3e} exceeds the accuracy threshold")
    elif failure is None and g.stage == "F-Time":
        failure = ("runtime", f"runtime {runtime:.3f} s exceeds the runtime threshold")
    paths = {}
    if ex.artifacts is not None:
        for name in ("solution.npz", "meta.json", "stdout.txt", "stderr.txt"):
            if (ex.artifacts / name).exists():
                paths[name.split(".")[0]] = str(ex.artifacts / name)
    return {
        "case_id": record["id"], "track": track, "system": system, "attempt": attempt,
        "stage": g.stage, "passed": g.passed,
        "failure": {"category": failure[0], "message": failure[1][:2000]} if failure else None,
        "error": error, "tau_acc": tau_acc,
        "runtime": {"median": ex.runtime, "runs": ex.solve_times} if ex.runtime is not None else None,
        "tau_time": tau_time, "metrics": aux, "diagnostics": diagnostics,
        "exit_status": ex.exit_status, "stderr_tail": ex.stderr_tail, "paths": paths,
        "calibration": {"e_base": float(meta_cfg["e_base"]), "t_base": float(meta_cfg["t_base"]),
                        **{k: float(record["evaluation_config"][k]) for k in ("alpha_acc", "alpha_time", "tau_min")}},
        "math_type": record["pde_classification"]["math_type"],
        "family": record["pde_classification"]["equation_family"],
        "domain": spec["domain"]["type"],
    }


def _diagnostics(meta: dict[str, Any], runtime: float | None) -> dict[str, Any]:
    info = dict(meta.get("solver_info") or {})
    out = {k: info[k] for k in sorted(info) if isinstance(info[k], (int, float, str, bool))}
    dofs, steps = info.get("dofs"), info.get("time_steps") or 1
    if isinstance(dofs, (int, float)) and runtime:
        out["work_rate"] = dofs * steps / runtime
    out["self_reported_wall_time_sec"] = meta.get("wall_time_sec")
    return out
