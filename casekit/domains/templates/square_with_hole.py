"""A rectangle with one circular hole."""

from casekit.domains.geometry import Region, circle
from casekit.domains.template import DomainTemplate, disk, rectangle, register
from casekit.domains.templates._shapes import disk_in_rectangle, rectangle_loop, rectangle_problems


def _geometry(p: dict) -> Region:
    h = p["hole"]
    return Region(rectangle_loop(p["outer"]), holes=(circle(tuple(h["center"]), h["radius"], "hole", hole=True),))


register(DomainTemplate(
    name="square_with_hole",
    dim=2,
    summary="a rectangle with a circular hole",
    params={
        "outer": rectangle([0.0, 1.0, 0.0, 1.0], "the outer rectangle"),
        "hole": disk({"center": [0.5, 0.5], "radius": 0.2}, "the hole"),
    },
    geometry=_geometry,
    constraints=lambda p: rectangle_problems("outer", p["outer"]) or disk_in_rectangle("hole", p["hole"], p["outer"]),
    describe=lambda p: (f"the rectangle [{p['outer'][0]:g}, {p['outer'][1]:g}] x [{p['outer'][2]:g}, "
                        f"{p['outer'][3]:g}] with a circular hole of radius {p['hole']['radius']:g} centred at "
                        f"({p['hole']['center'][0]:g}, {p['hole']['center'][1]:g})"),
))
