"""casekit validate catches each class of problem on purpose-made bad inputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from casekit.cli import app
from casekit.validate import check_source, validate_paths
from tests.helpers import poisson, write

ROOT = Path(__file__).resolve().parents[2]


def problems_of(source: dict[str, Any]) -> list[tuple[str, str]]:
    return [(p.check, p.pointer) for p in check_source(source)]


def test_the_reference_case_is_clean() -> None:
    assert problems_of(poisson()) == []


BAD: list[tuple[str, dict[str, Any], tuple[str, str]]] = [
    ("unknown field", {"colour": "red"}, ("unknown_field", "/colour")),
    ("bad id pattern", {"id": "Poisson-Test"}, ("schema", "/id")),
    ("id without family prefix", {"id": "heat_case"}, ("naming", "/id")),
    ("unknown family", {"family": "maxwell", "id": "maxwell_x"}, ("family", "/family")),
    ("unknown domain", {"domain": {"template": "torus"}}, ("domain", "/domain/template")),
    ("bad domain parameter", {"domain": {"template": "annulus", "params": {"inner_radius": 2.0}}},
     ("domain", "/domain/params/inner_radius")),
    ("unknown symbol", {"pde": {"params": {"kappa": "1 + q"}}}, ("expression", "/pde/params/kappa")),
    ("z in 2-D", {"manufactured_solution": {"u": "x*z"}}, ("expression", "/manufactured_solution/u")),
    ("parameter out of range", {"pde": {"params": {"kappa": -1.0}}}, ("range", "/pde/params/kappa")),
    ("non-positive field", {"pde": {"params": {"kappa": "x - 0.5"}}}, ("range", "/pde/params/kappa")),
    ("unknown parameter", {"pde": {"params": {"kappa": 1.0, "k": 2.0}}}, ("family", "/pde/params/k")),
    ("missing parameter", {"pde": {"params": {}}}, ("family", "/pde/params/kappa")),
    ("time on a steady family", {"pde": {"params": {"kappa": 1.0}, "time": {"t0": 0, "t_end": 1}}},
     ("family", "/pde/time")),
    ("vector solution for a scalar family", {"manufactured_solution": {"u": ["x", "y"]}},
     ("family", "/manufactured_solution/u")),
    ("wrong output field", {"output": {"field": "velocity_magnitude"}}, ("family", "/output/field")),
    ("grid with nz in 2-D", {"eval_grid": {"nx": 8, "ny": 8, "nz": 8}}, ("grid", "/eval_grid/nz")),
    ("grid not covering the domain", {"eval_grid": {"nx": 8, "ny": 8, "bbox": [0, 0.5, 0, 1]}},
     ("grid", "/eval_grid/bbox")),
    ("grid too small", {"eval_grid": {"nx": 1, "ny": 8}}, ("schema", "/eval_grid/nx")),
    ("tolerance out of range", {"evaluation": {"alpha_acc": 0.5}}, ("schema", "/evaluation/alpha_acc")),
    ("foreign tolerance key", {"evaluation": {"tolerance": 10}}, ("tolerance_keys", "/evaluation/tolerance")),
    ("no solution and no reference", {"manufactured_solution": None}, ("schema", "")),
    ("unknown boundary tag", {"boundary": {**poisson()["boundary"], "hole": "dirichlet"}},
     ("boundary", "/boundary/hole")),
    ("boundary part without condition", {"boundary": {"left": "dirichlet", "right": "dirichlet",
                                                      "top": "dirichlet"}}, ("boundary", "/boundary/bottom")),
    ("robin without alpha", {"boundary": {**poisson()["boundary"], "top": "robin"}}, ("schema", "/boundary/top")),
    ("unsupported kind", {"boundary": {**poisson()["boundary"], "left": "periodic"}},
     ("boundary", "/boundary/left")),
    ("singular pure Neumann problem", {"boundary": {"left": "neumann", "right": "neumann", "top": "neumann",
                                                    "bottom": "neumann"}}, ("boundary", "/boundary")),
    ("unknown track", {"tracks": ["matlab"]}, ("tracks", "/tracks/0")),
]


@pytest.mark.parametrize(("what", "change", "expected"), BAD, ids=[b[0] for b in BAD])
def test_each_class_of_problem_is_caught(what: str, change: dict[str, Any], expected: tuple[str, str]) -> None:
    found = problems_of(poisson(**change))
    assert expected in found, f"{what}: expected {expected}, got {found}"


def test_neumann_needs_a_single_normal() -> None:
    src = poisson(domain={"template": "circle"}, boundary={"boundary": "neumann"})
    src["boundary"] = {"boundary": {"kind": "robin", "alpha": 1.0}}
    assert problems_of(src) == []  # one circle: one exact normal


def test_typed_forcing_is_rejected_for_manufactured_cases() -> None:
    src = poisson()
    src["pde"] = {"params": {"kappa": "1 + x/2"}, "forcing": {"f": "0"}}
    found = problems_of(src)
    assert ("typed_data", "/pde/forcing") in found
    assert ("residual", "/pde/forcing/f") in found


def test_residual_catches_a_2d_laplacian_in_3d() -> None:
    src = poisson(domain={"template": "unit_cube"}, eval_grid={"nx": 9, "ny": 9, "nz": 9},
                  boundary={t: "dirichlet" for t in ("left", "right", "front", "back", "bottom", "top")},
                  manufactured_solution={"u": "sin(pi*x)*sin(pi*y)*sin(pi*z)"})
    src["pde"] = {"params": {"kappa": 1.0}, "forcing": {"f": "2*pi**2*sin(pi*x)*sin(pi*y)*sin(pi*z)"}}
    found = check_source(src)
    residual = [p for p in found if p.check == "residual"]
    assert residual and "3-D" in residual[0].message


def test_an_exact_forcing_that_cancels_in_double_precision_is_named_so() -> None:
    """The derived forcing of a high power is exact, but its expanded form loses six digits in
    double precision: the residual check says so (not "does not satisfy the equation")."""
    src = poisson(manufactured_solution={"u": "4194304*(x - 1/2)**24 + 16*x*y*(x - 1)*(y - 1)"})
    [p] = [p for p in check_source(src) if p.check == "residual"]
    assert "exact but cancels in double precision" in p.message and p.pointer == "/manufactured_solution"
    fine = poisson(manufactured_solution={"u": "(x - 1/2)**4 + 16*x*y*(x - 1)*(y - 1)"})
    assert not [p for p in check_source(fine) if p.check == "residual"]


def test_leaks_are_caught_symbolically_and_numerically() -> None:
    src = poisson(boundary={"left": {"kind": "dirichlet", "value": "exp(x)*cos(2*pi*y) + x*y"},
                            "right": "dirichlet", "top": "dirichlet", "bottom": "dirichlet"})
    assert ("leak.symbolic", "/boundary/left") in problems_of(src)
    near = "1.02*exp(x)*cos(2*pi*y) + x*y"  # right on x=0 but close to u inside
    src["boundary"]["left"] = {"kind": "dirichlet", "value": near}
    found = problems_of(src)
    assert ("leak.numeric", "/boundary/left") in found
    assert ("boundary_data", "/boundary/left") in found


def test_derived_boundary_data_never_leak_on_curved_boundaries() -> None:
    src = poisson(domain={"template": "annulus"}, boundary={"outer": "dirichlet", "inner": "dirichlet"},
                  manufactured_solution={"u": "x**2 + y**2"})
    # no datum is the solution (a quadratic the boundary determines is the inversion battery's: boundary_poly)
    assert [p for p in problems_of(src) if p[0] != "leak.inversion"] == []
    assert ("leak.inversion", "/manufactured_solution") in problems_of(src)


def test_case_without_solution_needs_its_data_and_recipe() -> None:
    src = poisson(manufactured_solution=None)
    src["reference"] = {"levels": [{"cells_across": 64}, {"cells_across": 128}]}
    found = problems_of(src)
    assert ("reference", "/pde/forcing") in found
    src["pde"]["forcing"] = {"f": "1"}
    src["boundary"] = {t: {"kind": "dirichlet", "value": 0} for t in ("left", "right", "top", "bottom")}
    assert problems_of(src) == []


def test_files_ids_and_directories(tmp_path: Path) -> None:
    good = write(tmp_path, poisson())
    write(tmp_path, poisson(), name="other_name")
    wrong_dir = tmp_path / "cases" / "heat" / "poisson_test2.yaml"
    wrong_dir.parent.mkdir(parents=True)
    wrong_dir.write_text(good.read_text().replace("poisson_test", "poisson_test2"))
    report = validate_paths([tmp_path / "cases"])
    found = {(Path(p.file).name, p.check) for p in report.problems}
    assert ("other_name.yaml", "naming") in found  # file name is not the id
    assert ("other_name.yaml", "unique_id") in found or ("poisson_test.yaml", "unique_id") in found
    assert ("poisson_test2.yaml", "naming") in found  # under cases/heat/
    assert report.files == 3


def test_records_jsonl(tmp_path: Path) -> None:
    from tests.core.test_model import RECORD

    bad = dict(RECORD)
    path = tmp_path / "records.jsonl"
    path.write_text(json.dumps(bad) + "\n" + "{not json\n")
    report = validate_paths([path])
    checks = {p.check for p in report.problems}
    assert "integrity" in checks  # content hash mismatch
    assert "jsonl" in checks  # the broken line


runner = CliRunner()


def test_cli_exit_codes_and_json(tmp_path: Path) -> None:
    good = write(tmp_path, poisson())
    result = runner.invoke(app, ["validate", str(good)])
    assert result.exit_code == 0, result.output
    assert "clean" in result.output
    bad = write(tmp_path, poisson(id="poisson_bad", colour="red"))
    result = runner.invoke(app, ["validate", str(bad)])
    assert result.exit_code == 1
    assert "poisson_bad: /colour: unknown field 'colour'" in result.output
    result = runner.invoke(app, ["validate", "--json", str(bad)])
    assert result.exit_code == 1
    doc = json.loads(result.output)
    assert doc["problems"][0]["pointer"] == "/colour" and doc["by_check"]["unknown_field"]["cases"] == 1
    result = runner.invoke(app, ["validate", str(tmp_path / "missing.yaml")])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    broken = tmp_path / "cases" / "poisson" / "broken.yaml"
    broken.write_text("id: [unclosed\n")
    result = runner.invoke(app, ["validate", str(broken)])
    assert result.exit_code == 1 and "not valid YAML" in result.output and "Traceback" not in result.output


def test_hygiene_names_the_case_the_field_and_the_literal() -> None:
    """Oversized literals and round-off terms in agent-visible text are reported; derivation never
    produces them (its output of the same case is clean)."""
    from casekit.validate import check_source
    from tests.helpers import poisson

    typed = poisson(id="poisson_hygiene", pde={"params": {"kappa": 1.0}, "forcing": {
        "f": "273323000000000000000000*x - 3.349132191840704e-31*x**2 + 1"}})
    problems = [p for p in check_source(typed) if p.check == "hygiene"]
    assert any("273323000000000000000000" in p.message and p.pointer == "/pde/forcing/f" for p in problems)
    assert any("round-off" in p.message for p in problems)
    assert all(p.case_id == "poisson_hygiene" for p in problems)
    derived = poisson(id="poisson_hygiene", pde={"params": {"kappa": "1 + 123456789.125*x**2/123456789"}})
    assert not [p for p in check_source(derived) if p.check == "hygiene"]


def test_nearly_incompressible_elasticity_derives_hygienic_text() -> None:
    from casekit.authoring.builder import build_source
    from casekit.validate import check_source

    src = build_source("linear_elasticity", "sector", {"compressibility": "nearly_incompressible"}, 3)
    assert not [p for p in check_source(src) if p.check in ("hygiene", "residual", "residual_inexact")]


def test_a_narrow_peak_derives_text_that_parses_back_clean() -> None:
    """Printing can undo cleaning (a parser distributes 15625*(-250000*x**2 + ...) into
    -3906250000*x**2); the derived text is what is checked, so the committed narrow-peak case is
    clean."""
    from casekit.model.source import load_source_dict

    path = ROOT / "cases" / "poisson" / "poisson_gear_constant_peak_dirichlet_s1013.yaml"
    assert not [p for p in check_source(load_source_dict(path), path) if p.check == "hygiene"]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 10**6), st.integers(10**8, 10**12), st.integers(-10**6, 10**6), st.integers(1, 10**7))
def test_clean_text_parses_back_within_the_rules_and_to_the_same_values(a: int, big: int, c: int, q: int) -> None:
    import numpy as np
    import sympy as sp

    from casekit.expr import X, Y, as_expr
    from casekit.expr.hygiene import _literal_problems, clean_text

    e = sp.Mul(sp.Rational(a, q), sp.Add(big * X**2, c * Y, 1, evaluate=False), sp.exp(-X), evaluate=False)
    text = clean_text(e)
    back = as_expr(text)
    assert next(_literal_problems(back), None) is None, text
    for x, y in [(0.1, 0.2), (0.7, -0.3), (-0.5, 0.9)]:
        want = float(e.subs({X: x, Y: y}))
        assert np.isclose(float(back.subs({X: x, Y: y})), want, rtol=1e-13, atol=0), text


def test_derived_reaction_terms_keep_their_unknown() -> None:
    """R(u) is printed, cleaned and read back with ``u`` as a name (a regression: the re-parse of
    derived text once knew only x, y, z and t and rejected every reaction-diffusion case)."""
    from casekit.model.source import load_source_dict

    path = ROOT / "cases" / "reaction_diffusion" / \
        "reaction_diffusion_multi_hole_logistic_stiff_steady_robin_s1007.yaml"
    assert check_source(load_source_dict(path), path) == []


def test_a_casekit_defect_in_one_case_is_reported_for_it_and_the_others_are_checked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import casekit.validate as validate

    real = validate.run_all

    def flaky(view, settings):  # type: ignore[no-untyped-def]
        if view.case_id == "poisson_one":
            raise RuntimeError("boom")
        return real(view, settings)

    monkeypatch.setattr(validate, "run_all", flaky)
    write(tmp_path, poisson(id="poisson_one"))
    write(tmp_path, poisson(id="poisson_two"))
    report = validate_paths([tmp_path / "cases"])
    assert report.cases == 2
    assert [(p.case_id, p.check) for p in report.problems] == [("poisson_one", "internal")]
    assert "boom" in report.problems[0].message


#: a case committed until its polynomial solution was found invertible (kept here for its boundary layout)
NS_CASE = Path(__file__).parent / "data" / "navier_stokes_dumbbell_traction.yaml"
ENTERING = {"left_lobe": "neumann", "bridge_bottom": "neumann", "right_lobe": "dirichlet", "bridge_top": "dirichlet"}


def test_inflow_through_a_traction_part_is_refused_at_high_reynolds_only() -> None:
    """The committed case once had traction on the parts where its flow enters, at Re ~ 1400:
    no track's Newton solver converged.  The same boundary at nu = 1 (Re ~ 14) is fair."""
    from casekit.model.source import load_source_dict

    data = load_source_dict(NS_CASE) | {"boundary": ENTERING}
    found = [(p.check, p.pointer) for p in check_source(data) if p.check == "traction_inflow"]
    assert found == [("traction_inflow", "/boundary/left_lobe"), ("traction_inflow", "/boundary/bridge_bottom")]
    slow = data | {"pde": {"params": {"nu": 1.0}}, "design": {**data["design"], "reynolds": "low"}}
    assert not [p for p in check_source(slow) if p.check == "traction_inflow"]
    assert not [p for p in check_source(load_source_dict(NS_CASE)) if p.check == "traction_inflow"]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_authoring_never_puts_traction_where_a_fast_flow_enters(seed: int) -> None:
    from casekit.authoring.builder import build_source
    from casekit.errors import CasekitError

    try:
        src = build_source("navier_stokes", "multi_hole", {"reynolds": "high", "bc": "mixed"}, seed)
    except CasekitError as exc:
        assert "--seed" in exc.message
        return
    assert "neumann" in src["boundary"].values()
    assert not [p for p in check_source(src) if p.check == "traction_inflow"]


