"""The box [x0, x1] x [y0, y1] x [z0, z1], by default the unit cube."""

from casekit.domains.geometry import Box
from casekit.domains.template import DomainTemplate, number, problem, register


def _constraints(p: dict) -> list:
    return [problem(f"{a}1", f"{a}1 must be greater than {a}0", f"a number > {p[a + '0']}")
            for a in "xyz" if p[f"{a}1"] <= p[f"{a}0"]]


register(DomainTemplate(
    name="unit_cube",
    dim=3,
    summary="a box, by default the unit cube",
    params={
        "x0": number(0.0, "low x face"), "x1": number(1.0, "high x face"),
        "y0": number(0.0, "low y face"), "y1": number(1.0, "high y face"),
        "z0": number(0.0, "low z face"), "z1": number(1.0, "high z face"),
    },
    geometry=lambda p: Box((p["x0"], p["y0"], p["z0"]), (p["x1"], p["y1"], p["z1"])),
    constraints=_constraints,
    describe=lambda p: (f"the box [{p['x0']:g}, {p['x1']:g}] x [{p['y0']:g}, {p['y1']:g}] x "
                        f"[{p['z0']:g}, {p['z1']:g}]"),
    structured=True,
))
