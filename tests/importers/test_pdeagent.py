"""Import of the public PDEAgent-Bench data and the defects validation finds in it."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from casekit.cli import app
from casekit.importers import IMPORTERS
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
    cube, where N*sqrt(2) gave half the anchor's degrees of freedom)."""
    import math

    from casekit.domains import resolve

    recs = records(shared_data)
    for kind in ("unit_square", "unit_cube", "annulus"):
        rec = next(r for r in recs.values() if r["oracle_config"]["domain"]["type"] == kind
                   and "resolution" in r["oracle_config"].get("mesh", {}))
        src = convert(rec).source
        n = rec["oracle_config"]["mesh"]["resolution"]
        diameter = resolve(src["domain"]["template"], src["domain"].get("params")).geometry.diameter()
        assert src["calibration"]["cells_across"] == round(n * diameter), kind
    cube = next(r for r in recs.values() if r["oracle_config"]["domain"]["type"] == "unit_cube")
    assert convert(cube).source["calibration"]["cells_across"] == round(
        cube["oracle_config"]["mesh"]["resolution"] * math.sqrt(3))


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
