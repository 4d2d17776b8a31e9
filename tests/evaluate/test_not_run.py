"""A verdict of an attempt that never ran (no submission) says so: no submission's hash (the
schema's "empty when there was none") and no paired timing -- nothing ran beside the calibration
solver -- while attempts that ran in the same case keep theirs; an older casekit's journal of such
verdicts (keyed by the reason's hash) resumes; ``casekit report`` reads them.  The timed runs are
replaced by runs that write artifacts (no sandbox, no solver); the calibration run is one of them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from casekit.evaluate import pairing
from casekit.evaluate.run import EvalOptions, evaluate, ran
from casekit.tracks import TRACKS
from tests.evaluate.test_verdict_guard import CASE, _sound, _store, _submissions, fake  # noqa: F401 (fake: the runs)


@pytest.fixture
def paired(fake: Any, monkeypatch: pytest.MonkeyPatch) -> Any:  # noqa: F811 (the imported fixture)
    """Paired timing with the fake runs: the calibration solver is an exact one."""
    monkeypatch.setattr(pairing, "calibration_settings", lambda record: {})
    monkeypatch.setattr(type(TRACKS.get("dolfinx")), "calibration_submission",
                        lambda self, settings, spec: {"solver.py": b"# exact"})
    return fake


def _evaluate(tmp_path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    first, second = f"{CASE}_a", f"{CASE}_b"
    store = _store(tmp_path / "build", [first, second])
    subs = [_submissions(tmp_path / "subs", "some", {first: "# exact"}),  # nothing for the second case
            _submissions(tmp_path / "subs", "other", {second: "# zero"})]  # nothing for the first
    (tmp_path / "subs" / "none").mkdir()
    (tmp_path / "subs" / "none" / "unrelated").mkdir()  # a system that submitted for no case
    subs.append(tmp_path / "subs" / "none")
    got = evaluate(EvalOptions(store, subs, tmp_path / "out", repeats=1, timing="paired"))
    return {(v["system"], v["case_id"].rsplit("_", 1)[1]): v for v in got}


@pytest.mark.usefixtures("paired")
def test_a_verdict_of_no_submission_has_no_hash_and_no_paired_timing(tmp_path: Path) -> None:
    by = _evaluate(tmp_path)
    assert len(by) == 6
    for v in by.values():
        _sound(v)
    ran_ = by["some", "a"]
    assert ran_["passed"] and ran(ran_)
    assert ran_["timing"]["mode"] == "paired" and ran_["timing"]["reference_runs"]  # timed beside the calibration
    assert len(ran_["submission_sha256"]) == 64
    for key in [("other", "a"), ("none", "a"), ("some", "b"), ("none", "b")]:
        v = by[key]
        assert v["failure"]["category"] == "missing_submission" and not ran(v), key
        assert v["submission_sha256"] == "", key  # the schema's "empty when there was none"
        # the same case's calibration was timed beside another system's attempt ("a"), or nothing
        # ran at all ("b"): either way this attempt was paired with nothing
        assert v["timing"]["mode"] == "build" and v["timing"]["reference_runs"] == [], (key, v["timing"])
        assert v["timing"]["ratio"] is None and v["timing"]["machine"] == "", key


@pytest.mark.usefixtures("paired")
def test_an_older_journal_of_no_submission_verdicts_resumes(tmp_path: Path) -> None:
    _evaluate(tmp_path)
    journal = tmp_path / "out" / "verdicts.jsonl"
    old = []
    for line in journal.read_text().splitlines():  # as an older casekit wrote them
        v = json.loads(line)
        if not v["submission_sha256"]:
            reason = (v["failure"]["category"], v["failure"]["message"])
            v["submission_sha256"] = hashlib.sha256(repr(reason).encode()).hexdigest()
            v["timing"] = {**v["timing"], "mode": "paired"}
        old.append(json.dumps(v))
    journal.write_text("\n".join(old) + "\n")
    again = _evaluate_again(tmp_path)
    assert {v["submission_sha256"] for v in again if not ran(v)} == {""}  # given again: nothing ran
    assert all(v["timing"]["mode"] == "build" for v in again if not ran(v))
    assert _evaluate_again(tmp_path) == again  # and now resumed as they are

    from typer.testing import CliRunner

    from casekit.cli import app

    report = CliRunner().invoke(app, ["report", str(tmp_path / "out"), "--json"])  # the consumer reads them
    assert report.exit_code == 0, report.output
    assert "none" in report.stdout and "some" in report.stdout


def _evaluate_again(tmp_path: Path) -> list[dict[str, Any]]:
    from casekit.evaluate.store import CaseStore

    store: CaseStore = _store(tmp_path / "build2", [f"{CASE}_a", f"{CASE}_b"])
    subs = [tmp_path / "subs" / s for s in ("some", "other", "none")]
    return evaluate(EvalOptions(store, subs, tmp_path / "out", repeats=1, timing="paired"))
