"""The L-shape: a rectangle without its upper-right part, with a re-entrant corner."""

from casekit.domains.geometry import Region, polygon
from casekit.domains.template import DomainTemplate, point, problem, rectangle, register
from casekit.domains.templates._shapes import rectangle_problems


def _geometry(p: dict) -> Region:
    x0, x1, y0, y1 = p["outer"]
    xc, yc = p["corner"]
    vertices = [(x0, y0), (x1, y0), (x1, yc), (xc, yc), (xc, y1), (x0, y1)]
    tags = ["bottom", "right", "step_top", "step_left", "top", "left"]
    return Region(polygon(vertices, tags), refine_points=((xc, yc),))


def _constraints(p: dict) -> list:
    out = rectangle_problems("outer", p["outer"])
    x0, x1, y0, y1 = p["outer"]
    xc, yc = p["corner"]
    if not out and not (x0 < xc < x1 and y0 < yc < y1):
        out = [problem("corner", "the re-entrant corner must lie strictly inside the outer rectangle",
                       f"a point in ({x0:g}, {x1:g}) x ({y0:g}, {y1:g})")]
    return out


register(DomainTemplate(
    name="l_shape",
    dim=2,
    summary="a rectangle without its upper-right part (re-entrant corner)",
    params={
        "outer": rectangle([0.0, 1.0, 0.0, 1.0], "the enclosing rectangle"),
        "corner": point([0.5, 0.5], "the re-entrant corner; the part above and right of it is removed"),
    },
    geometry=_geometry,
    constraints=_constraints,
    describe=lambda p: (f"the L-shaped region [{p['outer'][0]:g}, {p['outer'][1]:g}] x [{p['outer'][2]:g}, "
                        f"{p['outer'][3]:g}] without [{p['corner'][0]:g}, {p['outer'][1]:g}] x "
                        f"[{p['corner'][1]:g}, {p['outer'][3]:g}] (re-entrant corner at "
                        f"({p['corner'][0]:g}, {p['corner'][1]:g}))"),
))
