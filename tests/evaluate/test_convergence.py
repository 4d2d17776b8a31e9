"""The self-convergence diagnostic and the CodePDE-style aggregates: observed order from errors at
two resolutions, the resolution hint refining a calibration solver (space and time together), the
geometric mean of nRMSE, and an evaluation with --convergence that reports the calibration
solver's order and a solver that ignores the hint as order ~0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from casekit import schema
from casekit.cli import app
from casekit.evaluate.baselines import write_baselines
from casekit.evaluate.convergence import observed_order, parse_resolutions
from casekit.report.aggregate import error_summary, geometric_mean
from casekit.solvers.settings import SolveSettings

runner = CliRunner()


@given(c=st.floats(1e-8, 1e3), p=st.floats(0.0, 6.0), n=st.integers(2, 200), r=st.integers(2, 4))
def test_observed_order_recovers_the_order_of_c_h_to_the_p(c: float, p: float, n: int, r: int) -> None:
    e1, e2 = c * n**-p, c * (r * n) ** -p
    assert observed_order([n, r * n], [e1, e2]) == pytest.approx(p, abs=1e-9)


def test_observed_order_needs_two_positive_errors() -> None:
    assert observed_order([8, 16], [1e-3, None]) is None
    assert observed_order([8, 16], [1e-3, 0.0]) is None
    assert observed_order([8, 16, 32], [1e-2, None, 2.5e-3]) == pytest.approx(1.0)


@pytest.mark.parametrize("text", ["", "16", "32,16", "16,16", "1,2", "8,x", "16,99999"])
def test_bad_resolutions_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="resolutions"):
        parse_resolutions(text)


def test_the_resolution_hint_refines_space_and_time_together() -> None:
    base = {"cells_across": 20, "dt": 0.01}
    st_ = SolveSettings.for_case(base, {"resolution": 40})
    assert st_.cells_across == 40 and st_.dt == pytest.approx(0.005)
    assert SolveSettings.for_case(base, {}).cells_across == 20
    assert SolveSettings.for_case(base, {"resolution": True}).cells_across == 20  # not a number of cells


@given(st.lists(st.floats(1e-12, 1e3), min_size=1, max_size=30))
def test_the_geometric_mean_lies_between_min_and_arithmetic_mean(xs: list[float]) -> None:
    g = geometric_mean(xs)
    assert g is not None and min(xs) * (1 - 1e-9) <= g <= sum(xs) / len(xs) * (1 + 1e-9)


def test_error_summary_counts_only_results_and_a_zero_error_does_not_zero_the_mean() -> None:
    vs = [{"system": "a", "family": "poisson", "error": e, "convergence": {"observed_order": o}}
          for e, o in ((1e-2, 2.0), (1e-4, 3.0), (None, None), (0.0, None))]
    s = error_summary(vs, "family")["poisson"]["a"]
    assert s["n"] == 3 and s["n_order"] == 2 and s["order_median"] == pytest.approx(2.5)
    assert 0 < s["nrmse_geomean"] < 1e-4
    assert geometric_mean([]) is None


@pytest.mark.dolfinx
def test_evaluate_with_convergence_reports_the_order(tmp_path: Path, store) -> None:  # type: ignore[no-untyped-def]
    write_baselines(store, tmp_path / "base", ("calibration", "zero"), "dolfinx")
    for kind in ("calibration", "zero"):
        result = runner.invoke(app, ["evaluate", "--cases", str(store.root), "--submissions",
                                     str(tmp_path / "base" / kind), "--out", str(tmp_path / "eval"),
                                     "--repeats", "1", "--convergence", "6,12"])
        assert result.exit_code == 0, result.output
    verdicts = [json.loads(line) for line in (tmp_path / "eval" / "verdicts.jsonl").read_text().splitlines()]
    for v in verdicts:
        assert schema.validate(v, "verdict") == [], v
        conv = v["convergence"]
        assert conv["resolutions"] == [6, 12] and len(conv["errors"]) == 2
        if v["system"] == "calibration":  # the calibration honours the hint: its error shrinks
            assert conv["observed_order"] is not None and conv["observed_order"] > 1.0, v["case_id"]
        else:  # the zero field does not depend on the resolution
            assert conv["observed_order"] is not None and abs(conv["observed_order"]) < 1e-9
    result = runner.invoke(app, ["report", str(tmp_path / "eval")], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "nRMSE, geometric mean" in result.output and "Observed order of self-convergence" in result.output
    bad = runner.invoke(app, ["evaluate", "--cases", str(store.root), "--submissions", str(tmp_path / "base" / "zero"),
                              "--out", str(tmp_path / "e2"), "--convergence", "12,6"])
    assert bad.exit_code == 2 and "increasing" in bad.output
