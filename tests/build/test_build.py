"""casekit build: calibrated records, rejections with reasons, caching, kill and resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casekit import yamlio
from casekit.build.pipeline import BuildOptions
from casekit.build.run import build
from casekit.validate import check_record
from tests.helpers import build_source

pytestmark = pytest.mark.dolfinx


def coarse(family: str, domain: str, seed: int = 1, **levels: str) -> dict:
    src = build_source(family, domain, levels, seed)
    src["eval_grid"] = {"nx": 21, "ny": 21} if "nz" not in src["eval_grid"] else {"nx": 9, "ny": 9, "nz": 9}
    src["calibration"] = {**src["calibration"], "cells_across": 20}
    return src


def write_case(root: Path, src: dict) -> Path:
    path = root / "cases" / src["family"] / f"{src['id']}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yamlio.dumps(src))
    return path


def opts(build_dir: Path) -> BuildOptions:
    return BuildOptions(build_dir, "dolfinx", repeats=1, limits=BuildOptions.solve_limits(300, 4096))


def test_build_gives_valid_calibrated_records_and_caches(tmp_path: Path) -> None:
    src = coarse("poisson", "annulus", bc="mixed")
    path = write_case(tmp_path, src)
    outcomes = build([path], opts(tmp_path / "build"))
    (o,) = outcomes
    assert o.status == "built", o.reason
    record = json.loads((tmp_path / "build" / "dolfinx" / src["id"] / "record.json").read_text())
    assert check_record(record) == []
    meta = record["evaluation_metadata"]
    assert 0 < meta["e_base"] < 0.05 and meta["t_base"] > 0
    assert meta["thresholds"]["tau_acc"] == max(10 * meta["e_base"], 1e-6)
    assert meta["thresholds"]["tau_time"] == pytest.approx(3 * meta["t_base"])
    assert meta["environment"]["cpu_count"] >= 1 and "dolfinx-solver-real" in meta["environment"]["libraries"]
    again = build([path], opts(tmp_path / "build"))
    assert again[0].fully_cached and again[0].e_base == o.e_base and again[0].t_base == o.t_base
    # editing the case redoes only that case's stages
    src["pde"]["params"]["kappa"] = 2.0
    write_case(tmp_path, src)
    edited = build([path], opts(tmp_path / "build"))
    assert edited[0].status == "built" and "calibration" not in edited[0].cached


def test_numerical_reference_case_passes_the_refinement_check(tmp_path: Path) -> None:
    src = {
        "id": "poisson_no_exact_unit_load", "family": "poisson", "domain": {"template": "unit_square"},
        "pde": {"params": {"kappa": "1 + x*y"}, "forcing": {"f": "exp(-20*((x-0.3)**2 + (y-0.6)**2))"}},
        "boundary": {t: {"kind": "dirichlet", "value": 0} for t in ("bottom", "right", "top", "left")},
        "eval_grid": {"nx": 21, "ny": 21}, "output": {"field": "u"},
        "calibration": {"cells_across": 12, "degree": 2},
        "reference": {"levels": [{"cells_across": 24, "degree": 2}, {"cells_across": 48, "degree": 3}]},
        "tracks": ["dolfinx"],
    }
    path = write_case(tmp_path, src)
    (o,) = build([path], opts(tmp_path / "build"))
    assert o.status == "built", o.reason
    record = json.loads((tmp_path / "build" / "dolfinx" / src["id"] / "record.json").read_text())
    ref = record["evaluation_metadata"]["refinement"]
    assert ref["g12"] < ref["g01"]
    assert record["evaluation_metadata"]["construction_method"] == "numerical_reference"
    assert "manufactured_solution" not in record["evaluation_metadata"]


def test_a_broken_calibration_setting_is_rejected_with_the_reason(tmp_path: Path) -> None:
    src = coarse("helmholtz", "unit_square", wavenumber="medium")
    src["calibration"] = {"cells_across": 2, "degree": 1}
    path = write_case(tmp_path, src)
    (o,) = build([path], opts(tmp_path / "build"))
    assert o.status == "rejected"
    assert "e_base" in o.reason and "too coarse" in o.reason
    assert not (tmp_path / "build" / "dolfinx" / src["id"] / "record.json").exists()


def test_an_invalid_case_is_rejected_and_the_build_goes_on(tmp_path: Path) -> None:
    good = write_case(tmp_path, coarse("poisson", "unit_square"))
    bad = coarse("poisson", "circle")
    bad["pde"]["params"]["kappa"] = "1 + q"
    bad_path = write_case(tmp_path, bad)
    outcomes = {o.path: o for o in build([good, bad_path], opts(tmp_path / "build"))}
    assert outcomes[good].status == "built"
    assert outcomes[bad_path].status == "rejected" and "unknown name 'q'" in outcomes[bad_path].reason


def _records(build_dir: Path) -> dict[str, dict]:
    out = {}
    for line in (build_dir / "dolfinx" / "records.jsonl").read_text().splitlines():
        r = json.loads(line)
        meta = r["evaluation_metadata"]
        for k in ("t_base", "t_base_runs"):  # measured times: re-measured after a kill
            meta.pop(k)
        meta["thresholds"].pop("tau_time")
        r.pop("content_hash")
        out[r["id"]] = r
    return out


def test_killed_and_resumed_build_gives_the_same_outputs(tmp_path: Path) -> None:
    paths = [write_case(tmp_path, coarse("poisson", "unit_square", seed=s)) for s in (1, 2)]
    paths.append(write_case(tmp_path, coarse("heat", "circle", seed=3)))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    cmd = [sys.executable, "-m", "casekit", "build", str(tmp_path / "cases"), "--build-dir",
           str(tmp_path / "killed"), "--repeats", "1"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.time() + 240
    cache = tmp_path / "killed" / "cache" / "calibration"
    while time.time() < deadline and not (cache.exists() and any(cache.glob("*/.complete"))):
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    # atomic writes: a kill can leave a hidden temporary file (written, not yet renamed), never a
    # half-written output under its real name
    stray = [p for p in (tmp_path / "killed").rglob("*.tmp") if not p.name.startswith(".")]
    assert not stray, stray
    for p in (tmp_path / "killed").rglob("*.json"):
        json.loads(p.read_text())
    resumed = build(paths, opts(tmp_path / "killed"))
    assert all(o.status == "built" for o in resumed)
    assert any(o.cached for o in resumed)  # finished work was not redone
    straight = build(paths, opts(tmp_path / "straight"))
    assert all(o.status == "built" for o in straight)
    assert _records(tmp_path / "killed") == _records(tmp_path / "straight")


#: a quadratic is read off Dirichlet data that surround it (boundary_poly); on one side it is not
ONE_DIRICHLET_SIDE = {"left": "dirichlet", "right": "neumann", "top": "neumann", "bottom": "neumann"}


def test_a_threshold_is_never_set_by_the_floor_when_the_calibration_reproduces_the_solution(tmp_path: Path
                                                                                          ) -> None:
    """Honest thresholds: a quadratic solution is reproduced by P2 (e_base at round-off, the
    threshold would be the floor tau_min); the build calibrates at degree 1 instead, where the
    error is discretization error.  (Dirichlet data on one side only, so that the quadratic cannot
    be read off them.)  A linear solution is reproduced at every degree, and read off its boundary
    data: rejected."""
    src = coarse("poisson", "unit_square", bc="dirichlet")
    src.update(id="poisson_unit_square_quadratic_s1", manufactured_solution={"u": "3*x**2 + 2*x*y + 1/2"},
               boundary=ONE_DIRICHLET_SIDE,
               pde={"params": {"kappa": 1.0}})
    src["calibration"]["degree"] = 2
    linear = {**src, "id": "poisson_unit_square_linear_s1", "manufactured_solution": {"u": "x + y/2 + 1"},
              "boundary": dict.fromkeys(("left", "right", "top", "bottom"), "dirichlet")}
    outcomes = {o.case_id: o for o in build([write_case(tmp_path, src), write_case(tmp_path, linear)],
                                            opts(tmp_path / "build"))}
    quad = outcomes["poisson_unit_square_quadratic_s1"]
    assert quad.status == "built", quad.reason
    record = json.loads((tmp_path / "build" / "dolfinx" / quad.case_id / "record.json").read_text())
    cfg = record["evaluation_metadata"]["calibration_config"]
    assert cfg["degree"] == 1 and cfg["degree_lowered_from"] == 2
    assert record["evaluation_config"]["alpha_acc"] * record["evaluation_metadata"]["e_base"] \
        >= record["evaluation_config"]["tau_min"]
    assert any("degree 1 instead of 2" in n and "probe" in n for n in quad.notes)
    # the probe told it on a coarse mesh: no P2 run at the source's resolution was made
    levels = [json.loads(p.read_text()) for p in (tmp_path / "build" / "cache" / "calibration").glob("*/runs.json")]
    assert len(levels) == 1
    lin = outcomes["poisson_unit_square_linear_s1"]
    # several inverters read it (boundary_poly, atom_pairs, ...): the reason names the first
    assert lin.status == "rejected" and "reproduces the answer from the agent view" in lin.reason


def test_a_level_that_reproduces_the_solution_is_timed_once_and_completed_when_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The discarded P2 level of a quadratic solution costs one timed run, not ``repeats``; if a
    later build keeps that level (other accuracy settings), its cached run is completed to
    ``repeats`` runs, never used as a one-run t_base.  (The safety net behind the coarse probe,
    which is switched off here.)"""
    from casekit.build import exactness

    monkeypatch.setattr(exactness, "may_hold", lambda *a: False)
    src = coarse("poisson", "unit_square", bc="dirichlet")
    src.update(id="poisson_unit_square_quadratic_s2", manufactured_solution={"u": "3*x**2 + 2*x*y + 1/2"},
               boundary=ONE_DIRICHLET_SIDE,
               pde={"params": {"kappa": 1.0}})
    src["calibration"]["degree"] = 2
    three = BuildOptions(tmp_path / "build", "dolfinx", repeats=3, limits=BuildOptions.solve_limits(300, 4096))
    (outcome,) = build([write_case(tmp_path, src)], three)
    assert outcome.status == "built", outcome.reason
    runs = sorted(len(json.loads(p.read_text())["solve_seconds"])
                  for p in (tmp_path / "build" / "cache" / "calibration").glob("*/runs.json"))
    assert runs == [1, 3]  # P2: stopped after its first run; P1: timed three times
    # a build under which the P2 level no longer counts as reproducing the solution keeps it
    from casekit.build.pipeline import CaseBuild

    monkeypatch.setattr(CaseBuild, "_at_floor", lambda self, e: False)
    (kept,) = build([write_case(tmp_path, src)], three)
    assert kept.status == "built", kept.reason
    record = json.loads((tmp_path / "build" / "dolfinx" / kept.case_id / "record.json").read_text())
    assert record["evaluation_metadata"]["calibration_config"]["degree"] == 2
    assert len(record["evaluation_metadata"]["t_base_runs"]) == 3


