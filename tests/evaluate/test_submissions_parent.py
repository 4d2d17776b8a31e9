"""A submissions directory one level too high -- its entries are systems, not cases -- is refused
(exit 2) naming the systems inside and the command to run, never scored as one system that
submitted nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from casekit.cli import app
from casekit.errors import UsageError
from casekit.evaluate.run import EvalOptions
from casekit.evaluate.store import CaseStore
from casekit.ids import public_id
from tests.helpers import write_submission

IDS = ("poisson_a", "heat_b")


def _store(root: Path) -> CaseStore:
    records = {cid: {"id": cid, "public_id": public_id(cid)} for cid in IDS}
    build = root / "build" / "dolfinx"
    build.mkdir(parents=True)
    (build / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records.values()))
    return CaseStore(root / "build", records, "build")


def _parent(root: Path) -> Path:
    parent = root / "submissions"
    write_submission(parent / "agent_a", public_id(IDS[0]), "def solve(case_spec): pass\n")
    write_submission(parent / "agent_b", IDS[1], "def solve(case_spec): pass\n")
    (parent / "notes").mkdir()  # an entry that is neither
    return parent


def test_a_parent_of_systems_is_refused_naming_them(tmp_path: Path) -> None:
    opts = EvalOptions(_store(tmp_path), _parent(tmp_path), tmp_path / "eval")
    with pytest.raises(UsageError) as err:
        opts.systems()
    text = str(err.value)
    assert "agent_a, agent_b" in text and "notes" not in text
    assert f"--submissions {tmp_path / 'submissions' / 'agent_a'} --submissions" in text


def test_the_systems_themselves_are_accepted(tmp_path: Path) -> None:
    store, parent = _store(tmp_path), _parent(tmp_path)
    opts = EvalOptions(store, [parent / "agent_a", parent / "agent_b"], tmp_path / "eval")
    assert [n for n, _ in opts.systems()] == ["agent_a", "agent_b"]


def test_evaluate_exits_2_on_a_parent_and_scores_nothing(tmp_path: Path) -> None:
    _store(tmp_path)
    parent = _parent(tmp_path)
    r = CliRunner().invoke(app, ["evaluate", "--cases", str(tmp_path / "build"), "--submissions", str(parent),
                                 "--out", str(tmp_path / "eval")])
    assert r.exit_code == 2, r.output
    if "runner is not usable" in r.output:
        pytest.skip(r.output)
    assert "agent_a, agent_b" in r.output and "--submissions" in r.output
    assert not (tmp_path / "eval" / "verdicts.jsonl").exists()
