"""Scoring executed attempts into verdict records (``schemas/verdict.schema.json``).

Every run of an attempt is scored (:class:`RunScorer` is the per-run check): the accuracy gate
takes the largest error over the runs, so an attempt cannot be fast in some runs and accurate in
others.  The runtime gate holds every run to it, for the same reason: a run that solves slowly
and leaves its answer where a later run could find it fast gains nothing.  By default (paired
timing) each run is divided by the calibration solver's run timed just before it in the same
round on the same machine, and the largest of these ratios must be at most ``alpha_time``
(:func:`casekit.thresholds.runtime_ratio`); without paired runs, the slowest run is compared with
``alpha_time * t_reference``.

Whatever an attempt leaves, scoring ends in one verdict that conforms to
``schemas/verdict.schema.json`` and is JSON without NaN or Infinity: every number is checked
finite where it is computed (:mod:`casekit.scoring.metrics`, the runtime ratio here), and a
verdict is checked whole before it is returned or journaled (:func:`checked`).  Anything that
fails -- an unexpected error while scoring, a number that is not finite, a field the schema does
not allow -- is that attempt's ``scoring_error`` with the reason, never an exception that stops
the evaluation of the others.
"""

from __future__ import annotations

import datetime
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from casekit import __version__, schema
from casekit.domains import resolve
from casekit.errors import CasekitError, pointer_join
from casekit.execution import Execution, Failure
from casekit.grid import Grid
from casekit.jsonio import content_hash, dumps, unicode_safe
from casekit.scoring import metrics
from casekit.scoring.artifacts import ArtifactError, load_meta, load_solution, load_targets
from casekit.scoring.gates import gate
from casekit.thresholds import runtime_ratio, tau_time
from casekit.unscored import inside_mask, scored_mask


def grid_mask(case_spec: dict[str, Any], case_id: str | None = None) -> np.ndarray:
    """The points every error is computed on (casekit.unscored.scored_mask)."""
    return scored_mask(case_spec, case_id)


@dataclass
class Timing:
    """What the runtime gate compares with: ``mode`` is ``paired`` (the calibration solver timed
    here, interleaved with the submissions), ``build`` (the build's t_base) or ``file`` (a
    ``casekit calibrate-timing`` table for this machine)."""

    mode: str
    t_reference: float
    runs: list[float] = field(default_factory=list)
    machine: str = ""


@dataclass
class RunScorer:
    """The per-run check of one attempt: loads and scores each run's artifacts."""

    case_spec: dict[str, Any]
    reference: dict[str, np.ndarray]
    mask: np.ndarray
    errors: list[float] = field(default_factory=list)
    metrics: dict[str, float] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    #: where the worst run's error is (boundary band, parts, components): for feedback
    profile: dict[str, Any] = field(default_factory=dict)
    #: the hidden value of each target (empty: the case has none, or they are not scored here)
    exact: dict[str, float] = field(default_factory=dict)
    #: each target's relative error, the worst over the runs
    target_errors: dict[str, float] = field(default_factory=dict)
    #: the grid points inside the domain (computed at the first run)
    inside: np.ndarray | None = None

    def __call__(self, out_dir: Path) -> Failure | None:
        try:
            if self.inside is None:  # where a solution must be finite: every point inside, unscored or not
                self.inside = inside_mask(self.case_spec)
            solution = load_solution(out_dir, self.case_spec, self.inside)
            meta = load_meta(out_dir)
            values = load_targets(out_dir, self.case_spec) if self.exact else {}
            error = metrics.rel_l2(solution, self.reference, self.mask)
            if not math.isfinite(error):
                return ("non_finite", "the error is not finite (overflowing values)")
            for name, exact in self.exact.items():
                e = metrics.rel_scalar(values[name], exact)
                if not math.isfinite(e):
                    return ("non_finite", f"the error of target {name!r} is not finite (overflowing values)")
                self.target_errors[name] = max(e, self.target_errors.get(name, 0.0))
            if not self.errors or error >= max(self.errors):
                self.metrics = {k: float(v) for k, v in metrics.auxiliary(solution, self.reference, self.mask).items()
                                if math.isfinite(v)}
                self.profile = error_profile(self.case_spec, solution, self.reference, self.mask)
            self.errors.append(error)
            self.meta = meta
        except (ArtifactError, metrics.ScoringError) as exc:
            return (exc.category, exc.message)
        except Exception as exc:  # a hostile artifact must never stop the evaluation
            return ("scoring_error", f"the artifacts could not be scored: {type(exc).__name__}: {str(exc)[:300]}")
        return None


