"""``casekit evaluate`` shows its progress on stderr while it runs (issue 30): what it will run,
then one plain line per finished case off a terminal -- cases and attempts done of the total,
verdicts by stage so far, elapsed and time left -- while ``--json`` keeps stdout one JSON
document.  The timed runs are replaced by runs that write artifacts (no sandbox, no solver)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from casekit.cli import app
from casekit.cli.evaluate import NAMED_ATTEMPTS, case_line
from tests.evaluate.test_verdict_guard import CASE, _store, _submissions, fake  # noqa: F401 (fake: the runs)

runner = CliRunner()


def _evaluation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cases: list[str]) -> list[str]:
    """The arguments of ``casekit evaluate --json`` of two systems over ``cases`` (a store
    without a build: the command is given it)."""
    from casekit.cli import evaluate as cli

    store = _store(tmp_path / "build", cases)
    monkeypatch.setattr(cli, "_store", lambda *args: store)
    subs = [_submissions(tmp_path / "subs", "exact", dict.fromkeys(cases, "# exact")),
            _submissions(tmp_path / "subs", "zero", dict.fromkeys(cases, "# zero"))]
    return ["evaluate", "--cases", str(tmp_path / "build"), "--submissions", str(subs[0]), "--submissions",
            str(subs[1]), "--out", str(tmp_path / "out"), "--repeats", "1", "--timing", "build", "--json"]


@pytest.mark.usefixtures("fake")
def test_progress_goes_to_stderr_as_plain_lines_and_json_stays_clean(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = f"{CASE}_a", f"{CASE}_b"
    args = _evaluation(tmp_path, monkeypatch, [first, second])
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    verdicts = json.loads(result.stdout)  # stdout is the JSON document and nothing else
    assert len(verdicts) == 4
    lines = result.stderr.splitlines()
    assert lines[0] == "evaluating 2 case(s), 4 attempt(s) on dolfinx"
    assert re.fullmatch(rf"\[1/2 cases \(2/4 attempts\)\] {first}: exact Pass, zero F-Acc -- 1 Pass, 1 F-Acc; "
                        r"\d+:\d\d:\d\d elapsed; eta \d+:\d\d:\d\d", lines[1]), lines
    assert re.fullmatch(rf"\[2/2 cases \(4/4 attempts\)\] {second}: exact Pass, zero F-Acc -- 2 Pass, 2 F-Acc; "
                        r"\d+:\d\d:\d\d elapsed", lines[2]), lines  # all done: no time left to estimate
    assert len(lines) == 3 and "\x1b" not in result.stderr  # not a terminal: nothing redrawn

    again = runner.invoke(app, args)  # a resume: nothing to run, said so
    assert again.exit_code == 0 and len(json.loads(again.stdout)) == 4
    journal = tmp_path / "out" / "verdicts.jsonl"
    assert again.stderr.splitlines() == [f"evaluating 0 case(s), 0 attempt(s) on dolfinx; 4 verdict(s) resumed "
                                         f"from {journal}"]


def _v(system: str, attempt: int, stage: str) -> dict[str, Any]:
    return {"case_id": "c", "system": system, "attempt": attempt, "stage": stage}


def test_a_cases_line_names_its_attempts_or_counts_them() -> None:
    assert case_line([_v("a", 1, "Pass"), _v("b", 1, "F-Exec")]) == "c: a Pass, b F-Exec"
    assert case_line([_v("a", 1, "F-Acc"), _v("a", 2, "Pass")]) == "c: a#1 F-Acc, a#2 Pass"
    many = [_v("a", i, "F-Time" if i % 2 else "Pass") for i in range(1, NAMED_ATTEMPTS + 2)]
    assert case_line(many) == f"c: {len(many) // 2} Pass, {(len(many) + 1) // 2} F-Time"
    assert case_line([]) == ""


@pytest.mark.usefixtures("fake")
def test_only_restricts_the_evaluation_and_says_it_is_not_a_benchmark_score(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """--only CASE (repeatable, descriptive or public id) and --only-submitted evaluate some cases
    (the rehearsal had no way to: 11 cases of 600 gave 8400 verdicts); the default stays every case
    -- a benchmark score counts a missing submission as a failure -- and the restriction is said."""
    from casekit.cli import evaluate as cli
    from tests.evaluate.test_verdict_guard import _submissions as subs_of

    cases = [f"{CASE}_a", f"{CASE}_b", f"{CASE}_c"]
    store = _store(tmp_path / "build", cases)
    monkeypatch.setattr(cli, "_store", lambda *args: store)
    sub = subs_of(tmp_path / "subs", "exact", {cases[0]: "# exact"})
    base = ["evaluate", "--cases", str(tmp_path / "build"), "--submissions", str(sub), "--repeats", "1", "--timing",
            "build", "--json"]
    every = runner.invoke(app, [*base, "--out", str(tmp_path / "every")])
    assert every.exit_code == 0, every.output
    assert sorted(v["case_id"] for v in json.loads(every.stdout)) == cases  # the default: every case

    public = store.records[cases[1]]["public_id"] = "case-0123456789abcdef"
    only = runner.invoke(app, [*base, "--out", str(tmp_path / "only"), "--only", cases[0], "--only", public])
    assert only.exit_code == 0, only.output
    assert sorted(v["case_id"] for v in json.loads(only.stdout)) == cases[:2]
    assert "restricted to 2 of the 3 cases: not a benchmark score" in only.stderr, only.stderr

    submitted = runner.invoke(app, [*base, "--out", str(tmp_path / "submitted"), "--only-submitted"])
    assert submitted.exit_code == 0, submitted.output
    assert [v["case_id"] for v in json.loads(submitted.stdout)] == cases[:1]

    unknown = runner.invoke(app, [*base, "--out", str(tmp_path / "unknown"), "--only", f"{CASE}_d"])
    assert unknown.exit_code == 2 and f"no case '{CASE}_d'" in unknown.output, unknown.output


@pytest.mark.usefixtures("fake")
def test_many_verdicts_print_a_summary_by_system_and_family(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """stdout holds one line per verdict only while they are few (the rehearsal printed 1.9 MB for
    8400); the summary counts them by system and family, and the plan says how many attempts run."""
    from casekit.cli import evaluate as cli

    cases = [f"{CASE}_{i:02d}" for i in range(cli.LISTED_VERDICTS + 1)]
    store = _store(tmp_path / "build", cases)
    monkeypatch.setattr(cli, "_store", lambda *args: store)
    sub = _submissions(tmp_path / "subs", "exact", {cases[0]: "# exact"})
    r = runner.invoke(app, ["evaluate", "--cases", str(tmp_path / "build"), "--submissions", str(sub), "--out",
                            str(tmp_path / "out"), "--repeats", "1", "--timing", "build"], terminal_width=200)
    assert r.exit_code == 0, r.output
    assert f"evaluating {len(cases)} case(s), {len(cases)} attempt(s) (1 of them run" in r.stderr, r.stderr
    out = r.stdout
    assert len(out.splitlines()) < 12 and CASE not in out, out  # no line per verdict
    # Pass, F-Exec, F-Acc, F-Time, not run
    assert re.search(rf"exact\s+│\s+poisson\s+│\s+{len(cases)}\s+│\s+1\s+│\s+{len(cases) - 1}\s+│\s+0\s+│\s+0\s+│"
                     rf"\s+{len(cases) - 1}", out), out
    assert f"1/{len(cases)} passed; every verdict in {tmp_path / 'out' / 'verdicts.jsonl'}" in out, out
