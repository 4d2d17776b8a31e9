"""Whatever numbers an attempt leaves, scoring ends in one verdict per attempt that conforms to
``schemas/verdict.schema.json`` and is JSON without NaN or Infinity; the journal, the executor
and the single-attempt path (Inspect's) never raise on one attempt's data (issue 27).

No sandbox runs here: the attempts' artifacts are written as a run would leave them, and the
end-to-end tests replace the timed runs (``casekit.evaluate.pairing.run_series``) by runs that
write those artifacts.
"""

from __future__ import annotations

import copy
import json
import math
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from casekit import schema
from casekit.evaluate import verdicts
from casekit.evaluate.journal import Journal
from casekit.evaluate.run import EvalOptions, evaluate, evaluate_attempt
from casekit.evaluate.store import CaseStore
from casekit.evaluate.verdicts import RunScorer, Timing, exact_targets, grid_mask, verdict
from casekit.execution import Execution, Planned
from casekit.grid import Grid
from casekit.runner.base import RunResult
from casekit.scoring import metrics
from casekit.scoring.artifacts import save_reference

CASE = "poisson_unit_square_guard"
GRID = {"type": "uniform", "nx": 25, "ny": 25, "bbox": [0, 1, 0, 1], "mask_outside": True}
SPEC: dict[str, Any] = {
    "pde": {"type": "poisson"},
    "domain": {"type": "unit_square", "dim": 2, "bounds": [0, 1, 0, 1],
               "geometry_params": {"x0": 0.0, "x1": 1.0, "y0": 0.0, "y1": 1.0}},
    "eval_grid": GRID,
    "output": {"format": "npz", "field": "u"},
}
AXES = Grid.from_spec(GRID).axes()
X, Y = np.meshgrid(AXES["x"], AXES["y"])
REF = np.sin(np.pi * X) * np.cos(Y) + 1.0
MASK = grid_mask(SPEC)


def _record(case_id: str = CASE, targets: bool = False) -> dict[str, Any]:
    """A built case's record as the evaluator reads it (the conftest's coarse 25 x 25 grid)."""
    spec = copy.deepcopy(SPEC)
    meta: dict[str, Any] = {"thresholds": {"tau_acc": 1e-2, "tau_time": 3.0}, "e_base": 1e-3, "t_base": 1.0,
                            "reference_path": f"{case_id}/reference.npz", "track": "dolfinx"}
    if targets:
        spec["targets"] = [{"name": "mean_u", "kind": "mean"}]
        meta["targets"] = {"mean_u": {"value": 1.25, "tau": 1e-2}}
    return {"id": case_id, "public_id": case_id.replace("poisson_", "case_"), "case_spec": spec,
            "pde_classification": {"equation_family": "poisson", "math_type": ["elliptic"]},
            "evaluation_config": {"target_metric": "rel_l2_grid", "timeout_sec": 20.0, "alpha_acc": 10.0,
                                  "alpha_time": 3.0, "tau_min": 1e-6},
            "evaluation_metadata": meta}


def _write_run(dest: Path, u: Any = None, meta: str | None = None, targets: str | None = None,
               arrays: dict[str, Any] | None = None) -> None:
    """What a run leaves: solution.npz (axes and ``u``, or ``arrays``), meta.json, targets.json."""
    dest.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.savez(dest / "solution.npz", **(arrays if arrays is not None else {**AXES, "u": u}))
    (dest / "meta.json").write_text(meta if meta is not None else '{"wall_time_sec": 0.1, "status": "ok"}')
    if targets is not None:
        (dest / "targets.json").write_text(targets)


def _result(dest: Path, seconds: float | None = 0.01) -> RunResult:
    return RunResult(exit_code=0, timed_out=False, solve_seconds=seconds, wall_seconds=0.02, stdout="",
                     stderr="", outputs=dest, isolation="none")