def record_hash(record: dict[str, Any]) -> str:
    """The case record's content hash: the sha256 of its canonical JSON without ``content_hash``
    (what :meth:`casekit.model.record.CaseRecord.compute_hash` gives).  Computed, never read from
    the record, so a record edited after its build counts as changed too."""
    return content_hash({k: v for k, v in record.items() if k != "content_hash"})


def exact_targets(record: dict[str, Any]) -> dict[str, float]:
    """The hidden value of each target of a built case (empty without targets)."""
    hidden = record["evaluation_metadata"].get("targets") or {}
    return {e["name"]: float(hidden[e["name"]]["value"]) for e in record["case_spec"].get("targets") or []}


def target_results(record: dict[str, Any], scorer: RunScorer | None, scored: bool) -> list[dict[str, Any]]:
    """Per target: its worst relative error over the runs (None when the attempt was not
    scored), threshold and whether it passes."""
    hidden = record["evaluation_metadata"].get("targets") or {}
    out = []
    for e in record["case_spec"].get("targets") or []:
        tau = float(hidden[e["name"]]["tau"])
        err = scorer.target_errors.get(e["name"]) if scorer is not None and scored else None
        out.append({"name": e["name"], "kind": e["kind"], "error": err, "tau": tau,
                    "passed": err is not None and err <= tau})
    return out


def verdict(record: dict[str, Any], ex: Execution, scorer: RunScorer | None, timing: Timing | None, *, track: str,
            system: str, attempt: int, submission_sha256: str = "",
            convergence: dict[str, Any] | None = None, prompt_variant: str = "standard") -> dict[str, Any]:
    """The attempt's verdict, :func:`checked`: an error while making it is the attempt's
    ``scoring_error`` (its runs and logs kept, nothing it produced scored).  Only a record that
    cannot make even that verdict raises (the case's fault, never an attempt's).  It records the
    prompt variant the submission was written from (casekit.prompts.variants)."""
    try:
        v = _verdict(record, ex, scorer, timing, track=track, system=system, attempt=attempt,
                     submission_sha256=submission_sha256, convergence=convergence)
    except Exception as exc:
        failure = ("scoring_error", f"the attempt could not be scored: {type(exc).__name__}: {str(exc)[:300]}")
        v = _verdict(record, replace(ex, failure=failure, failed_run=""), None, timing, track=track, system=system,
                     attempt=attempt, submission_sha256=submission_sha256)
    return checked({**v, "prompt_variant": prompt_variant})


