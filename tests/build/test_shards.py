"""A dataset build whose progress lives in the repository: shards, committed records keyed by
(source, track solver code, library versions), packaging from the committed area."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from casekit import yamlio
from casekit.build import shards
from casekit.build.pipeline import BuildOptions, CaseBuild
from casekit.build.shards import Area, ShardSpec, TrackIdentity, build_shard, materialise, plan, read_sources
from casekit.errors import UsageError
from casekit.runner.limits import Limits
from tests.conftest import REPO

#: two committed Poisson cases (coarsened) and one that is rejected before any solve
CASES = ("poisson_periodic_square_constant_smooth_robin_s1006", "poisson_sector_constant_oscillatory_mixed_s1001")
INVALID = "poisson_x_invalid_tag"


def _sources(root: Path) -> Path:
    """The two Poisson cases of cases/ made coarse (a 21 x 21 grid, 16 cells across, dolfinx
    only) and an invalid case (a boundary tag the domain does not have), under root/cases."""
    out = root / "cases"
    for cid in CASES:
        src = yamlio.load(REPO / "cases" / "poisson" / f"{cid}.yaml")
        src["eval_grid"] = {"nx": 21, "ny": 21}
        src["calibration"] = {**src["calibration"], "cells_across": 16}
        src["tracks"] = ["dolfinx"]
        (out / "poisson").mkdir(parents=True, exist_ok=True)
        (out / "poisson" / f"{cid}.yaml").write_text(yamlio.dumps(src))
    bad = yamlio.load(out / "poisson" / f"{CASES[0]}.yaml")
    bad["id"] = INVALID
    bad["boundary"] = {**bad["boundary"], "no_such_tag": "dirichlet"}
    (out / "poisson" / f"{INVALID}.yaml").write_text(yamlio.dumps(bad))
    return out


@pytest.fixture(scope="module", autouse=True)
def _solver_code_as_at_start() -> Iterator[None]:
    """The tracks' solver code hashes as they are when the module starts: the code must not
    change under these tests (a changed hash is tested on its own below)."""
    from casekit.tracks.base import Track

    real = Track.code_hash
    seen: dict[str, str] = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Track, "code_hash", lambda self: seen.setdefault(self.name, real(self)))
        yield


def _opts(build_dir: Path) -> BuildOptions:
    return BuildOptions(build_dir, "dolfinx", repeats=shards.DATASET_REPEATS,
                        limits=BuildOptions.solve_limits(300, 4096))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A shard built once from the sources into a committed area (the tests below copy it)."""
    root = tmp_path_factory.mktemp("shard")
    cases = _sources(root)
    area = Area(root / "datasets" / "demo" / "build")
    result = build_shard(area, read_sources([cases]), ShardSpec("poisson"), _opts(root / "machine"))
    return {"root": root, "cases": cases, "area": area, "result": result}


def _copy(built: dict, tmp_path: Path) -> tuple[Path, Area]:
    """A fresh clone: the sources and the committed area, no machine build directory."""
    shutil.copytree(built["cases"], tmp_path / "cases")
    shutil.copytree(built["area"].root, tmp_path / "area")
    return tmp_path / "cases", Area(tmp_path / "area")


def _reject(area: Area, ident: TrackIdentity, s: shards.Source, seconds: float) -> None:
    """Commit ``s`` on ``ident`` as rejected after ``seconds`` (no FEM)."""
    path = area.entry_path(ident.name, s.family, s.id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(
        {"format": shards.FORMAT, "id": s.id, "family": s.family, "key": ident.key(s), "status": "rejected",
         "reason": "r", "rules": shards.REJECTION_RULES, "files": {}, "build": {"seconds": seconds, "jobs": 1}}))


