"""DOLFINx grids rectangles and boxes itself; the registry's boundary parts tag its facets."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.dolfinx


@pytest.mark.parametrize(("template", "params", "cell", "per_tag"), [
    ("unit_square", {}, "simplex", 7), ("unit_square", {}, "quad", 7), ("unit_cube", {}, "simplex", 49),
])
def test_boxes_are_gridded_by_dolfinx_with_the_registry_tags(template: str, params: dict, cell: str,
                                                            per_tag: int) -> None:
    import dolfinx_solver  # noqa: F401
    from dolfinx.mesh import compute_midpoints
    from mpi4py import MPI

    from casekit.domains import resolve
    from casekit.tracks.dolfinx.solvers.structured import structured_mesh

    domain = resolve(template, params)
    mesh, tags, ids = structured_mesh(domain, 1 / 6.5, cell, MPI.COMM_WORLD)  # 7 cells per side: never coarser
    assert set(ids) == set(domain.tags())
    for name, i in ids.items():
        facets = tags.find(i)
        per_facet = 2 if cell == "simplex" and domain.dim == 3 else 1
        assert len(facets) == per_tag * per_facet, name
        mid = compute_midpoints(mesh, domain.dim - 1, facets)
        assert np.all(domain.geometry.tag_distance(name, mid) < 1e-12)


@pytest.mark.parametrize("template", ["l_shape", "square_with_hole", "circle", "periodic_square", "star"])
def test_other_shapes_go_through_gmsh(template: str) -> None:
    from casekit.domains import resolve
    from casekit.tracks.dolfinx.solvers.structured import axis_aligned_box

    assert axis_aligned_box(resolve(template, {}).geometry) is None
