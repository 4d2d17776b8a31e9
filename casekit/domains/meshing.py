"""Meshing a domain with gmsh: one model for every track.

:func:`gmsh_model` runs the domain's gmsh script (``casekit.domains.model``, the same one prompts
print) and meshes it, and yields it while gmsh is live (the DOLFINx track hands it to ``dolfinx.io.gmsh``, the deal.II
track writes it to a ``.msh`` file); :func:`generate` returns plain arrays (:class:`MeshData`)
for quality checks, pictures and meshio output.  Boundary tags become named physical groups;
periodic pairs become gmsh periodicity constraints, so paired sides match node for node.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import gmsh
import numpy as np

from casekit.domains import model
from casekit.domains.model import DOMAIN_GROUP
from casekit.domains.template import Domain
from casekit.errors import CasekitError

#: gmsh element type -> (meshio name, topological dimension)
GMSH_TYPES = {
    1: ("line", 1), 8: ("line3", 1),
    2: ("triangle", 2), 9: ("triangle6", 2), 3: ("quad", 2), 10: ("quad9", 2), 16: ("quad8", 2),
    4: ("tetra", 3), 11: ("tetra10", 3), 5: ("hexahedron", 3), 12: ("hexahedron27", 3),
}


@dataclass(frozen=True)
class MeshOptions:
    """How fine and of what kind a mesh is.

    ``cells_across`` is the target number of cells across the domain's diameter
    (h = diameter / cells_across).  ``refine`` puts at least 16 nodes on every circle and, with
    ``corners``, makes cells 4x smaller near the template's refinement points (re-entrant
    corners).
    """

    cells_across: int = 20
    order: int = 1
    cell: str = "simplex"
    refine: bool = True
    corners: bool = True

    def __post_init__(self) -> None:
        if not 2 <= self.cells_across <= 4000:
            raise CasekitError(f"cells_across {self.cells_across} is out of range", valid="2..4000")
        if self.order not in (1, 2):
            raise CasekitError(f"geometry order {self.order} is not supported", valid="1, 2")
        if self.cell not in ("simplex", "quad"):
            raise CasekitError(f"cell kind {self.cell!r} is not supported", valid="simplex, quad")

    def h(self, domain: Domain) -> float:
        return domain.geometry.diameter() / self.cells_across


@dataclass
class MeshData:
    """A mesh as arrays: ``points`` (N, dim), ``cells`` (M, k) node indices of the
    ``cell_type`` cells, and per boundary tag its facets (node indices)."""

    dim: int
    points: np.ndarray
    cell_type: str
    cells: np.ndarray
    facet_type: str
    facets: dict[str, np.ndarray] = field(default_factory=dict)
    #: tag name -> physical group id in the gmsh model
    tag_ids: dict[str, int] = field(default_factory=dict)
    #: (source tag, target tag) -> array of (source node, target node) index pairs
    periodic_nodes: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)

    @property
    def num_cells(self) -> int:
        return int(self.cells.shape[0])

    def corner_cells(self) -> np.ndarray:
        """Cells by their corner nodes only (drops the extra nodes of order-2 cells)."""
        k = {"triangle": 3, "quad": 4, "tetra": 4, "hexahedron": 8}[self.cell_type.rstrip("0123456789")]
        return self.cells[:, :k]

    def measure(self) -> float:
        return float(cell_measures(self).sum())

    def centroids(self) -> np.ndarray:
        return self.points[self.corner_cells()].mean(axis=1)

    def corner_facets(self, tag: str) -> np.ndarray:
        """The facets of a tag by their corner nodes only."""
        k = {"line": 2, "triangle": 3, "quad": 4}[self.facet_type.rstrip("0123456789")]
        return self.facets[tag][:, :k]

    def facet_measures(self, tag: str) -> np.ndarray:
        """Length (2-D) or area (3-D) of each facet of a tag, from its corner nodes (the
        straight-sided facet; quadrilaterals are split into two triangles)."""
        f, p = self.corner_facets(tag), self.points
        if self.dim == 2:
            return np.linalg.norm(p[f[:, 1]] - p[f[:, 0]], axis=1)

        def tri(i: int, j: int, k: int) -> np.ndarray:
            return 0.5 * np.linalg.norm(np.cross(p[f[:, j]] - p[f[:, i]], p[f[:, k]] - p[f[:, i]]), axis=1)

        return tri(0, 1, 2) + (tri(0, 2, 3) if f.shape[1] == 4 else 0.0)

    def to_meshio(self) -> Any:
        import meshio

        cell_data = {}
        cells = [(self.cell_type, self.cells)]
        tags = [np.zeros(self.num_cells, dtype=np.int32)]
        for name, facets in self.facets.items():
            cells.append((self.facet_type, facets))
            tags.append(np.full(len(facets), self.tag_ids[name], dtype=np.int32))
        cell_data["gmsh:physical"] = tags
        cell_data["gmsh:geometrical"] = [t.copy() for t in tags]
        field_data = {name: np.array([i, self.dim - 1]) for name, i in self.tag_ids.items()}
        field_data[DOMAIN_GROUP] = np.array([0, self.dim])
        return meshio.Mesh(self.points, cells, cell_data=cell_data, field_data=field_data)


@dataclass(frozen=True)
class MeshQuality:
    num_cells: int
    min_angle_deg: float | None  # simplices only
    min_relative_measure: float
    inverted: int

    @property
    def ok(self) -> bool:
        return self.inverted == 0 and self.min_relative_measure > 0


# --------------------------------------------------------------------------- gmsh model
@contextmanager
def gmsh_model(domain: Domain, options: MeshOptions | None = None) -> Iterator[Any]:
    """Build and mesh the domain; yields the live ``gmsh`` module (single-threaded, fixed
    options, so the same input gives the same mesh)."""
    options = options or MeshOptions()
    if options.cell not in domain.template.cells:
        raise CasekitError(
            f"domain template {domain.name!r} cannot be meshed with {options.cell} cells",
            valid=", ".join(domain.template.cells),
        )
    with _GMSH_LOCK:
        gmsh.initialize(["-noenv"], interruptible=False)  # no signal handlers: usable from threads
        try:
            gmsh.model.add(domain.name)
            _build_and_mesh(domain, options)
            yield gmsh
        finally:
            gmsh.finalize()


#: gmsh is one global state per process: one model at a time
_GMSH_LOCK = threading.RLock()


def _build_and_mesh(domain: Domain, options: MeshOptions) -> None:
    _fixed_options()
    model.script(domain.geometry, cell=options.cell, refine=options.refine,
                 corners=options.corners).run(gmsh, options.h(domain))
    try:
        gmsh.model.mesh.generate(domain.dim)
        if options.cell == "quad" and domain.dim == 2 and not model.structured(domain.geometry, options.cell):
            gmsh.model.mesh.recombine()
            # recombination near small holes can fold a few quads (multi_hole at some sizes):
            # untangle only then (it is slow, and valid meshes stay as they are)
            if quality(extract(domain)).inverted:
                gmsh.model.mesh.optimize("UntangleMeshGeometry")
        if options.order > 1:
            gmsh.model.mesh.setOrder(options.order)
    except Exception as exc:  # gmsh raises plain Exception with its log message
        raise CasekitError(f"gmsh could not mesh domain {domain.name!r}: {exc}") from None


def _fixed_options() -> None:
    for name, value in {
        "General.Terminal": 0, "General.Verbosity": 1, "General.NumThreads": 1,
        "Mesh.MaxNumThreads1D": 1, "Mesh.MaxNumThreads2D": 1, "Mesh.MaxNumThreads3D": 1,
        "Mesh.RandomSeed": 1, "Mesh.Algorithm": 6, "Mesh.Algorithm3D": 1,
        "Mesh.MeshSizeFromPoints": 0, "Mesh.MeshSizeFromCurvature": 0,
        "Mesh.MeshSizeExtendFromBoundary": 0, "Mesh.Optimize": 1,
        "Mesh.SecondOrderLinear": 0, "Mesh.HighOrderOptimize": 0,
    }.items():
        gmsh.option.setNumber(name, value)


def _group_entities(dim: int, name: str) -> list[int]:
    for d, tag in gmsh.model.getPhysicalGroups(dim):
        if gmsh.model.getPhysicalName(d, tag) == name:
            return [int(e) for e in gmsh.model.getEntitiesForPhysicalGroup(d, tag)]
    raise KeyError(name)


# --------------------------------------------------------------------------- arrays
def generate(domain: Domain, options: MeshOptions | None = None) -> MeshData:
    """Mesh the domain and return the mesh as arrays."""
    with gmsh_model(domain, options):
        return extract(domain)


def extract(domain: Domain) -> MeshData:
    """The live gmsh model's mesh as :class:`MeshData` (call inside :func:`gmsh_model`)."""
    dim = domain.dim
    node_tags, coords, _ = gmsh.model.mesh.getNodes()
    order = np.argsort(node_tags)
    node_tags = node_tags[order]
    points = coords.reshape(-1, 3)[order][:, :dim]
    index = {int(t): i for i, t in enumerate(node_tags)}
    lookup = np.vectorize(index.__getitem__, otypes=[np.int64])

    def elements(d: int, entities: list[int]) -> tuple[str, np.ndarray]:
        kinds: dict[int, list[np.ndarray]] = {}
        for e in entities:
            types, _, nodes = gmsh.model.mesh.getElements(d, e)
            for t, n in zip(types, nodes, strict=True):
                kinds.setdefault(int(t), []).append(np.asarray(n))
        if len(kinds) != 1:
            names = sorted(GMSH_TYPES.get(k, (str(k),))[0] for k in kinds)
            raise CasekitError(f"mesh of {domain.name!r} has mixed or no {d}-D cells: {names}")
        (t, parts), = kinds.items()
        name = GMSH_TYPES[t][0]
        nodes = np.concatenate(parts)
        k = gmsh.model.mesh.getElementProperties(t)[3]
        return name, lookup(nodes).reshape(-1, k)

    cell_type, cells = elements(dim, _group_entities(dim, DOMAIN_GROUP))
    facets = {}
    tag_ids = {}
    facet_type = ""
    for d, tag in gmsh.model.getPhysicalGroups(dim - 1):
        name = gmsh.model.getPhysicalName(d, tag)
        facet_type, facets[name] = elements(d, _group_entities(d, name))
        tag_ids[name] = int(tag)
    periodic: dict[tuple[str, str], np.ndarray] = {}
    for pair in domain.geometry.periodic:
        pairs = []
        for e in _group_entities(dim - 1, pair.target):
            _, tnodes, snodes, _ = gmsh.model.mesh.getPeriodicNodes(dim - 1, e, includeHighOrderNodes=True)
            pairs.append(np.column_stack([lookup(np.asarray(snodes)), lookup(np.asarray(tnodes))]))
        periodic[pair.source, pair.target] = np.concatenate(pairs) if pairs else np.zeros((0, 2), int)
    return MeshData(dim, points, cell_type, cells, facet_type, facets, tag_ids, periodic)


