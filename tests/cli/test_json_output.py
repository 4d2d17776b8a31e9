"""Every listing and result command's --json is one JSON document on stdout (progress and notes
on stderr): the commands that need nothing built here; those that need a build in
test_json_built.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from casekit import yamlio
from casekit.cli import app
from tests.helpers import poisson

runner = CliRunner()


def _source(tmp: Path) -> Path:
    path = tmp / "cases" / "poisson" / "poisson_test.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yamlio.dumps(poisson()))
    return path


def _verdicts(tmp: Path) -> Path:
    from tests.report.test_report import two_systems

    (tmp / "eval").mkdir()
    (tmp / "eval" / "verdicts.jsonl").write_text("".join(json.dumps(v) + "\n" for v in two_systems()))
    return tmp / "eval"


def _records(tmp: Path, shared: Path) -> Path:
    out = tmp / "two.jsonl"
    out.write_text("".join(shared.read_text().splitlines(keepends=True)[:2]))
    return out


#: name -> (argv builder from a scratch directory and the shared records, exit status, check)
CASES: dict[str, tuple[Callable[[Path, Path], list[str]], int, Callable[[object], bool]]] = {
    "new": (lambda t, s: ["new", "--family", "heat", "--out", str(t / "cases"), "--json"], 0,
            lambda d: Path(d["path"]).is_file() and d["id"].startswith("heat_")),  # type: ignore[index]
    "prompt": (lambda t, s: ["prompt", str(_source(t)), "--json"], 0,
               lambda d: d["case_id"] == "poisson_test" and "poisson" in d["prompt"].lower()),  # type: ignore[index]
    "show": (lambda t, s: ["show", str(_source(t)), "--json"], 0, lambda d: "pde" in d),  # type: ignore[operator]
    "validate": (lambda t, s: ["validate", str(_source(t)), "--json"], 0,
                 lambda d: d["cases"] == 1),  # type: ignore[index]
    "verify": (lambda t, s: ["verify", str(t), "--json"], 1,
               lambda d: d["verified"] is False and d["problems"]),  # type: ignore[index]
    "import": (lambda t, s: ["import", "pdeagent-bench", str(_records(t, s)), "--out", str(t / "imp"), "--json"], 0,
               lambda d: d["imported"] + d["not_convertible"] == 2),  # type: ignore[index]
    "env check": (lambda t, s: ["env", "check", "--json"], 0,
                  lambda d: d["environments"] and d["runners"]),  # type: ignore[index]
    "track list": (lambda t, s: ["track", "list", "--json"], 0, lambda d: len(d) >= 1),  # type: ignore[arg-type]
    "family list": (lambda t, s: ["family", "list", "--json"], 0, lambda d: len(d) >= 11),  # type: ignore[arg-type]
    "domain list": (lambda t, s: ["domain", "list", "--json"], 0, lambda d: len(d) >= 14),  # type: ignore[arg-type]
    "sample": (lambda t, s: ["sample", "--family", "heat", "-n", "2", "--json"], 0,
               lambda d: len(d["points"]) == 2),  # type: ignore[index]
    "report": (lambda t, s: ["report", str(_verdicts(t)), "--json"], 0,
               lambda d: d["systems"] == ["agent_a", "agent_b"]),  # type: ignore[index]
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_json_is_one_document_on_stdout(name: str, tmp_path: Path, shared_data: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    argv, status, check = CASES[name]
    r = runner.invoke(app, argv(tmp_path, shared_data))
    assert r.exit_code == status, r.output
    data = json.loads(r.stdout)
    assert check(data), data
