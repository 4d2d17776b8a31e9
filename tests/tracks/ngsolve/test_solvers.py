"""The NGSolve solvers' building blocks, in the track's interpreter: expressions become compiled
coefficient functions without sympy, each special factorisation solves the whole system it stands
for, a Jacobian's data-free form linearises as the residual's, and modified Newton converges to
standard Newton's field with fewer factorisations."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

from casekit.derive import derive
from casekit.model.source import CaseSource
from casekit.tracks import TRACKS
from tests.helpers import build_source

pytestmark = pytest.mark.ngsolve

ROOT = str(Path(__file__).resolve().parents[3])


def run(code: str, tmp_path: Path) -> dict:  # type: ignore[type-arg]
    out = TRACKS.get("ngsolve")._run_python(textwrap.dedent(code), tmp_path, path=ROOT)  # type: ignore[attr-defined]
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


_COEFFICIENTS = """
    import json
    import numpy as np, ngsolve as ng
    from casekit.expr.syntax import as_tree
    from casekit.expr.tree import evaluate
    from casekit.tracks.ngsolve.solvers.coefficients import to_cfs

    texts = ["exp(-7*t/4)*cos(17*pi*x/20 + 11*pi*y/10) - 3*x**2*exp(-7*t/4)*cos(17*pi*x/20 + 11*pi*y/10)/125",
             "abs(x - 0.5) + sign(y - 0.3) + min(x, y, 0.4) + max(x, y) + sinh(x) + cosh(y) + tanh(x - y)",
             "sqrt(x + 1)*log(2 + y) + atan2(y, x + 1) + x**(-2)*(1 + x)**0.5 + (x + 2)**1.5 + asin(x/2)"
             " + acos(y/2) + atan(x) + tan(y/2)",
             "2*pi**2/3 - sin(1)"]
    names = ("x", "y", "t")
    trees = [as_tree(s, variables=names) for s in texts]
    cfs = to_cfs(trees, (ng.x, ng.y, ng.z), ng.Parameter(0.3))
    mesh = ng.Mesh(ng.unit_square.GenerateMesh(maxh=0.2))
    pts = np.array([[0.2, 0.7], [0.9, 0.1], [0.55, 0.45]])
    worst = 0.0
    for tree, cf in zip(trees, cfs):
        want = evaluate(tree, {"x": pts[:, 0], "y": pts[:, 1], "t": 0.3}) * np.ones(len(pts))
        got = np.array([cf(mesh(*q)) if isinstance(cf, ng.CoefficientFunction) else cf for q in pts])
        worst = max(worst, float(np.max(np.abs(got - want) / np.maximum(1.0, np.abs(want)))))
    # a subtree written twice (here a whole tree, parsed from two texts) is one object
    same = to_cfs([trees[0], as_tree("(" + texts[0] + ")", variables=names)], (ng.x, ng.y, ng.z), ng.Parameter(0.3))
    print(json.dumps({"worst": worst, "folded": isinstance(cfs[3], float), "shared": same[0] is same[1]}))
"""


def test_expressions_become_shared_coefficients(tmp_path: Path) -> None:
    """Expressions as NGSolve evaluates them agree with casekit's numpy evaluation; numbers are
    folded, and equal subtrees are one object (compiled, evaluated once per point)."""
    out = run(_COEFFICIENTS, tmp_path)
    assert out["worst"] < 1e-13, out
    assert out["folded"] and out["shared"], out


_FACTORISATIONS = """
    import json
    import numpy as np, ngsolve as ng
    from casekit.tracks.ngsolve.solvers.families.wave import Split
    from casekit.tracks.ngsolve.solvers.linalg import Direct, MeanFree, pressure_constant

    def gap(mat, space, special):
        r = mat.CreateColVector()
        r.FV().NumPy()[:] = np.random.default_rng(1).standard_normal(len(r))
        x, y = r.CreateVector(), r.CreateVector()
        Direct(mat, space, False, "whole").solve(r, x)
        special.solve(r, y)
        return float(np.linalg.norm(x.FV().NumPy() - y.FV().NumPy()) / np.linalg.norm(x.FV().NumPy()))

    mesh = ng.Mesh(ng.unit_square.GenerateMesh(maxh=0.15))
    out = {}
    # Taylor-Hood with convection (nonsymmetric), the pressure's mean by a multiplier
    V = ng.VectorH1(mesh, order=2, dirichlet="left|right|top|bottom")
    X = V * ng.H1(mesh, order=1) * ng.NumberSpace(mesh)
    (u, p, lam), (v, q, mu) = X.TnT()
    a = ng.BilinearForm((ng.InnerProduct(ng.Grad(u), ng.Grad(v)) + ng.InnerProduct(ng.Grad(u) * ng.CF((3, 1)), v)
                         - p * ng.div(v) - q * ng.div(u) + p * mu + q * lam) * ng.dx).Assemble()
    split = MeanFree(a.mat, X, False, "stokes", multiplier=X.Range(2).start, constant=pressure_constant(X, 1))
    out["mean"] = gap(a.mat, X, split)
    # the wave step's first-order system
    fes = ng.H1(mesh, order=2, dirichlet="left|bottom")
    W = fes * fes
    (u, w), (v, z) = W.TnT()
    dt, c2 = 0.01, 2.5
    a = ng.BilinearForm(((u / dt - 0.5 * w) * z + w / dt * v + 0.5 * c2 * ng.grad(u) * ng.grad(v)) * ng.dx).Assemble()
    out["wave"] = gap(a.mat, W, Split(a.mat, W, False, "wave", scalar=fes, c2=c2, dt=dt))
    print(json.dumps(out))
