"""Packaging, verification, Croissant metadata and release rules."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from casekit.cli import app
from casekit.evaluate.references import MANUFACTURED_REFERENCE
from casekit.model.record import CaseRecord
from casekit.package.build_dist import package, write_manifest
from casekit.package.release import release
from casekit.package.semver import diff
from casekit.package.verify import verify

pytestmark = pytest.mark.dolfinx
runner = CliRunner()


@pytest.fixture(scope="module")
def dist(built: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pkg") / "dist"
    package(built / "build", ["dolfinx"], out, name="test-set", version="1.2.3")
    return out


def _copy(dist: Path, tmp: Path, name: str) -> Path:
    out = tmp / name
    shutil.copytree(dist, out)
    return out


def _edit_records(root: Path, edit) -> None:  # type: ignore[no-untyped-def]
    lines = (root / "cases.jsonl").read_text().splitlines()
    records = [edit(json.loads(ln)) for ln in lines]
    records = [CaseRecord.from_dict(r).sealed().to_dict() for r in records if r is not None]
    (root / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    m = json.loads((root / "manifest.json").read_text())
    write_manifest(root, m["name"], m["version"], m["tracks"])


def test_layout_and_verify(dist: Path) -> None:
    for name in ("cases.jsonl", "agent.jsonl", "README.md", "croissant.json", "manifest.json"):
        assert (dist / name).is_file()
    # both cases are manufactured: their references are sampled from their solutions at evaluation
    assert not (dist / "references").exists()
    records = [json.loads(ln) for ln in (dist / "cases.jsonl").read_text().splitlines()]
    assert [r["evaluation_metadata"]["reference_path"] for r in records] == [MANUFACTURED_REFERENCE] * 2
    assert len(list((dist / "prompts" / "dolfinx").glob("*.md"))) == 2
    assert verify(dist) == []
    card = (dist / "README.md").read_text()
    assert card.startswith("---\npretty_name: test-set") and "### Curation Rationale" in card
    assert "### Maintenance" in card
    # each case's case_spec as JSON text, named by its public id
    for r in records:
        assert json.loads((dist / "case_specs" / f"{r['public_id']}.json").read_text()) == r["case_spec"]
    result = runner.invoke(app, ["verify", str(dist)])
    assert result.exit_code == 0 and "verified" in result.output


def test_tampering_is_detected(dist: Path, tmp_path: Path) -> None:
    bad = _copy(dist, tmp_path, "a")
    ref = next((bad / "calibration").rglob("*.npz"))
    ref.write_bytes(ref.read_bytes()[:-10] + b"0123456789")
    assert any("sha256" in p.message for p in verify(bad))
    bad = _copy(dist, tmp_path, "b")
    next((bad / "calibration").rglob("*.npz")).unlink()
    messages = " ".join(p.message for p in verify(bad))
    assert "missing" in messages
    bad = _copy(dist, tmp_path, "c")
    (bad / "extra.txt").write_text("x")
    assert any("not listed" in p.message for p in verify(bad))
    bad = _copy(dist, tmp_path, "d")
    lines = (bad / "cases.jsonl").read_text().splitlines()
    rec = json.loads(lines[0])
    rec["evaluation_metadata"]["thresholds"]["tau_acc"] = 1.0
    (bad / "cases.jsonl").write_text(json.dumps(rec) + "\n" + "\n".join(lines[1:]) + "\n")
    problems = verify(bad)
    assert any("content_hash" in p.message for p in problems)
    result = runner.invoke(app, ["verify", str(bad)])
    assert result.exit_code == 1


def test_packaging_twice_is_byte_identical(built: Path, dist: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    package(built / "build", ["dolfinx"], again, name="test-set", version="1.2.3")
    files = sorted(p.relative_to(dist) for p in dist.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    for f in files:
        assert (dist / f).read_bytes() == (again / f).read_bytes(), f


def test_croissant_metadata_reads_with_mlcroissant(dist: Path) -> None:
    mlc = pytest.importorskip("mlcroissant")
    ds = mlc.Dataset(jsonld=str(dist / "croissant.json"))
    assert ds.metadata.version == "1.2.3"
    cases = list(ds.records("cases"))
    assert len(cases) == 2 and all(r["cases/tau_acc"] > 0 for r in cases)
    # a Croissant user gets the task: every agent view's fields and its prompt
    rows = map(json.loads, (dist / "agent.jsonl").read_text().splitlines())
    views = {(v["id"], v["target_library"]): v for v in rows}
    agent = list(ds.records("agent"))
    assert {k.removeprefix("agent/") for k in agent[0]} == {*views[next(iter(views))], "prompt"}
    got = {(r["agent/id"].decode(), r["agent/target_library"].decode()): r for r in agent}
    assert sorted(got) == sorted(views)
    for key, r in got.items():
        assert json.loads(r["agent/case_spec"]) == views[key]["case_spec"]
        assert r["agent/prompt"].decode() == (dist / "prompts" / key[1] / f"{key[0]}.md").read_text()
    meta = json.loads((dist / "croissant.json").read_text())
    assert meta["conformsTo"] == "http://mlcommons.org/croissant/1.0"
    assert {k for k in meta if k.startswith("rai:")} >= {"rai:dataCollection", "rai:dataLimitations",
                                                         "rai:dataBiases", "rai:personalSensitiveInformation"}


def test_release_rules(dist: Path, tmp_path: Path) -> None:
    same = _copy(dist, tmp_path, "same")
    assert diff(same, dist).level == "patch"
    docs = _copy(dist, tmp_path, "docs")
    (docs / "README.md").write_text((docs / "README.md").read_text() + "\nMore words.\n")
    write_manifest(docs, "test-set", "1.2.3", ["dolfinx"])
    d = diff(docs, dist)
    assert d.level == "patch" and [c.file for c in d.files] == ["README.md"] and d.changed == {}
    fewer = _copy(dist, tmp_path, "fewer")
    keep = json.loads((dist / "cases.jsonl").read_text().splitlines()[0])["id"]
    _edit_records(fewer, lambda r: r if r["id"] == keep else None)
    more = diff(dist, fewer)
    assert more.level == "minor" and len(more.added) == 1
    assert diff(fewer, dist).level == "major" and diff(fewer, dist).removed
    tighter = _copy(dist, tmp_path, "tighter")

    def halve(r):  # type: ignore[no-untyped-def]
        r["evaluation_metadata"]["thresholds"]["tau_acc"] /= 2
        return r

    _edit_records(tighter, halve)
    d = diff(tighter, dist)
    assert d.level == "major" and all("accuracy threshold" in w for w in d.changed.values())
    finer = _copy(dist, tmp_path, "finer")

    def regrid(r):  # type: ignore[no-untyped-def]
        r["case_spec"]["eval_grid"]["nx"] += 1
        return r

    _edit_records(finer, regrid)
    assert diff(finer, dist).level == "major"
    newcal = _copy(dist, tmp_path, "newcal")
    cal = next((newcal / "calibration").rglob("*.npz"))
    cal.write_bytes(cal.read_bytes() + b"\0")  # other bytes, the same arrays: not a change
    write_manifest(newcal, "test-set", "1.2.3", ["dolfinx"])
    assert diff(newcal, dist).changes == []
    # a manufactured case's reference is its solution (shipped in its record): changing it is major
    # (numerical references, shipped as arrays: tests/evaluate/test_evaluate_release.py)
    newref = _copy(dist, tmp_path, "newref")
    changed = keep

    def rescale(r):  # type: ignore[no-untyped-def]
        if r["id"] == changed:
            sol = r["evaluation_metadata"]["manufactured_solution"]
            sol["u"] = f"({sol['u']})*(1 + 1/1000)"
        return r

    _edit_records(newref, rescale)
    assert diff(newref, dist).changed == {changed: ["reference"]} and diff(newref, dist).level == "major"


def test_release_writes_the_changelog_and_refuses_contradictions(dist: Path, tmp_path: Path) -> None:
    old = _copy(dist, tmp_path, "old")
    keep = json.loads((dist / "cases.jsonl").read_text().splitlines()[0])["id"]
    _edit_records(old, lambda r: r if r["id"] == keep else None)
    new = _copy(dist, tmp_path, "new")
    releases = tmp_path / "releases"
    result = runner.invoke(app, ["release", str(new), "--previous", str(old), "--version", "1.2.4",
                                 "--releases", str(releases)])
    assert result.exit_code == 2 and "contradicts" in result.output  # a new case needs a minor bump
    p = release(new, old, releases=releases, date="2026-05-01")
    assert p.version == "1.3.0" and p.diff is not None and p.diff.level == "minor"
    assert p.target == releases / "test-set" / "1.3.0"
    log = (p.target / "CHANGELOG.md").read_text()
    assert "## 1.3.0 (minor release after 1.2.3, 2026-05-01)" in log and "added 1 case(s)" in log
    assert json.loads((p.target / "croissant.json").read_text())["version"] == "1.3.0"
    assert json.loads((new / "croissant.json").read_text())["version"] == "1.2.3"  # the package is left as it is
    assert verify(p.target) == []


def test_the_card_has_the_calibration_table_and_the_provenance(built: Path, tmp_path: Path) -> None:
    out = tmp_path / "d"
    package(built / "build", ["dolfinx"], out, name="test-set", version="1.0.0",
            about="# Where these cases come from\n\nAdapted from X (CC BY 4.0).")
    card = (out / "README.md").read_text()
    assert "## Calibration per family and track" in card
    assert "| heat | dolfinx | 1 |" in card and "| poisson | dolfinx | 1 |" in card
    assert "## Provenance\n\n### Where these cases come from\n\nAdapted from X (CC BY 4.0)." in card
    assert verify(out) == []


def test_the_card_names_a_case_the_build_rejected_with_the_builds_reason(built: Path, tmp_path: Path) -> None:
    """The build directory's report (``casekit dataset materialise`` writes every case's outcome)
    is what the card's provenance reads: an imported case the build rejected is named with the
    build's reason, not counted as one the import left out."""
    build = tmp_path / "build"
    shutil.copytree(built / "build", build)
    report = json.loads((build / "dolfinx" / "build-report.json").read_text())
    report.append({"case_id": "poisson_gone", "status": "rejected", "reason": "e_base=5.6e-01 is not below 0.05"})
    (build / "dolfinx" / "build-report.json").write_text(json.dumps(report))
    imported = [{"original_id": "gone", "id": "poisson_gone", "provenance": {"status": "replaced"},
                 "anchor": {"family": "poisson", "math_type": "elliptic", "domain": "square_with_hole"}},
                {"original_id": "left", "id": None, "anchor": {"family": "poisson", "math_type": "elliptic",
                                                                "domain": "unit_square"}}]
    package(build, ["dolfinx"], tmp_path / "d", name="test-set", version="1.0.0", import_report=imported)
    card = (tmp_path / "d" / "README.md").read_text()
    assert "- `poisson_gone` (anchor record `gone`, replaced by the import): e_base=5.6e-01 is not below 0.05" in card
    assert "| poisson | square_with_hole | 1 | 0 | 0 | 0 | 0 | 0 | 1 |" in card
    assert "| poisson | unit_square | 1 | 0 | 0 | 0 | 0 | 1 | 0 |" in card


