"""Target values: exact values against closed forms, authoring and validation errors, hostile
targets.json, gates, prompts."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casekit import schema
from casekit.derive import derive
from casekit.domains import resolve
from casekit.model.source import CaseSource
from casekit.prompts import render
from casekit.scoring.artifacts import ArtifactError, load_targets
from casekit.scoring.gates import gate
from casekit.targets import TARGET_KINDS
from casekit.targets.quadrature import boundary_integral, domain_integral, maximum
from casekit.thresholds import DEFAULTS, target_thresholds
from casekit.validate import check_source
from tests.helpers import build_source


# --------------------------------------------------------------------------- quadrature
def test_domain_integrals_match_closed_forms() -> None:
    disk = resolve("circle")  # centre (0.5, 0.5), radius 0.5
    r2 = lambda p: (p[:, 0] - 0.5) ** 2 + (p[:, 1] - 0.5) ** 2  # noqa: E731
    assert domain_integral(disk, r2) == pytest.approx(math.pi / 32, rel=1e-12)
    square = resolve("unit_square")
    assert domain_integral(square, lambda p: np.exp(p[:, 0] + p[:, 1])) == pytest.approx((math.e - 1) ** 2, rel=1e-12)
    annulus = resolve("annulus")
    assert domain_integral(annulus, lambda p: np.ones(len(p))) == pytest.approx(annulus.geometry.measure(), rel=1e-12)
    cube = resolve("unit_cube")
    assert domain_integral(cube, lambda p: p[:, 0] * p[:, 1] ** 2 * np.exp(p[:, 2])) == pytest.approx(
        (math.e - 1) / 6, rel=1e-12)


@settings(max_examples=8, deadline=None)
@given(a=st.integers(0, 7), b=st.integers(0, 7), domain=st.sampled_from(["unit_square", "l_shape"]))
def test_monomial_integrals_agree_with_independent_quadrature(a: int, b: int, domain: str) -> None:
    """Green's theorem against a direct composite rule on a fine grid of the polygon/curved domain:
    on the unit square the closed form 1/((a+1)(b+1))."""
    d = resolve(domain)
    value = domain_integral(d, lambda p: p[:, 0] ** a * p[:, 1] ** b)
    if domain == "unit_square":
        assert value == pytest.approx(1 / ((a + 1) * (b + 1)), rel=1e-11)
    else:  # a second-order grid rule agrees to its own accuracy
        box = d.bbox()
        n = 401
        xs, ys = np.linspace(box[0], box[1], n), np.linspace(box[2], box[3], n)
        pts = np.stack(np.meshgrid(xs, ys, indexing="ij"), -1).reshape(-1, 2)
        cell = (xs[1] - xs[0]) * (ys[1] - ys[0])
        rough = float(np.sum((pts[:, 0] ** a * pts[:, 1] ** b)[d.inside(pts)]) * cell)
        assert value == pytest.approx(rough, rel=2e-2, abs=2e-3)


def test_boundary_flux_of_r_squared_through_a_circle() -> None:
    """grad(r^2) . n = 2r on the circle of radius r: the flux is 4 pi r^2."""
    disk = resolve("circle")
    flux = boundary_integral(disk, "boundary", lambda p, n: np.sum(2 * (p - 0.5) * n, axis=1))
    assert flux == pytest.approx(4 * math.pi * 0.25, rel=1e-12)
    # the hole of the annulus has its normal pointing into the hole (out of the domain)
    annulus = resolve("annulus")
    g = annulus.spec()["geometry_params"]
    c, r = np.asarray(g["center"]), float(g["inner_radius"])
    inner = boundary_integral(annulus, "inner", lambda p, n: np.sum(2 * (p - c) * n, axis=1))
    assert inner == pytest.approx(-4 * math.pi * r**2, rel=1e-12)


@settings(max_examples=12, deadline=None)
@given(a=st.integers(0, 6), b=st.integers(0, 6), c=st.integers(0, 6), tag=st.sampled_from(
    ["left", "right", "front", "back", "bottom", "top"]))
def test_box_face_fluxes_match_closed_forms(a: int, b: int, c: int, tag: str) -> None:
    """The flux of grad(x^a y^b z^c) through a face of the box [0, 1] x [0, 2] x [0, 3]: the
    outward derivative along the face's axis, integrated over the face in closed form."""
    from casekit.domains import resolve

    box = resolve("unit_cube", {"x1": 1.0, "y1": 2.0, "z1": 3.0})
    lo, hi = (0.0, 0.0, 0.0), (1.0, 2.0, 3.0)
    powers = (a, b, c)
    axis, side = box.geometry.face(tag)

    def grad(p: np.ndarray) -> np.ndarray:
        out = np.empty_like(p)
        for i in range(3):
            d = [p[:, j] ** powers[j] for j in range(3)]
            d[i] = powers[i] * p[:, i] ** (powers[i] - 1) if powers[i] else np.zeros(len(p))
            out[:, i] = d[0] * d[1] * d[2]
        return out

    value = boundary_integral(box, tag, lambda p, n: np.sum(grad(p) * n, axis=1))
    at = hi[axis] if side else lo[axis]
    derivative = powers[axis] * at ** (powers[axis] - 1) if powers[axis] else 0.0
    closed = (1.0 if side else -1.0) * derivative
    for j in range(3):
        if j != axis:
            closed *= hi[j] ** (powers[j] + 1) / (powers[j] + 1)
    assert value == pytest.approx(closed, rel=1e-11, abs=1e-12)


