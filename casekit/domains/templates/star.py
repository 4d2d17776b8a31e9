"""A star polygon with n points (re-entrant inner vertices)."""

import math

from casekit.domains.geometry import Region, polygon
from casekit.domains.template import DomainTemplate, integer, number, point, register
from casekit.domains.templates._shapes import radii_ordered


def _vertices(p: dict) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    cx, cy = p["center"]
    n = p["points"]
    rot = math.radians(p["rotation"])
    outer, inner = [], []
    for k in range(n):
        a = rot + 2 * math.pi * k / n
        b = a + math.pi / n
        outer.append((cx + p["outer_radius"] * math.cos(a), cy + p["outer_radius"] * math.sin(a)))
        inner.append((cx + p["inner_radius"] * math.cos(b), cy + p["inner_radius"] * math.sin(b)))
    return outer, inner


def _geometry(p: dict) -> Region:
    outer, inner = _vertices(p)
    vertices = [v for pair in zip(outer, inner, strict=True) for v in pair]
    return Region(polygon(vertices, "boundary"), refine_points=tuple(inner))


register(DomainTemplate(
    name="star",
    dim=2,
    summary="a star polygon",
    params={
        "center": point([0.0, 0.0], "centre of the star"),
        "points": integer(5, "number of points", minimum=3, maximum=24),
        "inner_radius": number(0.3, "radius of the inner (re-entrant) vertices", exclusiveMinimum=0.0),
        "outer_radius": number(0.7, "radius of the tips", exclusiveMinimum=0.0),
        "rotation": number(90.0, "direction of the first tip, degrees from the x axis",
                           minimum=-360.0, maximum=360.0),
    },
    geometry=_geometry,
    constraints=radii_ordered,
    describe=lambda p: (f"a {p['points']}-pointed star centred at ({p['center'][0]:g}, {p['center'][1]:g}) with "
                        f"tips at radius {p['outer_radius']:g} and inner vertices at radius "
                        f"{p['inner_radius']:g}, the first tip at {p['rotation']:g} degrees"),
    tag_wording=lambda p: {"boundary": f"the whole star outline ({2 * p['points']} straight edges)"},
))