def cell_measures(mesh: MeshData) -> np.ndarray:
    """Signed area (2-D) or volume (3-D) of each cell from its corner nodes (negative =
    inverted; quads and hexes are split into simplices)."""
    c = mesh.corner_cells()
    p = mesh.points
    base = mesh.cell_type.rstrip("0123456789")
    if base == "triangle":
        return _tri_area(p[c[:, 0]], p[c[:, 1]], p[c[:, 2]])
    if base == "quad":
        return _tri_area(p[c[:, 0]], p[c[:, 1]], p[c[:, 2]]) + _tri_area(p[c[:, 0]], p[c[:, 2]], p[c[:, 3]])
    if base == "tetra":
        return _tet_vol(p[c[:, 0]], p[c[:, 1]], p[c[:, 2]], p[c[:, 3]])
    # hexahedron (gmsh ordering): six tetrahedra around the 0-6 diagonal
    tets = [(0, 1, 2, 6), (0, 2, 3, 6), (0, 3, 7, 6), (0, 7, 4, 6), (0, 4, 5, 6), (0, 5, 1, 6)]
    return np.sum([_tet_vol(*(p[c[:, i]] for i in t)) for t in tets], axis=0)


def _tri_area(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    u, v = b - a, c - a
    return 0.5 * (u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0])


