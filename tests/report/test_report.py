"""The report: systems side by side with n and Wilson intervals, empty groups shown as such,
JSON and HTML from one data model, failure categories, pass@k, recomputed sensitivity."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from casekit import schema
from casekit.cli import app
from casekit.report.aggregate import Cell, wilson
from casekit.report.render import report_data, tables

FAMILIES = ("poisson", "heat", "stokes")


def verdict(system: str, case: int, stage: str, attempt: int = 1, family: str = "poisson") -> dict:
    error = {"F-Exec": None, "F-Acc": 0.5, "F-Time": 1e-3, "Pass": 1e-3}[stage]
    runtime = None if stage == "F-Exec" else {"median": 1.0, "max": 9.0 if stage == "F-Time" else 1.0,
                                              "runs": [1.0]}
    category = {"F-Exec": "crash", "F-Acc": "accuracy", "F-Time": "runtime"}.get(stage)
    return {
        "case_id": f"{family}_case_{case}", "track": "dolfinx", "system": system, "attempt": attempt,
        "stage": stage, "passed": stage == "Pass",
        "failure": {"category": category, "message": "m"} if category else None,
        "error": error, "errors": [] if error is None else [error], "tau_acc": 1e-2, "runtime": runtime,
        "tau_time": 3.0, "metrics": {}, "diagnostics": {}, "exit_status": 0, "stderr_tail": "", "paths": {},
        "calibration": {"e_base": 1e-3, "t_base": 1.0, "alpha_acc": 10.0, "alpha_time": 3.0, "tau_min": 1e-6},
        "timing": {"mode": "paired", "t_reference": 1.0, "reference_runs": [1.0], "ratio": None if runtime is None
                   else runtime["max"], "machine": "m"},
        "math_type": ["elliptic"], "family": family, "domain": "unit_square",
        "casekit_version": "0.1.0", "evaluated_at": "2026-11-23T10:00:00Z",
    }


def two_systems() -> list[dict]:
    out = []
    for i, fam in enumerate(FAMILIES * 3):
        out.append(verdict("agent_a", i, "Pass" if i % 2 else "F-Acc", family=fam))
        if fam != "stokes":  # agent_b never tried stokes: its stokes cell is empty, not 0 %
            out.append(verdict("agent_b", i, ("Pass", "F-Time", "F-Exec")[i // 3], family=fam))
    out.append(verdict("agent_a", 0, "Pass", attempt=2, family="poisson"))
    return out


def test_verdict_fixtures_are_schema_valid() -> None:
    assert all(not schema.validate(v, "verdict") for v in two_systems())


def test_systems_side_by_side_with_n_and_intervals_and_empty_cells() -> None:
    data = report_data(two_systems(), ["x"])
    fam = next(s for s in data["sections"] if s["key"] == "family")
    assert fam["systems"] == ["agent_a", "agent_b"]
    stokes = next(r for r in fam["rows"] if r["group"] == "stokes")
    assert stokes["cells"][1]["n"] == 0 and stokes["cells"][1]["text"] == "-"
    assert stokes["cells"][0]["n"] == 3 and re.match(r"\d+\.\d% \[\d+-\d+\] \(\d/3\)", stokes["cells"][0]["text"])
    assert data["failure_categories"]["accuracy"]["agent_a"] > 0 and data["failure_categories"]["crash"]["agent_b"] > 0
    assert data["pass_at_k"]["agent_a"]["2"] >= data["pass_at_k"]["agent_a"]["1"]
    assert data["calibrated_alpha"] == {"alpha_acc": [10.0], "alpha_time": [3.0]}
    titles = [t for t, _, _ in tables(data)]
    assert any("alpha_time" in t and "calibrated: 3" in t for t in titles)


@given(k=st.integers(0, 500), extra=st.integers(0, 500))
def test_wilson_intervals_hold_the_rate_and_narrow_with_n(k: int, extra: int) -> None:
    n = k + extra
    if n == 0:
        assert Cell(0, 0).text() == "-" and Cell(0, 0).rate is None
        return
    lo, hi = wilson(k, n)
    assert 0.0 <= lo <= k / n <= hi <= 1.0
    lo4, hi4 = wilson(4 * k, 4 * n)
    assert hi4 - lo4 <= hi - lo + 1e-12


def test_report_cli_json_html_and_evaluation_directories(tmp_path: Path) -> None:
    for system in ("agent_a", "agent_b"):
        d = tmp_path / system
        d.mkdir()
        (d / "verdicts.jsonl").write_text("".join(json.dumps(v) + "\n" for v in two_systems() if v["system"] == system))
    runner = CliRunner()
    r = runner.invoke(app, ["report", str(tmp_path / "agent_a"), str(tmp_path / "agent_b"), "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["systems"] == ["agent_a", "agent_b"] and data["n_verdicts"] == len(two_systems())
    r = runner.invoke(app, ["report", str(tmp_path / "agent_a"), str(tmp_path / "agent_b"), "--html",
                            str(tmp_path / "html")])
    assert r.exit_code == 0, r.output
    page = (tmp_path / "html" / "index.html").read_text()
    assert "agent_a" in page and "agent_b" in page and "Wilson 95" in page and "casekit 0.1.0" in page
    assert len(re.findall(r"<img src=\"[a-z_]+\.png\"", page)) == 4
    assert all((tmp_path / "html" / f).is_file() for f in re.findall(r"<img src=\"([a-z_]+\.png)\"", page))
    missing = runner.invoke(app, ["report", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2


@pytest.mark.parametrize("stage", ["Pass", "F-Acc"])
def test_empty_or_single_group_reports_render(stage: str, tmp_path: Path) -> None:
    data = report_data([verdict("solo", 1, stage)], ["x"])
    assert data["sections"][0]["rows"][0]["cells"][0]["n"] == 1
    assert tables(data)


@pytest.mark.parametrize("name", ["a$x^2$b", r"b$\frac{$c", "$$"])
def test_labels_are_drawn_as_written_never_as_mathtext(name: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A system name with dollar signs is a name: the HTML report renders its figures, and no
    label is parsed as a formula (valid mathtext such as ``$x^2$`` included)."""
    import matplotlib.mathtext

    def parsed(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a label was parsed as mathtext: {args[1:2]}")

    monkeypatch.setattr(matplotlib.mathtext.MathTextParser, "parse", parsed)
    d = tmp_path / "system"
    d.mkdir()
    verdicts = [{**v, "system": name} for v in two_systems() if v["system"] == "agent_a"]
    (d / "verdicts.jsonl").write_text("".join(json.dumps(v) + "\n" for v in verdicts))
    r = CliRunner().invoke(app, ["report", str(d), "--html", str(tmp_path / "html")])
    assert r.exit_code == 0, r.output
    assert all((tmp_path / "html" / f).stat().st_size for f in ("pass_rate_by_family.png", "failure_stages.png"))
