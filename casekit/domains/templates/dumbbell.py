"""A dumbbell: two disks joined by a horizontal bridge (the disks' centres at the same height)."""

import math

from casekit.domains.geometry import Arc, Line, Loop, Piece, Region
from casekit.domains.template import DomainTemplate, disk, number, problem, register


def _geometry(p: dict) -> Region:
    (lx, ly), rl = p["left"]["center"], p["left"]["radius"]
    (rx, _), rr = p["right"]["center"], p["right"]["radius"]
    h = p["bridge_width"] / 2
    tl, tr = math.asin(h / rl), math.asin(h / rr)
    left = Arc((lx, ly), rl, tl, 2 * math.pi - 2 * tl)  # from the bridge's top around to its bottom
    right = Arc((rx, ly), rr, math.pi + tr, 2 * math.pi - 2 * tr)
    loop = Loop((Piece(left, "left_lobe"), Piece(Line(left.end, right.start), "bridge_bottom"),
                 Piece(right, "right_lobe"), Piece(Line(right.end, left.start), "bridge_top")))
    return Region(loop, refine_points=(left.start, left.end, right.start, right.end))


def _constraints(p: dict) -> list:
    lft, rgt = p["left"], p["right"]
    if abs(lft["center"][1] - rgt["center"][1]) > 1e-12:
        return [problem("right", "the disks' centres must be at the same height", f"y = {lft['center'][1]:g}")]
    gap = rgt["center"][0] - lft["center"][0] - lft["radius"] - rgt["radius"]
    if gap <= 1e-3 * max(lft["radius"], rgt["radius"]):
        return [problem("right", "the right disk must lie to the right of the left one, apart from it",
                        "centres farther apart than the sum of the radii")]
    if p["bridge_width"] / 2 >= 0.95 * min(lft["radius"], rgt["radius"]):
        return [problem("bridge_width", "the bridge must be narrower than both disks",
                        f"a width below {1.9 * min(lft['radius'], rgt['radius']):g}")]
    return []


register(DomainTemplate(
    name="dumbbell",
    dim=2,
    summary="two disks joined by a bridge",
    params={
        "left": disk({"center": [0.2, 0.5], "radius": 0.18}, "the left disk"),
        "right": disk({"center": [0.8, 0.5], "radius": 0.18}, "the right disk"),
        "bridge_width": number(0.2, "height of the horizontal bridge", exclusiveMinimum=0.0),
    },
    geometry=_geometry,
    constraints=_constraints,
    describe=lambda p: (f"a dumbbell: disks of radius {p['left']['radius']:g} at ({p['left']['center'][0]:g}, "
                        f"{p['left']['center'][1]:g}) and {p['right']['radius']:g} at "
                        f"({p['right']['center'][0]:g}, {p['right']['center'][1]:g}) joined by a horizontal "
                        f"bridge of width {p['bridge_width']:g}"),
))
