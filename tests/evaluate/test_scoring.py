"""Scoring: the error, masking, components, artifact checks, gates, verdict records, reports."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from casekit import schema
from casekit.cli import app
from casekit.evaluate.baselines import write_baselines
from casekit.evaluate.run import EvalOptions, evaluate
from casekit.grid import Grid
from casekit.scoring import metrics
from casekit.scoring.artifacts import ArtifactError, load_meta, load_solution
from casekit.scoring.gates import gate
from tests.helpers import record, write_submission

runner = CliRunner()
SPEC = {"eval_grid": {"type": "uniform", "nx": 5, "ny": 4, "bbox": [0, 1, 0, 1], "mask_outside": True},
        "output": {"format": "npz", "field": "velocity", "components": ["ux", "uy"]}}


def _fields(seed: int) -> tuple[dict, dict, np.ndarray]:
    rng = np.random.default_rng(seed)
    mask = rng.random((4, 5)) > 0.3
    ref = {"ux": rng.normal(size=(4, 5)), "uy": rng.normal(size=(4, 5))}
    u = {k: v + 0.01 * rng.normal(size=v.shape) for k, v in ref.items()}
    for d in (ref, u):
        for v in d.values():
            v[~mask] = np.nan  # outside points never count
    return u, ref, mask


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 10_000), st.floats(1e-6, 1e6))
def test_error_is_zero_against_itself_and_scale_invariant(seed: int, c: float) -> None:
    u, ref, mask = _fields(seed)
    assert metrics.rel_l2(ref, ref, mask) == 0.0
    scaled = metrics.rel_l2({k: c * v for k, v in u.items()}, {k: c * v for k, v in ref.items()}, mask)
    assert scaled == pytest.approx(metrics.rel_l2(u, ref, mask), rel=1e-9)


def test_error_uses_all_components_and_only_valid_points() -> None:
    mask = np.array([[True, False], [True, True]])
    ref = {"ux": np.array([[3.0, 99.0], [0.0, 0.0]]), "uy": np.array([[4.0, -99.0], [0.0, 0.0]])}
    u = {"ux": np.array([[3.0, 0.0], [1.0, 0.0]]), "uy": np.array([[4.0, 0.0], [0.0, 0.0]])}
    assert metrics.rel_l2(u, ref, mask) == pytest.approx(1 / 5)
    zero = {"ux": np.zeros((2, 2)), "uy": np.zeros((2, 2))}
    assert metrics.rel_l2(u, zero, mask) == pytest.approx(np.sqrt(26))  # absolute when the reference is ~0
    aux = metrics.auxiliary(u, ref, mask)
    assert aux["mae"] == pytest.approx(1 / 6) and aux["rmse"] == pytest.approx(np.sqrt(1 / 6))


def _write(tmp: Path, **arrays: np.ndarray) -> Path:
    g = Grid.from_spec(SPEC["eval_grid"])
    np.savez(tmp / "solution.npz", **{**g.axes(), **arrays})
    return tmp


@pytest.mark.parametrize(("arrays", "category", "words"), [
    ({"ux": np.zeros((4, 5))}, "invalid_artifact", "lacks the array 'uy'"),
    ({"ux": np.zeros((5, 4)), "uy": np.zeros((4, 5))}, "invalid_artifact", "shape (5, 4)"),
    ({"ux": np.zeros((4, 5), dtype=int), "uy": np.zeros((4, 5))}, "invalid_artifact", "float dtype"),
    ({"ux": np.full((4, 5), np.nan), "uy": np.zeros((4, 5))}, "non_finite", "NaN/Inf"),
])
def test_artifact_checks(tmp_path: Path, arrays: dict, category: str, words: str) -> None:
    mask = np.ones((4, 5), dtype=bool)
    with pytest.raises(ArtifactError) as err:
        load_solution(_write(tmp_path, **arrays), SPEC, mask)
    assert err.value.category == category and words in err.value.message


def test_nan_outside_the_domain_is_fine_and_axes_must_match(tmp_path: Path) -> None:
    mask = np.ones((4, 5), dtype=bool)
    mask[0, 0] = False
    ux = np.zeros((4, 5))
    ux[0, 0] = np.nan
    assert set(load_solution(_write(tmp_path, ux=ux, uy=np.zeros((4, 5))), SPEC, mask)) == {"ux", "uy"}
    np.savez(tmp_path / "solution.npz", x=np.linspace(0, 2, 5), y=np.linspace(0, 1, 4), ux=ux, uy=ux)
    with pytest.raises(ArtifactError, match="axis 'x'"):
        load_solution(tmp_path, SPEC, mask)
    (tmp_path / "meta.json").write_text(json.dumps({"wall_time_sec": -1, "status": "ok"}))
    with pytest.raises(ArtifactError, match=r"meta\.json"):
        load_meta(tmp_path)


def test_gates_are_staged() -> None:
    assert gate(False, None, 1e-3, 1.0, 3.0).stage == "F-Exec"
    assert gate(True, 2e-3, 1e-3, 1.0, 3.0).stage == "F-Acc"
    assert gate(True, 1e-4, 1e-3, 4.0, 3.0).stage == "F-Time"
    assert gate(True, 1e-4, 1e-3, 1.0, 3.0).stage == "Pass"


@pytest.mark.dolfinx
def test_each_stage_is_reached_and_the_calibration_solvers_pass(tmp_path: Path, store) -> None:
    write_baselines(store, tmp_path / "base", ("calibration", "zero"), "dolfinx")
    cal = evaluate(EvalOptions(store, tmp_path / "base" / "calibration", tmp_path / "o1", repeats=1))
    assert {v["stage"] for v in cal} <= {"Pass", "F-Time"} and all(v["error"] <= v["tau_acc"] for v in cal)
    zero = evaluate(EvalOptions(store, tmp_path / "base" / "zero", tmp_path / "o2", repeats=1))
    assert all(v["stage"] == "F-Acc" for v in zero)
    rec = record(store, "poisson")
    subs = tmp_path / "crash"
    write_submission(subs, rec["id"], "def solve(case_spec):\n    raise RuntimeError('boom')\n")
    verdicts = evaluate(EvalOptions(store, subs, tmp_path / "o3", repeats=1))
    crash = next(v for v in verdicts if v["case_id"] == rec["id"])
    assert crash["stage"] == "F-Exec" and "boom" in crash["failure"]["message"]
    # every case of the dataset is scored: the one without a submission is F-Exec, not skipped
    missing = [v for v in verdicts if v["case_id"] != rec["id"]]
    assert missing and all(v["failure"]["category"] == "missing_submission" for v in missing)
    for v in [*cal, *zero, *verdicts]:
        assert schema.validate(v, "verdict") == [], v
        assert v["record_content_hash"] == store.records[v["case_id"]]["content_hash"]  # what it was scored against


@pytest.mark.dolfinx
def test_report_tables_plots_and_html(tmp_path: Path, store) -> None:
    write_baselines(store, tmp_path / "base", ("calibration", "zero"), "dolfinx")
    paths = []
    for kind in ("calibration", "zero"):
        subs = tmp_path / "base" / kind
        for i, case_dir in enumerate(sorted(subs.iterdir())):  # a second attempt for pass@k
            (case_dir / "attempt_1").mkdir()
            (case_dir / "solver.py").rename(case_dir / "attempt_1" / "solver.py")
            if i == 0:
                (case_dir / "attempt_2").mkdir()
                (case_dir / "attempt_2" / "solver.py").write_text((case_dir / "attempt_1" / "solver.py").read_text())
        evaluate(EvalOptions(store, subs, tmp_path / kind, system=kind, repeats=1))
        paths.append(str(tmp_path / kind / "verdicts.jsonl"))
    result = runner.invoke(app, ["report", *paths, "--html", str(tmp_path / "html")])
    assert result.exit_code == 0, result.output
    for words in ("Pass rate (first attempts)", "by family", "Failure categories", "Sensitivity to alpha_acc",
                  "pass@k"):
        assert words in result.output
    for name in ("index.html", "pass_rate_by_family.png", "failure_stages.png", "sensitivity_alpha_acc.png",
                 "sensitivity_alpha_time.png"):
        assert (tmp_path / "html" / name).stat().st_size > 1000


@pytest.mark.dolfinx
def test_paired_timing_file_timing_and_calibrate_timing(tmp_path: Path, store) -> None:
    """The runtime gate: paired (the calibration re-timed in the same evaluation, interleaved),
    a calibrate-timing table for this machine, or the build's t_base -- the verdict says which."""
    from casekit.evaluate.calibrate import calibrate_timing

    write_baselines(store, tmp_path / "base", ("calibration",), "dolfinx")
    subs = tmp_path / "base" / "calibration"
    paired = evaluate(EvalOptions(store, subs, tmp_path / "paired", repeats=2))
    for v in paired:
        t = v["timing"]
        assert t["mode"] == "paired" and len(t["reference_runs"]) == 2 and t["machine"]
        runs, cal = v["runtime"]["runs"], t["reference_runs"]  # each run over the calibration run of its round
        assert t["ratio"] == pytest.approx(max(r / c for r, c in zip(runs, cal, strict=True)))
        assert v["tau_time"] == pytest.approx(v["calibration"]["alpha_time"] * t["t_reference"])
    table = calibrate_timing(store, "dolfinx", tmp_path / "timing.json", repeats=1)
    assert set(table["cases"]) == set(store.records) and table["machine"]["cpu_count"] >= 1
    filed = evaluate(EvalOptions(store, subs, tmp_path / "filed", repeats=1, timing="file",
                                 timing_file=tmp_path / "timing.json"))
    for v in filed:
        assert v["timing"]["mode"] == "file"
        assert v["timing"]["t_reference"] == pytest.approx(table["cases"][v["case_id"]]["t_reference"])
    built = evaluate(EvalOptions(store, subs, tmp_path / "built", repeats=1, timing="build"))
    assert all(v["timing"]["t_reference"] == v["calibration"]["t_base"] for v in built)


@given(runs=st.lists(st.floats(0.01, 100.0), min_size=1, max_size=5), k=st.floats(0.1, 10.0),
       load=st.floats(1.0, 4.0))
def test_the_paired_ratio_cancels_a_load_shared_by_the_round(runs: list[float], k: float, load: float) -> None:
    """Round by round: a load that slows the round's calibration and submission alike (x load)
    leaves the ratio as it was; a submission k times the calibration in every round has ratio k;
    without per-round runs the slowest run is compared with t_reference."""
    from casekit.thresholds import runtime_ratio

    cal = list(runs)
    sub = [k * c for c in cal]
    assert runtime_ratio(sub, cal, 1.0) == pytest.approx(k)
    loaded = [load if i == 0 else 1.0 for i in range(len(cal))]
    busy_sub = [s * f for s, f in zip(sub, loaded, strict=True)]
    busy_cal = [c * f for c, f in zip(cal, loaded, strict=True)]
    assert runtime_ratio(busy_sub, busy_cal, 1.0) == pytest.approx(k)
    assert runtime_ratio(sub, [], 2.0) == pytest.approx(max(sub) / 2.0)
