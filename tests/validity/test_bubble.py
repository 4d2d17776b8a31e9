"""Every manufactured solution carries a part that vanishes on the boundary
(``casekit.authoring.catalogue.bubble``): the closed-form level set it is built on vanishes on
every template's boundary, stays within [-1, 1] inside, and a drawn solution differs from what
any fit to its boundary data can give."""

from __future__ import annotations

import numpy as np
import pytest

from casekit.domains import DOMAINS, resolve
from casekit.domains.level_set import MAX_DEGREE, boundary_level_set, covers, interior_samples
from casekit.expr import COORDS, to_numpy

#: outlines whose carriers' product passes MAX_DEGREE: the level set vanishes on part of them
PARTIAL = {"gear"}


@pytest.mark.parametrize("name", sorted(DOMAINS.names()))
def test_the_level_set_vanishes_on_the_boundary_and_is_scaled_inside(name: str) -> None:
    import sympy as sp

    domain = resolve(name)
    phi = boundary_level_set(domain)
    assert sp.Poly(phi, *COORDS[: domain.dim]).total_degree() <= MAX_DEGREE
    assert covers(domain) == (name not in PARTIAL)
    values = np.asarray(to_numpy(phi, domain.dim)(interior_samples(domain), 0.0), dtype=float)
    assert np.max(np.abs(values)) == pytest.approx(1.0, rel=0.01)
    assert not any(abs(a) < 1e-12 for a in phi.atoms(sp.Float))  # no round-off in a normal


def test_periodic_sides_are_left_free() -> None:
    domain = resolve("periodic_square")
    pair = domain.geometry.periodic[0]
    phi = boundary_level_set(domain, skip=(pair.source, pair.target))
    f = to_numpy(phi, 2)
    for tag in (pair.source, pair.target):
        assert np.max(np.abs(f(domain.geometry.tag_points(tag), 0.0))) > 0.1


@pytest.mark.parametrize("name", ["unit_square", "annulus", "l_shape", "sector"])
def test_on_flux_parts_the_slope_vanishes_too(name: str) -> None:
    """A Neumann or Robin datum shows a simple zero's slope: on ``flat`` parts the level set is
    squared, so value and normal derivative vanish there."""
    import sympy as sp

    domain = resolve(name)
    flux = domain.tags()[0]
    phi = boundary_level_set(domain, flat=[flux])
    grad = [to_numpy(sp.diff(phi, c), 2) for c in COORDS[:2]]
    points, normals = domain.geometry.tag_points(flux), domain.geometry.tag_normals(flux)
    slope = sum(np.asarray(g(points, 0.0), dtype=float) * normals[:, i] for i, g in enumerate(grad))
    assert np.max(np.abs(slope)) < 1e-9
    assert np.max(np.abs(to_numpy(phi, 2)(points, 0.0))) < 1e-9
    plain = boundary_level_set(domain)  # a simple zero: the slope shows
    grad = [to_numpy(sp.diff(plain, c), 2) for c in COORDS[:2]]
    assert np.max(np.abs(sum(np.asarray(g(points, 0.0), dtype=float) * normals[:, i]
                             for i, g in enumerate(grad)))) > 0.1