def _score(tmp: Path, runs: list[dict[str, Any]], record: dict[str, Any] | None = None,
           timing: Timing | None = None) -> dict[str, Any]:
    """The verdict of one attempt whose runs left ``runs`` (keyword arguments of _write_run, plus
    ``seconds``: the runner's time of the run), scored as evaluate_case scores them."""
    record = record or _record()
    spec = record["case_spec"]
    scorer = RunScorer(spec, {"u": REF}, grid_mask(spec), exact=exact_targets(record))
    ex = Execution()
    for i, run in enumerate(runs):
        run = dict(run)
        dest = tmp / f"run{i}"
        seconds = run.pop("seconds", 0.01)
        _write_run(dest, **run)
        ex.runs.append(_result(dest, seconds))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # overflow warnings of hostile values are expected
            failure = scorer(dest)
        if failure:
            ex.failure, ex.failed_run = failure, f"run {i + 1} of {len(runs)}"
            break
        ex.artifacts = dest
    return verdict(record, ex, scorer, timing or Timing("build", 1.0), track="dolfinx", system="fuzz", attempt=1,
                   submission_sha256="0" * 64)


def _sound(v: dict[str, Any]) -> None:
    """``v`` conforms to the verdict schema and is JSON without NaN/Infinity (the journal's form)."""
    assert schema.validate(v, "verdict") == [], (schema.validate(v, "verdict"), v)
    text = json.dumps(v, allow_nan=False)
    assert json.loads(text, parse_constant=_no_constant) == v


def _no_constant(name: str) -> Any:
    raise AssertionError(f"{name} in a verdict")


def _edge_solutions(count: int) -> Iterator[np.ndarray]:
    """Solutions with 8 to 12 huge values within two grid spacings of the boundary, each scaled to
    the largest magnitude whose error is still finite.  At that edge the error (a dot product over
    the in-domain points) and other sums of the same squares (the error profile's, another order)
    disagree about overflowing, by rounding: issue 27's "about ten values near 4e153"."""
    rng = np.random.default_rng(27)
    for _ in range(count):
        k = int(rng.integers(8, 13))
        rows, cols = rng.integers(0, 3, size=k), rng.integers(0, 25, size=k)
        shape = rng.uniform(0.9, 1.1, size=k)

        def make(s: float, rows: np.ndarray = rows, cols: np.ndarray = cols, shape: np.ndarray = shape) -> np.ndarray:
            u = REF.copy()
            u[rows, cols] = s * shape
            return u

        lo, hi = 1e150, 1e155
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(200):
                mid = (lo + hi) / 2
                if mid in (lo, hi):
                    break
                if math.isfinite(metrics.rel_l2({"u": make(mid)}, {"u": REF}, MASK)):
                    lo = mid
                else:
                    hi = mid
        yield make(lo)


def test_values_at_the_overflow_edge_near_the_boundary_give_a_finite_failing_verdict(tmp_path: Path) -> None:
    for i, u in enumerate(_edge_solutions(40)):
        v = _score(tmp_path / str(i), [{"u": u}])
        _sound(v)
        assert not v["passed"] and v["failure"]["category"] in ("accuracy", "non_finite", "scoring_error"), v
        if v["error"] is not None:  # scored: its profile says where the error is, in finite shares
            assert 0 <= v["error_profile"]["boundary_band_share"] <= 1


def test_the_error_profile_of_squares_beyond_a_double_is_finite() -> None:
    u = REF.copy()
    u[0, 5] += 1.5e154  # on the boundary
    u[12, 12] += 1.5e154  # in the interior: the squares sum to 4.5e308, beyond a double
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow on the way
        profile = verdicts.error_profile(SPEC, {"u": u}, {"u": REF}, MASK)
        aux = metrics.auxiliary({"u": u}, {"u": REF}, MASK)
    assert profile["boundary_band_share"] == pytest.approx(0.5)
    assert profile["by_boundary_part"] == {"bottom": 0.5}
    n = MASK.sum()
    assert aux["mae"] == pytest.approx(3e154 / n) and aux["rmse"] == pytest.approx(1.5e154 * math.sqrt(2 / n))
    assert all(math.isfinite(x) for x in aux.values())


# --- end to end: evaluate, resume and evaluate_attempt with runs that only write artifacts ---

