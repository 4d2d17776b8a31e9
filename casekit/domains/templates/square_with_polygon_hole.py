"""A rectangle with one polygonal hole (a rectangular hole is the polygon of its four corners).

The vertices may be given in either orientation: the hole's loop runs clockwise whatever their
order, and its tag is ``hole`` as on ``square_with_hole``.  The polygon must be simple (edges meet
only at the vertices they share, with a gap elsewhere) and lie inside the rectangle with a gap.
Its convex corners are re-entrant corners of the domain: meshes are finer there.

The boundary level set (``casekit.domains.level_set``) is the product of the sides' and the hole
edges' lines; it vanishes on the whole boundary while 4 + (distinct hole edge lines) <= 10
(``MAX_DEGREE``), i.e. for holes of up to six edges under Dirichlet data.
"""

from __future__ import annotations

import math

from casekit.domains.geometry import Point, Region, polygon
from casekit.domains.template import DomainTemplate, points, problem, rectangle, register
from casekit.domains.templates._shapes import MARGIN, rectangle_loop, rectangle_problems
from casekit.errors import Problem

#: the fewest and the most vertices of a hole
MIN_VERTICES, MAX_VERTICES = 3, 32


def _signed_area(v: list[Point]) -> float:
    return 0.5 * sum(v[i - 1][0] * v[i][1] - v[i][0] * v[i - 1][1] for i in range(len(v)))


def _cross(o: Point, a: Point, b: Point) -> float:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def _point_segment(p: Point, a: Point, b: Point) -> float:
    dx, dy = b[0] - a[0], b[1] - a[1]
    s = max(0.0, min(1.0, ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / (dx * dx + dy * dy)))
    return math.dist(p, (a[0] + s * dx, a[1] + s * dy))


def _segments_gap(a: Point, b: Point, c: Point, d: Point) -> float:
    """The distance between the segments ab and cd (0 when they cross)."""
    d1, d2, d3, d4 = _cross(c, d, a), _cross(c, d, b), _cross(a, b, c), _cross(a, b, d)
    if ((d1 > 0 > d2) or (d1 < 0 < d2)) and ((d3 > 0 > d4) or (d3 < 0 < d4)):
        return 0.0
    return min(_point_segment(a, c, d), _point_segment(b, c, d), _point_segment(c, a, b), _point_segment(d, a, b))


def _hole(p: dict) -> list[Point]:
    """The vertices clockwise (the hole loop's orientation)."""
    v = [(float(x), float(y)) for x, y in p["vertices"]]
    return v[::-1] if _signed_area(v) > 0 else v


def _geometry(p: dict) -> Region:
    v = _hole(p)
    n = len(v)
    # a clockwise vertex turning clockwise is convex for the hole: a re-entrant corner of the domain
    corners = tuple(v[i] for i in range(n) if _cross(v[i - 1], v[i], v[(i + 1) % n]) < 0)
    return Region(rectangle_loop(p["outer"]), holes=(polygon(v, "hole"),), refine_points=corners)


def _constraints(p: dict) -> list[Problem]:
    out = rectangle_problems("outer", p["outer"])
    if out:
        return out
    v = [tuple(q) for q in p["vertices"]]
    n = len(v)
    if not MIN_VERTICES <= n <= MAX_VERTICES:
        return [problem("vertices", f"the hole must have {MIN_VERTICES} to {MAX_VERTICES} vertices, not {n}",
                        f"a list of {MIN_VERTICES} to {MAX_VERTICES} [x, y] points")]
    x0, x1, y0, y1 = p["outer"]
    gap = MARGIN * max(x1 - x0, y1 - y0)
    for i, (x, y) in enumerate(v):
        if min(x - x0, x1 - x, y - y0, y1 - y) <= gap:
            return [problem(f"vertices/{i}", f"vertex {i} ({x:g}, {y:g}) of the hole must lie inside the outer "
                            "rectangle with a gap", f"a point in ({x0 + gap:g}, {x1 - gap:g}) x "
                            f"({y0 + gap:g}, {y1 - gap:g})")]
    size = math.dist((min(q[0] for q in v), min(q[1] for q in v)), (max(q[0] for q in v), max(q[1] for q in v)))
    tol = MARGIN * size
    simple = "a simple polygon: vertices in order along its outline, edges meeting only at shared vertices"
    for i in range(n):
        a, b, c = v[i], v[(i + 1) % n], v[(i + 2) % n]
        if math.dist(a, b) <= tol:
            return [problem(f"vertices/{(i + 1) % n}", f"vertices {i} and {(i + 1) % n} of the hole coincide "
                            "(a zero-length edge)", simple)]
        if n > 3 and (_point_segment(c, a, b) <= tol or _point_segment(a, b, c) <= tol):
            return [problem(f"vertices/{(i + 1) % n}", f"the hole's edges meeting at vertex {(i + 1) % n} fold back "
                            "onto each other", simple)]
    for i in range(n):
        for j in range(i + 2, n):
            if i == 0 and j == n - 1:
                continue  # adjacent through the closing edge
            if _segments_gap(v[i], v[(i + 1) % n], v[j], v[(j + 1) % n]) <= tol:
                return [problem("vertices", f"the hole's edges {i}-{(i + 1) % n} and {j}-{(j + 1) % n} cross or touch "
                                "(vertices counted from 0)", simple)]
    if abs(_signed_area(v)) <= tol * size:
        return [problem("vertices", "the hole has no area (its vertices are collinear)", simple)]
    return []


def _describe(p: dict) -> str:
    x0, x1, y0, y1 = p["outer"]
    corners = ", ".join(f"({x:g}, {y:g})" for x, y in p["vertices"])
    return (f"the rectangle [{x0:g}, {x1:g}] x [{y0:g}, {y1:g}] with a polygonal hole whose vertices are, in "
            f"order, {corners}")


register(DomainTemplate(
    name="square_with_polygon_hole",
    dim=2,
    summary="a rectangle with a polygonal hole",
    params={
        "outer": rectangle([0.0, 1.0, 0.0, 1.0], "the outer rectangle"),
        "vertices": points([[0.3, 0.3], [0.7, 0.3], [0.7, 0.7], [0.5, 0.55], [0.3, 0.7]],
                           f"the hole's corners in order along its outline (either orientation), "
                           f"{MIN_VERTICES} to {MAX_VERTICES} of them"),
    },
    geometry=_geometry,
    constraints=_constraints,
    describe=_describe,
    tag_wording=lambda p: {"hole": f"the boundary of the polygonal hole ({len(p['vertices'])} straight edges "
                           "joining its vertices in order)"},
))