def test_shard_specs_select_families_and_interleaved_slices(tmp_path: Path) -> None:
    root = tmp_path / "cases"
    for fam, n in (("heat", 3), ("poisson", 5)):
        for i in range(n):
            (root / fam).mkdir(parents=True, exist_ok=True)
            (root / fam / f"{fam}_{i}.yaml").write_text(yamlio.dumps({"id": f"{fam}_{i}", "family": fam}))
    sources = read_sources([root])
    families = [s.family for s in sources]
    assert [s.id for s in ShardSpec.parse("heat", families).select(sources)] == ["heat_0", "heat_1", "heat_2"]
    slices = [[s.id for s in ShardSpec.parse(f"poisson.{k}of2", families).select(sources)] for k in (1, 2)]
    assert slices == [["poisson_0", "poisson_2", "poisson_4"], ["poisson_1", "poisson_3"]]
    everything = [s.id for k in (1, 2, 3) for s in ShardSpec.parse(f"all.{k}of3", families).select(sources)]
    assert sorted(everything) == sorted(s.id for s in sources) and len(everything) == len(sources)
    assert ShardSpec.parse("poisson.2of3", families).name == "poisson.2of3"
    for bad in ("stokes", "poisson.3of2", "poisson.0of2", "poisson.x", "all.1"):
        with pytest.raises(UsageError):
            ShardSpec.parse(bad, families)


def test_sources_leave_out_an_excluded_directory(tmp_path: Path) -> None:
    """``cases --exclude cases/pdeagent-bench``: the authored sample (no FEM)."""
    from casekit.cli.build import _sources

    for d, cid in (("heat", "a"), ("pdeagent-bench/heat", "b"), ("poisson", "c")):
        (tmp_path / "cases" / d).mkdir(parents=True)
        (tmp_path / "cases" / d / f"{cid}.yaml").write_text(yamlio.dumps({"id": cid, "family": d.split("/")[-1]}))
    assert [s.id for s in _sources([tmp_path / "cases"], [tmp_path / "cases" / "pdeagent-bench"])] == ["a", "c"]
    assert [s.id for s in _sources([tmp_path / "cases"])] == ["a", "b", "c"]


def test_status_projects_the_machine_time_and_slices_a_family_past_the_budget(tmp_path: Path) -> None:
    """No FEM: committed entries of 600 s each make a 10-case family 6000 s, listed as 3 slices
    (each planned at 45 of the 60 minutes) of which those with cases left to build are shown."""
    root = tmp_path / "cases"
    for fam, n in (("heat", 2), ("poisson", 10)):
        for i in range(n):
            (root / fam).mkdir(parents=True, exist_ok=True)
            (root / fam / f"{fam}_{i}.yaml").write_text(
                yamlio.dumps({"id": f"{fam}_{i}", "family": fam, "tracks": ["dolfinx"]}))
    sources = read_sources([root])
    ident = TrackIdentity("dolfinx", {"lib": "1.0"}, "code")
    area = Area(tmp_path / "area")
    for s in sources:
        if s.id in ("poisson_0", "poisson_3", "poisson_6", "poisson_9"):  # slice 1 of 3, done
            _reject(area, ident, s, 600.0)
    st = shards.status(area, sources, [ident])
    rows = {r.family: r for r in st.rows}
    assert rows["poisson"].counts["dolfinx"] == (4, 6) and rows["poisson"].shards == ["poisson.2of3", "poisson.3of3"]
    assert rows["heat"].counts["dolfinx"] == (0, 2) and rows["heat"].shards == ["heat"]
    m = st.machine["dolfinx"]
    assert m["committed_seconds"] == 2400 and m["projected_seconds"] == 8 * 600 and m["measured"]
    assert not st.complete("dolfinx")


def _stratified(root: Path, per: int = 10) -> list[shards.Source]:
    """Six strata -- Poisson, heat and steady convection-diffusion on the unit square and the
    circle -- of ``per`` cases each (finer ones cost more), listing dealii (a sample track) and
    dolfinx, under root/cases."""
    for fam in ("poisson", "heat", "convection_diffusion"):
        time = {"time": {"t0": 0.0, "t_end": 1.0, "dt": 0.1}} if fam == "heat" else {}
        for template in ("unit_square", "circle"):
            for i in range(per):
                cid = f"{fam}_{template}_{i}"
                (root / "cases" / fam).mkdir(parents=True, exist_ok=True)
                (root / "cases" / fam / f"{cid}.yaml").write_text(yamlio.dumps(
                    {"id": cid, "family": fam, "domain": {"template": template}, "pde": {"params": {}, **time},
                     "calibration": {"cells_across": 8 + i, "degree": 2, **({"dt": 0.1} if time else {})},
                     "manufactured_solution": {"u": "x"}, "tracks": ["dealii", "dolfinx"]}))
    return read_sources([root / "cases"])