def _store(root: Path, cases: list[str]) -> CaseStore:
    records = {}
    for case_id in cases:
        records[case_id] = _record(case_id)
        save_reference(root / "dolfinx" / case_id / "reference.npz", SPEC, {"u": np.where(MASK, REF, np.nan)})
    return CaseStore(root, records, "build")


class FakeRuns:
    """Stands in for run_series: a run of a submission writes the artifacts its solver.py names
    (``artifacts[text]``) and is checked as a sandboxed run is."""

    def __init__(self, artifacts: dict[str, dict[str, Any]]) -> None:
        self.artifacts = artifacts
        self.calls = 0

    def __call__(self, track: Any, runs: list[Planned], **_: Any) -> Iterator[tuple[RunResult, Any]]:
        for planned in runs:
            self.calls += 1
            _write_run(planned.dest, **self.artifacts[planned.prepared["solver.py"].decode()])
            result = _result(planned.dest)
            (planned.dest / "stdout.txt").write_text("")
            (planned.dest / "stderr.txt").write_text("")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                yield result, planned.check(planned.dest) if planned.check is not None else None


def _submissions(root: Path, system: str, by_case: dict[str, str]) -> Path:
    for case_id, text in by_case.items():
        (root / system / case_id).mkdir(parents=True)
        (root / system / case_id / "solver.py").write_text(text)
    return root / system


def _nan_profile_for_huge(real: Any) -> Any:
    """The error profile with a single-field bug: NaN for a solution with huge values (the
    issue's boundary_band_share = inf/inf), so the test does not depend on rounding."""
    def profile(spec: dict[str, Any], solution: dict[str, np.ndarray], reference: dict[str, np.ndarray],
                mask: np.ndarray) -> dict[str, Any]:
        if np.nanmax(np.abs(solution["u"])) > 1e100:
            return {"boundary_band_share": math.nan, "by_boundary_part": {}}
        return dict(real(spec, solution, reference, mask))
    return profile


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeRuns:
    from casekit.evaluate import pairing

    [edge] = _edge_solutions(1)
    runs = FakeRuns({"# hostile": {"u": edge}, "# exact": {"u": REF}, "# zero": {"u": np.zeros_like(REF)}})
    monkeypatch.setattr(pairing, "run_series", runs)
    monkeypatch.setattr(verdicts, "error_profile", _nan_profile_for_huge(verdicts.error_profile))
    return runs


def test_one_attempts_non_finite_field_never_erases_the_batch_nor_stops_a_resume(tmp_path: Path,
                                                                                 fake: FakeRuns) -> None:
    first, second = f"{CASE}_a", f"{CASE}_b"
    store = _store(tmp_path / "build", [first, second])
    subs = [_submissions(tmp_path / "subs", "hostile", {first: "# hostile", second: "# exact"}),
            _submissions(tmp_path / "subs", "plain", {first: "# exact", second: "# zero"})]
    opts = EvalOptions(store, subs, tmp_path / "out", repeats=2, timing="build")
    got = evaluate(opts)
    by = {(v["system"], v["case_id"]): v for v in got}
    assert len(got) == 4 and set(by) == {(s, c) for s in ("hostile", "plain") for c in (first, second)}
    for v in got:
        _sound(v)
    bad = by["hostile", first]
    assert bad["stage"] == "F-Exec" and not bad["passed"] and bad["failure"]["category"] == "scoring_error"
    assert "boundary_band_share" in bad["failure"]["message"]
    assert by["hostile", second]["passed"] and by["plain", first]["passed"]  # the rest of the batch is scored
    assert by["plain", second]["stage"] == "F-Acc"
    lines = (tmp_path / "out" / "verdicts.jsonl").read_text().splitlines()
    assert len(lines) == 4
    for line in lines:
        _sound(json.loads(line, parse_constant=_no_constant))
    calls = fake.calls
    again = evaluate(opts)  # a resume finds every verdict done: nothing runs, nothing raises
    assert fake.calls == calls and sorted(map(json.dumps, again)) == sorted(map(json.dumps, got))