def test_a_release_is_reproduced_from_its_sources_and_a_difference_is_named(built: Path, dist: Path,
                                                                             tmp_path: Path) -> None:
    """``casekit reproduce`` rebuilds the released cases from their sources in a fresh build
    directory and compares; a release whose records say otherwise fails, naming case and field."""
    rebuild = tmp_path / "rebuild"
    result = runner.invoke(app, ["reproduce", str(dist), "--sources", str(built / "cases"), "--sample", "all",
                                 "--build-dir", str(rebuild)])
    assert result.exit_code == 0, result.output
    assert "2 case(s) reproduced" in result.output
    assert (rebuild / "dolfinx" / "records.jsonl").is_file()

    from casekit.package.reproduce import compare, released_records

    ids = sorted(released_records(dist, "dolfinx"))
    bad = _copy(dist, tmp_path, "bad")

    def tamper(r):  # type: ignore[no-untyped-def]
        if r["id"] == ids[0]:
            r["evaluation_metadata"]["e_base"] *= 3
            r["evaluation_config"]["alpha_acc"] = 50
        return r

    _edit_records(bad, tamper)
    # the reference of a manufactured case is its released solution sampled on the grid: round-off
    # passes, a real change is named
    scaled = _copy(dist, tmp_path, "scaled")

    def scale(factor: str):  # type: ignore[no-untyped-def]
        def edit(r):  # type: ignore[no-untyped-def]
            if r["id"] == ids[1]:
                sol = r["evaluation_metadata"]["manufactured_solution"]
                sol["u"] = f"({sol['u']})*({factor})"
            return r
        return edit

    _edit_records(scaled, scale("1 + 1/10**13"))
    assert compare(scaled, rebuild, "dolfinx", [ids[1]]) == []
    _edit_records(scaled, scale("1 + 1/1000"))
    assert [p.pointer for p in compare(scaled, rebuild, "dolfinx", [ids[1]])] == \
        ["/evaluation_metadata/manufactured_solution"]
    problems = compare(bad, rebuild, "dolfinx", ids)
    assert {(p.case_id, p.pointer) for p in problems} == {(ids[0], "/evaluation_metadata/e_base"),
                                                         (ids[0], "/evaluation_config")}
    result = runner.invoke(app, ["reproduce", str(bad), "--sources", str(built / "cases"), "--sample", ids[1],
                                 "--build-dir", str(rebuild)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["reproduce", str(bad), "--sources", str(tmp_path / "nowhere"),
                                 "--build-dir", str(rebuild)])
    assert result.exit_code != 0 and "no case source declares" in result.output


def test_a_stratified_sample_covers_every_family_domain_and_math_type() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from casekit.package.reproduce import strata, stratified

    def rec(i: int, f: str, d: str, m: list[str]) -> dict:
        return {"id": f"c{i:03d}", "pde_classification": {"equation_family": f, "math_type": m},
                "case_spec": {"domain": {"type": d}}}

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.tuples(st.sampled_from("abcde"), st.sampled_from("uvwxyz"),
                              st.lists(st.sampled_from(["elliptic", "parabolic", "hyperbolic"]), max_size=2)),
                    min_size=1, max_size=40))
    def check(rows: list) -> None:  # type: ignore[type-arg]
        records = [rec(i, *r) for i, r in enumerate(rows)]
        ids = stratified(records)
        picked = [r for r in records if r["id"] in ids]
        assert {s for r in picked for s in strata(r)} == {s for r in records for s in strata(r)}
        assert len(ids) <= len({s for r in records for s in strata(r)})
        assert stratified(list(reversed(records))) == ids
        # cheap records are preferred: a record that alone covers what a costly one does wins
        expensive = {**records[0], "id": "z999", "evaluation_metadata": {"t_base": 1e6}}
        assert "z999" not in stratified([*records, expensive])

    check()


