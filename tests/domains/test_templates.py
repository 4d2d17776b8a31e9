"""Every domain template: measure, inside-test, tags, periodicity, determinism, parameters."""

from __future__ import annotations

import copy
import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casekit.domains import DOMAINS, resolve
from casekit.domains.meshing import MeshOptions, generate, quality
from casekit.errors import CasekitError

ALL = DOMAINS.names()
TWO_D = [n for n in ALL if DOMAINS.get(n).dim == 2]


def test_the_papers_fourteen_templates_are_registered() -> None:
    paper = {"unit_square", "unit_cube", "l_shape", "square_with_hole", "multi_hole", "circle", "annulus",
             "eccentric_annulus", "sector", "star", "gear", "t_junction", "dumbbell", "periodic_square"}
    assert paper <= set(ALL)  # more templates may be registered; these must be


def _boundary_facets(mesh) -> set[tuple[int, ...]]:
    cells = mesh.corner_cells()
    if mesh.dim == 2:
        k = cells.shape[1]
        edges = Counter(tuple(sorted((c[i], c[(i + 1) % k]))) for c in cells for i in range(k))
    else:
        faces = ([(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)] if cells.shape[1] == 4 else
                 [(0, 1, 2, 3), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7)])
        edges = Counter(tuple(sorted(c[list(f)])) for c in cells for f in faces)
    return {e for e, n in edges.items() if n == 1}


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("cell", ["simplex", "quad"])
def test_measure_converges_and_mesh_is_valid(name: str, cell: str) -> None:
    d = resolve(name)
    exact = d.geometry.measure()
    errors = []
    for n in (16, 32) if d.dim == 2 else (4, 8):
        # without the small-feature rule (>= 16 nodes per circle), so h alone sets the size
        mesh = generate(d, MeshOptions(cells_across=n, cell=cell, refine=False))
        q = quality(mesh)
        assert q.ok and q.inverted == 0
        if q.min_angle_deg is not None:
            assert q.min_angle_deg > 15
        errors.append(abs(mesh.measure() - exact) / exact)
    assert errors[1] < 0.02
    # converging (straight-sided shapes are exact; tiny errors may cancel by chance)
    assert errors[1] <= errors[0] * 0.6 or errors[1] < 1e-4


@pytest.mark.parametrize("name", ALL)
def test_tags_cover_the_boundary_exactly_once(name: str) -> None:
    d = resolve(name)
    mesh = generate(d, MeshOptions(cells_across=12 if d.dim == 2 else 5))
    boundary = _boundary_facets(mesh)
    k = 2 if d.dim == 2 else mesh.corner_cells().shape[1] - 1 if mesh.cell_type.startswith("tetra") else 4
    tagged = Counter(tuple(sorted(f[:k])) for facets in mesh.facets.values() for f in facets)
    assert set(tagged) == boundary
    assert max(tagged.values()) == 1
    # a facet's midpoint is on its tag's part, or within the sagitta of a chord of its curve
    rho = min((min(c["semi_axes"]) ** 2 / max(c["semi_axes"]) for c in d.geometry.charts()), default=math.inf)
    for tag, facets in mesh.facets.items():
        mids = mesh.points[facets[:, :k]].mean(axis=1)
        chord = np.linalg.norm(np.ptp(mesh.points[facets[:, :k]], axis=1), axis=1)
        assert (d.geometry.tag_distance(tag, mids) <= 1.01 * chord**2 / (8 * rho) + 1e-9).all()
        if d.dim == 2:
            length = np.linalg.norm(mesh.points[facets[:, 1]] - mesh.points[facets[:, 0]], axis=1).sum()
            assert length == pytest.approx(d.geometry.boundary_length(tag), rel=0.02)


def _in_cells(points: np.ndarray, mesh) -> np.ndarray:
    """Whether each point lies in some triangle of the mesh (barycentric test)."""
    tri = mesh.points[mesh.corner_cells()]
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    v0, v1 = b - a, c - a
    den = v0[:, 0] * v1[:, 1] - v1[:, 0] * v0[:, 1]
    found = np.zeros(len(points), dtype=bool)
    for i, p in enumerate(points):
        w = p - a
        s = (w[:, 0] * v1[:, 1] - v1[:, 0] * w[:, 1]) / den
        t = (v0[:, 0] * w[:, 1] - w[:, 0] * v0[:, 1]) / den
        found[i] = np.any((s >= -1e-12) & (t >= -1e-12) & (s + t <= 1 + 1e-12))
    return found