def test_a_calibration_too_coarse_for_the_gates_is_refined_within_bounds(tmp_path: Path) -> None:
    """A calibration too coarse for the case's gates (its threshold 10 x e_base puts the span
    margin out of reach, or e_base itself is too large) is refined -- cells x sqrt(2), the step
    halved -- at most MAX_REFINEMENTS times; the record says from what, the build notes why.  A
    shortfall that the refinements left cannot close is rejected at once, with both reasons."""
    from casekit.build.pipeline import MAX_REFINEMENTS, refine

    assert refine({"cells_across": 24, "degree": 1, "dt": 0.01, "degree_lowered_from": 2}) == {
        "cells_across": 34, "degree": 1, "dt": 0.005}
    cases = {}
    for n in (24, 13):
        src = coarse("poisson", "unit_square", bc="dirichlet")
        src["id"] = f"{src['id']}_n{n}"
        src["calibration"].update(cells_across=n, degree=1)
        cases[n] = src["id"]
        write_case(tmp_path, src)
    outcomes = {o.case_id: o for o in build(sorted((tmp_path / "cases").rglob("*.yaml")), opts(tmp_path / "build"))}
    fine = outcomes[cases[24]]
    assert fine.status == "built", fine.reason
    record = json.loads((tmp_path / "build" / "dolfinx" / fine.case_id / "record.json").read_text())
    assert check_record(record) == []
    cfg = record["evaluation_metadata"]["calibration_config"]
    assert cfg["refined_from"] == {"cells_across": 24, "dt": None} and cfg["cells_across"] > 24
    assert any(n.startswith("calibrated ") and "span" in n for n in fine.notes), fine.notes
    far = outcomes[cases[13]]
    assert far.status == "rejected" and "margin 5" in far.reason and f"at most {MAX_REFINEMENTS} in all" in far.reason


