"""A T-junction: a horizontal bar on top of a vertical stem (inlet at the stem, outlets at the ends)."""

from casekit.domains.geometry import Region, polygon
from casekit.domains.template import DomainTemplate, problem, rectangle, register
from casekit.domains.templates._shapes import rectangle_problems


def _geometry(p: dict) -> Region:
    bx0, bx1, by0, by1 = p["bar"]
    sx0, sx1, sy0, _ = p["stem"]
    vertices = [(sx0, sy0), (sx1, sy0), (sx1, by0), (bx1, by0), (bx1, by1), (bx0, by1), (bx0, by0), (sx0, by0)]
    tags = ["inlet", "walls", "walls", "outlet_right", "walls", "outlet_left", "walls", "walls"]
    return Region(polygon(vertices, tags), refine_points=((sx0, by0), (sx1, by0)))


def _constraints(p: dict) -> list:
    out = rectangle_problems("bar", p["bar"]) or rectangle_problems("stem", p["stem"])
    if out:
        return out
    bx0, bx1, by0, _ = p["bar"]
    sx0, sx1, _, sy1 = p["stem"]
    if abs(sy1 - by0) > 1e-12:
        return [problem("stem", "the stem must end exactly at the bottom of the bar", f"stem ymax = {by0:g}")]
    if not (bx0 < sx0 and sx1 < bx1):
        return [problem("stem", "the stem must lie strictly between the ends of the bar",
                        f"{bx0:g} < stem xmin < stem xmax < {bx1:g}")]
    return []


register(DomainTemplate(
    name="t_junction",
    dim=2,
    summary="a T-shaped channel junction",
    params={
        "bar": rectangle([0.0, 1.0, 0.8, 1.0], "the horizontal bar"),
        "stem": rectangle([0.4, 0.6, 0.0, 0.8], "the vertical stem below the bar"),
    },
    geometry=_geometry,
    constraints=_constraints,
    describe=lambda p: (f"a T-junction: the bar [{p['bar'][0]:g}, {p['bar'][1]:g}] x [{p['bar'][2]:g}, "
                        f"{p['bar'][3]:g}] joined to the stem [{p['stem'][0]:g}, {p['stem'][1]:g}] x "
                        f"[{p['stem'][2]:g}, {p['stem'][3]:g}] below it"),
    tag_wording=lambda p: {"walls": "every other side of the T (six straight walls)"},
))
