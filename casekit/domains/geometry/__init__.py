"""Exact geometry of domain templates: the one description used by meshing, masking and data.

A 2-D domain is a :class:`Region` of loops of tagged segments (:class:`Line`, :class:`Arc`,
:class:`EllipticArc`); the only 3-D shape is the axis-aligned :class:`Box`.

From this one description come: the gmsh script (``casekit.domains.model``) that meshes it and
that prompts print, the exact inside-test used to mask evaluation grids, the bounding box, the
exact area, the distance to the boundary and projection onto it, and per boundary tag its
*carriers* (the lines, planes, circles and ellipses it lies on), its outward normal as a sympy
expression, and a level-set function that vanishes on it -- which the families use to derive
leak-free boundary data.
"""

from casekit.domains.geometry.box import Box
from casekit.domains.geometry.carriers import Carrier, CircleCarrier, EllipseCarrier, LineCarrier, Point
from casekit.domains.geometry.region import (
    BOUNDARY_TOL,
    Loop,
    PeriodicPair,
    Piece,
    Region,
    circle,
    ellipse,
    polygon,
)
from casekit.domains.geometry.segments import Arc, EllipticArc, Line, Monotone, Segment

Geometry = Region | Box

__all__ = ["BOUNDARY_TOL", "Arc", "Box", "Carrier", "CircleCarrier", "EllipseCarrier", "EllipticArc", "Geometry",
           "Line", "LineCarrier", "Loop", "Monotone", "PeriodicPair", "Piece", "Point", "Region", "Segment", "circle",
           "ellipse", "polygon"]
