"""The ring between two concentric circles."""

from casekit.domains.geometry import Region, circle
from casekit.domains.template import DomainTemplate, number, point, register
from casekit.domains.templates._shapes import radii_ordered

register(DomainTemplate(
    name="annulus",
    dim=2,
    summary="the ring between two concentric circles",
    params={
        "center": point([0.5, 0.5], "common centre of both circles"),
        "inner_radius": number(0.25, "radius of the inner circle", exclusiveMinimum=0.0),
        "outer_radius": number(0.5, "radius of the outer circle", exclusiveMinimum=0.0),
    },
    geometry=lambda p: Region(
        circle(tuple(p["center"]), p["outer_radius"], "outer"),
        holes=(circle(tuple(p["center"]), p["inner_radius"], "inner", hole=True),),
    ),
    constraints=radii_ordered,
    describe=lambda p: (f"the annulus centred at ({p['center'][0]:g}, {p['center'][1]:g}) between "
                        f"radius {p['inner_radius']:g} and radius {p['outer_radius']:g}"),
))