def test_the_single_attempt_path_returns_and_journals_a_verdict(tmp_path: Path, fake: FakeRuns) -> None:
    store = _store(tmp_path / "build", [CASE])
    v = evaluate_attempt(store, CASE, "# hostile", tmp_path / "out", repeats=1, timing="build")
    _sound(v)
    assert v["failure"]["category"] == "scoring_error"
    assert Journal(tmp_path / "out" / "verdicts.jsonl").all() == [v]


def test_the_journal_writes_a_scoring_error_for_a_verdict_that_does_not_conform(tmp_path: Path) -> None:
    good = _score(tmp_path / "good", [{"u": REF}])
    broken = {**good, "attempt": 2, "error": math.inf, "metrics": {"rmse": np.float32(1.0)},
              "error_profile": {"boundary_band_share": math.nan}}
    journal = Journal(tmp_path / "verdicts.jsonl")
    written = journal.append([good, broken])
    assert written[0] == good and written[1]["failure"]["category"] == "scoring_error"
    assert written[1]["attempt"] == 2 and written[1]["case_id"] == CASE and written[1]["error"] is None
    for v in written:
        _sound(v)
    assert Journal(tmp_path / "verdicts.jsonl").all() == written  # reopened: a resume reads both


# --- the fuzz test: extreme finite values, NaN/inf anywhere, other dtypes ---

def _mostly(common: Any, rare: list[Any], weight: int = 3) -> st.SearchStrategy[Any]:
    """``common`` ``weight`` times as often as all of ``rare`` together (so most attempts get past
    the artifact checks and reach the scoring, the gates and the verdict)."""
    return st.sampled_from([common] * (weight * len(rare)) + rare)


FINITE = [0.0, -0.0, 5e-324, -5e-324, 2.2e-308, 1e-300, 4e153, -4e153, 4.2e153, 1.3e154, 1e200, 1e300, -1e300,
          1.7976931348623157e308, -1.7976931348623157e308]
NOT_FINITE = [math.nan, math.inf, -math.inf]
DTYPE = _mostly("float64", ["float32", "float16", "longdouble", "int64", "int8", "bool", "complex128"], weight=2)
#: a number in meta.json or targets.json (JSON text), now and then one JSON has no word for
NUMBER = _mostly("1", ["0", "-1", "0.5", "1e308", "-1e308", "1e999", "NaN", "Infinity", "-Infinity",
                       "1" + "0" * 30, '"text"', "null", "true", "[]", "{}"], weight=12)
SECONDS = _mostly(0.01, [1.0, 0.0, 5e-324, 1e300, math.nan, math.inf, None], weight=2)


@st.composite
def runs_of_an_attempt(draw: st.DrawFn) -> list[dict[str, Any]]:
    """The artifacts of 1-3 runs, with the runner's time of each."""
    out = []
    for _ in range(draw(st.integers(1, 3))):
        u = REF * draw(st.sampled_from([1.0, 1.0, 1.001, 0.0, -1.0, 1e150]))
        for _ in range(draw(st.sampled_from([0, 0, 1, 2, 10, 12]))):  # extreme but finite values
            u[draw(st.integers(0, 24)), draw(st.integers(0, 24))] = draw(st.sampled_from(FINITE))
        if draw(_mostly(False, [True], weight=7)):
            u[draw(st.integers(0, 24)), draw(st.integers(0, 24))] = draw(st.sampled_from(NOT_FINITE))
        dtype = draw(DTYPE)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            arr: Any = u.astype(dtype)
        arrays = None
        if draw(_mostly(False, [True], weight=9)):  # an axis or the shape wrong, or an axis of another dtype
            arrays = {"x": AXES["x"].astype(draw(DTYPE)), "y": AXES["y"], "u": arr[:, : draw(st.integers(1, 25))]}
        meta = (f'{{"wall_time_sec": {draw(NUMBER)}, "status": "ok", "solver_info": '
                f'{{"dofs": {draw(NUMBER)}, "time_steps": {draw(NUMBER)}, "note": {draw(NUMBER)}}}}}')
        targets = f'{{"mean_u": {draw(_mostly("1.25", ["1.3", "1e300", "NaN", "Infinity", '"x"'], weight=4))}}}'
        out.append({"u": arr, "arrays": arrays, "meta": meta, "targets": targets, "seconds": draw(SECONDS)})
    return out


