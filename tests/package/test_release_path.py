"""The release path a maintainer walks: builds accumulate, packaging refuses to shrink, and
releases are immutable, append-only directories whose version follows what an agent or a score
sees."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from casekit.build.pipeline import BuildOptions
from casekit.build.run import build, write_records
from casekit.cli import app
from casekit.errors import UsageError
from casekit.model.record import CaseRecord
from casekit.package.build_dist import package
from casekit.package.verify import verify

pytestmark = pytest.mark.dolfinx
runner = CliRunner()


def _tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` and its sha256."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _ids(built: Path) -> dict[str, str]:
    """family -> case id of the session's build."""
    records = [json.loads(ln) for ln in (built / "build" / "dolfinx" / "records.jsonl").read_text().splitlines()]
    return {r["pde_classification"]["equation_family"]: r["id"] for r in records}


def _edit(build_dir: Path, case: str, edit: Callable[[dict[str, Any]], None]) -> None:
    path = build_dir / "dolfinx" / case / "record.json"
    record = json.loads(path.read_text())
    edit(record)
    path.write_text(json.dumps(CaseRecord.from_dict(record).sealed().to_dict(), indent=2))
    write_records(build_dir, "dolfinx")


def _package(build_dir: Path, out: Path, **kw: Any) -> Path:
    package(build_dir, ["dolfinx"], out, name="test-set", version="0.1.0", **kw)
    return out


def _release(dist: Path, releases: Path, *args: str) -> Any:
    return runner.invoke(app, ["release", str(dist), "--releases", str(releases), *args])