def test_maximum_is_found_inside_and_on_the_boundary() -> None:
    square = resolve("unit_square")
    m = maximum(square, lambda p: 2 - (p[:, 0] - 0.3) ** 2 - (p[:, 1] - 0.61) ** 2)
    assert m.value == pytest.approx(2.0, abs=1e-12) and m.point == pytest.approx((0.3, 0.61), abs=1e-5)
    assert m.depth == pytest.approx(0.3, abs=1e-5)
    edge = maximum(square, lambda p: p[:, 0] + np.sin(3 * p[:, 1]))
    assert edge.value == pytest.approx(1 + 1.0, abs=1e-10) and edge.depth < 1e-6


# --------------------------------------------------------------------------- derivation, validation
def _poisson(**targets: dict) -> dict:
    src = build_source("poisson", "unit_square", {"solution": "peak"}, 3)
    src["targets"] = list(targets.values())
    src["tracks"] = ["dolfinx"]
    return src


def test_exact_values_come_from_the_manufactured_solution_and_stay_hidden() -> None:
    src = _poisson(m={"name": "m", "kind": "mean"}, p={"name": "p", "kind": "point", "at": [0.4, 0.55]})
    d = derive(CaseSource.from_dict(src))
    import sympy as sp

    from casekit.expr import as_expr
    u = as_expr(src["manufactured_solution"]["u"], variables=["x", "y"])
    x, y = sp.symbols("x y", real=True)
    u = u.subs({s: {"x": x, "y": y}[s.name] for s in u.free_symbols})
    assert d.target_values["p"] == pytest.approx(float(u.subs({x: 0.4, y: 0.55})), rel=1e-14)
    import mpmath

    fn = sp.lambdify((x, y), u, "mpmath")
    mpmath.mp.dps = 20
    mean = float(mpmath.quad(fn, [0, 0.5, 1], [0, 0.5, 1]))  # the unit square's area is 1
    assert d.target_values["m"] == pytest.approx(mean, rel=1e-10)
    spec = d.case_spec()
    assert [e["name"] for e in spec["targets"]] == ["m", "p"]
    assert schema.validate(spec, "case_spec") == []
    text = json.dumps(spec)
    assert f"{d.target_values['m']:.8g}" not in text and f"{d.target_values['p']:.8g}" not in text
    assert check_source(src) == []


@pytest.mark.parametrize(("target", "pointer", "valid"), [
    ({"name": "q", "kind": "point", "at": [1.5, 0.5]}, "/targets/0/at", "inside unit_square"),
    ({"name": "q", "kind": "point", "at": [0.5, 0.5, 0.5]}, "/targets/0/at", "[number, number]"),
    ({"name": "q", "kind": "mean", "of": "v"}, "/targets/0/of", "u"),
    ({"name": "q", "kind": "boundary_flux", "boundary": "nowhere"}, "/targets/0/boundary", "bottom"),
])
def test_bad_targets_name_the_case_the_field_and_what_is_valid(target: dict, pointer: str, valid: str) -> None:
    src = _poisson(t=target)
    problems = check_source(src)
    assert problems, target
    p = problems[0]
    assert p.case_id == src["id"] and p.pointer == pointer and valid in (p.valid or ""), p.render()


def test_schema_refuses_unknown_kinds_and_misplaced_fields() -> None:
    for target, where in (({"name": "q", "kind": "integral"}, "/targets/0/kind"),
                          ({"name": "q", "kind": "point"}, "/targets/0"),
                          ({"name": "q", "kind": "mean", "boundary": "left"}, "/targets/0")):
        problems = check_source(_poisson(t=target))
        assert problems and problems[0].pointer.startswith(where), (target, [p.render() for p in problems])