def _tet_vol(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->i", np.cross(b - a, c - a), d - a) / 6.0


def quality(mesh: MeshData) -> MeshQuality:
    """Inverted cells (non-positive measure) and the minimum angle of triangles."""
    measures = cell_measures(mesh)
    scale = np.abs(measures).max() if len(measures) else 1.0
    inverted = int(np.count_nonzero(measures <= 1e-14 * scale))
    min_angle = None
    if mesh.cell_type.startswith("triangle"):
        c = mesh.corner_cells()
        p = mesh.points
        angles = []
        for i in range(3):
            a, b, d = p[c[:, i]], p[c[:, (i + 1) % 3]], p[c[:, (i + 2) % 3]]
            u, v = b - a, d - a
            cos = np.einsum("ij,ij->i", u, v) / (np.linalg.norm(u, axis=1) * np.linalg.norm(v, axis=1))
            angles.append(np.degrees(np.arccos(np.clip(cos, -1, 1))))
        min_angle = float(np.min(angles))
    sj = float(measures.min() / np.median(np.abs(measures))) if len(measures) else 0.0
    return MeshQuality(mesh.num_cells, min_angle, sj, inverted)


def write(mesh: MeshData, path: str) -> None:
    """Write with meshio; the format follows the suffix (.msh, .xdmf, .vtu, ...)."""
    import meshio

    from casekit.jsonio import atomic_write_bytes

    m = mesh.to_meshio()
    if mesh.dim == 2:
        m.points = np.column_stack([m.points, np.zeros(len(m.points))])
    suffix = path.rsplit(".", 1)[-1].lower()
    if suffix == "xdmf":  # xdmf writes a side .h5 file; write it in place
        meshio.write(path, m)
        return
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / Path(path).name
        kwargs = {"file_format": "gmsh22", "binary": False} if suffix == "msh" else {}
        meshio.write(str(target), m, **kwargs)
        atomic_write_bytes(Path(path), target.read_bytes())