#: what the runtime gate compares with (the calibration's times are checked where they are
#: measured, see the next test: positive and finite, but as small or large as a double goes)
TIMINGS = st.sampled_from([
    Timing("build", 1.0), Timing("paired", 0.5, [0.5, 0.4, 0.6], "m"), Timing("paired", 1.0, [5e-324] * 3, "m"),
    Timing("file", 1e-300), Timing("paired", 1e300, [1e300], "m"),
])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(attempts=st.lists(runs_of_an_attempt(), min_size=1, max_size=3), timing=TIMINGS, targets=st.booleans())
def test_every_attempt_gets_one_schema_valid_verdict_whatever_its_numbers(
        attempts: list[list[dict[str, Any]]], timing: Timing, targets: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        record = _record(targets=targets)
        scored = []
        for n, runs in enumerate(attempts, start=1):
            v = _score(Path(tmp) / f"attempt{n}", runs, record=record, timing=timing)
            scored.append({**v, "attempt": n})
        journal = Journal(Path(tmp) / "verdicts.jsonl")
        written = journal.append(scored)
        assert [v["attempt"] for v in written] == list(range(1, len(attempts) + 1))
        for v in written:
            _sound(v)
            assert v["passed"] == (v["stage"] == "Pass") and (v["failure"] is None) == v["passed"]
            event(f"{v['stage']} {(v['failure'] or {}).get('category', '')}")
        assert Journal(Path(tmp) / "verdicts.jsonl").all() == written


@pytest.mark.parametrize("seconds", [math.nan, math.inf, 0.0, -1.0])
def test_a_calibration_time_that_is_not_a_positive_finite_number_stops_its_case(tmp_path: Path,
                                                                                seconds: float) -> None:
    """The paired runtime gate divides by the calibration's times: one that is not a number is
    the machine's failure on this case (as a failing calibration run is), never a NaN in the
    verdicts of the attempts timed beside it."""
    from casekit.errors import CasekitError
    from casekit.evaluate.pairing import _calibration_time

    record = _record()
    check = RunScorer(SPEC, {"u": REF}, MASK)
    _write_run(tmp_path / "run", REF)
    assert check(tmp_path / "run") is None
    planned = Planned({}, SPEC, tmp_path / "run", check)
    with pytest.raises(CasekitError, match="positive finite"):
        _calibration_time(planned, _result(tmp_path / "run", seconds), None, record, tmp_path / "kept", "run 1 of 1")
    assert _calibration_time(planned, _result(tmp_path / "run", 0.5), None, record, tmp_path / "kept",
                             "run 1 of 1") == 0.5


def test_report_numbers_of_errors_near_the_largest_double_are_finite() -> None:
    from casekit.report.aggregate import target_summary

    vs = [{"system": "s", "targets": [{"kind": "mean", "passed": False, "error": e}]} for e in (1.7e308, 1.75e308)]
    [cell] = target_summary(vs)["mean"].values()
    assert cell["error_median"] == pytest.approx(1.725e308)


def test_the_observed_order_of_errors_far_apart_is_finite() -> None:
    from casekit.evaluate.convergence import observed_order

    assert observed_order([16, 32], [1e300, 1e-300]) == pytest.approx(600 * math.log(10) / math.log(2))
    assert observed_order([16, 32], [4e-3, 1e-3]) == pytest.approx(2.0)


def test_outputs_a_track_cannot_read_are_that_runs_failure(tmp_path: Path) -> None:
    from casekit.execution import _checked
    from casekit.runner.limits import Limits

    class Unreadable:
        def adapt_output(self, out_dir: Path, case_spec: dict[str, Any]) -> None:
            raise OSError("a native output that cannot be read")

    failure = _checked(Unreadable(), _result(tmp_path), SPEC, tmp_path, limits=Limits(), runner="local",  # type: ignore[arg-type]
                       check=None)
    assert failure is not None and failure[0] == "scoring_error" and "cannot be read" in failure[1]
