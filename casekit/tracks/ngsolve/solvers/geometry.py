"""The case's domain as netgen OCC geometry, from casekit's domain registry.

The geometry is the registry's own (the same loops of lines and circular arcs, the same boundary
tags, the same periodic pairs): lines become OCC segments, arcs three-point circular arcs (a full
circle two halves), holes are cut from the outer face, and every edge is named by the tag of the
piece it lies on.  netgen meshes it, and ``Mesh.Curve`` makes the cells follow the exact curves.
The unit cube is an OCC box with its faces named as the registry's.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from netgen import occ

from casekit.domains import resolve
from casekit.domains.geometry import Box, Line

AXES = {0: occ.X, 1: occ.Y, 2: occ.Z}


def _wire(loop: Any) -> Any:
    edges = []
    for piece in loop.pieces:
        s = piece.segment
        if isinstance(s, Line):
            edges.append(occ.Segment(occ.Pnt(s.a[0], s.a[1], 0.0), occ.Pnt(s.b[0], s.b[1], 0.0)))
            continue
        parts = 2 if abs(abs(s.sweep) - 2 * math.pi) < 1e-9 else 1  # a full circle: two halves
        for k in range(parts):
            a0 = s.start_angle + k * s.sweep / parts
            p0, pm, p1 = s._at(a0), s._at(a0 + s.sweep / (2 * parts)), s._at(a0 + s.sweep / parts)
            edges.append(occ.ArcOfCircle(occ.Pnt(p0[0], p0[1], 0.0), occ.Pnt(pm[0], pm[1], 0.0),
                                         occ.Pnt(p1[0], p1[1], 0.0)))
    return occ.Wire(edges)


def shape(case_spec: dict[str, Any]) -> tuple[Any, int, float]:
    """(OCC shape with named boundary parts, dimension, diameter) of the case's domain."""
    dom = case_spec["domain"]
    geometry = resolve(dom["type"], dom["geometry_params"]).geometry
    if isinstance(geometry, Box):
        box = occ.Box(occ.Pnt(*geometry.lo), occ.Pnt(*geometry.hi))
        for tag in geometry.tags():
            axis, side = geometry._face(tag)
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
    for pair in geometry.periodic:
        shift = occ.gp_Trsf.Translation(occ.Vec(pair.translation[0], pair.translation[1], 0.0))
        face.edges[pair.target].Identify(face.edges[pair.source], f"periodic_{pair.source}",
                                         occ.IdentificationType.PERIODIC, shift)
    return face, 2, geometry.diameter()


def mesh(case_spec: dict[str, Any], cells_across: int, order: int) -> Any:
    """The netgen mesh of the domain, h = diameter / cells_across, curved to ``order``."""
    import ngsolve

    s, dim, diameter = shape(case_spec)
    geo = occ.OCCGeometry(s, dim=dim)
    m = ngsolve.Mesh(geo.GenerateMesh(maxh=diameter / cells_across))
    if order > 1:
        m.Curve(order)
    return m
