"""A rectangle with several circular holes (tags hole_1 ... hole_n)."""

from casekit.domains.geometry import Region, circle
from casekit.domains.template import DomainTemplate, disks, rectangle, register
from casekit.domains.templates._shapes import (
    disk_in_rectangle,
    disks_apart,
    rectangle_loop,
    rectangle_problems,
)


def _geometry(p: dict) -> Region:
    holes = tuple(circle(tuple(h["center"]), h["radius"], f"hole_{i}", hole=True)
                  for i, h in enumerate(p["holes"], start=1))
    return Region(rectangle_loop(p["outer"]), holes=holes)


def _constraints(p: dict) -> list:
    out = rectangle_problems("outer", p["outer"])
    if out:
        return out
    for i, h in enumerate(p["holes"]):
        out += disk_in_rectangle(f"holes/{i}", h, p["outer"])
    for i, a in enumerate(p["holes"]):
        for j in range(i + 1, len(p["holes"])):
            out += disks_apart(f"holes/{j}", a, p["holes"][j], f"holes {i + 1} and {j + 1}")
    return out


register(DomainTemplate(
    name="multi_hole",
    dim=2,
    summary="a rectangle with several circular holes",
    params={
        "outer": rectangle([0.0, 1.0, 0.0, 1.0], "the outer rectangle"),
        "holes": disks([{"center": [0.3, 0.3], "radius": 0.1}, {"center": [0.7, 0.3], "radius": 0.08},
                        {"center": [0.5, 0.7], "radius": 0.12}], "the holes", min_items=2),
    },
    geometry=_geometry,
    constraints=_constraints,
    describe=lambda p: (f"the rectangle [{p['outer'][0]:g}, {p['outer'][1]:g}] x [{p['outer'][2]:g}, "
                        f"{p['outer'][3]:g}] with {len(p['holes'])} circular holes: " + "; ".join(
                            f"hole_{i} of radius {h['radius']:g} centred at ({h['center'][0]:g}, "
                            f"{h['center'][1]:g})" for i, h in enumerate(p["holes"], start=1))),
))