def test_an_inverter_far_inside_the_threshold_is_rejected_without_refining(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """An inverter that passes is a calibration too coarse for the gates only if refining can
    put the threshold below its error: one at 1e-12 is a leak, rejected at once (no refinement
    is tried), with the inverter named."""
    import numpy as np

    from casekit.build import pipeline

    real = pipeline.inversion.score

    def leaky(spec, ref, mask):  # type: ignore[no-untyped-def]
        scored = real(spec, ref, mask)
        arrays = {k: np.asarray(v) for k, v in ref.items()}
        return {**scored, "planted": (arrays, 1e-12)}

    path = write_case(tmp_path, coarse("poisson", "unit_square", bc="dirichlet"))
    from casekit.build import pipeline as built_by

    monkeypatch.setattr(pipeline.inversion, "score", leaky)  # the build's trial scores the planted one,
    monkeypatch.setattr(built_by, "check_and_derive", _validated_without(real, built_by.check_and_derive))  # not
    # validation (it would refuse the source before the build)
    (o,) = build([path], opts(tmp_path / "build"))
    assert o.status == "rejected" and o.reason.startswith(pipeline.ANSWERED_BY_INVERTERS), o.reason
    assert "planted (e=1.00e-12)" in o.reason and "0 done" in o.reason


def _validated_without(score, check):  # type: ignore[no-untyped-def]
    """``check`` (validation) run with the real inverter battery ``score``, not a planted one."""
    from casekit.build import pipeline

    def run(*args, **kwargs):  # type: ignore[no-untyped-def]
        planted = pipeline.inversion.score
        pipeline.inversion.score = score
        try:
            return check(*args, **kwargs)
        finally:
            pipeline.inversion.score = planted
    return run


def test_a_refinement_projected_past_its_time_budget_is_not_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                 ) -> None:
    """A calibration too coarse for the gates is refined only while the refined run is projected
    to stay within REFINE_SECONDS; past it the case is rejected with both reasons, unrefined."""
    from casekit.build import pipeline

    monkeypatch.setattr(pipeline, "REFINE_SECONDS", 1e-6)
    src = coarse("poisson", "unit_square", bc="dirichlet")
    src["calibration"].update(cells_across=24, degree=1)
    (o,) = build([write_case(tmp_path, src)], opts(tmp_path / "build"))
    assert o.status == "rejected" and "margin 5" in o.reason and "a refined calibration may take" in o.reason