def test_sample_shards_slice_the_track_sample(tmp_path: Path) -> None:
    from casekit.build import sample

    sources = _stratified(tmp_path)
    families = [s.family for s in sources]
    whole = ShardSpec.parse("sample", families)
    assert whole.name == "sample" and whole.sample
    chosen = [s.id for s in whole.select(sources, "dealii")]
    assert chosen == [s.id for s in sample.select(sources, "dealii")] and len(chosen) == sample.SAMPLE_MIN
    slices = [[s.id for s in ShardSpec.parse(f"sample.{k}of3", families).select(sources, "dealii")] for k in (1, 2, 3)]
    assert sorted(i for part in slices for i in part) == chosen and [len(p) for p in slices] == [17, 17, 16]
    assert ShardSpec.parse("sample.2of3", families).name == "sample.2of3"
    with pytest.raises(UsageError, match="name the track"):
        whole.select(sources)
    for bad in ("sample.0of2", "sample.x", "samples"):
        with pytest.raises(UsageError):
            ShardSpec.parse(bad, families)


def test_a_sample_track_is_counted_and_complete_over_its_sample(tmp_path: Path) -> None:
    """dealii is a sample track: its rows count the sample's cases, it is complete when they are
    done (dolfinx, a full track, is not) and its shards to run are the sample's."""
    from casekit.build import sample

    sources = _stratified(tmp_path)
    dealii, dolfinx = (TrackIdentity(t, {"lib": "1.0"}, "code") for t in ("dealii", "dolfinx"))
    area = Area(tmp_path / "area")
    assert sample.sampled("dealii") and not sample.sampled("dolfinx")
    st = shards.status(area, sources, [dealii, dolfinx], budget=1000)  # 50 cases x 30 s: two slices of 750 s
    assert st.samples == {"dealii": {"cases": 50, "strata": 6, "shards": ["sample.1of2", "sample.2of2"]}}
    assert sum(r.counts["dealii"][1] for r in st.rows) == 50 and sum(r.counts["dolfinx"][1] for r in st.rows) == 60
    assert all(r.shards == ["sample.1of2", "sample.2of2"] for r in st.rows)
    chosen = sample.select(sources, "dealii")
    for s in chosen[1:]:
        _reject(area, dealii, s, 30.0)
    outside = next(s for s in sources if s not in chosen)
    _reject(area, dealii, outside, 30.0)  # built beyond the sample (a family shard): not counted
    st = shards.status(area, sources, [dealii, dolfinx])
    assert st.machine["dealii"]["done"] == 49 and st.machine["dealii"]["to_build"] == 1
    assert {r.family: r.shards for r in st.rows if r.shards} == {chosen[0].family: ["sample"]}
    assert not st.complete("dealii") and st.samples["dealii"]["shards"] == ["sample"]
    _reject(area, dealii, chosen[0], 30.0)
    st = shards.status(area, sources, [dealii, dolfinx])
    assert st.complete("dealii") and not st.complete("dolfinx") and st.samples["dealii"]["shards"] == []
    assert all(r.counts["dealii"] == (sum(s.family == r.family for s in chosen), 0) for r in st.rows)
    # materialised as released: the sample's cases (the one beyond it is left out), complete
    rep, full = materialise(area, sources, ["dealii", "dolfinx"], tmp_path / "out",
                            {"dealii": dealii, "dolfinx": dolfinx})
    assert rep.sample and rep.complete and sorted(c for c, _ in rep.rejected) == [s.id for s in chosen]
    assert not full.sample and not full.complete and len(full.missing) == 60
    # the build directory names each rejected case with the build's reason (the dataset card does)
    from casekit.package.build_dist import rejected

    assert rejected(tmp_path / "out", "dealii") == {s.id: "r" for s in chosen}
    assert rejected(tmp_path / "out", "dolfinx") == {}


