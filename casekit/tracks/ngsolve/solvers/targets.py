"""Target values from an NGSolve solution, one function per target kind (never per family).

Each takes the problem, the solved GridFunction and the case_spec entry of the target:

* ``mean``: ``Integrate`` of the quantity over the (curved) mesh over that of 1;
* ``boundary_flux``: ``c grad(u) . n`` integrated over the element boundaries of the volume
  elements (``dx(element_boundary=True)``, where ``specialcf.normal`` is each element's outward
  normal and ``grad`` the full volume gradient), weighted by the indicator of the tagged part's
  facets (a lowest-order ``FacetFESpace`` function set to 1 there).  On boundary elements
  themselves (``ds``) NGSolve's ``grad`` of an H1 function is the tangential trace gradient, and
  the normal of a boundary element follows the element's orientation (inward on a hole cut from
  the face): neither gives the outward flux;
* ``point``: the GridFunction evaluated at the point (:meth:`Problem.sample`);
* ``max``: over the mesh vertices inside the domain and the evaluation grid's points inside it (as
  the DOLFINx track takes its mesh nodes and the grid).

A quantity is the output field: the unknown, a named component, or the magnitude of a vector
unknown.  Transient cases take the values at t_end (``u`` is the final state; coefficients are
evaluated at t_end).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ngsolve as ng
import numpy as np

from casekit.registry import Registry
from casekit.tracks.ngsolve.solvers.problem import Problem

#: kind -> value(problem, solution, the case_spec entry, grid points inside the domain)
TargetFn = Callable[[Problem, Any, dict[str, Any], np.ndarray], float]
TARGETS: Registry[TargetFn] = Registry("NGSolve target kind")


def target(kind: str) -> Callable[[TargetFn], TargetFn]:
    def deco(fn: TargetFn) -> TargetFn:
        return TARGETS.register(kind, fn)

    return deco


def _component(p: Problem, entry: dict[str, Any]) -> int | None:
    comps = p.spec["output"].get("components")
    return comps.index(entry["of"]) if comps and entry.get("of") in comps else None


def _cf(p: Problem, u: Any, entry: dict[str, Any]) -> Any:
    """The quantity as a CoefficientFunction."""
    i = _component(p, entry)
    if i is not None:
        return u[i]
    return ng.Norm(u) if u.dim > 1 else u


def _values(p: Problem, u: Any, entry: dict[str, Any], points: np.ndarray) -> np.ndarray:
    v = p.sample(u, points)
    if v.ndim == 2:
        i = _component(p, entry)
        return v[:, i] if i is not None else np.linalg.norm(v, axis=1)
    return v


def _order(p: Problem) -> int:
    """An integration order that integrates the square of the solution's polynomials exactly."""
    return 2 * p.settings.degree + 2


@target("mean")
def mean(p: Problem, u: Any, entry: dict[str, Any], grid_points: np.ndarray) -> float:
    order = _order(p)
    return float(ng.Integrate(_cf(p, u, entry), p.mesh, order=order) / ng.Integrate(ng.CF(1.0), p.mesh, order=order))


@target("boundary_flux")
def boundary_flux(p: Problem, u: Any, entry: dict[str, Any], grid_points: np.ndarray) -> float:
    tag = entry["boundary"]
    tags = sorted(set(p.mesh.GetBoundaries()))
    if tag not in tags:
        raise ValueError(f"target {entry['name']!r}: the mesh has no boundary part {tag!r} (valid: {', '.join(tags)})")
    if u.dim != 1:
        raise ValueError(f"target {entry['name']!r}: a boundary flux needs a scalar unknown")
    on_part = ng.GridFunction(ng.FacetFESpace(p.mesh, order=0))
    on_part.Set(1.0, ng.BND, definedon=p.mesh.Boundaries(tag))
    c = p.cf(entry["coefficient"], t=ng.Parameter(p.t_end))
    flux = on_part * c * ng.InnerProduct(ng.grad(u), p.n)
    return float(ng.Integrate(flux * ng.dx(element_boundary=True, bonus_intorder=_order(p)), p.mesh))


@target("point")
def point(p: Problem, u: Any, entry: dict[str, Any], grid_points: np.ndarray) -> float:
    return float(_values(p, u, entry, np.asarray([entry["at"]], dtype=float))[0])


@target("max")
def maximum(p: Problem, u: Any, entry: dict[str, Any], grid_points: np.ndarray) -> float:
    from casekit.domains import resolve

    dom = p.spec["domain"]
    nodes = np.array([v.point for v in p.mesh.vertices])[:, : p.dim]
    nodes = nodes[resolve(dom["type"], dom["geometry_params"], validated=True).inside(nodes)]
    return float(np.max(_values(p, u, entry, np.concatenate([nodes, grid_points]))))


def compute(p: Problem, u: Any, grid_points: np.ndarray) -> dict[str, float]:
    """Every target of the case (``grid_points``: the evaluation grid's points inside the domain)."""
    return {e["name"]: TARGETS.get(e["kind"])(p, u, e, grid_points) for e in p.spec.get("targets", [])}
