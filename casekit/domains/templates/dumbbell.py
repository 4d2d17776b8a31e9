"""A dumbbell: two disks side by side (centres at the same height) joined by a horizontal bridge.

The bridge is the band ``|y - y_c| <= bridge_width / 2`` between the two centres, so its ends lie
inside the disks; its straight sides meet the circles at exact intersection points, where the
lobes (exact arcs) begin and end.

The disks may touch or overlap as long as their circles meet only inside the bridge: then each
side of the bridge still runs from the left circle to the right one (it has positive length), the
arcs cut away at the junctions contain every point where the circles meet, and the outline is a
simple loop bounding the union of the disks and the bridge.  Circles that cross above or below the
bridge would make the lobes cross each other; they are refused.
"""

import math

from casekit.domains.geometry import Arc, Line, Loop, Piece, Region
from casekit.domains.template import DomainTemplate, disk, number, problem, register
from casekit.domains.templates._shapes import MARGIN

#: the bridge's half-width stays below this fraction of each radius (keeps the junctions away
#: from tangency, where the lobes would meet the bridge at a vanishing angle)
MAX_HALF_WIDTH = 0.95


def _geometry(p: dict) -> Region:
    (lx, y), rl = p["left"]["center"], p["left"]["radius"]
    (rx, _), rr = p["right"]["center"], p["right"]["radius"]
    h = p["bridge_width"] / 2
    tl, tr = math.asin(h / rl), math.asin(h / rr)  # junction angles seen from each centre
    left = Arc((lx, y), rl, tl, 2 * math.pi - 2 * tl)  # from the bridge's top around to its bottom
    right = Arc((rx, y), rr, math.pi + tr, 2 * math.pi - 2 * tr)
    loop = Loop((Piece(left, "left_lobe"), Piece(Line(left.end, right.start), "bridge_bottom"),
                 Piece(right, "right_lobe"), Piece(Line(right.end, left.start), "bridge_top")))
    return Region(loop, refine_points=(left.start, left.end, right.start, right.end))


def _constraints(p: dict) -> list:
    lft, rgt = p["left"], p["right"]
    (lx, ly), (rx, ry) = lft["center"], rgt["center"]
    if abs(ly - ry) > 1e-12:
        return [problem("right", "the disks' centres must be at the same height (the bridge is horizontal)",
                        f"a centre with y = {ly:g}")]
    if rx <= lx:
        return [problem("right", "the right disk must lie to the right of the left one",
                        f"a centre with x > {lx:g}")]
    rl, rr, h = lft["radius"], rgt["radius"], p["bridge_width"] / 2
    limit = 2 * MAX_HALF_WIDTH * min(rl, rr)
    if p["bridge_width"] >= limit:
        return [problem("bridge_width", "the bridge must be narrower than both disks", f"a width below {limit:g}")]
    # the bridge's sides run from the left circle (x = lx + a) to the right one (x = rx - b): a side
    # of positive length means the circles meet (if at all) only inside the bridge
    a, b = math.sqrt(rl**2 - h**2), math.sqrt(rr**2 - h**2)
    if (rx - b) - (lx + a) <= MARGIN * max(rl, rr):
        return [problem("right", "the two disks overlap beyond the bridge (their circles cross above and below it)",
                        f"a centre with x > {lx + a + b:g} (the circles may touch or cross inside the bridge only), "
                        "or a wider bridge")]
    return []


def _describe(p: dict) -> str:
    lft, rgt, h = p["left"], p["right"], p["bridge_width"] / 2
    y = lft["center"][1]
    return (f"a dumbbell: the disk of radius {lft['radius']:g} centred at ({lft['center'][0]:g}, {y:g}) and the "
            f"disk of radius {rgt['radius']:g} centred at ({rgt['center'][0]:g}, {y:g}), joined by the "
            f"horizontal bridge {y - h:g} <= y <= {y + h:g} between their centres")


register(DomainTemplate(
    name="dumbbell",
    dim=2,
    summary="two disks joined by a horizontal bridge",
    params={
        "left": disk({"center": [0.2, 0.5], "radius": 0.18}, "the left disk"),
        "right": disk({"center": [0.8, 0.5], "radius": 0.18}, "the right disk (centre at the same height)"),
        "bridge_width": number(0.2, "thickness of the horizontal bridge (its extent in y)", exclusiveMinimum=0.0),
    },
    geometry=_geometry,
    constraints=_constraints,
    describe=_describe,
))
