"""A rectangle whose opposite sides are periodic pairs (left -> right, bottom -> top)."""

from casekit.domains.geometry import PeriodicPair, Region
from casekit.domains.template import DomainTemplate, rectangle, register
from casekit.domains.templates._shapes import rectangle_loop, rectangle_problems


def _geometry(p: dict) -> Region:
    x0, x1, y0, y1 = p["bounds"]
    return Region(rectangle_loop(p["bounds"]), periodic=(PeriodicPair("left", "right", (x1 - x0, 0.0)),
                                                         PeriodicPair("bottom", "top", (0.0, y1 - y0))))


register(DomainTemplate(
    name="periodic_square",
    dim=2,
    summary="a rectangle with periodic pairs of sides",
    params={"bounds": rectangle([0.0, 1.0, 0.0, 1.0], "the rectangle")},
    geometry=_geometry,
    constraints=lambda p: rectangle_problems("bounds", p["bounds"]),
    describe=lambda p: (f"the rectangle [{p['bounds'][0]:g}, {p['bounds'][1]:g}] x [{p['bounds'][2]:g}, "
                        f"{p['bounds'][3]:g}], whose left/right and bottom/top sides are periodic pairs "
                        "(each case says which pairs it uses)"),
    structured=True,
))