def _verdict(record: dict[str, Any], ex: Execution, scorer: RunScorer | None, timing: Timing | None, *, track: str,
             system: str, attempt: int, submission_sha256: str = "",
             convergence: dict[str, Any] | None = None) -> dict[str, Any]:
    spec = record["case_spec"]
    meta_cfg = record["evaluation_metadata"]
    config = record["evaluation_config"]
    tau_acc = float(meta_cfg["thresholds"]["tau_acc"])
    failure = ex.failure
    if failure is not None and ex.failed_run and len(ex.runs) > 1:
        failure = (failure[0], f"{ex.failed_run}: {failure[1]}")
    error = max(scorer.errors) if scorer is not None and scorer.errors and failure is None else None
    runtime = ex.slowest if failure is None else None
    t_ref = timing.t_reference if timing is not None else float(meta_cfg["t_base"])
    tau_t = tau_time(config, t_ref)
    ratio = runtime_ratio(ex.solve_times, timing.runs if timing else [], t_ref) \
        if runtime is not None and t_ref > 0 else None
    if ratio is not None and not math.isfinite(ratio):
        failure = ("scoring_error", f"the runtime ratio is not finite ({ratio}: runs {ex.solve_times}, reference "
                                    f"{timing.runs if timing else []} or {t_ref})")
        error = runtime = ratio = None
    targets = target_results(record, scorer, error is not None)
    failed_targets = [t for t in targets if not t["passed"]]
    # the gate compares ratio * t_ref with alpha_time * t_ref, i.e. the ratio with alpha_time
    g = gate(failure is None and error is not None, error, tau_acc, ratio * t_ref if ratio is not None else None,
             tau_t, targets_ok=not failed_targets)
    if failure is None and error is None:
        failure = ("missing_artifact", "no run produced artifacts")
    if failure is None and g.stage == "F-Acc" and error is not None and not error <= tau_acc:
        failure = ("accuracy", f"error {error:.3e} exceeds the accuracy threshold")
    elif failure is None and g.stage == "F-Acc":
        failure = ("target_accuracy", "; ".join(f"target {t['name']!r} has relative error {t['error']:.3e}, above its "
                                               "accuracy threshold" for t in failed_targets))
    elif failure is None and g.stage == "F-Time":
        failure = ("runtime", f"runtime {runtime:.3f} s exceeds the runtime threshold" if runtime is not None
                   else "a run was not timed")
    paths = {}
    if ex.artifacts is not None:
        for name in ("solution.npz", "meta.json", "targets.json", "stdout.txt", "stderr.txt"):
            if (ex.artifacts / name).exists():
                paths[name.split(".")[0]] = str(ex.artifacts / name)
    diagnostics = _diagnostics(scorer.meta if scorer is not None else {}, runtime)
    extra: dict[str, Any] = {"convergence": convergence} if convergence is not None else {}
    if targets:
        extra["targets"] = targets
    return unicode_safe({
        "case_id": record["id"], "track": track, "system": system, "attempt": attempt,
        "stage": g.stage, "passed": g.passed,
        "failure": {"category": failure[0], "message": failure[1][:2000]} if failure else None,
        "error": error, "errors": list(scorer.errors) if scorer is not None else [], "tau_acc": tau_acc,
        "runtime": {"median": ex.runtime, "max": ex.slowest, "runs": ex.solve_times}
        if ex.runtime is not None else None,
        "tau_time": tau_t,
        "timing": {"mode": timing.mode if timing else "build", "t_reference": t_ref,
                   "reference_runs": timing.runs if timing else [],
                   "ratio": ratio,
                   "machine": timing.machine if timing else ""},
        "metrics": scorer.metrics if scorer is not None and error is not None else {},
        "error_profile": scorer.profile if scorer is not None and error is not None else {},
        "diagnostics": diagnostics,
        "exit_status": ex.exit_status, "stderr_tail": ex.stderr_tail, "paths": paths,
        "sandbox_notes": [n[:300] for n in ex.runs[-1].notes][:10] if ex.runs else [],
        "submission_sha256": submission_sha256,
        "record_content_hash": record_hash(record),
        "casekit_version": __version__,
        "evaluated_at": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "calibration": {"e_base": float(meta_cfg["e_base"]), "t_base": float(meta_cfg["t_base"]),
                        **{k: float(config[k]) for k in ("alpha_acc", "alpha_time", "tau_min")}},
        "math_type": record["pde_classification"]["math_type"],
        "family": record["pde_classification"]["equation_family"],
        "domain": spec["domain"]["type"],
        **extra,
    })


def error_profile(case_spec: dict[str, Any], solution: dict[str, np.ndarray], reference: dict[str, np.ndarray],
                  mask: np.ndarray) -> dict[str, Any]:
    """Where the error is, relative to the boundary parts: the band is two grid spacings wide."""
    dom = case_spec["domain"]
    domain = resolve(dom["type"], dom["geometry_params"])
    grid = Grid.from_spec(case_spec["eval_grid"])
    pts = grid.points()
    b = grid.bbox
    spacing = max((b[2 * i + 1] - b[2 * i]) / max(n - 1, 1) for i, n in enumerate(grid.shape[::-1]))
    distances = {tag: domain.geometry.tag_distance(tag, pts) for tag in domain.tags()}
    return metrics.error_profile(solution, reference, mask, pts, distances, 2 * spacing)


def _unscored() -> dict[str, Any]:
    """What an attempt produced, emptied in its ``scoring_error`` verdict (new containers each
    time: verdicts are changed after they are made)."""
    return {"stage": "F-Exec", "passed": False, "error": None, "errors": [], "runtime": None, "metrics": {},
            "error_profile": {}, "diagnostics": {}}


def _emptied(key: str) -> tuple[bool, Any]:
    """(True, the empty value) for a field a ``scoring_error`` verdict may empty."""
    empty = {**_unscored(), "exit_status": None, "stderr_tail": "", "paths": {}}
    return (key in empty, empty.get(key))