def test_a_numerical_reference_every_level_reproduces_is_rejected_as_answerable(tmp_path: Path) -> None:
    """u = x^2 + y^2 lies in P2: every level of the ladder gives the same field to round-off (the
    Stokes channels of PDEAgent-Bench on Taylor-Hood), e_base is round-off and the answer a
    polynomial the boundary data give away -- rejected with a reason the dataset replaces."""
    from casekit.build.answerable import is_answerable
    from casekit.build.pipeline import EXACT_AT_EVERY_LEVEL, REJECTION_RULES

    src = {
        "id": "poisson_no_exact_in_p2", "family": "poisson", "domain": {"template": "unit_square"},
        "pde": {"params": {"kappa": 1.0}, "forcing": {"f": "-4"}},
        "boundary": {t: {"kind": "dirichlet", "value": "x**2 + y**2"} for t in ("bottom", "right", "top", "left")},
        "eval_grid": {"nx": 21, "ny": 21}, "output": {"field": "u"},
        "calibration": {"cells_across": 8, "degree": 2},
        "reference": {"levels": [{"cells_across": 12, "degree": 2}, {"cells_across": 16, "degree": 2}]},
        "tracks": ["dolfinx"],
    }
    (o,) = build([write_case(tmp_path, src)], opts(tmp_path / "build"))
    assert o.status == "rejected" and o.reason.startswith(EXACT_AT_EVERY_LEVEL), o.reason
    assert is_answerable({"status": o.status, "reason": o.reason, "rules": REJECTION_RULES})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 2), st.integers(-5, 5).filter(bool)),
                min_size=1, max_size=4), st.booleans())
