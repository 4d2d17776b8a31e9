"""A case's mesh as gmsh 2.2 ASCII text for tracks whose programs read meshes themselves
(deal.II's ``GridIn::read_msh``, Firedrake's ``Mesh``): straight-sided cells (corner nodes), every
boundary facet carrying the id of its tag (its 1-based position in ``domain.boundary_tags``),
cells with physical id 0; and the conics the curved pieces lie on, for tracks that curve cells."""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from casekit.domains.meshing import MeshData, MeshOptions, generate
from casekit.domains.template import resolve

#: gmsh element type numbers of the corner-node elements
_TYPES = {"line": 1, "triangle": 2, "quad": 3, "tetra": 4, "hexahedron": 5}


def _base(kind: str) -> str:
    return kind.rstrip("0123456789")


def to_msh22(mesh: MeshData, boundary_ids: dict[str, int]) -> str:
    """``boundary_ids``: tag name -> physical id (positive) for every boundary tag of the mesh."""
    missing = sorted(set(mesh.facets) - set(boundary_ids))
    if missing:
        raise ValueError(f"no boundary id for the tags {missing}")
    cell_kind, facet_kind = _base(mesh.cell_type), _base(mesh.facet_type)
    cells = mesh.corner_cells()
    # only the nodes of cells (gmsh also meshes construction points such as arc centres), 1-based
    used = np.unique(cells)
    number = np.zeros(len(mesh.points), dtype=np.int64)
    number[used] = np.arange(1, len(used) + 1)
    out = io.StringIO()
    out.write("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n")
    out.write(f"{len(used)}\n")
    pts = mesh.points[used]
    for i, p in enumerate(pts.tolist(), start=1):
        z = p[2] if mesh.dim == 3 else 0.0
        out.write(f"{i} {p[0]!r} {p[1]!r} {z!r}\n")
    out.write("$EndNodes\n$Elements\n")
    n_facets = sum(len(f) for f in mesh.facets.values())
    out.write(f"{n_facets + len(cells)}\n")
    eid = 0
    for tag in sorted(mesh.facets, key=lambda t: boundary_ids[t]):
        pid = boundary_ids[tag]
        for facet in mesh.corner_facets(tag):
            eid += 1
            nodes = " ".join(str(int(number[n])) for n in facet)
            out.write(f"{eid} {_TYPES[facet_kind]} 2 {pid} {pid} {nodes}\n")
    for cell in cells:
        eid += 1
        out.write(f"{eid} {_TYPES[cell_kind]} 2 0 1 " + " ".join(str(int(number[n])) for n in cell) + "\n")
    out.write("$EndElements\n")
    return out.getvalue()


def boundary_ids(case_spec: dict[str, Any]) -> dict[str, int]:
    """Boundary id of each tag: its 1-based position in ``domain.boundary_tags``."""
    return {tag: i for i, tag in enumerate(case_spec["domain"]["boundary_tags"], start=1)}


def charts(case_spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The conics the domain's curved boundary pieces lie on (``center``, ``semi_axes``; a circle
    has equal semi-axes): the program attaches a chart to boundary faces on them, so a
    second-order mapping follows the exact curve."""
    dom = case_spec["domain"]
    return resolve(dom["type"], dom["geometry_params"]).geometry.charts()


def mesh_text(case_spec: dict[str, Any], cells_across: int, cell: str = "simplex", corners: bool = True) -> str:
    dom = case_spec["domain"]
    domain = resolve(dom["type"], dom["geometry_params"])
    mesh = generate(domain, MeshOptions(cells_across=cells_across, order=1, cell=cell, corners=corners))
    return to_msh22(mesh, boundary_ids(case_spec))
