"""One id resolver (casekit.ids.resolve) for every command that takes a case: a descriptive id or
a public id, in case sources, a build directory or a packaged dataset, on the requested
library's track first and then every track the build or dataset holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from casekit import yamlio
from casekit.cli import app
from casekit.derive import derive
from casekit.evaluate.store import find_case
from casekit.ids import public_id, resolve
from casekit.model.source import CaseSource
from tests.helpers import poisson

runner = CliRunner()
SALTED = "case-00112233445566ff"


def _records(ids: list[str]) -> list[dict]:
    out = []
    for cid in ids:
        spec = derive(CaseSource.from_dict(poisson(id=cid))).case_spec()
        out.append({"id": cid, "public_id": SALTED if cid.endswith("_salted") else public_id(cid), "case_spec": spec})
    return out


def _jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.fixture(scope="module")
def held(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A build directory with a DOLFINx-and-numpy case and a numpy-only case, and a dataset
    holding the same (numpy as a further track, a salted case in its authored set)."""
    root = tmp_path_factory.mktemp("held")
    both, numpy_only, salted = _records(["p_both", "p_numpy_only", "p_authored_salted"])
    _jsonl(root / "build" / "dolfinx" / "records.jsonl", [both])
    _jsonl(root / "build" / "numpy" / "records.jsonl", [both, numpy_only])
    dist = root / "dist"
    _jsonl(dist / "cases.jsonl", [both])
    _jsonl(dist / "tracks" / "numpy.jsonl", [both, numpy_only])
    _jsonl(dist / "authored" / "cases.jsonl", [salted])
    (dist / "manifest.json").write_text(json.dumps({"name": "t", "version": "0.1.0", "tracks": ["dolfinx", "numpy"],
                                                    "subsets": {"authored": ["dolfinx"]}, "files": []}))
    return {"build": root / "build", "dist": dist}


@pytest.mark.parametrize("where", ["build", "dist"])
@pytest.mark.parametrize(("name", "library"), [
    ("p_both", "dolfinx"), (public_id("p_both"), "dolfinx"),
    ("p_numpy_only", "numpy"), (public_id("p_numpy_only"), "numpy"),
    # the agent view is the same on every track: a case built on numpy only renders for dolfinx too
    (public_id("p_numpy_only"), "dolfinx"),
])
def test_prompt_finds_a_case_by_either_id_on_any_track(held: dict[str, Path], where: str, name: str,
                                                       library: str) -> None:
    r = runner.invoke(app, ["prompt", name, "--cases", str(held[where]), "--library", library, "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["case_id"] in ("p_both", "p_numpy_only") and out["library"] == library and out["prompt"]


def test_a_case_of_a_further_set_is_found_by_its_declared_public_id(held: dict[str, Path]) -> None:
    _, case_id = find_case(held["dist"], SALTED, "dolfinx")
    assert case_id == "p_authored_salted"


def test_an_unknown_case_names_where_it_looked_and_the_closest_id(held: dict[str, Path]) -> None:
    r = runner.invoke(app, ["prompt", "p_numpy_onyl", "--cases", str(held["build"]), "--library", "numpy"])
    assert r.exit_code == 2
    assert "no case 'p_numpy_onyl'" in r.output and "numpy" in r.output and "dolfinx" in r.output
    assert "did you mean p_numpy_only?" in r.output


def test_show_and_prompt_take_a_source_by_its_public_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "cases" / "poisson" / "p_source.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(yamlio.dumps(poisson(id="p_source")))
    for argv in (["show", public_id("p_source"), "--json"], ["prompt", public_id("p_source"), "--json"],
                 ["show", "p_source", "--json"]):
        r = runner.invoke(app, argv)
        assert r.exit_code == 0, r.output
        json.loads(r.stdout)
    r = runner.invoke(app, ["show", "p_sourc"])
    assert r.exit_code == 2 and "did you mean p_source?" in r.output


def test_resolve_takes_descriptive_declared_and_unsalted_public_ids() -> None:
    cases = {"a": {"public_id": SALTED}, "b": {}}
    assert resolve("a", cases) == "a" and resolve(SALTED, cases) == "a"
    assert resolve(public_id("b"), cases) == "b"
    assert resolve(public_id("a"), cases) is None  # a salted case is not found by the unsalted id
    assert resolve("c", cases) is None
