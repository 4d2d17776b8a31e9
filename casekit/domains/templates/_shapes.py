"""Parameter checks shared by templates built from rectangles and disks."""

from __future__ import annotations

import math

from casekit.domains.template import problem

#: smallest gap between a hole and the outer boundary or another hole, relative to the domain
MARGIN = 1e-3


def rectangle_problems(name: str, r: list[float]) -> list:
    x0, x1, y0, y1 = r
    if not (x0 < x1 and y0 < y1):
        return [problem(name, f"{name} must have xmin < xmax and ymin < ymax", "[xmin, xmax, ymin, ymax]")]
    return []


def disk_in_rectangle(name: str, disk: dict, r: list[float]) -> list:
    (cx, cy), rad = disk["center"], disk["radius"]
    x0, x1, y0, y1 = r
    margin = MARGIN * max(x1 - x0, y1 - y0)
    if min(cx - x0, x1 - cx, cy - y0, y1 - cy) - rad <= margin:
        return [problem(name, f"{name} (centre ({cx:g}, {cy:g}), radius {rad:g}) must lie inside the "
                        "rectangle with a gap", f"a disk inside [{x0:g}, {x1:g}] x [{y0:g}, {y1:g}]")]
    return []


def disks_apart(name: str, a: dict, b: dict, what: str) -> list:
    d = math.dist(a["center"], b["center"])
    if d - a["radius"] - b["radius"] <= MARGIN * max(a["radius"], b["radius"]):
        return [problem(name, f"{what} overlap or touch", "disks whose centres are farther apart than "
                        "the sum of their radii")]
    return []
