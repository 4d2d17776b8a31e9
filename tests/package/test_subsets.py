"""A further set of cases (the authored sample) packaged as its own configurations beside the
main set: files, manifest, card, Croissant, ``datasets.load_dataset``, verify, semver, clashes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from casekit.errors import UsageError
from casekit.ids import public_id
from casekit.model.record import CaseRecord
from casekit.package.build_dist import package
from casekit.package.numbers import MACHINE_FILE
from casekit.package.release import plan
from casekit.package.semver import diff
from casekit.package.verify import verify

pytestmark = pytest.mark.dolfinx


def _renamed(built: Path, out: Path, suffix: str) -> Path:
    """The built cases of ``built`` as another build directory ``out`` whose ids end in ``suffix``
    (the same solves: a fabricated second set, no FEM)."""
    rows = []
    for line in (built / "dolfinx" / "records.jsonl").read_text().splitlines():
        rec = json.loads(line)
        old, rec["id"] = rec["id"], rec["id"] + suffix
        rec["public_id"] = public_id(rec["id"])
        rec = CaseRecord.from_dict(rec).sealed().to_dict()
        shutil.copytree(built / "dolfinx" / old, out / "dolfinx" / rec["id"])
        (out / "dolfinx" / rec["id"] / "record.json").write_text(json.dumps(rec))
        rows.append(rec)
    (out / "dolfinx" / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (out / MACHINE_FILE).write_text(json.dumps({"dolfinx": {"cases": 3, "built": 2, "seconds": 90.0,
                                                            "seconds_per_case": 30.0}}))
    return out


@pytest.fixture(scope="module")
def two_sets(built: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sets")
    authored = _renamed(built / "build", root / "authored-build", "_authored")
    package(built / "build", ["dolfinx"], root / "dist", name="two-sets", version="1.0.0",
            subsets={"authored": authored})
    return root / "dist"


def test_the_second_set_is_its_own_configurations(two_sets: Path) -> None:
    manifest = json.loads((two_sets / "manifest.json").read_text())
    assert manifest["tracks"] == ["dolfinx"] and manifest["subsets"] == {"authored": ["dolfinx"]}
    main = [json.loads(ln)["id"] for ln in (two_sets / "cases.jsonl").read_text().splitlines()]
    authored = [json.loads(ln)["id"] for ln in (two_sets / "authored" / "cases.jsonl").read_text().splitlines()]
    assert authored == [f"{i}_authored" for i in main]
    assert len((two_sets / "authored" / "agent.jsonl").read_text().splitlines()) == len(authored)
    assert len(list((two_sets / "calibration" / "dolfinx").glob("*.npz"))) == 2 * len(main)
    assert verify(two_sets) == []
    card = (two_sets / "README.md").read_text()
    for config in ("config_name: agent", "config_name: cases", "config_name: authored_agent",
                   "config_name: authored\n"):
        assert config in card
    assert "## The set `authored`" in card and "| dolfinx | 3 | 2 | 0.03 | 30.0 |" in card
    entry = plan(two_sets, date="2026-01-01").entry
    assert "- the set authored: 2 case(s) on track(s) dolfinx" in entry


def test_each_configuration_loads_with_datasets_and_croissant(two_sets: Path, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    n = len((two_sets / "cases.jsonl").read_text().splitlines())
    for config, column in (("agent", "target_library"), ("cases", "evaluation_metadata"),
                           ("authored_agent", "target_library"), ("authored", "evaluation_metadata")):
        ds = datasets.load_dataset(str(two_sets), config, split="test", cache_dir=str(tmp_path / "hf"))
        assert ds.num_rows == n and column in ds.column_names, config
    assert datasets.load_dataset(str(two_sets), "authored", split="test",
                                 cache_dir=str(tmp_path / "hf"))[0]["id"].endswith("_authored")
    mlc = pytest.importorskip("mlcroissant")
    ds = mlc.Dataset(jsonld=str(two_sets / "croissant.json"))
    assert all(r["authored/id"].decode().endswith("_authored") for r in ds.records("authored"))
    # each set's agent record set holds its own cases' tasks only (the prompts directory is shared)
    for config, folder in (("agent", two_sets), ("authored_agent", two_sets / "authored")):
        rows = list(ds.records(config))
        public = {json.loads(ln)["public_id"] for ln in (folder / "cases.jsonl").read_text().splitlines()}
        assert len(rows) == n and {r[f"{config}/id"].decode() for r in rows} == public, config
        assert all(r[f"{config}/prompt"].startswith(b"# Task") for r in rows)


def test_a_set_added_is_a_minor_release_and_verify_catches_a_clash(built: Path, two_sets: Path,
                                                                    tmp_path: Path) -> None:
    package(built / "build", ["dolfinx"], tmp_path / "one", name="two-sets", version="1.0.0")
    d = diff(two_sets, tmp_path / "one")
    assert d.level == "minor" and "new track: authored/dolfinx" in d.tracks
    assert sorted(d.added) == sorted(json.loads(ln)["id"] for ln in
                                     (two_sets / "authored" / "cases.jsonl").read_text().splitlines())
    assert diff(tmp_path / "one", two_sets).level == "major"  # the set removed
    bad = tmp_path / "bad"
    shutil.copytree(two_sets, bad)
    shutil.copy(bad / "cases.jsonl", bad / "authored" / "cases.jsonl")
    assert any("more than one set" in p.message for p in verify(bad))


def test_an_id_in_two_sets_is_refused(built: Path, tmp_path: Path) -> None:
    same = _renamed(built / "build", tmp_path / "same", "")
    with pytest.raises(UsageError, match="in more than one set of cases") as e:
        package(built / "build", ["dolfinx"], tmp_path / "dist", name="x", version="1.0.0",
                subsets={"authored": same})
    assert "(authored, main)" in str(e.value)
    assert not (tmp_path / "dist").exists()
    with pytest.raises(UsageError, match="cannot name a set"):
        package(built / "build", ["dolfinx"], tmp_path / "dist", name="x", version="1.0.0",
                subsets={"cases": tmp_path / "no-such"})


def test_a_release_is_evaluated_on_either_set(two_sets: Path) -> None:
    from casekit.evaluate.store import open_release, open_store

    main = open_release(two_sets, "dolfinx")
    authored = open_release(two_sets, "dolfinx", "authored")
    assert sorted(authored.records) == sorted(f"{cid}_authored" for cid in main.records)
    cid = next(iter(authored.records))
    assert authored.reference(cid).case_id == cid  # its manufactured solution, sampled at evaluation
    with pytest.raises(UsageError, match="no set of cases 'other'"):
        open_store(two_sets, "dolfinx", "other")