def test_releases_are_append_only_with_honest_versions(built: Path, tmp_path: Path) -> None:
    ids = _ids(built)
    work, releases = tmp_path / "build", tmp_path / "releases"
    shutil.copytree(built / "build", work)
    shutil.rmtree(work / "dolfinx" / ids["heat"])
    write_records(work, "dolfinx")
    frozen: dict[str, dict[str, str]] = {}

    def cut(dist: Path, date: str, *args: str) -> Any:
        before = _tree(dist)
        result = _release(dist, releases, "--date", date, *args)
        assert _tree(dist) == before, "a release never edits the packaged dataset"
        for version, files in frozen.items():
            assert _tree(releases / "test-set" / version) == files, f"release {version} changed"
        return result

    # the first release
    result = cut(_package(work, tmp_path / "d1"), "2026-01-10", "--version", "1.0.0")
    assert result.exit_code == 0, result.output
    first = releases / "test-set" / "1.0.0"
    assert verify(first) == []
    assert json.loads((first / "manifest.json").read_text())["version"] == "1.0.0"
    frozen["1.0.0"] = _tree(first)
    result = _release(tmp_path / "d1", releases)
    assert result.exit_code == 2 and "already has releases (1.0.0)" in result.output
    assert "--previous" in result.output

    # minor: a case added (the build accumulates: building heat adds it beside poisson)
    heat_source = next((built / "cases" / "heat").glob("*.yaml"))
    outcomes = build([heat_source], BuildOptions(work, "dolfinx", repeats=1))
    assert [o.status for o in outcomes] == ["built"]
    dry = _release(_package(work, tmp_path / "d2"), releases, "--previous", str(first), "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "minor release after 1.0.0" in dry.output and f"added 1 case(s): {ids['heat']}" in dry.output, dry.output
    assert not (releases / "test-set" / "1.1.0").exists(), "--dry-run writes nothing"
    result = cut(tmp_path / "d2", "2026-02-20", "--previous", str(first))
    assert result.exit_code == 0 and "minor release 1.1.0" in result.output, result.output
    frozen["1.1.0"] = _tree(releases / "test-set" / "1.1.0")

    # a version that exists, or a release after an older one (which would move the version down), is refused
    result = _release(tmp_path / "d2", releases, "--previous", str(first), "--version", "1.1.0")
    assert result.exit_code == 2 and "not the latest release of test-set" in result.output
    result = _release(tmp_path / "d2", releases, "--previous", str(releases / "test-set" / "1.1.0"),
                      "--version", "1.0.1")
    assert result.exit_code == 2 and "nothing changed since 1.1.0" in result.output

    # major: an accuracy threshold changed
    _edit(work, ids["poisson"], lambda r: r["evaluation_metadata"]["thresholds"].update(
        tau_acc=r["evaluation_metadata"]["thresholds"]["tau_acc"] / 2))
    result = cut(_package(work, tmp_path / "d3"), "2026-03-30", "--previous", str(releases / "test-set" / "1.1.0"))
    assert result.exit_code == 0 and "major release 2.0.0" in result.output, result.output
    frozen["2.0.0"] = _tree(releases / "test-set" / "2.0.0")
    result = _release(tmp_path / "d3", releases, "--previous", str(first))
    assert result.exit_code == 2 and "not the latest release of test-set" in result.output

    # patch: rebuilt on another machine -- new timings, machine, a library patch version
    def retime(r: dict[str, Any]) -> None:
        meta = r["evaluation_metadata"]
        meta["t_base"] *= 1.7
        meta["t_base_runs"] = [t * 1.7 for t in meta["t_base_runs"]]
        meta["thresholds"]["tau_time"] *= 1.7
        meta["environment"]["cpu_model"] = "another CPU"
        lib = meta["environment"]["libraries"]
        name = next(iter(lib))
        lib[name] = ".".join([*lib[name].split(".")[:2], "99"])

    for case in ids.values():
        _edit(work, case, retime)
    latest = releases / "test-set" / "2.0.0"
    result = cut(_package(work, tmp_path / "d4"), "2026-04-02", "--previous", str(latest))
    assert result.exit_code == 0 and "patch release 2.0.1" in result.output, result.output
    frozen["2.0.1"] = _tree(releases / "test-set" / "2.0.1")

    # nothing changed: refused in one line
    result = cut(_package(work, tmp_path / "d5"), "2026-04-03", "--previous", str(releases / "test-set" / "2.0.1"))
    assert result.exit_code == 2 and "nothing changed since 2.0.1" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert sorted(p.name for p in (releases / "test-set").iterdir()) == ["1.0.0", "1.1.0", "2.0.0", "2.0.1"]

    log = (releases / "test-set" / "2.0.1" / "CHANGELOG.md").read_text()
    entries = [ln for ln in log.splitlines() if ln.startswith("## ")]
    assert entries == ["## 2.0.1 (patch release after 2.0.0, 2026-04-02)",
                       "## 2.0.0 (major release after 1.1.0, 2026-03-30)",
                       "## 1.1.0 (minor release after 1.0.0, 2026-02-20)",
                       "## 1.0.0 (first release, 2026-01-10)"]
    patch = log.split("## 2.0.0")[0]
    assert "### Metadata" in patch and "### Data" not in patch
    for what in ("t_base", "t_base_runs", "tau_time", "machine", "library patch version", "content hash"):
        assert what in patch
    assert f"- changed {ids['poisson']}: accuracy threshold" in log.split("## 1.1.0")[0]
    assert verify(releases / "test-set" / "2.0.1") == []


def test_a_build_accumulates_and_prunes_and_packaging_never_shrinks_silently(built: Path, tmp_path: Path) -> None:
    ids = _ids(built)
    work, cases = tmp_path / "build", tmp_path / "cases"
    shutil.copytree(built / "build", work)
    shutil.copytree(built / "cases", cases)
    first = _package(work, tmp_path / "d1")

    # building one source into the build directory adds or updates its case, never drops the others
    poisson = next((cases / "poisson").glob("*.yaml"))
    assert [o.status for o in build([poisson], BuildOptions(work, "dolfinx", repeats=1))] == ["built"]
    held = [json.loads(ln)["id"] for ln in (work / "dolfinx" / "records.jsonl").read_text().splitlines()]
    assert held == sorted(ids.values())

    # --prune drops the cases whose sources are gone
    heat = next((cases / "heat").glob("*.yaml"))
    assert [o.status for o in build([heat], BuildOptions(work, "dolfinx", repeats=1))] == ["built"]
    shutil.rmtree(cases / "heat")
    result = runner.invoke(app, ["build", str(poisson), "--build-dir", str(work), "--repeats", "1", "--prune"])
    assert result.exit_code == 0, result.output
    held = [json.loads(ln)["id"] for ln in (work / "dolfinx" / "records.jsonl").read_text().splitlines()]
    assert held == [ids["poisson"]] and not (work / "dolfinx" / ids["heat"]).exists()
    assert "1 case(s) built in" in result.output

    # packaging fewer cases than the previous release holds is refused unless the removal is named
    releases = tmp_path / "releases"
    assert _release(first, releases, "--version", "1.0.0").exit_code == 0
    released = releases / "test-set" / "1.0.0"
    with pytest.raises(UsageError, match=f"would be left out: {ids['heat']} \\(dolfinx\\)"):
        _package(work, tmp_path / "d2", previous=released)
    assert not (tmp_path / "d2").exists()
    out = tmp_path / "d3"
    result = runner.invoke(app, ["package", str(work), "--out", str(out), "--name", "test-set",
                                 "--releases", str(releases)])  # the latest release is found by itself
    assert result.exit_code == 2 and "--allow-removal" in result.output and not out.exists()
    result = runner.invoke(app, ["package", str(work), "--out", str(out), "--name", "test-set",
                                 "--releases", str(releases), "--allow-removal", ids["heat"]])
    assert result.exit_code == 0, result.output
    assert "dolfinx: 1 case(s): poisson 1" in result.output
    result = _release(out, releases, "--previous", str(released))
    assert result.exit_code == 0 and "major release 2.0.0" in result.output and "1 removed" in result.output
