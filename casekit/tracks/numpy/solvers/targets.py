"""Target values from the numpy track's node values, one function per target kind (never per family).

The track's mesh is its node grid (:class:`~casekit.tracks.numpy.solvers.box.Box`), and each kind
is computed on it with the scheme's own pieces: ``mean`` sums the node values weighted by their
dual cells (the trapezoidal rule: second order, like the scheme), ``boundary_flux`` sums
``c du/dn`` over the nodes of the tagged faces -- the outward derivative from the scheme's
one-sided second-order differences (:meth:`Box.gradient`), each node weighted by its share of the
face (:meth:`Box.face_area`) -- ``point`` is the cubic-spline interpolant the output uses
(:meth:`Box.sample`), and ``max`` is taken over the nodes and the evaluation grid's points inside
the domain (what the DOLFINx track does with its mesh nodes).  A quantity is the output field: the
unknown, a named component, or the magnitude of a vector unknown.  Transient cases take the values
at t_end (``u`` is the final state).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from casekit.registry import Registry
from casekit.tracks.numpy.solvers.box import Box

#: kind -> value(box, node values (size,) or (size, k), the case_spec entry, grid points inside)
TargetFn = Callable[[Box, np.ndarray, dict[str, Any], np.ndarray], float]
TARGETS: Registry[TargetFn] = Registry("numpy target kind")


def target(kind: str) -> Callable[[TargetFn], TargetFn]:
    def deco(fn: TargetFn) -> TargetFn:
        return TARGETS.register(kind, fn)

    return deco


def _component(box: Box, entry: dict[str, Any]) -> int | None:
    comps = box.spec["output"].get("components")
    return comps.index(entry["of"]) if comps and entry.get("of") in comps else None


def _nodal(box: Box, u: np.ndarray, entry: dict[str, Any]) -> np.ndarray:
    """The quantity at the nodes."""
    if u.ndim == 1:
        return u
    i = _component(box, entry)
    return u[:, i] if i is not None else np.linalg.norm(u, axis=1)


def _values(box: Box, u: np.ndarray, entry: dict[str, Any], points: np.ndarray) -> np.ndarray:
    """The quantity at ``points``: the components interpolated, then the magnitude taken."""
    if u.ndim == 1:
        return box.sample(u, points)
    i = _component(box, entry)
    if i is not None:
        return box.sample(u[:, i], points)
    return np.linalg.norm(np.column_stack([box.sample(u[:, k], points) for k in range(u.shape[1])]), axis=1)


@target("mean")
def mean(box: Box, u: np.ndarray, entry: dict[str, Any], grid_points: np.ndarray) -> float:
    return float(np.sum(box.volume * _nodal(box, u, entry)) / np.sum(box.volume))


@target("boundary_flux")
def boundary_flux(box: Box, u: np.ndarray, entry: dict[str, Any], grid_points: np.ndarray) -> float:
    tag = entry["boundary"]
    faces = [(a, s) for (a, s), t in box.faces.items() if t == tag]
    if not faces:
        raise ValueError(f"target {entry['name']!r}: boundary {tag!r} is no face of the box (valid: "
                         f"{', '.join(sorted(set(box.faces.values())))})")
    if u.ndim != 1:
        raise ValueError(f"target {entry['name']!r}: a boundary flux needs a scalar unknown")
    c = box.data(entry["coefficient"])
    total = 0.0
    for a, s in faces:
        nodes = box.face_nodes(a, s)
        outward = (1.0 if s else -1.0) * (box.gradient(a) @ u)[nodes]
        total += float(np.sum(c(box.points[nodes], box.t_end) * outward * box.face_area(a)[nodes]))
    return total


@target("point")
def point(box: Box, u: np.ndarray, entry: dict[str, Any], grid_points: np.ndarray) -> float:
    return float(_values(box, u, entry, np.asarray([entry["at"]], dtype=float))[0])


@target("max")
def maximum(box: Box, u: np.ndarray, entry: dict[str, Any], grid_points: np.ndarray) -> float:
    return float(max(np.max(_nodal(box, u, entry)), np.max(_values(box, u, entry, grid_points))))


def compute(box: Box, u: np.ndarray, grid_points: np.ndarray) -> dict[str, float]:
    """Every target of the case (``grid_points``: the evaluation grid's points inside the domain)."""
    return {e["name"]: TARGETS.get(e["kind"])(box, u, e, grid_points) for e in box.spec.get("targets", [])}