@pytest.mark.dolfinx
def test_a_shard_commits_records_and_rejections_with_their_keys(built: dict) -> None:
    result, area = built["result"], built["area"]
    statuses = {o.case_id: o.status for o in result.outcomes}
    assert statuses == {CASES[0]: "built", CASES[1]: "built", INVALID: "rejected"}, result.outcomes
    ident = TrackIdentity.of("dolfinx")
    for s in read_sources([built["cases"]]):
        entry = json.loads(area.entry_path("dolfinx", "poisson", s.id).read_text())
        assert entry["key"] == ident.key(s) and entry["status"] == statuses[s.id]
        if s.id == INVALID:
            assert "no_such_tag" in entry["reason"] and entry["record"] is None and entry["files"] == {}
            continue
        # the record the build wrote, its calibration (compressed, with its hash); a manufactured
        # reference is not committed (it is sampled again from the source)
        machine = json.loads((built["root"] / "machine" / "dolfinx" / s.id / "record.json").read_text())
        assert entry["record"] == machine and set(entry["files"]) == {"calibration"}
        assert entry["record"]["evaluation_metadata"]["calibration_config"]["repeats"] == 1
    names = sorted(p.name for p in (area.root / "dolfinx" / "poisson").iterdir())
    assert names == sorted([f"{c}.json" for c in (*CASES, INVALID)] + [f"{c}.calibration.npz" for c in CASES])