def test_the_card_follows_the_hugging_face_template(dist: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Front matter with language, license, task categories and configurations; every section the
    Hub's own template does not mark optional, in its order; a citation with the anchor's BibTeX and
    casekit's; a description of every field of every configuration, from the schemas; and a loading
    snippet that runs."""
    import re

    from huggingface_hub import DatasetCard
    from huggingface_hub.repocard import TEMPLATE_DATASETCARD_PATH

    from casekit.package.card import LOAD_DIR
    from casekit.package.fields import described

    card = DatasetCard((dist / "README.md").read_text())
    data = card.data.to_dict()
    assert data["language"] == ["en"] and data["license"] == "cc-by-4.0" and data["task_categories"]
    heading = re.compile(r"^#+ (.+?)\s*$", re.M)
    template = TEMPLATE_DATASETCARD_PATH.read_text().split("\n---\n", 1)[1]  # after its front matter
    required = [h for h in heading.findall(template) if "[optional]" not in h]
    mine = heading.findall(card.text)
    assert required[0].startswith("Dataset Card for") and mine[0] == "Dataset Card for test-set 1.2.3"
    at = [mine.index(h) for h in required[1:]]  # a ValueError names a missing section
    assert at == sorted(at), "the sections are not in the template's order"
    bibtex = card.text.split("## Citation", 1)[1]
    assert "```bibtex" in bibtex and "@misc{hang2026pdeagentbench" in bibtex and "eprint        = {2605.09636}" \
        in bibtex and "@software{casekit" in bibtex
    # every column of every configuration (its features in the front matter) has its schema's description
    structure = card.text.split("## Dataset Structure", 1)[1].split("\n## ", 1)[0]
    kinds = {"agent": [c["config_name"] for c in data["configs"] if c["config_name"].endswith("agent")]}
    kinds["cases"] = [c["config_name"] for c in data["configs"] if c["config_name"] not in kinds["agent"]]
    features = {i["config_name"]: [f["name"] for f in i["features"]] for i in data["dataset_info"]}
    for kind, configs in kinds.items():
        docs = described(kind)
        blocks = re.split(r"\n\n(?=[^|\n][^\n]* configurations )", structure)  # a title line, then its table
        table = next(b for b in blocks if all(f"`{c}`" in b.split("\n")[0] for c in configs) and "| field |" in b)
        for config in configs:
            for name in features[config]:
                assert f"| `{name}` | {docs[name]} |" in table, (config, name)
    for key, doc in described("case_spec").items():
        assert f"| `{key}` | {doc} |" in structure
    # the loading snippet runs (offline, on this directory)
    [snippet] = re.findall(r"```python\n(.*?)```", card.text, re.S)
    assert "datasets.load_dataset(" in snippet
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    exec(compile(snippet.replace(LOAD_DIR.format(name="test-set"), str(dist)), "card", "exec"), {})


def test_every_schema_property_is_described() -> None:
    from casekit.package.fields import SCHEMAS, described
    from casekit.schema import schema

    for kind, name in SCHEMAS.items():
        assert list(described(kind)) == list(schema(name)["properties"]), name


def test_verify_checks_the_case_spec_files(dist: Path, tmp_path: Path) -> None:
    bad = _copy(dist, tmp_path, "specs")
    first = sorted((bad / "case_specs").glob("*.json"))[0]
    spec = json.loads(first.read_text())
    spec["eval_grid"]["nx"] += 1
    first.write_text(json.dumps(spec))
    (bad / "case_specs" / "case-0000000000000000.json").write_text("{}")
    write_manifest(bad, "test-set", "1.2.3", ["dolfinx"])
    messages = {p.message for p in verify(bad)}
    assert "the case_spec file is not its record's case_spec" in messages
    assert "a case_spec file of no case of the set" in messages
    first.unlink()
    write_manifest(bad, "test-set", "1.2.3", ["dolfinx"])
    assert "its case_spec file is missing" in {p.message for p in verify(bad)}
