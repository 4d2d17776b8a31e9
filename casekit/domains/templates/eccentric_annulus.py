"""The region between two non-concentric circles (the inner one strictly inside)."""

import math

from casekit.domains.geometry import Region, circle
from casekit.domains.template import DomainTemplate, disk, problem, register


def _constraints(p: dict) -> list:
    o, i = p["outer"], p["inner"]
    if math.dist(o["center"], i["center"]) + i["radius"] >= o["radius"] * (1 - 1e-3):
        return [problem("inner", "the inner circle must lie strictly inside the outer circle",
                        "|c_outer - c_inner| + r_inner < r_outer")]
    return []


register(DomainTemplate(
    name="eccentric_annulus",
    dim=2,
    summary="a disk with an off-centre circular hole",
    params={
        "outer": disk({"center": [0.5, 0.5], "radius": 0.5}, "the outer circle"),
        "inner": disk({"center": [0.65, 0.5], "radius": 0.2}, "the inner circle (the hole)"),
    },
    geometry=lambda p: Region(circle(tuple(p["outer"]["center"]), p["outer"]["radius"], "outer"),
                              holes=(circle(tuple(p["inner"]["center"]), p["inner"]["radius"], "inner",
                                            hole=True),)),
    constraints=_constraints,
    describe=lambda p: (f"the disk of radius {p['outer']['radius']:g} centred at ({p['outer']['center'][0]:g}, "
                        f"{p['outer']['center'][1]:g}) without the disk of radius {p['inner']['radius']:g} "
                        f"centred at ({p['inner']['center'][0]:g}, {p['inner']['center'][1]:g})"),
))
