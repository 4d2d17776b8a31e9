"""The case's domain as netgen OCC geometry, from casekit's domain registry.

The geometry is the registry's own (the same loops of lines and circular arcs, the same boundary
tags, the periodic pairs the case uses): lines become OCC segments, circular and elliptic arcs trimmed
OCC ellipses (a closed curve two halves), holes are cut from the outer face, and every edge is named by the tag of the
piece it lies on.  netgen meshes it, and ``Mesh.Curve`` makes the cells follow the exact curves.
The unit cube is an OCC box with its faces named as the registry's.  A rectangle or box without
holes, periodic sides or refine points is not sent to netgen at all: :mod:`.structured` grids it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from netgen import occ

from casekit.domains import resolve
from casekit.domains.geometry import Arc, Box, EllipticArc, Line
from casekit.tracks.ngsolve.solvers import MESHING_2D
from casekit.tracks.ngsolve.solvers.structured import structured_mesh

AXES = {0: occ.X, 1: occ.Y, 2: occ.Z}


def _pnt(p: Any) -> Any:
    return occ.Pnt(float(p[0]), float(p[1]), 0.0)


def _line(s: Line) -> list[Any]:
    return [occ.Segment(_pnt(s.a), _pnt(s.b))]


def _conic(s: Arc | EllipticArc) -> list[Any]:
    """The arc on OCC's own ellipse (a circle when the semi-axes are equal): exact, and
    ``Mesh.Curve`` follows it; a closed curve as two halves."""
    (cx, cy), (a, b) = s.center, s.semi_axes
    if a >= b:
        curve, shift = occ.Ellipse(occ.gp_Ax2d(occ.gp_Pnt2d(cx, cy), occ.gp_Dir2d(1, 0)), a, b), 0.0
    else:  # OCC's major axis along y: its parameter is ours minus pi/2
        curve, shift = occ.Ellipse(occ.gp_Ax2d(occ.gp_Pnt2d(cx, cy), occ.gp_Dir2d(0, 1)), b, a), -math.pi / 2
    lo = min(s.start_angle, s.start_angle + s.sweep) + shift
    parts = 2 if abs(abs(s.sweep) - 2 * math.pi) < 1e-9 else 1
    step = abs(s.sweep) / parts
    return [curve.Trim(lo + k * step, lo + (k + 1) * step).Edge() for k in range(parts)]


#: segment type -> its OCC edges (a segment type without an entry cannot be meshed here)
EDGES: dict[type, Callable[[Any], list[Any]]] = {Line: _line, Arc: _conic, EllipticArc: _conic}


def _wire(loop: Any) -> Any:
    edges = []
    for piece in loop.pieces:
        make = EDGES.get(type(piece.segment))
        if make is None:
            raise ValueError(f"the NGSolve track cannot build a {type(piece.segment).__name__} segment")
        edges.extend(make(piece.segment))
    return occ.Wire(edges)


def periodic_pairs(case_spec: dict[str, Any], geometry: Any) -> list[Any]:
    """The geometry's periodic pairs the case uses (``bc.periodic``): a domain offers pairs, a case
    picks some -- a side of an unused pair carries its own condition and must not be identified
    with its partner (netgen would make them one set of dofs)."""
    used = {tuple(p["tags"]) for p in case_spec.get("bc", {}).get("periodic", [])}
    return [pair for pair in geometry.periodic if (pair.source, pair.target) in used]


def shape(case_spec: dict[str, Any]) -> tuple[Any, int, float]:
    """(OCC shape with named boundary parts, dimension, diameter) of the case's domain."""
    dom = case_spec["domain"]
    geometry = resolve(dom["type"], dom["geometry_params"], validated=True).geometry
    if isinstance(geometry, Box):
        box = occ.Box(occ.Pnt(*geometry.lo), occ.Pnt(*geometry.hi))
        for tag in geometry.tags():
            axis, side = geometry.face(tag)
            faces = box.faces.Max(AXES[axis]) if side else box.faces.Min(AXES[axis])
            faces.name = tag
        return box, 3, geometry.diameter()
    face = occ.Face(_wire(geometry.outer))
    for hole in geometry.holes:
        face = face - occ.Face(_wire(hole))
    pieces = geometry.pieces()
    for edge in face.edges:  # names by position: booleans do not keep the pieces' own names
        lo, hi = edge.parameter_interval
        q = edge.Value(0.5 * (lo + hi))
        pt = np.array([[q.x, q.y]])
        edge.name = pieces[int(np.argmin([p.segment.distance(pt)[0] for p in pieces]))].tag
    for pair in periodic_pairs(case_spec, geometry):
        # netgen's trafo maps the calling shape onto the other one (source -> target here); the
        # other way round it finds no partner points and silently identifies nothing
        shift = occ.gp_Trsf.Translation(occ.Vec(pair.translation[0], pair.translation[1], 0.0))
        face.edges[pair.source].Identify(face.edges[pair.target], f"periodic_{pair.source}",
                                         occ.IdentificationType.PERIODIC, shift)
    return face, 2, geometry.diameter()


def mesh(case_spec: dict[str, Any], cells_across: int, order: int) -> Any:
    """The mesh of the domain, h = diameter / cells_across: a structured grid of a rectangle or
    box (:func:`~.structured.structured_mesh`), else netgen's (2-D: optimised by
    :data:`MESHING_2D`), curved to ``order``."""
    import ngsolve

    dom = case_spec["domain"]
    geometry = resolve(dom["type"], dom["geometry_params"], validated=True).geometry
    # rectangles and boxes are gridded by NGSolve itself (structured.py); the rest by netgen
    grid = structured_mesh(geometry, geometry.diameter() / cells_across)
    if grid is not None:
        return grid
    s, dim, diameter = shape(case_spec)
    geo = occ.OCCGeometry(s, dim=dim)
    ngmesh = geo.GenerateMesh(maxh=diameter / cells_across, **(MESHING_2D if dim == 2 else {}))
    pairs = periodic_pairs(case_spec, geometry) if dim == 2 else []
    identified = {nr for _, _, nr in ngmesh.GetIdentifications()}
    if len(identified) < len(pairs):  # netgen drops an identification it cannot match silently
        raise RuntimeError(f"netgen identified {len(identified)} of the {len(pairs)} periodic pairs "
                           f"{[(p.source, p.target) for p in pairs]}")
    m = ngsolve.Mesh(ngmesh)
    if order > 1 and geometry.curved():
        m.Curve(order)
    return m