"""


def test_each_special_factorisation_solves_the_whole_system(tmp_path: Path) -> None:
    """The multiplier of the pressure's mean eliminated (MeanFree) and the wave step split in two
    SPD systems (Split) give the whole system's UMFPACK solution, to rounding."""
    out = run(_FACTORISATIONS, tmp_path)
    assert out["mean"] < 1e-9 and out["wave"] < 1e-9, out


_JACOBIAN = """
    import json
    import numpy as np, ngsolve as ng
    from casekit.tracks.ngsolve.solvers.problem import Problem

    p = Problem(json.load(open("case_spec.json")), {"degree": 2, "cells_across": 8})
    fes = p.space(2, vector=True)
    u, v = fes.TnT()

    def form(f):  # one integral: its rule depends on which proxies it holds
        a = ng.BilinearForm(fes)
        a += (ng.InnerProduct(ng.Sym(ng.Grad(u)), ng.Sym(ng.Grad(v))) + ng.div(u) * ng.div(v)
              - ng.InnerProduct(f, v)) * ng.dx
        return a

    gfu = ng.GridFunction(fes)
    p.set_dirichlet(gfu)
    x = gfu.vec.CreateVector()
    x.FV().NumPy()[:] = np.random.default_rng(2).standard_normal(len(x))
    products = []
    for f in (p.forcing(), p.zero(2)):
        a = form(f)
        a.AssembleLinearization(gfu.vec)
        y = x.CreateVector()
        y.data = a.mat * x
        products.append(y.FV().NumPy().copy())
    print(json.dumps({"gap": float(np.linalg.norm(products[0] - products[1]) / np.linalg.norm(products[0]))}))
"""


def test_a_jacobians_data_free_form_linearises_as_the_residuals(tmp_path: Path) -> None:
    """On a curved domain (where integration rules matter), the form with the data zero
    (Problem.zero) has the residual form's Jacobian to rounding."""
    src = build_source("linear_elasticity", "annulus", {}, 1)
    (tmp_path / "case_spec.json").write_text(json.dumps(derive(CaseSource.from_dict(src)).case_spec()))
    assert run(_JACOBIAN, tmp_path)["gap"] < 1e-13


_NEWTON = """
    import json, sys
    import numpy as np
    from casekit.tracks.ngsolve.solvers import FAMILY_SOLVERS
    from casekit.tracks.ngsolve.solvers.problem import Problem

    spec = json.load(open("case_spec.json"))
    out = {}
    for kind in ("standard", "modified"):
        p = Problem(spec, {**json.load(open("settings.json")), "newton": kind})
        u, info = FAMILY_SOLVERS.get(spec["pde"]["type"])(p)
        out[kind] = {"u": list(u.vec.FV().NumPy()), "factorizations": info["factorizations"]}
    out["sympy"] = "sympy" in sys.modules
    print(json.dumps(out))
"""


def test_modified_newton_keeps_its_factorisation_and_finds_the_same_field(tmp_path: Path) -> None:
    """A Burgers solve (Newton in every time step) with modified Newton: standard Newton's field,
    fewer factorisations; neither imports sympy (0.3 s of every timed run)."""
    src = build_source("burgers", "unit_square", {}, 1)
    t = src["pde"]["time"]
    settings = {**src["calibration"], "cells_across": 12, "dt": (t["t_end"] - t["t0"]) / 8}
    (tmp_path / "case_spec.json").write_text(json.dumps(derive(CaseSource.from_dict(src)).case_spec()))
    (tmp_path / "settings.json").write_text(json.dumps(settings))
    out = run(_NEWTON, tmp_path)
    standard, modified = (np.array(out[k]["u"]) for k in ("standard", "modified"))
    assert np.linalg.norm(modified - standard) <= 1e-8 * np.linalg.norm(standard)
    counts = {k: out[k]["factorizations"] for k in ("standard", "modified")}
    assert counts["modified"] < counts["standard"], counts
    assert not out["sympy"]


_CONTINUATION = """
    import json
    import numpy as np
    from casekit.tracks.ngsolve.solvers import FAMILY_SOLVERS
    from casekit.tracks.ngsolve.solvers.families import flow
    from casekit.tracks.ngsolve.solvers.problem import Problem

    spec = json.load(open("case_spec.json"))
    out = {}
    for direct in (flow.DIRECT_ITERATIONS, 1):  # one Newton step at nu cannot converge: continuation
        flow.DIRECT_ITERATIONS = direct
        p = Problem(spec, {"degree": 2, "cells_across": 10})
        u, info = FAMILY_SOLVERS.get("navier_stokes")(p)
        out[direct] = {"u": list(u.vec.FV().NumPy()), "levels": info["continuation_levels"]}
    print(json.dumps(out))
"""