def test_only_polynomials_the_space_holds_are_probed(terms: list, trig: bool) -> None:
    """A solution is worth a probe at degree k iff it is a polynomial in space of degree <= k and
    at most linear in time; a transcendental factor never is."""
    import sympy as sp

    from casekit.build.exactness import may_hold, space_degree
    from casekit.expr.parser import T, X, Y

    u = sum(c * X**a * Y**b * T**n for a, b, n, c in terms)
    if trig:
        u = u * sp.sin(X)
    d = space_degree({"u": u}, 2)
    polynomial = not trig and max(n for a, b, n, c in terms) <= 1 if sp.expand(u) != 0 else True
    if trig and sp.expand(u) != 0:
        assert d is None and not may_hold({"u": u}, 2, 4)
    elif polynomial and sp.expand(u) != 0:
        expected = sp.Poly(sp.expand(u), X, Y, T).monoms()
        assert d == max(a + b for a, b, _ in expected)
        assert may_hold({"u": u}, 2, 2) == (d <= 2)
    assert not may_hold({"u": u}, 2, 1)  # degree 1 cannot be lowered
    assert not may_hold({"u": u}, 2, 2, lowest=2)  # nor Taylor-Hood's degree 2 (its pressure would be P0)


def test_taylor_hood_families_never_calibrate_below_degree_2() -> None:
    """navier_stokes_quadrilateral_mesh's quadratic solution lowered its calibration to degree 1,
    and the solver asked basix for a continuous P0 pressure."""
    from casekit.families import FAMILIES

    assert {n for n, f in FAMILIES.items() if f.min_degree == 2} == {"stokes", "navier_stokes"}


@given(cells=st.integers(2, 400), degree=st.integers(1, 3), level_cells=st.integers(2, 400),
       level_degree=st.integers(1, 3), dt=st.sampled_from([None, 0.01, 0.02]),
       level_dt=st.sampled_from([None, 0.0025, 0.01, 0.02]))
def test_a_calibration_is_coarser_than_a_level_by_nodes_across_and_step(cells: int, degree: int, level_cells: int,
                                                                          level_degree: int, dt: float | None,
                                                                          level_dt: float | None) -> None:
    """A refined P1 calibration may pass a P2 level's cells (heat_no_exact: 121 P1 cells against L1's
    127 P2 ones was refused, though L1 has twice the nodes across); never its nodes or its step."""
    from casekit.build.pipeline import coarser
    from casekit.solvers.settings import SolveSettings

    cal = SolveSettings(cells_across=cells, degree=degree, dt=dt)
    level = SolveSettings(cells_across=level_cells, degree=level_degree, dt=level_dt)
    expected = cells * degree < level_cells * level_degree and (dt is None or level_dt is None or dt > level_dt)
    assert coarser(cal, level) == expected
    assert coarser(SolveSettings(cells_across=121, degree=1, dt=0.01), SolveSettings(cells_across=127, degree=2,
                                                                                   dt=0.0025))
