"""The region between two non-concentric circles (the inner one strictly inside)."""

from casekit.domains.geometry import Region, circle
from casekit.domains.template import DomainTemplate, disk, register
from casekit.domains.templates._shapes import disk_in_disk


def _geometry(p: dict) -> Region:
    o, i = p["outer"], p["inner"]
    return Region(circle(tuple(o["center"]), o["radius"], "outer"),
                  holes=(circle(tuple(i["center"]), i["radius"], "inner", hole=True),))


register(DomainTemplate(
    name="eccentric_annulus",
    dim=2,
    summary="a disk with an off-centre circular hole",
    params={
        "outer": disk({"center": [0.5, 0.5], "radius": 0.5}, "the outer circle"),
        "inner": disk({"center": [0.65, 0.5], "radius": 0.2}, "the inner circle (the hole)"),
    },
    geometry=_geometry,
    constraints=lambda p: disk_in_disk("inner", p["inner"], p["outer"]),
    describe=lambda p: (f"the disk of radius {p['outer']['radius']:g} centred at ({p['outer']['center'][0]:g}, "
                        f"{p['outer']['center'][1]:g}) without the disk of radius {p['inner']['radius']:g} "
                        f"centred at ({p['inner']['center'][0]:g}, {p['inner']['center'][1]:g})"),
))