@pytest.mark.parametrize("name", TWO_D)
def test_inside_test_agrees_with_the_mesh(name: str) -> None:
    d = resolve(name)
    opts = MeshOptions(cells_across=16)
    mesh = generate(d, opts)
    assert d.inside(mesh.centroids()).all()
    rng = np.random.default_rng(1)
    b = d.bbox()
    pts = np.column_stack([rng.uniform(b[0], b[1], 3000), rng.uniform(b[2], b[3], 3000)])
    inside = d.inside(pts)
    deep = inside & (d.geometry.distance(pts) > opts.h(d))
    assert _in_cells(pts[deep][:400], mesh).all()
    outside = ~inside & (d.geometry.distance(pts) > opts.h(d))
    assert not _in_cells(pts[outside][:400], mesh).any()
    # boundary points count as inside (the documented tolerance)
    for p in d.geometry.pieces():
        assert d.inside(p.segment.sample(7)).all()


def test_periodic_pairs_match_node_for_node() -> None:
    d = resolve("periodic_square", {"bounds": [0.0, 2.0, 0.0, 1.0]})
    for cell in ("simplex", "quad"):
        mesh = generate(d, MeshOptions(cells_across=12, cell=cell, order=2))
        for pair in d.geometry.periodic:
            nodes = mesh.periodic_nodes[pair.source, pair.target]
            assert len(nodes) > 3
            shift = mesh.points[nodes[:, 1]] - mesh.points[nodes[:, 0]]
            assert np.allclose(shift, pair.translation, atol=1e-9)
            on_target = d.geometry.tag_distance(pair.target, mesh.points) < 1e-9
            assert set(nodes[:, 1]) == set(np.flatnonzero(on_target))


@pytest.mark.parametrize("name", ["gear", "dumbbell", "unit_cube"])
def test_meshing_is_deterministic(name: str) -> None:
    d = resolve(name)
    a, b = generate(d, MeshOptions(cells_across=10)), generate(d, MeshOptions(cells_across=10))
    assert np.array_equal(a.points, b.points) and np.array_equal(a.cells, b.cells)


INVALID = [
    ("annulus", {"inner_radius": 0.6}, "/inner_radius", "smaller than the outer radius"),
    ("annulus", {"inner_raduis": 0.1}, "/inner_raduis", "unknown field"),
    ("circle", {"radius": -1}, "/radius", "less than or equal to the minimum"),
    ("circle", {"center": [0, 0, 0]}, "/center", "a list of 2 to 2 components is expected, this one has 3"),
    ("star", {"points": 2}, "/points", "less than the minimum"),
    ("star", {"points": 5.5}, "/points", "must be an integer, not 5.5"),
    ("gear", {"teeth": 2}, "/teeth", "less than the minimum"),
    ("gear", {"tooth_width": 0.95}, "/tooth_width", "greater than the maximum"),
    ("sector", {"angle": 360}, "/angle", "greater than or equal to the maximum"),
    ("square_with_hole", {"hole": {"center": [0.9, 0.5], "radius": 0.2}}, "/hole", "inside the rectangle"),
    ("multi_hole", {"holes": [{"center": [0.3, 0.3], "radius": 0.2}, {"center": [0.4, 0.3], "radius": 0.2}]},
     "/holes/1", "overlap"),
    ("eccentric_annulus", {"inner": {"center": [0.9, 0.5], "radius": 0.2}}, "/inner", "strictly inside"),
    ("t_junction", {"stem": [0.4, 0.6, 0.0, 0.7]}, "/stem", "end exactly at the bottom of the bar"),
    ("t_junction", {"stem": [-0.1, 0.6, 0.0, 0.8]}, "/stem", "strictly between the ends"),
    ("dumbbell", {"bridge_width": 0.5}, "/bridge_width", "narrower than both disks"),
    ("dumbbell", {"right": {"center": [0.3, 0.5], "radius": 0.18}}, "/right", "overlap beyond the bridge"),
    ("square_with_polygon_hole", {"vertices": [[0.4, 0.4], [0.6, 0.6], [0.6, 0.4], [0.4, 0.6]]}, "/vertices",
     "cross or touch"),
    ("square_with_polygon_hole", {"vertices": [[0.4, 0.4], [1.2, 0.4], [0.5, 0.7]]}, "/vertices/1",
     "inside the outer rectangle"),
    ("l_shape", {"corner": [1.5, 0.5]}, "/corner", "strictly inside"),
    ("unit_square", {"x1": -1}, "/x1", "greater than x0"),
    ("periodic_square", {"bounds": [0, 1, 1, 0]}, "/bounds", "ymin < ymax"),
]


