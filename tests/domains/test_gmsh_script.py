"""The gmsh script of a domain is one thing: the source a prompt prints builds the very mesh
casekit meshes, for every template; numbers that depend on h print as what they compute."""

from __future__ import annotations

import math

import gmsh
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from casekit.domains import DOMAINS, resolve
from casekit.domains.codegen import gmsh_python
from casekit.domains.gmsh_script import H, at_least, rounded
from casekit.domains.meshing import MeshOptions, _fixed_options, extract, generate, gmsh_model


@pytest.mark.parametrize("name", DOMAINS.names())
def test_the_printed_script_meshes_what_casekit_meshes(name: str) -> None:
    d = resolve(name)
    options = MeshOptions(cells_across=10)
    expected = generate(d, options)
    source = "def build_gmsh_model(h):\n" + gmsh_python(d) + "\n"
    namespace: dict = {"gmsh": gmsh}
    exec(compile(source, f"<{name} script>", "exec"), namespace)
    with gmsh_model(resolve("unit_square"), MeshOptions(cells_across=2)):  # the lock and a live gmsh
        gmsh.clear()
        _fixed_options()
        namespace["build_gmsh_model"](options.h(d))
        printed = extract(d)
    assert printed.points.shape == expected.points.shape
    assert np.allclose(printed.points, expected.points) and np.array_equal(printed.cells, expected.cells)
    assert {t: len(f) for t, f in printed.facets.items()} == {t: len(f) for t, f in expected.facets.items()}


@given(h=st.floats(1e-3, 10.0), length=st.floats(1e-3, 10.0))
def test_numbers_of_h_print_as_what_they_compute(h: float, length: float) -> None:
    n = at_least(1, rounded(length / H)) + 1
    cond = length / 7 < H
    env = {"h": h, "round": round, "max": max}
    assert eval(n.text, env) == n.value(h)
    assert eval(cond.text, env) == cond.holds(h)


def test_an_elliptic_boundary_is_meshed_on_the_exact_curve() -> None:
    d = resolve("ellipse", {"center": [0.2, -0.1], "semi_axis_x": 0.4, "semi_axis_y": 0.7})
    mesh = generate(d, MeshOptions(cells_across=12, order=2))
    for tag in ("right", "left"):
        p = mesh.points[np.unique(mesh.facets[tag])]
        assert np.abs(((p[:, 0] - 0.2) / 0.4) ** 2 + ((p[:, 1] + 0.1) / 0.7) ** 2 - 1).max() < 1e-12
        assert (np.sign(p[:, 0] - 0.2) >= 0).all() if tag == "right" else (p[:, 0] - 0.2 <= 1e-12).all()
    assert abs(d.geometry.measure() - math.pi * 0.4 * 0.7) < 1e-12