@pytest.mark.dolfinx
def test_the_next_run_builds_nothing_and_an_edited_source_is_rebuilt(built: dict, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    cases, area = _copy(built, tmp_path)
    ran: list[str] = []
    real_run = CaseBuild.run

    def counted(self: CaseBuild) -> object:
        ran.append(self.path.stem)
        return real_run(self)

    monkeypatch.setattr(CaseBuild, "run", counted)
    again = build_shard(area, read_sources([cases]), ShardSpec("poisson"), _opts(tmp_path / "machine"))
    assert ran == [] and again.outcomes == [] and len(again.plan.done) == 3
    assert again.plan.summary() == "3 done in the repository, 0 to build"
    # one number of one source changed: that case alone is built again, on a machine with no cache
    path = cases / "poisson" / f"{CASES[1]}.yaml"
    src = yamlio.load(path)
    src["pde"]["params"]["kappa"] = 1.5
    path.write_text(yamlio.dumps(src))
    before = json.loads(area.entry_path("dolfinx", "poisson", CASES[1]).read_text())
    edited = build_shard(area, read_sources([cases]), ShardSpec("poisson"), _opts(tmp_path / "machine"))
    assert ran == [CASES[1]] and [o.status for o in edited.outcomes] == ["built"]
    after = json.loads(area.entry_path("dolfinx", "poisson", CASES[1]).read_text())
    assert after["key"] != before["key"] and after["record"]["case_spec"]["pde"]["params"]["kappa"] == 1.5
    assert plan(area, read_sources([cases]), ShardSpec("poisson"), TrackIdentity.of("dolfinx")).todo == []


@pytest.mark.dolfinx
def test_a_changed_solver_code_hash_invalidates_the_committed_records(built: dict, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    cases, area = _copy(built, tmp_path)
    from casekit.tracks.base import Track

    real = Track.code_hash
    monkeypatch.setattr(Track, "code_hash", lambda self: "changed" + real(self)[7:])
    p = plan(area, read_sources([cases]), ShardSpec("poisson"), TrackIdentity.of("dolfinx"))
    assert p.done == [] and len(p.todo) == 3
    # the unkeyed estimate (a shard's projection of the whole set) sees the new code too: it once
    # counted 523 entries of the old code as done right after a solver change
    rough = plan(area, read_sources([cases]), ShardSpec("poisson"), TrackIdentity.of("dolfinx"), keyed=False)
    assert rough.done == [] and len(rough.todo) == 3
    # packaging from the area checks the solver code too (the library versions need the environment)
    reports = materialise(area, read_sources([cases]), ["dolfinx"], tmp_path / "out")
    assert reports[0].records == [] and sorted(reports[0].stale) == sorted([*CASES, INVALID])


@pytest.mark.dolfinx
def test_a_release_is_packaged_from_the_committed_area_on_a_clean_clone(built: dict, tmp_path: Path) -> None:
    from casekit.package.build_dist import package
    from casekit.package.verify import verify

    cases, area = _copy(built, tmp_path)
    runner = CliRunner()
    from casekit.cli import app

    out = tmp_path / "materialised"
    r = runner.invoke(app, ["dataset", "materialise", str(cases), "--area", str(area.root), "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "dolfinx: 2 record(s), 1 rejected, 0 not built, 0 stale" in r.output
    # the machine time of what was materialised (the rejected case's too), stated by the card
    machine = json.loads((out / "machine-time.json").read_text())["dolfinx"]
    committed = [json.loads(p.read_text())["build"]["seconds"] for p in (area.root / "dolfinx").glob("*/*.json")]
    assert machine["cases"] == 3 and machine["built"] == 2 and machine["seconds"] == pytest.approx(sum(committed))
    package(out, ["dolfinx"], tmp_path / "dist", name="demo", version="1.0.0")
    assert verify(tmp_path / "dist") == []
    assert f"| dolfinx | 3 | 2 | {machine['seconds'] / 3600:.2f} |" in (tmp_path / "dist" / "README.md").read_text()
    packaged = [json.loads(line) for line in (tmp_path / "dist" / "cases.jsonl").read_text().splitlines()]
    assert [c["id"] for c in packaged] == sorted(CASES)
    # the re-sampled manufactured reference is the one the machine build wrote
    import numpy as np

    for cid in CASES:
        with np.load(out / "dolfinx" / cid / "reference.npz") as a, \
                np.load(built["root"] / "machine" / "dolfinx" / cid / "reference.npz") as b:
            assert sorted(a.files) == sorted(b.files)
            for k in a.files:
                np.testing.assert_array_equal(a[k], b[k])
    # materialising again gives the same bytes (fixed zip metadata)
    again = tmp_path / "again"
    materialise(area, read_sources([cases]), ["dolfinx"], again)
    for f in sorted(out.rglob("*.npz")):
        assert f.read_bytes() == (again / f.relative_to(out)).read_bytes()
    # a damaged committed file is not trusted: its case is to build again
    npz = area.root / "dolfinx" / "poisson" / f"{CASES[0]}.calibration.npz"
    data = bytearray(npz.read_bytes())
    data[len(data) // 2] ^= 0xFF
    npz.write_bytes(bytes(data))
    p = plan(area, read_sources([cases]), ShardSpec("poisson"), TrackIdentity.of("dolfinx"))
    assert [s.id for s in p.todo] == [CASES[0]]


@pytest.mark.dolfinx
def test_an_interrupted_shard_keeps_what_finished(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cases = _sources(tmp_path)
    (cases / "poisson" / f"{CASES[1]}.yaml").unlink()
    area = Area(tmp_path / "area")
    real_run = CaseBuild.run

    def interrupted(self: CaseBuild) -> object:
        if self.path.stem == INVALID:  # the second case, in id order: Ctrl-C once the first is in
            first = area.entry_path("dolfinx", "poisson", CASES[0])
            for _ in range(600):
                if first.exists():
                    break
                time.sleep(0.1)
            raise KeyboardInterrupt
        return real_run(self)

    monkeypatch.setattr(CaseBuild, "run", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build_shard(area, read_sources([cases]), ShardSpec("poisson"), _opts(tmp_path / "machine"))
    p = plan(area, read_sources([cases]), ShardSpec("poisson"), TrackIdentity.of("dolfinx"))
    assert [s.id for s in p.done] == [CASES[0]] and [s.id for s in p.todo] == [INVALID]


@pytest.mark.dolfinx
def test_dataset_status_lists_the_shards_with_done_and_remaining(built: dict, tmp_path: Path) -> None:
    from casekit.cli import app

    cases, area = _copy(built, tmp_path)
    (cases / "heat").mkdir()
    shutil.copy(REPO / "cases" / "heat" / sorted(p.name for p in (REPO / "cases" / "heat").glob("*.yaml"))[0],
                cases / "heat")
    r = CliRunner().invoke(app, ["dataset", "status", str(cases), "--area", str(area.root), "--json"])
    assert r.exit_code == 1, r.output  # heat is not built
    st = json.loads(r.stdout)
    rows = {f["family"]: f for f in st["families"]}
    assert rows["poisson"]["tracks"]["dolfinx"] == {"done": 3, "to_build": 0} and rows["poisson"]["shards"] == []
    assert rows["heat"]["tracks"]["dolfinx"] == {"done": 0, "to_build": 1} and rows["heat"]["shards"] == ["heat"]
    assert st["machine"]["dolfinx"]["done"] == 3 and st["machine"]["dolfinx"]["committed_seconds"] > 0


@pytest.mark.dolfinx
@pytest.mark.numpy
def test_another_track_is_checked_against_the_committed_records_of_the_first(built: dict, tmp_path: Path) -> None:
    """Shards of two tracks built on different machines still meet in the agreement check: the
    committed dolfinx record is put in the numpy build's fresh build directory first."""
    cases, area = _copy(built, tmp_path)
    path = cases / "poisson" / f"{CASES[0]}.yaml"
    src = yamlio.load(path)
    src["tracks"] = ["dolfinx", "numpy"]  # not part of the key: the dolfinx record stays done
    path.write_text(yamlio.dumps(src))
    opts = BuildOptions(tmp_path / "machine", "numpy", repeats=1, limits=BuildOptions.solve_limits(300, 4096))
    result = build_shard(area, read_sources([cases]), ShardSpec("poisson"), opts)
    (o,) = result.outcomes
    assert o.status == "built", o.reason
    assert set(o.agreement) == {"dolfinx"} and o.agreement["dolfinx"]["distance"] <= o.agreement["dolfinx"]["bound"]
    assert plan(area, read_sources([cases]), ShardSpec("poisson"), TrackIdentity.of("dolfinx")).todo == []


@pytest.mark.dolfinx
def test_a_case_built_after_the_solver_code_changed_is_committed_under_that_code(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long shard while someone edits a solver: each case is committed under the key of what it
    was built with, so the next run builds again only what the code then makes stale."""
    from casekit.tracks.base import Track

    cases = _sources(tmp_path)
    for cid in (CASES[1], INVALID):
        (cases / "poisson" / f"{cid}.yaml").unlink()
    area = Area(tmp_path / "area")
    before = TrackIdentity.of("dolfinx")
    real = Track.code_hash
    monkeypatch.setattr(Track, "code_hash", lambda self: "edited" + real(self)[6:])  # after the plan was made
    result = build_shard(area, read_sources([cases]), ShardSpec("poisson"), _opts(tmp_path / "machine"), track=before)
    assert [o.status for o in result.outcomes] == ["built"] and result.moved == [CASES[0]]
    entry = json.loads(area.entry_path("dolfinx", "poisson", CASES[0]).read_text())
    assert entry["code"].startswith("edited")
    assert plan(area, read_sources([cases]), ShardSpec("poisson"), TrackIdentity.of("dolfinx")).todo == []
    assert [s.id for s in plan(area, read_sources([cases]), ShardSpec("poisson"), before).todo] == [CASES[0]]


@pytest.mark.dolfinx
def test_a_rejection_under_other_acceptance_rules_is_built_again(built: dict, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A committed rejection records the build's acceptance rules (REJECTION_RULES): when they
    change (a calibration too coarse for the gates is now refined), the rejection is built again;
    built records of the same key stay done."""
    from casekit.build import shards

    cases, area = _copy(built, tmp_path)
    ident = TrackIdentity.of("dolfinx")
    assert plan(area, read_sources([cases]), ShardSpec("poisson"), ident).todo == []
    monkeypatch.setattr(shards, "REJECTION_RULES", shards.REJECTION_RULES + 1)
    p = plan(area, read_sources([cases]), ShardSpec("poisson"), ident)
    assert [s.id for s in p.todo] == [INVALID] and len(p.done) == 2


def test_reference_solves_get_their_share_of_the_machine_not_the_solve_limit(monkeypatch: pytest.MonkeyPatch
                                                                              ) -> None:
    """13 Stokes references ran out of the 4 GiB solve limit in MUMPS: a reference solve (casekit's
    own solver) may take its share of 70 % of the available memory when that is more, never less
    than the solve limit; an unreadable machine leaves the solve limit."""
    from casekit.build import machine, run
    from casekit.build.pipeline import BuildOptions

    monkeypatch.setattr(machine, "available_memory_mb", lambda: 20000)
    assert run.reference_memory_mb(2) == 7000
    opts = BuildOptions(Path("b"), limits=Limits(memory_mb=4096), reference_memory_mb=run.reference_memory_mb(2))
    assert opts.reference_limits().memory_mb == 7000 and opts.limits.memory_mb == 4096
    assert BuildOptions(Path("b"), limits=Limits(memory_mb=9000), reference_memory_mb=7000).reference_limits(
        ).memory_mb == 9000
    monkeypatch.setattr(machine, "available_memory_mb", lambda: None)
    plain = BuildOptions(Path("b")).reference_limits()
    assert run.reference_memory_mb(2) is None and plain.memory_mb == Limits().memory_mb


def test_a_reference_level_may_take_more_cpu_time_than_a_calibration_solve() -> None:
    """A reference level is finer than any calibration the build runs (an L2 of 960 BDF2 steps at
    P2 on 368 cells across needed about 2000 s of CPU and was killed at the solve limit of 600 s):
    it gets REFERENCE_CPU_FACTOR times the CPU time and the wall backstop, still a bound."""
    from casekit.build.pipeline import REFERENCE_CPU_FACTOR, BuildOptions

    opts = BuildOptions(Path("b"), limits=BuildOptions.solve_limits(600, 4096))
    ref = opts.reference_limits()
    assert ref.cpu == 600 * REFERENCE_CPU_FACTOR and ref.timeout_sec == opts.limits.timeout_sec * REFERENCE_CPU_FACTOR
    assert opts.limits.cpu == 600 and REFERENCE_CPU_FACTOR > 1


def test_dataset_status_prunes_the_entries_of_cases_no_longer_among_the_sources(built: dict, tmp_path: Path) -> None:
    """A re-import that no longer releases a case leaves its committed entry behind (dataset
    numbers counted ten such Burgers entries): --prune deletes the entry and its files, and only
    those."""
    from casekit.cli import app

    cases, area = _copy(built, tmp_path)
    gone = cases / "poisson" / f"{CASES[0]}.yaml"
    gone.unlink()
    before = sorted(p.name for p in (area.root / "dolfinx" / "poisson").iterdir())
    assert any(n.startswith(CASES[0] + ".") for n in before)
    r = CliRunner().invoke(app, ["dataset", "status", str(cases), "--area", str(area.root), "--json"])
    assert json.loads(r.stdout)["orphans"]["dolfinx"] == [CASES[0]]  # listed, not touched
    assert sorted(p.name for p in (area.root / "dolfinx" / "poisson").iterdir()) == before
    r = CliRunner().invoke(app, ["dataset", "status", str(cases), "--area", str(area.root), "--prune"])
    assert f"removed {area.root / 'dolfinx' / 'poisson' / (CASES[0] + '.json')}" in r.output, r.output
    after = sorted(p.name for p in (area.root / "dolfinx" / "poisson").iterdir())
    assert after == [n for n in before if not n.startswith(CASES[0] + ".")] and after
    r = CliRunner().invoke(app, ["dataset", "status", str(cases), "--area", str(area.root), "--json"])
    assert json.loads(r.stdout)["orphans"]["dolfinx"] == []
