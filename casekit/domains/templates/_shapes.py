"""Building blocks shared by the templates made of rectangles and disks: the rectangle outline
and the parameter checks (each returns a list of problems naming the offending parameter)."""

from __future__ import annotations

import math
from typing import Any

from casekit.domains.geometry import Loop, polygon
from casekit.domains.template import problem
from casekit.errors import Problem

#: smallest gap between a hole and the outer boundary or another hole, relative to their size
MARGIN = 1e-3

#: tags of a rectangle's sides, counter-clockwise from the bottom
SIDES = ("bottom", "right", "top", "left")


def rectangle_loop(r: list[float]) -> Loop:
    """The counter-clockwise outline of [xmin, xmax, ymin, ymax], sides tagged :data:`SIDES`."""
    x0, x1, y0, y1 = r
    return polygon([(x0, y0), (x1, y0), (x1, y1), (x0, y1)], list(SIDES))


def rectangle_problems(name: str, r: list[float]) -> list[Problem]:
    x0, x1, y0, y1 = r
    if not (x0 < x1 and y0 < y1):
        return [problem(name, f"{name} must have xmin < xmax and ymin < ymax", "[xmin, xmax, ymin, ymax]")]
    return []


def radii_ordered(p: dict[str, Any]) -> list[Problem]:
    """``inner_radius`` < ``outer_radius``."""
    if p["inner_radius"] >= p["outer_radius"]:
        return [problem("inner_radius", "the inner radius must be smaller than the outer radius",
                        f"a number in (0, {p['outer_radius']:g})")]
    return []


def disk_in_rectangle(name: str, disk: dict[str, Any], r: list[float]) -> list[Problem]:
    (cx, cy), rad = disk["center"], disk["radius"]
    x0, x1, y0, y1 = r
    margin = MARGIN * max(x1 - x0, y1 - y0)
    if min(cx - x0, x1 - cx, cy - y0, y1 - cy) - rad <= margin:
        return [problem(name, f"{name} (centre ({cx:g}, {cy:g}), radius {rad:g}) must lie inside the "
                        "rectangle with a gap", f"a disk inside [{x0:g}, {x1:g}] x [{y0:g}, {y1:g}]")]
    return []


def disk_in_disk(name: str, inner: dict[str, Any], outer: dict[str, Any]) -> list[Problem]:
    gap = outer["radius"] - math.dist(outer["center"], inner["center"]) - inner["radius"]
    if gap <= MARGIN * outer["radius"]:
        return [problem(name, f"the {name} circle must lie strictly inside the outer circle",
                        "|c_outer - c_inner| + r_inner < r_outer")]
    return []


def disks_apart(name: str, a: dict[str, Any], b: dict[str, Any], what: str) -> list[Problem]:
    gap = math.dist(a["center"], b["center"]) - a["radius"] - b["radius"]
    if gap <= MARGIN * max(a["radius"], b["radius"]):
        return [problem(name, f"{what} overlap or touch", "disks whose centres are farther apart than "
                        "the sum of their radii")]
    return []