def test_schema_kinds_are_the_registered_ones() -> None:
    source = json.loads((Path(schema.__file__).parent.parent / "schemas" / "case_source.schema.json").read_text())
    spec = json.loads((Path(schema.__file__).parent.parent / "schemas" / "case_spec.schema.json").read_text())
    assert sorted(source["$defs"]["target"]["properties"]["kind"]["enum"]) == TARGET_KINDS.names()
    assert sorted(spec["properties"]["targets"]["items"]["properties"]["kind"]["enum"]) == TARGET_KINDS.names()


def test_flux_on_a_neumann_part_tracks_without_targets_and_near_zero_values_are_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    src = build_source("poisson", "unit_square", {"bc": "mixed"}, 4)
    neumann = next(t for t, b in src["boundary"].items() if b == "neumann")
    src["targets"] = [{"name": "f", "kind": "boundary_flux", "boundary": neumann}]
    (p,) = [p for p in check_source(src) if p.check == "targets"]
    assert p.pointer == "/targets/0/boundary" and "dirichlet" in p.message
    src = _poisson(t={"name": "m", "kind": "mean"})
    src["tracks"] = ["dolfinx", "dealii"]
    assert check_source(src) == []  # every track computes every kind (issue 31)
    import dataclasses

    from casekit.tracks import TRACKS

    # a track that computes none is refused where the case lists it, naming those that do
    monkeypatch.setitem(TRACKS._items, "dealii", dataclasses.replace(TRACKS.get("dealii"), target_kinds=()))
    able = ", ".join(n for n, t in TRACKS.items() if "mean" in t.target_kinds)
    assert "dolfinx" in able and "dealii" not in able
    assert [(p.pointer, p.valid) for p in check_source(src)] == [("/tracks/1", able)]
    zero = _poisson(t={"name": "m", "kind": "mean"})
    zero["manufactured_solution"] = {"u": "sin(2*pi*x)*sin(pi*y) + (x - 1/2)*y"}
    assert any("near-zero" in p.message for p in check_source(zero))


def test_families_flux_coefficient_is_their_flux() -> None:
    import sympy as sp

    from casekit.families import FAMILIES
    from casekit.families.calculus import dot, grad

    x, y = sp.symbols("x y", real=True)
    n = sp.symbols("n0 n1")
    u = sp.sin(x) * sp.exp(y)
    for name, family in FAMILIES.items():
        if family.flux_coefficient is None:
            continue
        params = {p.name: sp.Rational(3, 2) for p in family.params}
        assert family.flux is not None
        diff = family.flux({"u": u}, params, n, 2) - family.flux_coefficient(params) * dot(grad(u, 2), n)
        assert sp.simplify(diff) == 0, name


def test_authoring_writes_a_target_case_that_validates() -> None:
    src = build_source("heat", "unit_square", {}, 2001, targets=("mean", "point"))
    assert [t["kind"] for t in src["targets"]] == ["mean", "point"] and "_targets_" in src["id"]
    from casekit.tracks import TRACKS

    # every track of the family and domain: each computes every kind (issue 31)
    assert src["tracks"] == [n for n, t in TRACKS.items() if t.supports("heat", "unit_square")]
    assert "numpy" in src["tracks"] and "ngsolve" in src["tracks"]
    assert check_source(src) == []