@pytest.mark.parametrize(("name", "params", "pointer", "message"), INVALID,
                         ids=[f"{i[0]}{i[2]}" for i in INVALID])
def test_invalid_parameters_are_named(name: str, params: dict, pointer: str, message: str) -> None:
    with pytest.raises(CasekitError) as err:
        resolve(name, params)
    assert err.value.pointer == "/domain/params" + pointer
    assert message in err.value.message


def _perturbed(name: str, scale: float, shift: float) -> dict:
    """The default parameters with every number scaled/shifted a little."""
    params = copy.deepcopy(DOMAINS.get(name).defaults())

    def walk(v):
        if isinstance(v, bool):
            return v
        if isinstance(v, int):
            return v
        if isinstance(v, float):
            return v * scale + shift
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, dict):
            return {k: (walk(x) if k != "radius" else x * scale) for k, x in v.items()}
        return v

    return {k: walk(v) for k, v in params.items()}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(ALL), st.floats(0.6, 1.8), st.floats(-0.5, 0.5), st.sampled_from(["simplex", "quad"]))
def test_valid_parameter_ranges_mesh_cleanly(name: str, scale: float, shift: float, cell: str) -> None:
    params = _perturbed(name, scale, shift)
    try:
        d = resolve(name, params)
    except CasekitError as exc:  # a perturbation may violate a constraint: it must say which parameter
        assert exc.pointer.startswith("/domain/params/") and exc.message
        return
    mesh = generate(d, MeshOptions(cells_across=8 if d.dim == 2 else 4, cell=cell))
    assert quality(mesh).inverted == 0
    assert abs(mesh.measure() - d.geometry.measure()) / d.geometry.measure() < 0.05


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(ALL), st.dictionaries(st.text(min_size=1, max_size=8), st.one_of(
    st.integers(-5, 5), st.floats(-5, 5, allow_nan=False), st.text(max_size=5), st.lists(st.floats(-2, 2), max_size=5)),
    max_size=3))
def test_arbitrary_parameters_give_clear_errors(name: str, params: dict) -> None:
    try:
        resolve(name, params)
    except CasekitError as exc:
        assert exc.pointer.startswith("/domain/params") and exc.message


@pytest.mark.parametrize("cells_across", [6, 12])
def test_recombined_quads_around_small_holes_are_not_folded(cells_across: int) -> None:
    """Regression: hypothesis found 3 folded quads on multi_hole at these sizes."""
    mesh = generate(resolve("multi_hole"), MeshOptions(cells_across=cells_across, cell="quad"))
    assert quality(mesh).inverted == 0


@settings(max_examples=40, deadline=None)
@given(cx=st.floats(-2, 2), cy=st.floats(-2, 2), a=st.floats(0.05, 3), b=st.floats(0.05, 3),
       start=st.floats(-7, 7), sweep=st.floats(0.1, 6.2), backwards=st.booleans(), seed=st.integers(0, 99))
def test_elliptic_arcs_measure_project_and_bound_like_their_curve(cx, cy, a, b, start, sweep, backwards,
                                                                  seed) -> None:  # type: ignore[no-untyped-def]
    """An elliptic arc's length, projection and distance agree with the curve sampled finely;
    a projected point is on the ellipse; a circle is the special case of equal semi-axes."""
    from casekit.domains.geometry import Arc, EllipticArc

    arc = EllipticArc((cx, cy), (a, b), start, -sweep if backwards else sweep)
    fine = arc.sample(20001)
    assert arc.length() == pytest.approx(np.linalg.norm(np.diff(fine, axis=0), axis=1).sum(), rel=1e-6)
    assert arc.reversed().length() == pytest.approx(arc.length())
    rng = np.random.default_rng(seed)
    pts = np.array([cx, cy]) + rng.uniform(-1.5, 1.5, (50, 2)) * max(a, b)
    brute = np.min(np.linalg.norm(pts[:, None, :] - fine[None], axis=2), axis=1)
    assert np.allclose(arc.distance(pts), brute, atol=2e-4 * max(a, b))
    near = fine[::997] + rng.normal(0, 0.01 * min(a, b), (len(fine[::997]), 2))
    q = arc.project(near)
    assert np.allclose(((q[:, 0] - cx) / a) ** 2 + ((q[:, 1] - cy) / b) ** 2, 1.0, atol=1e-10)
    circle, ellipse = Arc((cx, cy), a, start, sweep), EllipticArc((cx, cy), (a, a), start, sweep)
    assert circle.green() == pytest.approx(ellipse.green()) and circle.length() == pytest.approx(ellipse.length())
    assert np.allclose(circle.distance(pts), ellipse.distance(pts), atol=1e-9 * a)