def test_navier_stokes_falls_back_to_continuation_and_finds_the_same_field(tmp_path: Path) -> None:
    src = build_source("navier_stokes", "unit_square", {"reynolds": "medium"}, 1)
    (tmp_path / "case_spec.json").write_text(json.dumps(derive(CaseSource.from_dict(src)).case_spec()))
    out = run(_CONTINUATION, tmp_path)
    (direct, one) = out.values()
    assert direct["levels"] == 1 and one["levels"] > 1, out
    a, b = np.array(direct["u"]), np.array(one["u"])
    assert np.linalg.norm(a - b) <= 1e-8 * np.linalg.norm(a)


_KRYLOV = """
    import json
    import numpy as np
    from casekit.tracks.ngsolve.solvers import FAMILY_SOLVERS, linalg, newton
    from casekit.tracks.ngsolve.solvers.problem import Problem

    krylov, out = newton.krylov, {}
    for name in ("poisson", "helmholtz"):
        spec = json.load(open(f"{name}.json"))
        runs = {}
        for mode in ("direct", "krylov", "capped"):
            newton.krylov = (lambda *args: False) if mode == "direct" else krylov
            linalg.CG_MAX_IT = linalg.GMRES_MAX_IT = 1 if mode == "capped" else 500
            p = Problem(spec, {"degree": 2, "cells_across": 6})
            u, _ = FAMILY_SOLVERS.get(spec["pde"]["type"])(p)
            runs[mode] = {"u": list(u.vec.FV().NumPy()), "info": p.linear_solver_info()}
        out[name] = runs
    print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def krylov_runs(tmp_path_factory: pytest.TempPathFactory) -> dict:  # type: ignore[type-arg]
    """A 3-D P2 Poisson (SPD: CG) and Helmholtz (GMRES) calibration solved three ways: factorised,
    by the Krylov path, and by it with an iteration cap of one."""
    tmp_path = tmp_path_factory.mktemp("krylov")
    for family in ("poisson", "helmholtz"):
        src = build_source(family, "unit_cube", {}, 1)
        (tmp_path / f"{family}.json").write_text(json.dumps(derive(CaseSource.from_dict(src)).case_spec()))
    return run(_KRYLOV, tmp_path)


@pytest.mark.parametrize("family", ["poisson", "helmholtz"])
def test_a_3d_system_solved_once_goes_through_the_krylov_path_to_the_direct_field(krylov_runs: dict,  # type: ignore[type-arg]
                                                                                  family: str) -> None:
    runs = krylov_runs[family]
    info = runs["krylov"]["info"]
    assert info["preconditioner"] == "multigrid" and info["linear_iterations"] > 1, info
    assert "fallback" not in info, info
    assert runs["direct"]["info"] == {}
    direct, krylov = np.array(runs["direct"]["u"]), np.array(runs["krylov"]["u"])
    assert np.linalg.norm(krylov - direct) <= 1e-8 * np.linalg.norm(direct)


@pytest.mark.parametrize("family", ["poisson", "helmholtz"])
def test_a_krylov_solve_that_fails_its_check_falls_back_to_the_factorisation(krylov_runs: dict,  # type: ignore[type-arg]
                                                                            family: str) -> None:
    """One iteration cannot meet the residual check: the factorisation solves instead, and says so."""
    runs = krylov_runs[family]
    info = runs["capped"]["info"]
    assert info["linear_iterations"] == 1 and "relative residual" in info.get("fallback", ""), info
    direct, capped = np.array(runs["direct"]["u"]), np.array(runs["capped"]["u"])
    assert np.linalg.norm(capped - direct) <= 1e-12 * np.linalg.norm(direct)


_WHOLE_POWERS = """
    import json
    import numpy as np, ngsolve as ng
    from casekit.expr.syntax import as_tree
    from casekit.tracks.ngsolve.solvers.coefficients import to_cfs

    mesh = ng.Mesh(ng.unit_square.GenerateMesh(maxh=0.3))
    fes = ng.H1(mesh, order=1)
    u, v = fes.TnT()
    out = {}
    for text in ("u**3.0", "u**3"):
        (cf,) = to_cfs([as_tree(text, variables=("x", "y", "t"), params=("u",))], (ng.x, ng.y, ng.z), symbols={"u": u})
        a = ng.BilinearForm(cf * v * ng.dx)
        gfu = ng.GridFunction(fes)
        gfu.Set(-1.0)
        a.AssembleLinearization(gfu.vec)
        out[text] = bool(np.all(np.isfinite(a.mat.AsVector().FV().NumPy())))
    print(json.dumps(out))
"""


def test_a_whole_number_written_as_a_float_is_an_integer_power(tmp_path: Path) -> None:
    """u**3.0 linearises at a negative u as u**3 does (NGSolve's real power differentiates to NaN
    there: a reaction written with a float exponent broke Newton)."""
    assert run(_WHOLE_POWERS, tmp_path) == {"u**3.0": True, "u**3": True}
