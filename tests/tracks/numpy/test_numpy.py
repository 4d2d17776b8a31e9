"""The numpy track end to end: a periodic case built with the DOLFINx and numpy tracks agrees
across them, its numpy calibration passes the evaluator and the zero field does not; the solvers
converge at second order on the unit cube (the shared matrix covers the square and the periodic
square); the guide's snippets and the scaffold run as written in the track's environment, which
has NumPy and SciPy and no FEM library (the shared coverage and convergence tests run for every
registered track, this one included)."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from casekit import leak, yamlio
from casekit.build.pipeline import BuildOptions
from casekit.build.run import build
from casekit.derive import derive
from casekit.evaluate.baselines import write_baselines
from casekit.evaluate.run import EvalOptions, evaluate
from casekit.evaluate.store import open_store
from casekit.model.source import CaseSource
from casekit.runner.limits import Limits
from casekit.tracks import TRACKS
from tests.helpers import build_source, coarse_case

pytestmark = pytest.mark.numpy


def _run(code: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    python = TRACKS.get("numpy").python()  # type: ignore[attr-defined]
    return subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          env={**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "HOME": str(cwd)})


@pytest.mark.dolfinx
def test_periodic_case_agrees_with_dolfinx_and_the_calibration_passes(tmp_path: Path) -> None:
    src = build_source("heat", "periodic_square", {"bc": "robin", "coefficient": "variable"}, 5)
    path = coarse_case(tmp_path, src, ["dolfinx", "numpy"], 44)
    for name in ("dolfinx", "numpy"):
        [o] = build([path], BuildOptions(tmp_path / "build", name, repeats=1, limits=Limits(timeout_sec=600)))
        assert o.status == "built", o.reason
    status = json.loads((tmp_path / "build" / "numpy" / src["id"] / "status.json").read_text())
    agreement = status["agreement"]["dolfinx"]
    assert agreement["distance"] <= agreement["bound"], agreement

    store = open_store(tmp_path / "build", "numpy")
    write_baselines(store, tmp_path / "base", ("calibration", "zero"), "numpy")
    [v] = evaluate(EvalOptions(store, tmp_path / "base" / "calibration", tmp_path / "out", track="numpy", repeats=1))
    assert v["stage"] == "Pass", v
    [z] = evaluate(EvalOptions(store, tmp_path / "base" / "zero", tmp_path / "out-zero", track="numpy", repeats=1))
    assert z["stage"] == "F-Acc", z


def _cube_error(d: Any, solution: Path) -> float:
    sol = np.load(solution)
    pts = d.grid.points()
    ref = leak.output_values(leak.evaluate(d.solution[d.output.of], pts, d.t_out, d.dim), d.output.kind)
    comps = d.case_spec()["output"].get("components")
    got = np.column_stack([sol[c].ravel() for c in comps]) if comps else sol["u"].ravel()
    return leak.relative_gap(got, ref)


@pytest.mark.parametrize(("family", "levels"), [
    ("poisson", {"bc": "mixed", "coefficient": "variable"}),
    ("heat", {"bc": "robin"}),
    ("helmholtz", {"bc": "mixed", "wavenumber": "low"}),
    ("convection_diffusion", {"bc": "mixed", "peclet": "low", "time": "steady"}),
    ("reaction_diffusion", {"bc": "robin", "reaction": "cubic", "time": "steady"}),
    ("biharmonic", {}),
    ("wave", {"bc": "mixed"}),
    ("linear_elasticity", {"bc": "mixed", "compressibility": "compressible"}),
])
def test_unit_cube_converges_at_second_order(family: str, levels: dict[str, str], tmp_path: Path) -> None:
    """The unit-cube rows the shared matrix cannot hold (its grids are 2-D): order 2 within 0.3
    at 8 and 16 cells, the time step refined with the grid, in the track's environment."""
    src = build_source(family, "unit_cube", levels, seed=1)
    src["eval_grid"] = {"nx": 17, "ny": 17, "nz": 17}
    d = derive(CaseSource.from_dict(src))
    track = TRACKS.get("numpy")
    errors = []
    for n in (8, 16):
        settings = {**src["calibration"], "degree": 1, "cells_across": n}
        settings.pop("stabilization", None)
        if "dt" in settings:
            t = src["pde"]["time"]
            settings["dt"] = (t["t_end"] - t["t0"]) / (2 * n)
        errors.append(_cube_error(d, track.solve_directly(d.case_spec(), settings, tmp_path / str(n))))
    observed = math.log(errors[0] / errors[1]) / math.log(2)
    assert observed > 1.7, f"{family} on the unit cube: errors {errors}, observed order {observed:.2f}"