def checked(v: dict[str, Any]) -> dict[str, Any]:
    """``v`` when it is sound -- it conforms to the verdict schema and is JSON without NaN or
    Infinity, what the journal writes -- else that attempt's ``scoring_error`` verdict naming the
    first problem: its identity, thresholds, calibration, logs and paths kept, everything the
    attempt produced (error, runtime, metrics, profile, diagnostics, the targets' errors,
    convergence) left unscored.  The last check before a verdict is returned or journaled, so no
    field of one attempt stops an evaluation; raises only when what the record and the evaluation
    give every attempt of the case (identity, thresholds, calibration, timing) is not sound."""
    problem = unsound(v)
    if problem is None:
        return v
    message = f"the verdict could not be written: {problem[1]}"[:2000]
    out: dict[str, Any] = {**v, **_unscored(), "failure": {"category": "scoring_error", "message": message}}
    out.pop("convergence", None)
    if isinstance(out.get("timing"), dict):
        out["timing"] = {**out["timing"], "ratio": None}
    if isinstance(out.get("targets"), list):
        out["targets"] = [{**t, "error": None, "passed": False} for t in out["targets"] if isinstance(t, dict)]
    required = set(schema.schema("verdict")["required"])
    why = problem[1]
    for _ in range(len(out) + 1):  # each round empties or drops one field
        left = unsound(out)
        if left is None:
            return out
        key, why = left
        if key is None:
            break
        can_empty, empty = _emptied(key)
        if can_empty and out.get(key) != empty:
            out[key] = empty
        elif key not in required and key in out:
            del out[key]
        else:
            break
    raise CasekitError(f"the verdict of system {v.get('system')!r}, attempt {v.get('attempt')} cannot be written: "
                       f"{why}", case_id=str(v.get("case_id")))


def unsound(v: Any) -> tuple[str | None, str] | None:
    """The first problem of a verdict, as (the top-level field it is in, or None; what is wrong):
    a value JSON cannot hold (NaN, Infinity, an integer beyond 64 bits, another type), a
    departure from ``schemas/verdict.schema.json``; None when there is none."""
    if not isinstance(v, dict):
        return None, f"a verdict is a JSON object, not {type(v).__name__}"
    stack: list[tuple[Any, tuple[str, ...]]] = [(v, ())]
    while stack:
        obj, path = stack.pop()
        top = path[0] if path else None
        where = pointer_join(*path) or "/"
        if isinstance(obj, dict):
            for k, x in obj.items():
                if not isinstance(k, str):
                    return top, f"{where}: the key {str(k)[:40]!r} is not text"
                stack.append((x, (*path, k)))
        elif isinstance(obj, (list, tuple)):
            stack.extend((x, (*path, str(i))) for i, x in enumerate(obj))
        elif isinstance(obj, float):
            if not math.isfinite(obj):
                return top, f"{where}: {obj} is not a finite number"
        elif isinstance(obj, int) and not isinstance(obj, bool):
            if abs(obj) >= 2**63:
                return top, f"{where}: an integer beyond 64 bits"
        elif obj is not None and not isinstance(obj, (bool, str)):
            return top, f"{where}: a {type(obj).__name__} is not a JSON value"
    problems = schema.validate(v, "verdict")
    if problems:
        parts = problems[0].pointer.split("/")
        top = parts[1].replace("~1", "/").replace("~0", "~") if len(parts) > 1 else None
        return top, problems[0].render()[:1000]
    try:
        dumps(v)
    except (TypeError, ValueError, RecursionError) as exc:
        return None, f"not JSON: {str(exc)[:300]}"
    return None


def _finite(v: Any) -> bool:
    if isinstance(v, (bool, str)):
        return True
    if isinstance(v, int):
        return abs(v) < 2**63
    return isinstance(v, float) and math.isfinite(v) and abs(v) < 1e300


def _diagnostics(meta: dict[str, Any], runtime: float | None) -> dict[str, Any]:
    """Solver diagnostics from meta.json, reduced to bounded scalars (a verdict always serializes)."""
    raw = meta.get("solver_info")
    info: dict[str, Any] = raw if isinstance(raw, dict) else {}
    out: dict[str, Any] = {}
    for k in sorted(info)[:64]:
        v = info[k]
        if isinstance(v, (int, float, str, bool)) and _finite(v):
            out[str(k)[:64]] = v[:200] if isinstance(v, str) else v
    dofs, steps = info.get("dofs"), info.get("time_steps") or 1
    if isinstance(dofs, int) and _finite(dofs) and isinstance(steps, int) and _finite(steps) and runtime:
        rate = dofs * steps / runtime
        if _finite(rate):
            out["work_rate"] = rate
    wall = meta.get("wall_time_sec")
    out["self_reported_wall_time_sec"] = wall if isinstance(wall, (int, float)) and _finite(wall) else None
    return out
