"""``casekit baselines``: its --kind help lists every registered baseline (read from the registry),
a kind that gets no case writes nothing and names no directory, and --set writes a further set's
baselines as ``casekit evaluate --set`` scores them."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from casekit.cli import app
from casekit.evaluate.baselines import KINDS
from tests.conftest import REPO

runner = CliRunner()


def _poisson_build(root: Path) -> str:
    """A build directory holding one committed (steady) Poisson case; its id."""
    shard = sorted((REPO / "datasets" / "pdeagent-bench-repaired" / "build" / "dolfinx" / "poisson").glob("*.json"))[0]
    record = json.loads(shard.read_text())["record"]
    (root / "dolfinx").mkdir(parents=True)
    (root / "dolfinx" / "records.jsonl").write_text(json.dumps(record) + "\n")
    return str(record["id"])


def test_the_kind_help_lists_every_registered_baseline() -> None:
    text = runner.invoke(app, ["baselines", "--help"], terminal_width=400).output
    listed = re.sub(r"\s+", " ", text.partition("--kind")[2].partition("--track")[0])
    missing = [k for k in KINDS if k not in listed]
    assert not missing, listed
    assert "{names}" not in text


def test_a_kind_that_applies_to_no_case_writes_nothing_and_names_no_directory(tmp_path: Path) -> None:
    case = _poisson_build(tmp_path / "build")
    out = tmp_path / "subs"
    r = runner.invoke(app, ["baselines", "--cases", str(tmp_path / "build"), "--out", str(out), "--kind", "zero",
                            "--kind", "initial"])  # a steady case has no initial data
    assert r.exit_code == 0, r.output
    assert (out / "zero" / case / "solver.py").is_file()
    assert not (out / "initial").exists()
    assert "initial: applies to none of the 1 case(s); nothing written" in r.output, r.output
    for named in re.findall(rf"{re.escape(str(out))}\S*", r.output):
        assert Path(named.rstrip(":")).is_dir(), (named, r.output)  # every directory it names exists

    got = json.loads(runner.invoke(app, ["baselines", "--cases", str(tmp_path / "build"), "--out", str(out),
                                         "--kind", "zero", "--kind", "initial", "--json"]).stdout)
    assert got["submissions"] == {"zero": {"directory": str(out / "zero"), "cases": 1}}
    assert got["not_written"] == {"initial": "applies to none of the 1 case(s)"} and got["cases"] == 1


def test_set_names_a_further_set_of_cases_as_evaluate_takes_it(tmp_path: Path) -> None:
    _poisson_build(tmp_path / "build")
    r = runner.invoke(app, ["baselines", "--cases", str(tmp_path / "build"), "--out", str(tmp_path / "subs"),
                            "--set", "authored"])
    assert r.exit_code == 2, r.output
    assert "has no set 'authored'" in r.output, r.output  # the set reached the store (a build has none)
