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
