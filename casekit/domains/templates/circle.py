"""A disk."""

from casekit.domains.geometry import Region, circle
from casekit.domains.template import DomainTemplate, number, point, register

register(DomainTemplate(
    name="circle",
    dim=2,
    summary="a disk",
    params={
        "center": point([0.5, 0.5], "centre of the disk"),
        "radius": number(0.5, "radius of the disk", exclusiveMinimum=0.0),
    },
    geometry=lambda p: Region(circle(tuple(p["center"]), p["radius"], "boundary")),
    describe=lambda p: (f"the disk of radius {p['radius']:g} centred at "
                        f"({p['center'][0]:g}, {p['center'][1]:g})"),
))
