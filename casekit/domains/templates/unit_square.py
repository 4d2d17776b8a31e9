"""The rectangle [x0, x1] x [y0, y1], by default the unit square."""

from casekit.domains.geometry import Region
from casekit.domains.template import DomainTemplate, number, problem, register
from casekit.domains.templates._shapes import rectangle_loop


def _constraints(p: dict) -> list:
    out = []
    if p["x1"] <= p["x0"]:
        out.append(problem("x1", "x1 must be greater than x0", f"a number > {p['x0']}"))
    if p["y1"] <= p["y0"]:
        out.append(problem("y1", "y1 must be greater than y0", f"a number > {p['y0']}"))
    return out


register(DomainTemplate(
    name="unit_square",
    dim=2,
    summary="a rectangle, by default the unit square",
    params={
        "x0": number(0.0, "left edge"),
        "x1": number(1.0, "right edge"),
        "y0": number(0.0, "bottom edge"),
        "y1": number(1.0, "top edge"),
    },
    geometry=lambda p: Region(rectangle_loop([p["x0"], p["x1"], p["y0"], p["y1"]])),
    constraints=_constraints,
    describe=lambda p: f"the rectangle [{p['x0']:g}, {p['x1']:g}] x [{p['y0']:g}, {p['y1']:g}]",
    structured=True,
))
