"""Verdicts know what they scored: each carries its case record's content hash, and a resumed
``casekit evaluate`` scores again every journaled verdict whose record has changed since (the
case rebuilt with another tau_acc) or that names no record (an older casekit's journal).

The submissions are never run here: ``score_batch`` is replaced by one that makes each attempt's
verdict with the real :func:`casekit.evaluate.verdicts.verdict` from a fixed error of 1e-3, so the
accuracy gate passes under tau_acc = 1e-2 and fails under 1e-4."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casekit import schema
from casekit.evaluate import run as run_mod
from casekit.evaluate.journal import Journal
from casekit.evaluate.run import EvalOptions, evaluate
from casekit.evaluate.store import CaseStore
from casekit.evaluate.verdicts import RunScorer, Timing, record_hash, verdict
from casekit.execution import Execution
from casekit.runner.base import RunResult

ERROR = 1e-3
CASES = ("poisson_c1", "poisson_c2")


def _record(case_id: str, tau_acc: float) -> dict[str, Any]:
    rec = {
        "id": case_id, "public_id": f"p-{case_id[-1]}",
        "pde_classification": {"equation_family": "poisson", "math_type": ["elliptic"]},
        "case_spec": {"domain": {"type": "unit_square"}},
        "evaluation_config": {"timeout_sec": 10.0, "alpha_acc": 10.0, "alpha_time": 3.0, "tau_min": 1e-6},
        "evaluation_metadata": {"thresholds": {"tau_acc": tau_acc, "tau_time": 3.0}, "e_base": 1e-4, "t_base": 1.0,
                                "reference_path": f"{case_id}/reference.npz", "track": "dolfinx"},
    }
    return {**rec, "content_hash": record_hash(rec)}  # sealed, as a build writes it


def _store(root: Path, tau_acc: dict[str, float]) -> CaseStore:
    for case_id in CASES:
        (root / "dolfinx" / case_id).mkdir(parents=True, exist_ok=True)
        (root / "dolfinx" / case_id / "reference.npz").write_bytes(b"")
    return CaseStore(root, {c: _record(c, tau_acc.get(c, 1e-2)) for c in CASES}, "build")


def _fake_score_batch(scored: list[str]):  # type: ignore[no-untyped-def]
    def score(item):  # type: ignore[no-untyped-def]
        batch, _ = item
        scored.append(batch.record["id"])
        out = []
        for a in batch.attempts:
            run = RunResult(0, False, 1.0, 1.0, "", "", a.artifacts, "test")
            scorer = RunScorer(batch.record["case_spec"], {}, np.zeros(1, dtype=bool), errors=[ERROR])
            out.append(verdict(batch.record, Execution(runs=[run]), scorer, Timing("paired", 1.0, [1.0], "m"),
                               track="dolfinx", system=a.system, attempt=a.attempt, submission_sha256=a.sha256))
        return out
    return score


def _submissions(root: Path) -> Path:
    for case_id in CASES:
        (root / "agent" / case_id).mkdir(parents=True, exist_ok=True)
        (root / "agent" / case_id / "solver.py").write_text(f"# {case_id}\n")
    return root / "agent"


def _run(monkeypatch: pytest.MonkeyPatch, store: CaseStore, subs: Path, out: Path
         ) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    scored: list[str] = []
    warnings: list[str] = []
    monkeypatch.setattr(run_mod, "score_batch", _fake_score_batch(scored))
    verdicts = evaluate(EvalOptions(store, subs, out, repeats=1), warn=warnings.append)
    return verdicts, scored, warnings


def test_a_verdict_carries_the_record_hash_and_casekit_version(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from casekit import __version__

    store = _store(tmp_path / "build", {})
    verdicts, _, _ = _run(monkeypatch, store, _submissions(tmp_path), tmp_path / "eval")
    assert len(verdicts) == len(CASES)
    for v in verdicts:
        assert schema.validate(v, "verdict") == []
        rec = store.records[v["case_id"]]
        assert v["record_content_hash"] == rec["content_hash"]
        assert v["casekit_version"] == __version__


def test_a_rebuilt_stricter_case_is_scored_again_on_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    subs, out = _submissions(tmp_path), tmp_path / "eval"
    first, scored, _ = _run(monkeypatch, _store(tmp_path / "build", {}), subs, out)
    assert sorted(scored) == list(CASES) and all(v["stage"] == "Pass" for v in first)
    # the same build: everything resumes, nothing runs
    again, scored, warnings = _run(monkeypatch, _store(tmp_path / "build", {}), subs, out)
    assert scored == [] and warnings == [] and again == first
    # poisson_c1 rebuilt with a stricter tau_acc: its Pass was scored against the old record
    stricter = _store(tmp_path / "build", {"poisson_c1": 1e-4})
    after, scored, warnings = _run(monkeypatch, stricter, subs, out)
    assert scored == ["poisson_c1"]
    assert len(warnings) == 1 and "poisson_c1" in warnings[0] and "record changed" in warnings[0]
    by_case = {v["case_id"]: v for v in after}
    assert len(after) == len(CASES)
    assert by_case["poisson_c1"]["stage"] == "F-Acc" and by_case["poisson_c2"]["stage"] == "Pass"
    assert by_case["poisson_c1"]["record_content_hash"] == stricter.records["poisson_c1"]["content_hash"]
    # the journal, read again, holds the new verdict (the last line of its key)
    assert {v["case_id"]: v["stage"] for v in Journal(out / "verdicts.jsonl").all()} == \
        {"poisson_c1": "F-Acc", "poisson_c2": "Pass"}


def test_an_old_journal_without_record_hashes_is_scored_again_with_a_note(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    subs, out = _submissions(tmp_path), tmp_path / "eval"
    store = _store(tmp_path / "build", {})
    _run(monkeypatch, store, subs, out)
    journal = out / "verdicts.jsonl"
    old = [json.loads(line) for line in journal.read_text().splitlines()]
    for v in old:
        del v["record_content_hash"]
    journal.write_text("".join(json.dumps(v) + "\n" for v in old))
    after, scored, warnings = _run(monkeypatch, store, subs, out)
    assert sorted(scored) == list(CASES)
    assert len(warnings) == len(CASES) and all("older casekit" in w for w in warnings)
    assert all(v["record_content_hash"] == store.records[v["case_id"]]["content_hash"] for v in after)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tau=st.sampled_from([1e-2, 5e-3, 1e-3, 1e-4]), field=st.sampled_from(["tau_acc", "e_base", "reference_path"]))
def test_any_change_to_the_record_rescores_and_only_that_case(monkeypatch: pytest.MonkeyPatch, tau: float,
                                                               field: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        subs, out = _submissions(root), root / "eval"
        store = _store(root / "build", {})
        _run(monkeypatch, store, subs, out)
        rec = {k: v for k, v in store.records["poisson_c2"].items() if k != "content_hash"}
        meta = json.loads(json.dumps(rec["evaluation_metadata"]))
        if field == "tau_acc":
            meta["thresholds"]["tau_acc"] = tau
        elif field == "e_base":
            meta["e_base"] = tau
        else:
            meta["reference_path"] = f"poisson_c2/reference-{tau}.npz"
            (root / "build" / "dolfinx" / meta["reference_path"]).write_bytes(b"")
        changed = {**rec, "evaluation_metadata": meta}
        changed["content_hash"] = record_hash(changed)
        store.records["poisson_c2"] = changed
        _, scored, _ = _run(monkeypatch, store, subs, out)
        assert scored == ([] if changed["content_hash"] == record_hash(rec) else ["poisson_c2"])