def test_the_guide_runs_as_written(tmp_path: Path) -> None:
    """Every code block of the guide, in order, in the track's interpreter; the errors it prints
    are those of second-order schemes at 32 intervals (the flow snippet's too: a staggered grid)."""
    from tests.prompts.guides import template_case

    text = TRACKS.get("numpy").resource("guide.md").read_text()
    blocks = [textwrap.dedent(b) for b in re.findall(r"```python\n(.*?)```", text, re.S)]
    assert len(blocks) >= 10
    spec = template_case("unit_square")  # the guide's session holds the case_spec solve() gets
    (tmp_path / "case_spec.json").write_text(json.dumps(spec))
    r = _run("import json\ncase_spec = json.load(open('case_spec.json'))\n" + "\n".join(blocks), tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    errors = [float(m) for m in re.findall(r"max error (?:at t \S+ )?(\S+)", r.stdout)]
    assert len(errors) == 3 and all(e < 2e-3 for e in errors), r.stdout
    [flow] = [float(m) for m in re.findall(r"velocity error (\S+)", r.stdout)]
    assert flow < 1.5e-2, r.stdout  # the MAC Stokes snippet at 32 cells (0.0096; 0.0024 at 64)
    assert np.load(tmp_path / "solution.npz")["u"].shape == (spec["eval_grid"]["ny"], spec["eval_grid"]["nx"])


def test_the_environment_has_the_listed_packages_and_no_fem_library(tmp_path: Path) -> None:
    track = TRACKS.get("numpy")
    code = ("import importlib.util, json\n"
            f"have = {[m for m, _ in track.packages]!r}\nmissing = {[m for m, _ in track.unavailable]!r}\n"
            "print(json.dumps([[m for m in have if importlib.util.find_spec(m) is None],"
            " [m for m in missing if importlib.util.find_spec(m) is not None]]))")
    r = _run(code, tmp_path)
    absent, present = json.loads(r.stdout)
    assert absent == [] and present == [], (absent, present)


@pytest.mark.parametrize(("family", "domain", "levels"), [
    ("heat", "periodic_square", {"bc": "mixed"}),
    ("poisson", "unit_cube", {"bc": "mixed"}),
])
def test_the_scaffold_samples_and_writes_the_grid_the_evaluator_reads(family: str, domain: str,
                                                                      levels: dict[str, str], tmp_path: Path) -> None:
    """The scaffold with its numerics replaced by the exact solution at the nodes (test-side
    knowledge) gives the exact field on the grid: orientation, periodic end and shape are right."""
    from casekit.expr import to_text
    from casekit.prompts import scaffold

    src = build_source(family, domain, levels, seed=2)
    src["eval_grid"] = {"nx": 13, "ny": 11} | ({"nz": 9} if domain == "unit_cube" else {})
    d = derive(CaseSource.from_dict(src))
    spec = d.case_spec()
    assert d.solution is not None
    exact = d.solution[d.output.of]
    solution = to_text(exact)
    numerics = textwrap.indent(textwrap.dedent(f"""
        node_axes = [np.linspace(bounds[2 * a], bounds[2 * a + 1], 41) for a in range(DIM)]
        mesh = np.meshgrid(*node_axes, indexing="ij")
        names = dict(zip(("x", "y", "z"), mesh))
        nodes = expression({solution!r}, **names, t={d.t_out!r})
        """), "    ")
    code = scaffold(spec, "numpy")
    code = re.sub(r"    # --- numerics: begin ---\n.*?    # --- numerics: end ---\n", lambda _: numerics, code,
                  flags=re.S)
    (tmp_path / "solver.py").write_text(code)
    (tmp_path / "case_spec.json").write_text(json.dumps(spec))
    r = _run("import json, solver\nsolver.solve(json.load(open('case_spec.json')))", tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    sol = np.load(tmp_path / "solution.npz")
    shape = (9, 11, 13) if domain == "unit_cube" else (11, 13)
    assert sol["u"].shape == shape
    ref = leak.evaluate(exact, d.grid.points(), d.t_out, d.dim)
    assert leak.relative_gap(sol["u"].ravel(), ref) < 1e-4


#: the case sources that list the track
LISTING = [p for p in sorted(Path(__file__).resolve().parents[3].glob("cases/*/*.yaml"))
           if "numpy" in (yamlio.load(p).get("tracks") or [])]


def test_the_structured_cases_of_the_track_s_families_list_it() -> None:
    track = TRACKS.get("numpy")
    for p in sorted(Path(__file__).resolve().parents[3].glob("cases/*/*.yaml")):
        data = yamlio.load(p)
        kinds = {t["kind"] for t in data.get("targets") or []}  # target values: tracks that compute them
        supported = track.supports(data["family"], data["domain"]["template"]) and kinds <= set(track.target_kinds)
        assert ("numpy" in (data.get("tracks") or [])) == supported, p.name


@pytest.mark.parametrize("path", LISTING, ids=lambda p: p.stem[:40])
def test_no_numpy_prompt_reveals_the_solution_or_the_calibration(path: Path) -> None:
    """The tiers of every case listing the track (guide and scaffold included) name neither the
    hidden solution nor the calibration, as the DOLFINx prompts are checked in tests/prompts."""
    from casekit.expr import parse, to_text
    from casekit.model.source import load_source_dict
    from casekit.prompts import render

    source = CaseSource.from_dict(load_source_dict(path))
    spec = derive(source).case_spec()
    hidden = [str(v) for value in (source.manufactured_solution or {}).values()
              for v in (value if isinstance(value, list) else [value]) if len(str(v)) > 4]
    hidden += [to_text(parse(h)) for h in hidden]
    for tier in ("single", "plan", "scaffold"):
        text = render(spec, "numpy", tier)
        assert not [h for h in hidden if h in text], f"{path.name}: the hidden solution leaks ({tier})"
        for key in ("cells_across", "e_base", "t_base", "tau_acc", "tau_time", "manufactured", "calibration"):
            assert key not in text, f"{path.name}: {key} appears ({tier})"
