"""A circular sector: two radii and the arc between them."""

import math

from casekit.domains.geometry import Arc, Line, Loop, Piece, Region
from casekit.domains.template import DomainTemplate, number, point, register


def _geometry(p: dict) -> Region:
    c = tuple(p["center"])
    r = p["radius"]
    a0 = math.radians(p["start_angle"])
    sweep = math.radians(p["angle"])
    arc = Arc(c, r, a0, sweep)
    loop = Loop((Piece(Line(c, arc.start), "edge_start"), Piece(arc, "arc"), Piece(Line(arc.end, c), "edge_end")))
    return Region(loop, refine_points=(c,) if p["angle"] > 180 else ())


register(DomainTemplate(
    name="sector",
    dim=2,
    summary="a circular sector",
    params={
        "center": point([0.0, 0.0], "the apex"),
        "radius": number(1.0, "radius", exclusiveMinimum=0.0),
        "angle": number(90.0, "opening angle in degrees", exclusiveMinimum=0.0, exclusiveMaximum=360.0),
        "start_angle": number(0.0, "direction of the first radius, degrees from the x axis",
                              minimum=-360.0, maximum=360.0),
    },
    geometry=_geometry,
    describe=lambda p: (f"the circular sector with apex ({p['center'][0]:g}, {p['center'][1]:g}), radius "
                        f"{p['radius']:g} and opening angle {p['angle']:g} degrees starting at "
                        f"{p['start_angle']:g} degrees"),
))
