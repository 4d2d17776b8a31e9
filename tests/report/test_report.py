"""The report: systems side by side with n and Wilson intervals, empty groups shown as such,
JSON and HTML from one data model, failure categories, pass@k, recomputed sensitivity."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
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


def test_an_html_path_is_the_page_file_and_any_other_path_a_directory(tmp_path: Path) -> None:
    """``--html report.html`` writes that one file, its figures inlined (nothing else beside it);
    ``--html out`` writes out/index.html with the PNG figures beside it."""
    d = _write_eval(tmp_path / "eval", two_systems())
    where = tmp_path / "pages"
    where.mkdir()
    r = CliRunner().invoke(app, ["report", str(d), "--html", str(where / "report.html")])
    assert r.exit_code == 0, r.output
    page = where / "report.html"
    assert page.is_file() and sorted(p.name for p in where.iterdir()) == ["report.html"]
    text = page.read_text()
    assert len(re.findall(r'<img src="data:image/png;base64,[A-Za-z0-9+/=]+"', text)) == 4
    assert "agent_a" in text and "Wilson 95" in text
    r = CliRunner().invoke(app, ["report", str(d), "--html", str(tmp_path / "site")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "site").is_dir() and (tmp_path / "site" / "index.html").is_file()
    assert len(list((tmp_path / "site").glob("*.png"))) == 4
    (tmp_path / "taken.html").mkdir()  # a directory already named .html is not overwritten by a file
    r = CliRunner().invoke(app, ["report", str(d), "--html", str(tmp_path / "taken.html")])
    assert r.exit_code == 2 and "is a directory" in r.output


def _write_eval(d: Path, verdicts: list[dict]) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "verdicts.jsonl").write_text("".join(json.dumps(v) + "\n" for v in verdicts))
    return d


def _three_cases(system: str, stages: str = "PPF", track: str = "dolfinx") -> list[dict]:
    return [{**verdict(system, i, "Pass" if s == "P" else "F-Acc"), "track": track} for i, s in enumerate(stages)]


def test_the_same_verdicts_file_twice_is_refused(tmp_path: Path) -> None:
    """``report eval eval`` counted every verdict twice (6/6 on a 3-case set): however the file is
    named again -- the directory, the file in it, another spelling, a link -- it is refused."""
    d = _write_eval(tmp_path / "eval", _three_cases("agent", "PPP"))
    (tmp_path / "link").symlink_to(d)
    runner = CliRunner()
    for again in (d, d / "verdicts.jsonl", tmp_path / "eval" / ".." / "eval", tmp_path / "link"):
        r = runner.invoke(app, ["report", str(d), str(again), "--json"])
        assert r.exit_code == 2, r.output
        assert "same verdicts file" in r.output and "count twice" in r.output
    once = runner.invoke(app, ["report", str(d), "--json"])
    assert once.exit_code == 0 and json.loads(once.stdout)["n_verdicts"] == 3


def test_a_rescored_verdict_counts_once_the_last_line_wins(tmp_path: Path) -> None:
    """A resumed evaluation appends a verdict scored again after the one it replaces."""
    first = _three_cases("agent", "PPP")
    d = _write_eval(tmp_path / "eval", [*first, {**first[0], "stage": "F-Acc", "passed": False,
                                                  "failure": {"category": "accuracy", "message": "m"}}])
    r = CliRunner().invoke(app, ["report", str(d), "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["n_verdicts"] == 3
    assert data["sections"][0]["rows"][0]["cells"][0]["k"] == 2


def test_systems_of_two_directories_with_one_name_are_kept_apart(tmp_path: Path) -> None:
    """``report runs1/eval runs2/eval`` where both evaluated a system called ``agent`` on the same
    track: two evaluations, reported as two systems named by their paths, never merged."""
    a = _write_eval(tmp_path / "runs1" / "eval", _three_cases("agent", "PPP"))
    b = _write_eval(tmp_path / "runs2" / "eval", _three_cases("agent", "FFF"))
    r = CliRunner().invoke(app, ["report", str(a), str(b), "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["systems"] == ["agent (runs1/eval)", "agent (runs2/eval)"]
    cells = data["sections"][0]["rows"][0]["cells"]
    assert [(c["k"], c["n"]) for c in cells] == [(3, 3), (0, 3)]
    assert "reported apart" in r.stderr


def test_one_system_evaluated_track_by_track_stays_one(tmp_path: Path) -> None:
    a = _write_eval(tmp_path / "dolfinx" / "eval", _three_cases("agent", "PPP", track="dolfinx"))
    b = _write_eval(tmp_path / "dealii" / "eval", _three_cases("agent", "FFF", track="dealii"))
    r = CliRunner().invoke(app, ["report", str(a), str(b), "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["systems"] == ["agent"] and data["n_verdicts"] == 6


@settings(deadline=None, max_examples=40)  # files on a loaded disk: no per-example time limit
@given(dirs=st.lists(st.lists(st.sampled_from(["eval", "a", "b", "runs"]), min_size=1, max_size=3),
                     min_size=2, max_size=4, unique_by=tuple))
def test_clashing_systems_get_distinct_names_and_keep_their_counts(dirs: list[list[str]]) -> None:
    """Whatever the directories' names, each evaluation of ``agent`` is its own system with its
    own verdicts (one evaluation directory may even hold another)."""
    import tempfile

    from casekit.report.sources import read_verdicts, verdict_files

    with tempfile.TemporaryDirectory() as tmp:
        paths = [_write_eval(Path(tmp).joinpath(*d), _three_cases("agent", "PPF"[: i % 3 + 1]))
                 for i, d in enumerate(dirs)]
        rows, notes = read_verdicts(verdict_files(paths))
    names = sorted({v["system"] for v in rows})
    assert len(names) == len(dirs) and len(notes) == 1
    counts = sorted(sum(v["system"] == n for v in rows) for n in names)
    assert counts == sorted(i % 3 + 1 for i in range(len(dirs)))


def test_pass_at_k_shows_every_k_any_system_reached(tmp_path: Path) -> None:
    """The tables took k from the first system: a one-attempt system listed first hid the other's
    pass@2 (in the text and the HTML; --json had it).  Every k is a row; a system with fewer
    attempts shows "-" there, not 0 %."""
    verdicts = [verdict("a_one", 0, "Pass"), verdict("a_one", 1, "F-Acc"),
                verdict("b_two", 0, "F-Acc"), verdict("b_two", 0, "Pass", attempt=2),
                verdict("b_two", 1, "F-Exec"), verdict("b_two", 1, "Pass", attempt=2)]
    data = report_data(verdicts, ["x"])
    assert data["pass_at_k"] == {"a_one": {"1": 0.5}, "b_two": {"1": 0.0, "2": 1.0}}
    [(title, header, rows)] = [t for t in tables(data) if t[0].startswith("pass@k")]
    assert header == ["k", "a_one", "b_two"]
    assert rows == [["1", "50.0%", "0.0%"], ["2", "-", "100.0%"]]
    d = _write_eval(tmp_path / "eval", verdicts)
    r = CliRunner().invoke(app, ["report", str(d), "--html", str(tmp_path / "html")], terminal_width=200)
    assert r.exit_code == 0, r.output
    assert re.search(r"\n 2 │ +- │ 100\.0% ", r.stdout), r.stdout
    page = (tmp_path / "html" / "index.html").read_text()
    table = page.split(f"<h2>{title}</h2>", 1)[1].split("</table>", 1)[0]
    assert '<tr><td>2</td><td class="none">-</td><td>100.0%</td></tr>' in table, table
