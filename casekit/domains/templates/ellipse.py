"""An elliptic disk (axis-aligned), its boundary split into a right and a left half."""

from casekit.domains.geometry import Region, ellipse
from casekit.domains.template import DomainTemplate, number, point, register


def _geometry(p: dict) -> Region:
    return Region(ellipse(tuple(p["center"]), (p["semi_axis_x"], p["semi_axis_y"]), ("right", "left")))


register(DomainTemplate(
    name="ellipse",
    dim=2,
    summary="an elliptic disk, its boundary in a right and a left half",
    params={
        "center": point([0.5, 0.5], "centre of the ellipse"),
        "semi_axis_x": number(0.5, "semi-axis along x", exclusiveMinimum=0.0),
        "semi_axis_y": number(0.3, "semi-axis along y", exclusiveMinimum=0.0),
    },
    geometry=_geometry,
    describe=lambda p: (f"the elliptic disk centred at ({p['center'][0]:g}, {p['center'][1]:g}) with semi-axes "
                        f"{p['semi_axis_x']:g} along x and {p['semi_axis_y']:g} along y; its boundary is split "
                        f"at x = {p['center'][0]:g} into the right and the left half"),
))