def test_no_visible_value_is_a_multiple_of_the_hidden_solution() -> None:
    """leak.multiple: the forcing of an eigenfunction is c u (the answer is f / c); a solution that
    is no eigenfunction is clean, and so are the committed Navier-Stokes cases, whose forcing once
    carried the velocity verbatim in an unexpanded convective term (now expanded)."""
    from casekit.model.source import load_source_dict

    eigen = poisson(id="poisson_eigen", pde={"params": {"kappa": 1.0}},
                    manufactured_solution={"u": "sin(pi*x)*sin(2*pi*y)"})
    found = [p for p in check_source(eigen) if p.check == "leak.multiple"]
    assert found and found[0].case_id == "poisson_eigen" and "49.348" in found[0].message  # 5 pi^2
    mixed = poisson(id="poisson_mixed", pde={"params": {"kappa": 1.0}},
                    manufactured_solution={"u": "sin(pi*x)*sin(2*pi*y) + x*y"})
    assert not [p for p in check_source(mixed) if p.check.startswith("leak")]
    path = ROOT / "cases" / "navier_stokes" / "navier_stokes_star_high_smooth_dirichlet_s1000.yaml"
    spec = check_source(load_source_dict(path), path)
    assert not [p for p in spec if p.check.startswith("leak")]
