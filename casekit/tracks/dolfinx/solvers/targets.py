"""Target values from a DOLFINx solution, one function per target kind (never per family).

Each takes the problem, the solved unknown and the case_spec entry of the target: integrals are
assembled on the mesh (``mean``, ``boundary_flux``), point values evaluated at the point
(``point``), maxima taken over the solution at the mesh nodes and the evaluation grid (``max``).
A quantity is the output field: the unknown itself, its magnitude (a vector unknown without
components), or a named component.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dolfinx_solver  # noqa: F401
import numpy as np
import ufl
from dolfinx import fem
from mpi4py import MPI

from casekit.registry import Registry
from casekit.tracks.dolfinx.solvers.problem import Problem
from casekit.tracks.dolfinx.solvers.sampling import evaluate

TargetFn = Callable[[Problem, Any, dict[str, Any], np.ndarray], float]
TARGETS: Registry[TargetFn] = Registry("DOLFINx target kind")

#: the target kinds this track computes (declared by the track)
KINDS = ("boundary_flux", "max", "mean", "point")


def _component(p: Problem, entry: dict[str, Any]) -> int | None:
    comps = p.spec["output"].get("components")
    return comps.index(entry["of"]) if comps and entry.get("of") in comps else None


def _ufl_quantity(p: Problem, u: Any, entry: dict[str, Any]) -> Any:
    i = _component(p, entry)
    if i is not None:
        return u[i]
    return ufl.sqrt(ufl.inner(u, u)) if u.ufl_shape else u


def _values(p: Problem, u: Any, entry: dict[str, Any], points: np.ndarray) -> np.ndarray:
    v = evaluate(u, points)
    i = _component(p, entry)
    if v.ndim == 2:
        return v[:, i] if i is not None else np.linalg.norm(v, axis=1)
    return v


def _assemble(form: Any) -> float:
    return float(fem.assemble_scalar(fem.form(form)))


def target(kind: str) -> Callable[[TargetFn], TargetFn]:
    def deco(fn: TargetFn) -> TargetFn:
        return TARGETS.register(kind, fn)

    return deco


@target("mean")
def mean(p: Problem, u: Any, entry: dict[str, Any], grid_points: np.ndarray) -> float:
    one = fem.Constant(p.mesh, 1.0)
    return _assemble(_ufl_quantity(p, u, entry) * p.dx) / _assemble(one * p.dx)


@target("boundary_flux")
def boundary_flux(p: Problem, u: Any, entry: dict[str, Any], grid_points: np.ndarray) -> float:
    c = p.ufl(entry["coefficient"])
    return _assemble(c * ufl.dot(ufl.grad(u), p.n) * p.ds_tag(entry["boundary"]))


@target("point")
def point(p: Problem, u: Any, entry: dict[str, Any], grid_points: np.ndarray) -> float:
    return float(_values(p, u, entry, np.asarray([entry["at"]], dtype=float))[0])


@target("max")
def maximum(p: Problem, u: Any, entry: dict[str, Any], grid_points: np.ndarray) -> float:
    nodes = p.mesh.geometry.x[:, : p.dim]
    inside = p.domain.inside(nodes)
    pts = np.concatenate([nodes[inside], grid_points])
    return float(np.max(_values(p, u, entry, pts)))


def compute(p: Problem, u: Any, grid_points: np.ndarray) -> dict[str, float]:
    """Every target of the case (the problem's time is t_end after a transient solve)."""
    assert MPI.COMM_WORLD.size == 1
    return {e["name"]: TARGETS.get(e["kind"])(p, u, e, grid_points) for e in p.spec.get("targets", [])}
