"""The dumbbell's disks may touch or overlap inside the bridge (three PDEAgent-Bench records have
disks touching at the bridge's centre); circles crossing outside the bridge are refused."""

from __future__ import annotations

import numpy as np
import pytest

from casekit.domains import resolve
from casekit.domains.level_set import boundary_level_set, covers
from casekit.domains.meshing import MeshOptions, generate, quality
from casekit.errors import CasekitError
from casekit.expr import to_numpy


def _params(left: tuple[float, float, float], right: tuple[float, float, float], width: float) -> dict:
    return {"left": {"center": [left[0], left[1]], "radius": left[2]},
            "right": {"center": [right[0], right[1]], "radius": right[2]}, "bridge_width": width}


ACCEPTED = {
    # biharmonic_dumbbell_v1, burgers_dumbbell_v2: the disks touch at (0.5, 0.5), inside the bridge
    "touching": _params((0.25, 0.5, 0.25), (0.75, 0.5, 0.25), 0.2),
    "overlapping_inside_the_bridge": _params((0.25, 0.5, 0.25), (0.72, 0.5, 0.25), 0.3),
    "touching_unequal": _params((0.3, 0.5, 0.3), (0.75, 0.5, 0.15), 0.2),
    "nearly_touching": _params((0.25, 0.5, 0.25), (0.7501, 0.5, 0.25), 0.2),
}


def _union(p: dict, pts: np.ndarray) -> np.ndarray:
    (lx, y), rl = p["left"]["center"], p["left"]["radius"]
    (rx, _), rr = p["right"]["center"], p["right"]["radius"]
    x_, y_ = pts[:, 0], pts[:, 1]
    return ((np.hypot(x_ - lx, y_ - y) < rl) | (np.hypot(x_ - rx, y_ - y) < rr)
            | ((lx <= x_) & (x_ <= rx) & (np.abs(y_ - y) <= p["bridge_width"] / 2)))


@pytest.mark.parametrize("name", list(ACCEPTED))
def test_disks_meeting_inside_the_bridge_make_a_valid_dumbbell(name: str) -> None:
    p = ACCEPTED[name]
    d = resolve("dumbbell", p)
    assert d.tags() == ["left_lobe", "bridge_bottom", "right_lobe", "bridge_top"]
    # the outline bounds the union of the disks and the bridge
    b = d.bbox()
    rng = np.random.default_rng(7)
    pts = np.column_stack([rng.uniform(b[0], b[1], 200_000), rng.uniform(b[2], b[3], 200_000)])
    far = d.geometry.distance(pts) > 1e-9
    assert np.array_equal(d.inside(pts)[far], _union(p, pts)[far])
    box = (b[1] - b[0]) * (b[3] - b[2])
    assert d.geometry.measure() == pytest.approx(box * _union(p, pts).mean(), rel=0.01)
    for cell in ("simplex", "quad"):
        mesh = generate(d, MeshOptions(cells_across=12, cell=cell))
        q = quality(mesh)
        assert q.ok and q.inverted == 0, (cell, q)
        assert mesh.measure() == pytest.approx(d.geometry.measure(), rel=0.02)
        assert set(mesh.facets) == set(d.tags())
    # the bubble's level set vanishes on every part and not inside
    phi = to_numpy(boundary_level_set(d), 2)
    assert covers(d)
    y = p["left"]["center"][1]
    assert abs(float(phi(np.array([[p["left"]["center"][0], y]]), 0.0)[0])) > 1e-3


REFUSED = [
    # burgers_dumbbell_v4: circles of radius 0.3 at x = 0.3, 0.7 cross at y = 0.5 +- 0.224, outside the
    # bridge of half-width 0.1 (the bridge lies inside the union of the disks)
    (_params((0.3, 0.5, 0.3), (0.7, 0.5, 0.3), 0.2), "/right", "overlap beyond the bridge"),
    (_params((0.3, 0.5, 0.3), (0.45, 0.5, 0.3), 0.2), "/right", "overlap beyond the bridge"),
    (_params((0.3, 0.5, 0.1), (0.45, 0.5, 0.4), 0.1), "/right", "overlap beyond the bridge"),  # nested
    (_params((0.25, 0.5, 0.25), (0.75, 0.5, 0.25), 0.48), "/bridge_width", "narrower than both disks"),
]


@pytest.mark.parametrize(("params", "pointer", "message"), REFUSED)
def test_circles_crossing_outside_the_bridge_are_refused(params: dict, pointer: str, message: str) -> None:
    with pytest.raises(CasekitError) as err:
        resolve("dumbbell", params)
    assert err.value.pointer == "/domain/params" + pointer
    assert message in err.value.message and err.value.valid and "\n" not in err.value.message
