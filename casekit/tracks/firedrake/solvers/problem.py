"""What every Firedrake calibration solver needs from a case_spec: mesh, expressions, BCs, sampling."""

from __future__ import annotations

from typing import Any

import firedrake as fd
import numpy as np
import ufl

from casekit.expr.syntax import as_tree
from casekit.solvers.settings import SolveSettings
from casekit.solvers.ufl_expr import to_ufl
from casekit.tracks.firedrake.solvers import MESH

#: Newton with a direct solve (MUMPS through PETSc): one iteration for linear problems; MUMPS
#: detects null pivots (ICNTL 24), so a pressure known up to a constant (with its null space
#: given to the solver) factorises stably instead of stalling Newton at 1e-4
NEWTON = {"snes_type": "newtonls", "snes_linesearch_type": "basic", "snes_rtol": 1e-10, "snes_atol": 1e-12,
          "snes_max_it": 30, "ksp_type": "preonly", "pc_type": "lu", "pc_factor_mat_solver_type": "mumps",
          "mat_mumps_icntl_24": 1}


def curved(mesh: Any, order: int, case_spec: dict[str, Any]) -> Any:
    """The mesh with a degree-``order`` coordinate field whose boundary nodes on a curved piece of
    the domain (from casekit's domain registry) are moved onto its exact curve by the piece's own
    projection (the gmsh file has straight-sided cells)."""
    from casekit.domains import resolve

    dom = case_spec["domain"]
    geometry = resolve(dom["type"], dom["geometry_params"], validated=True).geometry
    pieces = [p.segment for p in geometry.pieces()] if order >= 2 and geometry.curved() else []
    curves = [s for s in pieces if s.curved]
    if not curves:
        return mesh
    V = fd.VectorFunctionSpace(mesh, "CG", order)
    X = fd.Function(V).interpolate(ufl.SpatialCoordinate(mesh))
    nodes = fd.DirichletBC(V, ufl.as_vector([0.0, 0.0]), "on_boundary").nodes
    xy = X.dat.data_ro_with_halos[nodes].copy()
    h = float(mesh.cell_sizes.dat.data_ro.max())
    # a node on a chord of a curve lies within the chord's sagitta (< h^2 / 8 rho, rho the
    # smallest radius of curvature) of it, and nearer to it than to any other piece; nodes of
    # straight parts near a curve are farther (~h/2) unless they are on it
    distances = np.array([s.distance(xy) for s in pieces])
    nearest = np.argmin(distances, axis=0)
    for s in curves:
        a, b = (float(v) for v in (s.chart() or {})["semi_axes"])
        rho = min(a, b) ** 2 / max(a, b)
        k = pieces.index(s)
        near = (nearest == k) & (distances[k] < 1.5 * h * h / (8 * rho) + 1e-12 * rho)
        xy[near] = s.project(xy[near])
    X.dat.data_with_halos[nodes] = xy
    return fd.Mesh(X)


#: PeriodicRectangleMesh's markers (the periodic pairs' markers have no facets)
PERIODIC_MARKERS = {"left": 1, "right": 2, "bottom": 3, "top": 4}


def periodic_mesh(case_spec: dict[str, Any], settings: SolveSettings) -> tuple[Any, dict[str, int]]:
    """The periodic square as Firedrake's own periodic mesh (a gmsh-read mesh cannot be made
    periodic): the same rectangle, the pairs the case uses, h = diameter / cells_across."""
    x0, x1, y0, y1 = (float(v) for v in case_spec["domain"]["geometry_params"]["bounds"])
    pairs = {frozenset(pair["tags"]) for pair in case_spec["bc"]["periodic"]}
    x_pair, y_pair = frozenset({"left", "right"}) in pairs, frozenset({"bottom", "top"}) in pairs
    direction = "both" if x_pair and y_pair else ("x" if x_pair else "y")
    lx, ly = x1 - x0, y1 - y0
    h = float(np.hypot(lx, ly)) / settings.cells_across
    mesh = fd.PeriodicRectangleMesh(max(3, round(lx / h)), max(3, round(ly / h)), lx, ly, direction=direction,
                                    quadrilateral=settings.cell == "quad")
    mesh.coordinates.dat.data[:] += np.array([x0, y0])
    return mesh, dict(PERIODIC_MARKERS)


