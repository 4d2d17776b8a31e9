"""NGSolve grids rectangles and boxes itself (``solvers/structured.py``): n = ceil(L / h) cells
per side, boundary regions named exactly by the registry's tags, each with its side's length or
area and outward normal; every other shape goes through netgen; a Poisson solve on the grid
converges at its order."""

from __future__ import annotations

import json
import math
import textwrap
from pathlib import Path

import numpy as np
import pytest

from casekit.domains import resolve
from casekit.tracks import TRACKS
from casekit.tracks.ngsolve.solvers.structured import axis_aligned_box

from ..measure import assert_observed_order

pytestmark = pytest.mark.ngsolve

ROOT = str(Path(__file__).resolve().parents[3])

#: (template, geometry params): the defaults and a shifted, stretched one (the generators' mapping)
BOXES = [("unit_square", {}), ("unit_square", {"x0": -1.0, "x1": 2.0, "y0": 0.5, "y1": 1.0}),
         ("unit_cube", {}), ("unit_cube", {"x0": -1.0, "x1": 1.0, "y0": 0.0, "y1": 0.5, "z0": 2.0, "z1": 3.0})]
#: shapes a structured grid cannot carry (a re-entrant corner, a hole, curves, periodic sides)
OTHERS = ["l_shape", "square_with_hole", "circle", "periodic_square", "star"]
CELLS_ACROSS = 9

_MESHES = """
    import json
    import ngsolve as ng
    from casekit.domains import resolve
    from casekit.tracks.ngsolve.solvers.geometry import mesh
    from casekit.tracks.ngsolve.solvers.structured import structured_mesh

    job, out = json.load(open("shapes.json")), []
    cells = job["cells"]
    for template, params in job["shapes"]:
        dom = resolve(template, params)
        spec = {"domain": {"type": template, "dim": dom.dim, "geometry_params": params}, "bc": {}}
        m = mesh(spec, cells, 2)
        n = ng.specialcf.normal(m.dim)
        tags = {}
        for tag in set(m.GetBoundaries()):
            on = m.Boundaries(tag)
            tags[tag] = {"measure": ng.Integrate(1, m, ng.BND, definedon=on),
                         "normal": [ng.Integrate(n[i], m, ng.BND, definedon=on) for i in range(m.dim)]}
        grid = structured_mesh(dom.geometry, dom.geometry.diameter() / cells) is not None
        out.append({"ne": m.ne, "volume": ng.Integrate(1, m), "tags": tags, "structured": grid})
    print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def meshes(tmp_path_factory: pytest.TempPathFactory) -> dict:  # type: ignore[type-arg]
    """The track's mesh of every box and every other shape, measured in NGSolve's interpreter."""
    shapes = [*BOXES, *[(t, {}) for t in OTHERS]]
    work = tmp_path_factory.mktemp("meshes")
    (work / "shapes.json").write_text(json.dumps({"cells": CELLS_ACROSS, "shapes": shapes}))
    raw = TRACKS.get("ngsolve")._run_python(textwrap.dedent(_MESHES), work, path=ROOT)  # type: ignore[attr-defined]
    return {(t, json.dumps(p)): r for (t, p), r in zip(shapes, json.loads(raw.strip().splitlines()[-1]), strict=True)}


@pytest.mark.parametrize(("template", "params"), BOXES)
def test_boxes_are_gridded_by_ngsolve_with_the_registry_tags(meshes: dict, template: str,  # type: ignore[type-arg]
                                                             params: dict) -> None:  # type: ignore[type-arg]
    got = meshes[template, json.dumps(params)]
    geometry = resolve(template, params).geometry
    lo, hi = (np.asarray(v, dtype=float) for v in axis_aligned_box(geometry))  # type: ignore[misc]
    n = [math.ceil(float(b - a) * CELLS_ACROSS / geometry.diameter() - 1e-9) for a, b in zip(lo, hi, strict=True)]
    assert got["structured"]
    assert got["ne"] == math.prod(n) * (2 if len(n) == 2 else 6)  # simplices: a square in two, a cube in six
    assert got["volume"] == pytest.approx(float(np.prod(hi - lo)), rel=1e-12)
    assert set(got["tags"]) == set(geometry.tags())
    for tag, part in got["tags"].items():
        assert part["measure"] == pytest.approx(geometry.boundary_length(tag), rel=1e-12), tag
        # outward: the normal integrates to the side's measure along one axis, and points to the side
        normal = np.array(part["normal"])
        axis = int(np.argmax(np.abs(normal)))
        assert abs(normal[axis]) == pytest.approx(part["measure"], rel=1e-12), tag
        side = (lo + hi) / 2 + np.sign(normal[axis]) * (hi - lo) / 2 * np.eye(len(n))[axis]
        assert geometry.tag_distance(tag, side[None, :])[0] < 1e-12, (tag, normal)


@pytest.mark.parametrize("template", OTHERS)
def test_other_shapes_go_through_netgen(meshes: dict, template: str) -> None:  # type: ignore[type-arg]
    assert axis_aligned_box(resolve(template, {}).geometry) is None
    got = meshes[template, "{}"]
    assert not got["structured"]
    geometry = resolve(template, {}).geometry
    assert set(got["tags"]) == set(geometry.tags())


@pytest.mark.parametrize(("degree", "bc", "order"), [(1, "dirichlet", 2), (2, "robin", 3)])
def test_poisson_on_the_structured_square_converges_at_its_order(degree: int, bc: str, order: int,
                                                                  tmp_path: Path) -> None:
    """P1 with Dirichlet data on every tag by name, P2 with Robin sides (``ds(tag)``), on grids of
    13 and 25 cells per side (the case's cells_across 17 and 34 over the diagonal)."""
    track, cells = TRACKS.get("ngsolve"), []

    def solve(d: object, settings: dict, n: int) -> Path:  # type: ignore[type-arg]
        out = track.solve_directly(d.case_spec(), settings, tmp_path / str(n))  # type: ignore[attr-defined]
        cells.append(json.loads((out.parent / "meta.json").read_text())["solver_info"]["cells"])
        return out

    assert_observed_order("poisson", "unit_square", {"bc": bc}, degree, (17, 34), order, solve)
    assert cells == [2 * 13 ** 2, 2 * 25 ** 2]  # ceil(17 / sqrt 2) = 13, ceil(34 / sqrt 2) = 25 per side
