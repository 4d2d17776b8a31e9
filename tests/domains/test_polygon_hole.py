"""square_with_polygon_hole: a rectangle with one polygonal hole (the PDEAgent-Bench records'
rectangular and polygonal ``inner_hole``); the registry-wide tests in test_templates.py cover it too."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from matplotlib.path import Path as MplPath
from typer.testing import CliRunner

from casekit.domains import resolve
from casekit.domains.level_set import boundary_level_set, covers
from casekit.domains.meshing import MeshOptions, generate, quality
from casekit.errors import CasekitError
from casekit.expr import to_numpy

NAME = "square_with_polygon_hole"

#: the holes of the public records (outer box, vertices); a rect bbox [x0, x1, y0, y1] is the
#: polygon of its corners counter-clockwise from (x0, y0)
RECORDS = {
    "rect": ([0, 1, 0, 1], [[0.4, 0.4], [0.6, 0.4], [0.6, 0.6], [0.4, 0.6]]),
    "rect_035": ([0, 1, 0, 1], [[0.35, 0.35], [0.65, 0.35], [0.65, 0.65], [0.35, 0.65]]),
    "triangle": ([0, 1, 0, 1], [[0.4, 0.4], [0.6, 0.4], [0.5, 0.7]]),
    "quadrilateral": ([0, 1, 0, 1], [[0.3, 0.3], [0.6, 0.35], [0.55, 0.65], [0.35, 0.6]]),
    "notched": ([-1, 1, -1, 1], [[-0.2, -0.2], [0.2, -0.2], [0.2, 0.2], [0, 0.1], [-0.2, 0.2]]),
    "notched_large": ([-1, 1, -1, 1], [[-0.3, -0.3], [0.3, -0.3], [0.3, 0.3], [0, 0.15], [-0.3, 0.3]]),
}


def _area(v: list[list[float]]) -> float:
    x, y = np.asarray(v, dtype=float).T
    return 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))


@pytest.mark.parametrize("hole", list(RECORDS))
@pytest.mark.parametrize("backwards", [False, True])
def test_the_records_holes_validate_mesh_and_mask(hole: str, backwards: bool) -> None:
    outer, vertices = RECORDS[hole]
    vertices = vertices[::-1] if backwards else vertices
    d = resolve(NAME, {"outer": outer, "vertices": vertices})
    assert d.tags() == ["bottom", "right", "top", "left", "hole"]
    x0, x1, y0, y1 = outer
    exact = (x1 - x0) * (y1 - y0) - _area(vertices)
    assert d.geometry.measure() == pytest.approx(exact, rel=1e-12)
    assert d.spec()["geometry_params"]["vertices"] == vertices  # as given, whatever the orientation

    for cell in ("simplex", "quad"):
        mesh = generate(d, MeshOptions(cells_across=10, cell=cell))
        q = quality(mesh)
        assert q.ok and q.inverted == 0, (cell, q)
        assert mesh.measure() == pytest.approx(exact, rel=1e-9)  # straight sides: exact
        hole_nodes = mesh.points[np.unique(mesh.facets["hole"])]
        assert np.abs(d.geometry.tag_distance("hole", hole_nodes)).max() < 1e-12
        assert len(mesh.facets["hole"]) >= len(vertices)

    # the inside test is the rectangle minus the open polygon (matplotlib's own point-in-polygon)
    rng = np.random.default_rng(3)
    pts = np.column_stack([rng.uniform(x0, x1, 20000), rng.uniform(y0, y1, 20000)])
    in_hole = MplPath(np.asarray(vertices, dtype=float)).contains_points(pts)
    far = d.geometry.distance(pts) > 1e-6
    assert np.array_equal(d.inside(pts)[far], ~in_hole[far])
    assert d.inside(np.asarray(vertices, dtype=float)).all()  # the hole's boundary is in the domain


@pytest.mark.parametrize("hole", list(RECORDS))
def test_the_level_set_vanishes_on_every_side_and_the_hole_exactly(hole: str) -> None:
    """The bubble's level set: zero on each side and each hole edge, nonzero inside, with rational
    coefficients (the unit normal of a slanted edge computed in floats, -0.5999999999999996 for
    -0.6, left round-off that failed the exact residual check of a manufactured case)."""
    import sympy as sp

    outer, vertices = RECORDS[hole]
    d = resolve(NAME, {"outer": outer, "vertices": vertices})
    phi = boundary_level_set(d)
    assert covers(d)
    assert not phi.atoms(sp.Float), phi
    f = to_numpy(phi, 2)
    for tag in d.tags():
        assert np.abs(f(d.geometry.tag_points(tag), 0.0)).max() < 1e-12, tag
    x0, x1, y0, y1 = outer
    inner = np.array([[x0 + 0.05 * (x1 - x0), y0 + 0.5 * (y1 - y0)], [x0 + 0.5 * (x1 - x0), y0 + 0.05 * (y1 - y0)]])
    assert (np.abs(f(inner, 0.0)) > 1e-6).all()


BAD = [
    ({"vertices": [[0.4, 0.4], [0.6, 0.4]]}, "/vertices", "3 to 32 vertices"),
    ({"vertices": [[0.4, 0.4], [1.0, 0.4], [0.5, 0.7]]}, "/vertices/1", "inside the outer rectangle"),
    ({"vertices": [[0.4, 0.4], [0.6, 0.6], [0.6, 0.4], [0.4, 0.6]]}, "/vertices", "edges 0-1 and 2-3 cross"),
    ({"vertices": [[0.4, 0.4], [0.6, 0.4], [0.6, 0.6], [0.5, 0.4], [0.4, 0.6]]}, "/vertices", "cross or touch"),
    ({"vertices": [[0.4, 0.4], [0.4, 0.4], [0.6, 0.6], [0.3, 0.6]]}, "/vertices/1", "coincide"),
    ({"vertices": [[0.4, 0.4], [0.6, 0.4], [0.5, 0.4], [0.5, 0.6]]}, "/vertices/1", "fold back"),
    ({"vertices": [[0.4, 0.4], [0.5, 0.5], [0.6, 0.6]]}, "/vertices", "no area"),
    ({"vertices": [[0.4], [0.6, 0.4], [0.5, 0.7]]}, "/vertices/0", "exactly 2 components is expected, this one has 1"),
    ({"outer": [0, 1, 1, 0]}, "/outer", "ymin < ymax"),
    ({"hole": {"center": [0.5, 0.5], "radius": 0.1}}, "/hole", "unknown field"),
]


@pytest.mark.parametrize(("params", "pointer", "message"), BAD, ids=[b[2] for b in BAD])
def test_bad_parameters_are_refused_naming_the_parameter(params: dict, pointer: str, message: str) -> None:
    with pytest.raises(CasekitError) as err:
        resolve(NAME, params)
    assert err.value.pointer == "/domain/params" + pointer
    assert message in err.value.message and "\n" not in err.value.message
    if pointer != "/vertices/0":  # a schema error on an item's shape names it without a hint
        assert err.value.valid


def test_bad_vertices_are_one_clear_line_on_the_command_line() -> None:
    from casekit.cli import app

    result = CliRunner().invoke(app, ["domain", "show", NAME, "--param",
                                      "vertices=[[0.4,0.4],[0.6,0.6],[0.6,0.4],[0.4,0.6]]"])
    assert result.exit_code == 2  # a refused --param is a usage error, named by its option
    line = result.output.strip()
    assert "\n" not in line and "--param vertices" in line and "cross or touch" in line
    assert "valid: a simple polygon" in line


@pytest.mark.dolfinx
def test_a_manufactured_poisson_case_builds_on_dolfinx(tmp_path: Path) -> None:
    from casekit.build.pipeline import BuildOptions
    from casekit.build.run import build
    from casekit.runner.limits import Limits
    from tests.helpers import build_source, coarse_case

    # the default hole has slanted edges of rational slope: before their level sets were made
    # exact, no draw passed the residual check
    src = build_source("poisson", NAME, {"bc": "dirichlet"}, 0)
    assert src["domain"]["template"] == NAME
    path = coarse_case(tmp_path, src, ["dolfinx"], 24)
    [o] = build([path], BuildOptions(tmp_path / "build", "dolfinx", repeats=1, limits=Limits(timeout_sec=300)))
    assert o.status == "built", o.reason