class Problem:
    def __init__(self, case_spec: dict[str, Any], settings: dict[str, Any]) -> None:
        self.spec = case_spec
        self.settings = SolveSettings.for_case(settings, case_spec)
        self.dim = int(case_spec["domain"]["dim"])
        self.ids = {tag: i for i, tag in enumerate(case_spec["domain"]["boundary_tags"], start=1)}
        if case_spec["bc"].get("periodic"):
            self.mesh, self.ids = periodic_mesh(case_spec, self.settings)
        else:
            self.mesh = curved(fd.Mesh(MESH), self.settings.geometry, case_spec)
        self.x = ufl.SpatialCoordinate(self.mesh)
        time = case_spec["pde"].get("time")
        self.transient = time is not None
        self.t0 = float(time["t0"]) if time else 0.0
        self.t_end = float(time["t_end"]) if time else 0.0
        self.t = fd.Constant(self.t0)
        self.n = ufl.FacetNormal(self.mesh)
        self.h = ufl.CellDiameter(self.mesh)
        self.params = NEWTON | {"snes_rtol": self.settings.newton_rtol,
                                "snes_max_it": self.settings.max_newton_iterations}

    # -- expressions -------------------------------------------------------------------------
    def ufl(self, value: Any, symbols: dict[str, Any] | None = None, t: Any = None) -> Any:
        params = tuple(symbols or ())
        parts = value if isinstance(value, list) else [value]
        trees = [as_tree(v, variables=("x", "y", "z", "t"), params=params) for v in parts]
        out = [to_ufl(s, self.x, self.t if t is None else t, symbols) for s in trees]
        return ufl.as_vector(out) if isinstance(value, list) else ufl.as_ufl(out[0])

    def param(self, name: str, symbols: dict[str, Any] | None = None, t: Any = None) -> Any:
        return self.ufl(self.spec["pde"]["params"][name], symbols, t)

    def forcing(self, t: Any = None) -> Any:
        return self.ufl(self.spec["pde"]["forcing"]["f"], t=t)

    # -- boundary ----------------------------------------------------------------------------
    def entries(self, kind: str) -> list[dict[str, Any]]:
        return list(self.spec["bc"].get(kind, []))

    def ds(self, tag: str) -> Any:
        return ufl.ds(self.ids[tag], domain=self.mesh)

    def dirichlets(self, space: Any, key: str = "value", scale: float = 1.0) -> list[Any]:
        return [fd.DirichletBC(space, scale * self.ufl(e[key]), self.ids[e["tag"]]) for e in self.entries("dirichlet")]

    def natural(self, u: Any, v: Any, t: Any = None) -> Any:
        """Robin alpha u v minus Neumann/Robin data g v on their parts (0 when none)."""
        form = 0
        for e in self.entries("neumann"):
            form -= ufl.inner(self.ufl(e["value"], t=t), v) * self.ds(e["tag"])
        for e in self.entries("robin"):
            form += (float(e["alpha"]) * u - self.ufl(e["value"], t=t)) * v * self.ds(e["tag"])
        return form

    def periodic(self) -> bool:
        return bool(self.spec["bc"].get("periodic"))

    # -- solving -----------------------------------------------------------------------------
    def newton(self, F: Any, u: Any, bcs: list[Any], nullspace: Any = None) -> int:
        problem = fd.NonlinearVariationalProblem(F, u, bcs)
        solver = fd.NonlinearVariationalSolver(problem, solver_parameters=self.params, nullspace=nullspace)
        solver.solve()
        return int(solver.snes.getIterationNumber())

    def time_steps(self) -> tuple[int, float]:
        return self.settings.steps(self.t0, self.t_end)

    # -- output ------------------------------------------------------------------------------
    def sample(self, u: Any, pts: np.ndarray) -> np.ndarray:
        """u at the grid points; points just outside the straight-sided mesh (inside a curved
        boundary) take the value at the nearest mesh vertex."""
        shape = u.ufl_shape
        evaluator = fd.PointEvaluator(self.mesh, pts, missing_points_behaviour="ignore")
        out = np.asarray(evaluator.evaluate(u), dtype=float).reshape((len(pts), *shape))
        missing = np.flatnonzero(~np.isfinite(out.reshape(len(pts), -1)).all(axis=1))
        if len(missing):
            from scipy.spatial import cKDTree

            P1 = fd.VectorFunctionSpace(self.mesh, "CG", 1, dim=shape[0]) if shape else fd.FunctionSpace(self.mesh,
                                                                                                          "CG", 1)
            nodal = fd.Function(P1).interpolate(u)
            coords = fd.Function(fd.VectorFunctionSpace(self.mesh, "CG", 1)).interpolate(self.x).dat.data_ro
            _, nearest = cKDTree(coords).query(pts[missing])
            out[missing] = nodal.dat.data_ro[nearest]
        return out