@pytest.mark.parametrize(("family", "domain", "reason"), [
    ("linear_elasticity", "unit_square", "has no scalar normal flux"),
    ("stokes", "circle", "has no scalar normal flux"),
    ("linear_elasticity", "unit_cube", "has no scalar normal flux"),
])
def test_new_refuses_a_target_kind_the_family_cannot_ask_before_drawing(
        family: str, domain: str, reason: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``casekit new --targets boundary_flux`` on elasticity said only "no valid ... after 7
    draws" (issue 27): the reason is given at once, and no solution is drawn."""
    from casekit.authoring import new
    from casekit.errors import CasekitError

    def no_draw(*args: object, **kwargs: object) -> dict:
        raise AssertionError("drew a solution")

    monkeypatch.setattr(new, "build_source", no_draw)
    with pytest.raises(CasekitError) as info:
        new.make_case(family, domain, {}, 7, targets=("mean", "boundary_flux"))
    assert "--targets boundary_flux" in info.value.message and reason in info.value.message
    assert info.value.valid and "\n" not in str(info.value)


def test_new_gives_the_reason_of_the_last_rejected_draw(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI prints the message and the problems after the first: the first problem of the last
    draw (often the only one) was dropped; the message carries it."""
    import casekit.validate
    from casekit.authoring import new
    from casekit.errors import CasekitError, Problem

    monkeypatch.setattr(new, "build_source", lambda *a, **k: {"id": "poisson_x"})
    monkeypatch.setattr(casekit.validate, "check_source",
                        lambda src: [Problem("the one reason", "/targets/0/kind", src["id"], check="targets")])
    with pytest.raises(CasekitError) as info:
        new.make_case("poisson", "unit_square", {}, 7)
    assert "after 7 draw(s)" in info.value.message and "the one reason" in info.value.message
    assert "/targets/0/kind" in info.value.message


def test_new_stops_at_the_first_draw_whose_derived_data_are_too_large(monkeypatch: pytest.MonkeyPatch) -> None:
    """A biharmonic draw on the gear (laplacian data too long to print) was retried six times,
    minutes each: the next seeds draw the same shapes."""
    import casekit.validate
    from casekit.authoring import new
    from casekit.errors import CasekitError, Problem

    draws = []
    monkeypatch.setattr(new, "build_source", lambda *a, **k: draws.append(a) or {"id": "biharmonic_x"})
    monkeypatch.setattr(casekit.validate, "check_source", lambda src: [
        Problem("the laplacian data on boundary derived from the solution is too long to print",
                "/manufactured_solution/u", src["id"], check="size")])
    with pytest.raises(CasekitError, match=r"after 1 draw.*too long to print"):
        new.make_case("biharmonic", "gear", {}, 0)
    assert len(draws) == 1


# --------------------------------------------------------------------------- artifacts, gates
SPEC = {"targets": [{"name": "a", "kind": "mean"}, {"name": "b", "kind": "max"}]}


@pytest.mark.parametrize(("content", "category", "words"), [
    (None, "missing_artifact", "not written"),
    (b"{", "invalid_artifact", "not valid JSON"),
    (b"[1, 2]", "invalid_artifact", "JSON object"),
    (b'{"a": 1, "b": NaN}', "invalid_artifact", "not valid JSON"),
    (b'{"a": 1, "b": Infinity}', "invalid_artifact", "not valid JSON"),
    (b'{"a": 1, "b": 1e999}', "non_finite", "finite"),
    (b'{"a": 1, "b": true}', "invalid_artifact", "finite number"),
    (b'{"a": 1, "b": "2"}', "invalid_artifact", "finite number"),
    (b'{"a": 1, "b": ' + b"9" * 400 + b"}", "invalid_artifact", "finite number"),
    (b'{"a": 1}', "invalid_artifact", "lacks"),
    (b'{"a": 1, "b": 2, "c": 3}', "invalid_artifact", "unknown targets"),
    (b'{"a": 1, "b": 2, "' + b"x" * 70000 + b'": 1}', "invalid_artifact", "larger than"),
    (b"\xff\xfe", "invalid_artifact", "not valid JSON"),
    (b"[" * 100000, "invalid_artifact", "larger than"),
])
def test_hostile_targets_json_fails_the_attempt_with_a_reason(tmp_path: Path, content: bytes | None, category: str,
                                                              words: str) -> None:
    if content is not None:
        (tmp_path / "targets.json").write_bytes(content)
    with pytest.raises(ArtifactError) as err:
        load_targets(tmp_path, SPEC)
    assert err.value.category == category and words in err.value.message


def test_targets_json_is_read_and_a_symlink_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real.json").write_text('{"a": 1.5, "b": -2}')
    (tmp_path / "targets.json").symlink_to(tmp_path / "real.json")
    with pytest.raises(ArtifactError):
        load_targets(tmp_path, SPEC)
    (tmp_path / "targets.json").unlink()
    (tmp_path / "targets.json").write_text('{"a": 1.5, "b": -2}')
    assert load_targets(tmp_path, SPEC) == {"a": 1.5, "b": -2.0}
    assert load_targets(tmp_path, {}) == {}


def test_target_gates_use_the_field_rule_and_fail_the_accuracy_stage() -> None:
    taus = target_thresholds(dict(DEFAULTS), {"a": 1e-3, "b": 1e-9}, 1e-8)
    assert taus == {"a": pytest.approx(1e-2), "b": 1e-6}
    # a superconvergent functional is never held tighter than the field
    assert target_thresholds(dict(DEFAULTS), {"a": 1e-3, "b": 1e-9}, 4e-4) == {"a": pytest.approx(1e-2), "b": 4e-4}
    assert gate(True, 1e-3, 1e-2, 1.0, 2.0, targets_ok=False).stage == "F-Acc"
    assert gate(True, 1e-3, 1e-2, 1.0, 2.0, targets_ok=True).stage == "Pass"
    from casekit.errors import CasekitError
    with pytest.raises(CasekitError):
        target_thresholds(dict(DEFAULTS), {"a": 0.5}, 1e-3)


def test_prompts_ask_for_the_targets_and_never_show_their_values() -> None:
    src = _poisson(m={"name": "m", "kind": "mean"}, f={"name": "f", "kind": "boundary_flux", "boundary": "left"})
    d = derive(CaseSource.from_dict(src))
    spec = d.case_spec()
    values = d.target_values
    for tier in ("single", "plan", "modelspecs"):
        text = render(spec, "dolfinx", tier)
        assert "targets.json" in text and "`m`" in text and "`f`" in text
        for v in values.values():
            assert f"{v:.6g}" not in text
    assert "## Requested outputs" in render(spec, "dolfinx", "modelspecs")


def test_the_report_gives_each_kind_of_target_its_pass_count_and_median_error() -> None:
    from casekit.report.aggregate import target_summary
    from casekit.report.render import _target

    def v(system: str, *targets: tuple[str, float | None, bool]) -> dict:
        return {"system": system, "targets": [{"name": f"t{i}", "kind": k, "error": e, "tau": 1e-3, "passed": p}
                                              for i, (k, e, p) in enumerate(targets)]}

    summary = target_summary([v("a", ("mean", 1e-4, True), ("point", 2e-3, False)),
                              v("a", ("mean", 3e-4, True)), v("b", ("mean", None, False)), {"system": "c"}])
    assert summary["mean"]["a"] == {"n": 2, "passed": 2, "error_median": pytest.approx(2e-4)}
    assert summary["mean"]["b"] == {"n": 1, "passed": 0, "error_median": None}
    assert _target(summary["point"]["a"]) == "0/1, 2.00e-03" and _target(None) == "-"


@pytest.mark.dolfinx
def test_a_target_case_builds_its_calibration_passes_and_the_zero_solver_fails(tmp_path: Path) -> None:
    """End to end on DOLFINx, coarse: build (exact values, calibrated gates, cheater trial), then
    evaluate the calibration solver and the zero solver, then report per kind of target."""
    from typer.testing import CliRunner

    from casekit import yamlio
    from casekit.build.pipeline import BuildOptions
    from casekit.build.run import build
    from casekit.cli import app
    from casekit.evaluate.baselines import write_baselines
    from casekit.evaluate.store import open_store
    from casekit.runner.limits import Limits

    src = _poisson(m={"name": "m", "kind": "mean"}, f={"name": "flux_left", "kind": "boundary_flux",
                                                         "boundary": "left"},
                   p={"name": "p", "kind": "point", "at": [0.4, 0.55]})
    src["eval_grid"] = {"nx": 25, "ny": 25}
    src["calibration"] = {**src["calibration"], "cells_across": 24}
    src["evaluation"]["timeout_sec"] = 30.0
    path = tmp_path / "cases" / "poisson" / f"{src['id']}.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(yamlio.dumps(src))
    outcomes = build([path], BuildOptions(tmp_path / "build", "dolfinx", repeats=1, limits=Limits(timeout_sec=300)))
    assert [o.status for o in outcomes] == ["built"], [o.reason for o in outcomes]
    store = open_store(tmp_path / "build", "dolfinx")
    hidden = next(iter(store.records.values()))["evaluation_metadata"]["targets"]
    field_tau = next(iter(store.records.values()))["evaluation_metadata"]["thresholds"]["tau_acc"]
    assert set(hidden) == {"m", "flux_left", "p"} and all(t["tau"] >= field_tau for t in hidden.values())
    write_baselines(store, tmp_path / "base", ("calibration", "zero"), "dolfinx")
    runner = CliRunner()
    for kind in ("calibration", "zero"):
        result = runner.invoke(app, ["evaluate", "--cases", str(store.root), "--submissions",
                                     str(tmp_path / "base" / kind), "--out", str(tmp_path / "eval"), "--repeats", "1"])
        assert result.exit_code == 0, result.output
    lines = (tmp_path / "eval" / "verdicts.jsonl").read_text().splitlines()
    verdicts = {v["system"]: v for v in map(json.loads, lines)}
    assert verdicts["calibration"]["stage"] == "Pass" and all(t["passed"] for t in verdicts["calibration"]["targets"])
    assert verdicts["zero"]["stage"] == "F-Acc" and not any(t["passed"] for t in verdicts["zero"]["targets"])
    report = runner.invoke(app, ["report", str(tmp_path / "eval")], terminal_width=200)
    assert report.exit_code == 0 and "Target values" in report.output and "boundary_flux" in report.output
