"""Target values from a Firedrake solution, one function per target kind (never per family).

Each takes the problem, the solved Function and the case_spec entry of the target: integrals are
assembled on the mesh (``mean``: the quantity over ``dx`` over the measure; ``boundary_flux``:
``c grad(u) . n`` over ``ds`` of the part's boundary id, ``n`` the ``FacetNormal``, outward on
exterior facets), point values evaluated by Firedrake's ``PointEvaluator`` (:meth:`Problem.sample`),
maxima taken over the mesh's coordinate nodes inside the domain and the evaluation grid's points
inside it (as the DOLFINx track does).  A quantity is the output field: the unknown, a named
component, or the magnitude of a vector unknown.  Transient cases take the values at t_end (``u``
is the final state; coefficients are evaluated at t_end).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import firedrake as fd
import numpy as np
import ufl

from casekit.registry import Registry
from casekit.tracks.firedrake.solvers.problem import Problem

#: kind -> value(problem, solution, the case_spec entry, grid points inside the domain)
TargetFn = Callable[[Problem, Any, dict[str, Any], np.ndarray], float]
TARGETS: Registry[TargetFn] = Registry("Firedrake target kind")


def target(kind: str) -> Callable[[TargetFn], TargetFn]:
    def deco(fn: TargetFn) -> TargetFn:
        return TARGETS.register(kind, fn)

    return deco


def _component(p: Problem, entry: dict[str, Any]) -> int | None:
    comps = p.spec["output"].get("components")
    return comps.index(entry["of"]) if comps and entry.get("of") in comps else None


def _ufl_quantity(p: Problem, u: Any, entry: dict[str, Any]) -> Any:
    i = _component(p, entry)
    if i is not None:
        return u[i]
    return ufl.sqrt(ufl.inner(u, u)) if u.ufl_shape else u


def _values(p: Problem, u: Any, entry: dict[str, Any], points: np.ndarray) -> np.ndarray:
    v = p.sample(u, points)
    if v.ndim == 2:
        i = _component(p, entry)
        return v[:, i] if i is not None else np.linalg.norm(v, axis=1)
    return v


def _measure(p: Problem, kind: Callable[..., Any], *args: Any) -> Any:
    """``dx``/``ds`` on the mesh with a quadrature that integrates the square of the solution's
    polynomials exactly (a magnitude's square root would otherwise ask for a huge degree)."""
    return kind(*args, domain=p.mesh, metadata={"quadrature_degree": 2 * p.settings.degree + 2})


@target("mean")
def mean(p: Problem, u: Any, entry: dict[str, Any], grid_points: np.ndarray) -> float:
    dx = _measure(p, ufl.dx)
    return float(fd.assemble(_ufl_quantity(p, u, entry) * dx) / fd.assemble(fd.Constant(1.0) * dx))


@target("boundary_flux")
def boundary_flux(p: Problem, u: Any, entry: dict[str, Any], grid_points: np.ndarray) -> float:
    tag = entry["boundary"]
    if tag not in p.ids:
        raise ValueError(f"target {entry['name']!r}: the mesh has no boundary part {tag!r} "
                         f"(valid: {', '.join(sorted(p.ids))})")
    if u.ufl_shape:
        raise ValueError(f"target {entry['name']!r}: a boundary flux needs a scalar unknown")
    c = p.ufl(entry["coefficient"], t=fd.Constant(p.t_end))
    return float(fd.assemble(c * ufl.dot(ufl.grad(u), p.n) * _measure(p, ufl.ds, p.ids[tag])))


@target("point")
def point(p: Problem, u: Any, entry: dict[str, Any], grid_points: np.ndarray) -> float:
    return float(_values(p, u, entry, np.asarray([entry["at"]], dtype=float))[0])


@target("max")
def maximum(p: Problem, u: Any, entry: dict[str, Any], grid_points: np.ndarray) -> float:
    from casekit.domains import resolve

    dom = p.spec["domain"]
    nodes = np.asarray(p.mesh.coordinates.dat.data_ro, dtype=float).reshape(-1, p.dim)
    nodes = nodes[resolve(dom["type"], dom["geometry_params"], validated=True).inside(nodes)]
    return float(np.max(_values(p, u, entry, np.concatenate([nodes, grid_points]))))


def compute(p: Problem, u: Any, grid_points: np.ndarray) -> dict[str, float]:
    """Every target of the case (``grid_points``: the evaluation grid's points inside the domain)."""
    return {e["name"]: TARGETS.get(e["kind"])(p, u, e, grid_points) for e in p.spec.get("targets", [])}
