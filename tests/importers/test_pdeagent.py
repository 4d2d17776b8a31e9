"""Import of the public PDEAgent-Bench data and the defects validation finds in it."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from casekit.cli import app
from casekit.importers import IMPORTERS
from casekit.importers.formats.pdeagent_bench import TIME_ROOM
from casekit.validate import check_source

runner = CliRunner()
convert = IMPORTERS.get("pdeagent-bench")


def records(path: Path) -> dict[str, dict]:
    return {r["id"]: r for r in map(json.loads, path.read_text().splitlines())}


def classes(src: dict) -> set[str]:
    return {p.check for p in check_source(src)}


def test_every_record_converts_and_nothing_is_dropped_silently(shared_data: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["import", "pdeagent-bench", str(shared_data), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert len(list(tmp_path.rglob("*.yaml"))) == 645
    # shared values are written out, never as YAML anchors and aliases (which loading refuses)
    assert not [p for p in tmp_path.rglob("*.yaml") if "&id" in p.read_text() or "*id" in p.read_text()]
    report = json.loads((tmp_path / "import-report.json").read_text())
    assert len(report) == 645 and not any(n["class"] == "failed" for r in report for n in r["notes"])
    notes = Counter(n["class"] for r in report for n in r["notes"])
    assert notes["schema_variant"] > 0 and notes["dropped"] > 0  # listed, not silent
    again = runner.invoke(app, ["import", "pdeagent-bench", str(shared_data), "--out", str(tmp_path)])
    assert again.exit_code == 2  # never overwrites without --force


def test_the_defects_of_design_section_5_are_found(shared_data: Path) -> None:
    recs = records(shared_data)
    leaky = convert(recs["poisson_basic"]).source
    assert "leak.symbolic" in classes(leaky) and "typed_data" in classes(leaky)
    three_d = [r for r in recs.values() if r["oracle_config"]["domain"]["type"] == "unit_cube"
               and r["oracle_config"]["pde"]["type"] == "poisson"][:3]
    assert any("residual" in classes(convert(r).source) for r in three_d)
    strict = next(r for r in recs.values() if "accuracy_tolerance" not in r["evaluation_config"]
                  and "tolerance" in r["evaluation_config"])
    assert "tolerance_keys" in classes(convert(strict).source)
    knobs = convert(recs["poisson_basic"])
    assert "agent_knobs" not in knobs.source and any("agent_knobs" in t for c, t in knobs.notes if c == "dropped")


def test_schema_variants_are_mapped_and_reported(shared_data: Path) -> None:
    recs = records(shared_data)
    variants = [r for r in recs.values() if r["oracle_config"]["domain"]["type"] == "dumbbell"
                and "bar_width" in r["oracle_config"]["domain"].get("geometry_params", {})]
    assert variants
    imported = convert(variants[0])
    assert ("schema_variant" in {c for c, _ in imported.notes})
    assert set(imported.source["domain"]["params"]) == {"left", "right", "bridge_width"}


@pytest.mark.parametrize("rid", ["poisson_basic", "stokes_no_exact_lid_driven_cavity"])
def test_round_trip_through_yaml_is_stable(shared_data: Path, rid: str) -> None:
    from casekit import yamlio

    src = convert(records(shared_data)[rid]).source
    assert yamlio.loads(yamlio.dumps(src)) == src


def test_the_anchors_resolution_is_cells_per_unit_length_on_every_domain(shared_data: Path) -> None:
    """mesh.resolution N means h = 1/N: N times the diameter cells across (N*sqrt(3) on the unit
    cube, where N*sqrt(2) gave half the anchor's degrees of freedom); a gmsh record's char_length
    h, where given, is the cell size its oracle meshed with."""
    import math

    from casekit.domains import resolve

    recs = records(shared_data)

    def sized(r: dict) -> bool:
        return bool(r["oracle_config"].get("mesh", {}).get("char_length")
                    or r["oracle_config"]["domain"].get("char_length"))

    for kind in ("unit_square", "unit_cube", "annulus"):
        rec = next(r for r in recs.values() if r["oracle_config"]["domain"]["type"] == kind
                   and "resolution" in r["oracle_config"].get("mesh", {}) and not sized(r))
        src = convert(rec).source
        n = rec["oracle_config"]["mesh"]["resolution"]
        diameter = resolve(src["domain"]["template"], src["domain"].get("params")).geometry.diameter()
        assert src["calibration"]["cells_across"] == round(n * diameter), kind
    # a gmsh record's cell size h is what its oracle meshed with: diameter / h across, whatever
    # its resolution says (burgers_lshape_v3: h 0.02 beside N 150 -- 125 across, not 375)
    for rid in ("burgers_lshape_v3", "burgers_eccentric_v2"):
        out = convert(recs[rid])
        mesh = recs[rid]["oracle_config"]["mesh"]
        diameter = resolve(out.source["domain"]["template"], out.source["domain"].get("params")).geometry.diameter()
        assert out.source["calibration"]["cells_across"] == round(diameter / mesh["char_length"]) \
            < round(diameter * mesh["resolution"]) / 2
        assert any("char_length" in t and "not what the oracle meshed" in t for c, t in out.notes if c == "mapped")
    cube = next(r for r in recs.values() if r["oracle_config"]["domain"]["type"] == "unit_cube")
    assert convert(cube).source["calibration"]["cells_across"] == round(
        cube["oracle_config"]["mesh"]["resolution"] * math.sqrt(3))


REPAIRED = {  # record id -> its provenance status (None: not kept) (why)
    "poisson_variable_kappa": "repaired",  # leaky boundary data re-derived
    "poisson_basic": "replaced",  # an eigenfunction: the forcing is 2 pi^2 times the solution
    "convdiff_tjunction_low_pe": "replaced",  # a constant plus sin(pi x), sin(pi y): the forcing's atoms
    "le_exp_tjunc_body_force": "kept",  # the stem reaches into the bar: clipped, the same region (a mapping)
    "burgers_porous_v1": "replaced",  # (square_with_hole, the oracle's 0.1/0.01) separable: u0 times a ratio
    "biharmonic_no_exact_gaussian_source": "kept",  # the oracle's second condition, Laplace(u) = 0 (no repair)
    "heat_3d_source_only": "repaired",  # the oracle's initial condition u = 0; a foreign tolerance key dropped
    "biharmonic_annulus_offset": "replaced",  # (its grid, widened) a polynomial the boundary data determine
    "heat_p2": "replaced",  # the interval is so short that the initial data are within 6 % of the answer
    "stokes_3d_multifreq": "replaced",  # the manufactured velocity is not divergence-free
    "helmholtz_square_square_hole": "replaced",  # a rectangular hole (square_with_polygon_hole), an eigenfunction
    "biharmonic_dumbbell_v1": "replaced",  # its disks touch inside the bridge (a valid dumbbell)
    "reaction_diffusion_exotic": None,  # (made here) a reaction type casekit cannot map: not faithful
}


def _exotic(recs: dict) -> dict:
    """A record casekit cannot keep faithfully: reaction_diffusion_linear_basic with a reaction
    type no mapping knows."""
    rec = json.loads(json.dumps(recs["reaction_diffusion_linear_basic"]))
    rec["id"] = "reaction_diffusion_exotic"
    rec["oracle_config"]["pde"]["pde_params"]["reaction"] = {"type": "exotic", "alpha": 2.0}
    return rec


def test_repair_keeps_what_records_mean_and_commits_only_clean_cases(shared_data: Path, tmp_path: Path) -> None:
    """``import --repair``: every kept case is re-derived and validates clean; a record whose
    manufactured solution cannot be released is replaced by a sibling that keeps its problem; every
    record not kept is listed with its reason; the repairs and the anchor-oracle defaults are noted;
    every case carries its provenance."""
    from casekit.model.source import load_source_dict

    recs = records(shared_data)
    recs["reaction_diffusion_exotic"] = _exotic(recs)
    subset = tmp_path / "subset.jsonl"
    subset.write_text("".join(json.dumps(recs[i]) + "\n" for i in REPAIRED))
    result = runner.invoke(app, ["import", "pdeagent-bench", str(subset), "--out", str(tmp_path / "out"), "--repair",
                                 "--jobs", "1"])
    assert result.exit_code == 0, result.output
    report = {r["original_id"]: r for r in json.loads((tmp_path / "out" / "import-report.json").read_text())}
    for rid, status in REPAIRED.items():
        entry = report[rid]
        assert (entry["id"] is not None) == (status is not None), (rid, entry["notes"][-1])
        if status is None:
            assert entry["notes"][-1]["class"] == "not_kept" and entry["notes"][-1]["text"].startswith("not kept: ")
            continue
        path = next((tmp_path / "out").rglob(f"{entry['id']}.yaml"))
        data = load_source_dict(path)
        assert check_source(data, path) == [], rid
        assert "forcing" not in data.get("pde", {}) or "manufactured_solution" not in data, rid
        assert data["provenance"]["anchor"] == rid and data["provenance"]["status"] == status, (rid, data["provenance"])
        assert entry["provenance"] == data["provenance"] and entry["anchor"]["family"] == data["family"]
        if status == "replaced":  # the record's problem, a new solution
            original = convert(recs[rid], repair=True).source
            for key in ("family", "domain", "eval_grid", "output", "calibration", "tracks"):
                assert data[key] == original[key], (rid, key)
            assert data["pde"].get("params") == original["pde"].get("params")
            assert data["pde"].get("time") == original["pde"].get("time")
            kinds = {t: b if isinstance(b, str) else b["kind"] for t, b in data["boundary"].items()}
            assert kinds == {t: b if isinstance(b, str) else b["kind"] for t, b in original["boundary"].items()}
            assert data["manufactured_solution"] != original.get("manufactured_solution")
    texts = {rid: " ".join(n["text"] for n in report[rid]["notes"]) for rid in REPAIRED}
    assert "typed boundary data" in texts["poisson_variable_kappa"]
    assert "times the hidden solution" in texts["poisson_basic"]
    assert "ends at the bar's bottom" in texts["le_exp_tjunc_body_force"]
    assert "leak.span" in texts["convdiff_tjunction_low_pe"] or "inverter" in texts["convdiff_tjunction_low_pe"]
    assert "square_with_hole" in texts["burgers_porous_v1"] and "t_final = 0.1" in texts["burgers_porous_v1"]
    assert "Laplace(u) = 0" in texts["biharmonic_no_exact_gaussian_source"]
    assert "starts from u = 0" in texts["heat_3d_source_only"]
    assert "widened" in texts["biharmonic_annulus_offset"]
    assert "initial data" in texts["heat_p2"] and "div" in texts["stokes_3d_multifreq"]


def test_stars_keep_the_anchors_orientation(shared_data: Path) -> None:
    """The anchor's oracle meshes a star with its first tip at -90 degrees (the records do not
    say): the imported star is the same polygon, so its solutions can be compared."""
    import math

    import numpy as np

    from casekit.domains import resolve

    rec = records(shared_data)["poisson_star_5pt_sinsin"]
    params = convert(rec).source["domain"]["params"]
    gp = rec["oracle_config"]["domain"]["geometry_params"]
    n, r_in, r_out = gp["points"], gp["inner_r"], gp["outer_r"]
    anchor = [((r_out if i % 2 == 0 else r_in) * math.cos(i * math.pi / n - math.pi / 2),
               (r_out if i % 2 == 0 else r_in) * math.sin(i * math.pi / n - math.pi / 2)) for i in range(2 * n)]
    domain = resolve("star", params)
    inside = np.array([[0.9 * x, 0.9 * y] for x, y in anchor])  # just inside every vertex
    assert domain.inside(inside).all()
    assert not domain.inside(np.array([[0.0, 0.95 * r_out]])).any()  # no tip straight up


def test_every_imported_transient_record_has_a_calibration_time_step(shared_data: Path) -> None:
    """The time step of a transient record reaches the calibration wherever the record (or the
    anchor oracle's default) puts it; validation refuses a transient case without one."""
    transient = [convert(r).source for r in records(shared_data).values()]
    transient = [s for s in transient if (s.get("pde") or {}).get("time")]
    assert len(transient) > 100
    missing = [s["id"] for s in transient if (s.get("calibration") or {}).get("dt") is None]
    assert not missing, missing[:5]
    src = next(s for s in transient if s["family"] == "burgers")
    assert src["calibration"]["dt"] == src["pde"]["time"]["dt"]
    broken = {**src, "calibration": {k: v for k, v in src["calibration"].items() if k != "dt"}}
    found = [p for p in check_source(broken) if p.check == "calibration"]
    assert found and found[0].pointer == "/calibration/dt" and "time step" in found[0].message


def test_a_forced_import_leaves_no_source_the_records_no_longer_give(shared_data: Path, tmp_path: Path) -> None:
    """``--force`` replaces an import whole: a case source from an earlier import (or rule) that
    this import does not write is removed, so ``validate OUT`` sees exactly this import."""
    recs = records(shared_data)
    subset = tmp_path / "subset.jsonl"
    subset.write_text(json.dumps(recs["le_exp_tjunc_body_force"]) + "\n")
    out = tmp_path / "out"
    stale = out / "poisson" / "poisson_from_an_earlier_import.yaml"
    stale.parent.mkdir(parents=True)
    stale.write_text("id: poisson_from_an_earlier_import\n")
    result = runner.invoke(app, ["import", "pdeagent-bench", str(subset), "--out", str(out), "--repair", "--jobs", "1",
                                 "--force"])
    assert result.exit_code == 0, result.output
    assert not stale.exists()
    assert [p.stem for p in out.rglob("*.yaml")] == [
        json.loads((out / "import-report.json").read_text())[0]["id"]]


def test_only_reimports_the_named_records_and_keeps_the_rest(shared_data: Path, tmp_path: Path) -> None:
    """``import --only ID`` amends an earlier import: the named records' sources and report entries
    are redone, every other source stays byte for byte; an unknown id or a missing earlier import
    is a usage error (exit 2) that changes nothing."""
    recs = records(shared_data)
    subset = tmp_path / "subset.jsonl"
    subset.write_text("".join(json.dumps(recs[i]) + "\n" for i in ("le_exp_tjunc_body_force", "heat_no_exact")))
    out = tmp_path / "out"
    assert runner.invoke(app, ["import", "pdeagent-bench", str(subset), "--out", str(out), "--repair", "--jobs",
                               "1"]).exit_code == 0
    report = json.loads((out / "import-report.json").read_text())
    paths = {e["original_id"]: next(out.rglob(f"{e['id']}.yaml")) for e in report}
    kept = paths["le_exp_tjunc_body_force"].read_text() + "# edited after the import\n"
    paths["le_exp_tjunc_body_force"].write_text(kept)
    paths["heat_no_exact"].write_text(paths["heat_no_exact"].read_text() + "# edited after the import\n")
    result = runner.invoke(app, ["import", "pdeagent-bench", str(subset), "--out", str(out), "--repair", "--jobs", "1",
                                 "--only", "heat_no_exact"])
    assert result.exit_code == 0, result.output
    assert paths["le_exp_tjunc_body_force"].read_text() == kept
    assert "edited" not in paths["heat_no_exact"].read_text()
    assert json.loads((out / "import-report.json").read_text()) == report
    for args, needle in ((["--only", "heat_no_exact_typo"], "heat_no_exact_typo"),
                         (["--only", "heat_no_exact", "--out", str(tmp_path / "empty")], "earlier import")):
        result = runner.invoke(app, ["import", "pdeagent-bench", str(subset), "--out", str(out), "--repair",
                                     "--jobs", "1", *args])
        assert result.exit_code == 2 and needle in result.output, result.output
    assert paths["le_exp_tjunc_body_force"].read_text() == kept


def test_numerical_transient_references_refine_time_with_space(shared_data: Path) -> None:
    """A transient record without a manufactured solution: its reference levels refine the step
    (L1 at most the calibration's over 2^(TIME_ROOM + 1), leaving the build room to refine the
    calibration TIME_ROOM times; L2 half of L1) so that e_base and the refinement gap see the time
    error; a parabolic one steps its levels, and a backward-Euler calibration, with BDF2
    (heat_no_exact's backward-Euler oracle at dt 0.02 has e_base 0.37; a Crank-Nicolson reference
    keeps rough initial data alive).  A manufactured record's levels stay as the anchor gives them."""
    recs = records(shared_data)
    heat = convert(recs["heat_no_exact"], repair=True).source
    l1, l2 = heat["reference"]["levels"]
    assert TIME_ROOM == 2 and (l1["dt"], l2["dt"]) == (0.0025, 0.00125) and l1["scheme"] == l2["scheme"] == "bdf2"
    assert heat["calibration"]["scheme"] == "bdf2" and heat["calibration"]["dt"] == 0.02
    # reaction-diffusion is first order in time too (the paper's math type aside): its no-exact
    # references stepped with backward Euler and took over 600 s a level
    rd_ids = [i for i in recs if i.startswith("reaction_diffusion_no_exact")]
    assert rd_ids
    for rid in rd_ids:
        rd = convert(recs[rid], repair=True).source
        assert [lv["scheme"] for lv in rd["reference"]["levels"]] == ["bdf2", "bdf2"], rid
    wave = convert(recs["wave_gear10_source_gauss"], repair=True).source
    l1, l2 = wave["reference"]["levels"]
    assert l2["dt"] == l1["dt"] / 2 <= wave["calibration"]["dt"] / 4 and "scheme" not in l1  # room: parabolic only
    for src in (heat, wave):
        assert check_source(src) == [], src["id"]


def test_a_record_a_build_found_answerable_is_replaced_by_a_sibling(shared_data: Path, tmp_path: Path) -> None:
    """``--replace FILE`` ({record id: why}): a record without a manufactured solution whose
    numerical reference a build found in the span of the visible data (heat_oscillatory_source_no_exact:
    2e-5 from its forcing) is released as a sibling -- the same problem with a drawn solution --
    whose provenance gives the build's reason; a malformed file is a usage error."""
    recs = records(shared_data)
    rid = "heat_oscillatory_source_no_exact"
    subset = tmp_path / "subset.jsonl"
    subset.write_text(json.dumps(recs[rid]) + "\n")
    listed = tmp_path / "replace.json"
    listed.write_text(json.dumps({rid: "the reference is within 2.05e-05 of the forcing span"}))
    out = tmp_path / "out"
    result = runner.invoke(app, ["import", "pdeagent-bench", str(subset), "--out", str(out), "--repair", "--jobs", "1",
                                 "--replace", str(listed)])
    assert result.exit_code == 0, result.output
    (path,) = out.rglob("*.yaml")
    from casekit.authoring.sibling import ADAPTED_ATTEMPTS, LATE, drawn
    from casekit.model.source import load_source_dict

    data = load_source_dict(path)
    assert data["provenance"]["status"] == "replaced" and "2.05e-05 of the forcing span" in data["provenance"]["why"]
    assert data["manufactured_solution"] and "reference" not in data and check_source(data, path) == []
    original = convert(recs[rid], repair=True).source
    assert data["domain"] == original["domain"] and data["pde"]["time"] == original["pde"]["time"]
    # a later build finds that sibling's draw answerable too: the next import skips it
    draw = drawn(data)
    assert draw is not None
    listed.write_text(json.dumps({rid: {"record": "the reference is within 2.05e-05 of the forcing span",
                                        "draws": {str(draw): "the reference is within 0.32 of the forcing span"}}}))
    again = tmp_path / "again"
    result = runner.invoke(app, ["import", "pdeagent-bench", str(subset), "--out", str(again), "--repair", "--jobs",
                                 "1", "--replace", str(listed)])
    assert result.exit_code == 0, result.output
    # the skipped draw is never released again: the record calibrates BDF2 in 6 steps, so every draw
    # at the rejected draw's rates is skipped as too fast for it, and the paced draws' slow modes are
    # answered by the time-Taylor expansion from t0 (leak.taylor); a stepped draw -- its modes turning
    # over the window, the calibration's step divided instead -- is the sibling
    (path,) = again.rglob("*.yaml")
    data = load_source_dict(path)
    assert drawn(data) not in (None, draw) and "stepped" in LATE[drawn(data) - ADAPTED_ATTEMPTS]
    assert data["calibration"]["dt"] < data["pde"]["time"]["dt"] == original["pde"]["time"]["dt"]
    report = json.loads((again / "import-report.json").read_text())
    (note,) = [n["text"] for e in report for n in e["notes"] if n["class"] == "replaced"]
    assert f"draw {drawn(data)}" in note
    listed.write_text(json.dumps([rid]))
    result = runner.invoke(app, ["import", "pdeagent-bench", str(subset), "--out", str(tmp_path / "o2"), "--repair",
                                 "--replace", str(listed)])
    assert result.exit_code == 2 and "record ids to reasons" in result.output


def test_records_whose_domain_or_diffusion_is_degenerate_are_repaired_with_a_note(shared_data: Path) -> None:
    """Three records casekit could not keep at all: an eccentric annulus whose inner circle pokes
    out of the outer one, a dumbbell whose disks overlap beyond the bridge (the anchor's gmsh meshed
    a boolean of the shapes) and pure advection with Dirichlet data everywhere.  Repaired -- the
    radii shrink to the largest the template accepts with room to spare, epsilon is the family's
    highest Peclet level -- with a note each; what remains (if anything) is the solution's to replace."""
    recs = records(shared_data)
    expected = {"burgers_eccentric_v4": ("inner 0.3 -> 0.27",), "burgers_dumbbell_v4": ("left 0.3 -> 0.21",
                                                                                         "right 0.3 -> 0.21"),
                "advection_pure_supg": ("epsilon = 0.011",)}
    for rid, says in expected.items():
        out = convert(recs[rid], repair=True)
        repaired = " ".join(t for c, t in out.notes if c == "repaired")
        assert all(s in repaired for s in says), (rid, repaired)
        problems = check_source(out.source)
        assert all(p.pointer == "/manufactured_solution" for p in problems), (rid, problems[:2])
        assert convert(recs[rid]).source != out.source  # a plain import keeps the record as typed


def test_settings_only_remaps_the_solve_settings_and_keeps_the_solutions(shared_data: Path, tmp_path: Path) -> None:
    """``--settings-only`` after a change of the settings mapping: every kept source gets the
    calibration the importer maps now (here: a hand-edited cells across is restored), and keeps
    its manufactured solution -- a sibling its draw -- and everything else; a report entry gets
    the conversion's notes beside the validation's; a record not kept is left as it is."""
    from casekit.model.source import load_source_dict

    recs = records(shared_data)
    chosen = ("burgers_lshape_v3", "poisson_basic", "heat_3d_source_only")
    subset = tmp_path / "subset.jsonl"
    subset.write_text("".join(json.dumps(recs[i]) + "\n" for i in chosen))
    out = tmp_path / "out"
    result = runner.invoke(app, ["import", "pdeagent-bench", str(subset), "--out", str(out), "--repair", "--jobs", "1"])
    assert result.exit_code == 0, result.output
    before = {p.name: load_source_dict(p) for p in out.rglob("*.yaml")}
    lshape = next(out.rglob("burgers_lshape_v3.yaml"))
    edited = load_source_dict(lshape)
    edited["calibration"]["cells_across"] = 375  # what the earlier mapping gave
    from casekit import yamlio

    lshape.write_text(yamlio.dumps(edited))
    report = json.loads((out / "import-report.json").read_text())
    result = runner.invoke(app, ["import", "pdeagent-bench", str(subset), "--out", str(out), "--repair",
                                 "--settings-only"])
    assert result.exit_code == 0, result.output
    assert "1 source(s) changed" in result.output
    after = {p.name: load_source_dict(p) for p in out.rglob("*.yaml")}
    assert after == before  # restored, and nothing else moved
    again = json.loads((out / "import-report.json").read_text())
    assert [e["notes"] for e in again] == [e["notes"] for e in report]
    result = runner.invoke(app, ["import", "pdeagent-bench", str(subset), "--out", str(tmp_path / "none"), "--repair",
                                 "--settings-only"])
    assert result.exit_code == 2 and "amends an earlier import" in result.output
    result = runner.invoke(app, ["import", "pdeagent-bench", str(subset), "--out", str(out), "--repair",
                                 "--settings-only", "--force"])
    assert result.exit_code == 2 and "neither --replace nor --force" in result.output
