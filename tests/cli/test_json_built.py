"""--json of the commands that need built cases (the session's coarse DOLFINx build): package,
verify, release, reproduce, baselines, calibrate-timing and prompt by public id, each one JSON
document on stdout with the progress on stderr."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from casekit.cli import app

pytestmark = pytest.mark.dolfinx
runner = CliRunner()


def _json(argv: list[str], status: int = 0) -> Any:
    r = runner.invoke(app, argv)
    assert r.exit_code == status, r.output
    return json.loads(r.stdout)


def test_result_commands_on_a_build_print_one_json_document(built: Path, tmp_path: Path) -> None:
    build = built / "build"
    dist = tmp_path / "dist"
    pkg = _json(["package", str(build), "--out", str(dist), "--name", "json-set", "--releases",
                 str(tmp_path / "releases"), "--json"])
    assert pkg["counts"]["dolfinx"] and pkg["files"] > 0 and pkg["out"] == str(dist)
    assert _json(["verify", str(dist), "--json"]) == {"dataset": str(dist), "verified": True, "problems": []}
    rel = _json(["release", str(dist), "--releases", str(tmp_path / "releases"), "--dry-run", "--json"])
    assert rel["level"] == "first" and rel["dry_run"] and rel["entry"]
    assert not (tmp_path / "releases").exists()
    records = [json.loads(line) for line in (build / "dolfinx" / "records.jsonl").read_text().splitlines()]
    public = records[0]["public_id"]
    prompt = _json(["prompt", public, "--cases", str(dist), "--json"])
    assert prompt["case_id"] == records[0]["id"]
    base = _json(["baselines", "--cases", str(build), "--out", str(tmp_path / "subs"), "--kind", "zero", "--json"])
    assert base["submissions"]["zero"]["cases"] == len(records)
    timing = _json(["calibrate-timing", "--cases", str(build), "--out", str(tmp_path / "timing.json"), "--repeats",
                    "1", "--json"])
    assert set(timing["cases"]) == {r["id"] for r in records}
    # reproduce names a case by its public id too (one resolver)
    rep = _json(["reproduce", str(dist), "--sources", str(built / "cases"), "--sample", public, "--build-dir",
                 str(tmp_path / "rebuild"), "--json"])
    assert rep["reproduced"] and rep["cases"] == [records[0]["id"]]
