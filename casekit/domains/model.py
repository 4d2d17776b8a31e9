"""The gmsh script of a domain: geometry, physical groups named by boundary tag (the domain's
is called ``domain``), periodic pairs and mesh-size constraints.  Meshing runs it, prompts print
it (``casekit.domains.gmsh_script``); each segment writes its own calls."""

from __future__ import annotations

from typing import Any

from casekit.domains.geometry import Box, Geometry, Point, Region
from casekit.domains.gmsh_script import H, Ref, Script, at_least, rounded

DOMAIN_GROUP = "domain"


def script(geometry: Geometry, *, cell: str = "simplex", refine: bool = True, corners: bool = True) -> Script:
    """The domain's gmsh script for ``cell`` kind cells; ``refine`` puts at least 16 nodes on
    every curve (small holes) and, with ``corners``, makes cells 4x smaller near the refinement
    points (re-entrant corners)."""
    s = Script()
    s.model("option.setNumber", "Mesh.MeshSizeMax", H)
    s.model("option.setNumber", "Mesh.MeshSizeMin", 0.0)
    if isinstance(geometry, Region):
        boundary, refine_ids = _region(s, geometry, cell, refine)
    else:
        boundary, refine_ids = _box(s, geometry, cell)
    bdim = geometry.dim - 1
    for pair in geometry.periodic:
        t = [*pair.translation, 0.0, 0.0][:3]
        affine = [1, 0, 0, t[0], 0, 1, 0, t[1], 0, 0, 1, t[2], 0, 0, 0, 1]
        s.model("model.mesh.setPeriodic", bdim, boundary[pair.target], boundary[pair.source], affine)
    if refine and corners and refine_ids:
        _refine_field(s, refine_ids)
    return s


def _region(s: Script, region: Region, cell: str, refine: bool) -> tuple[dict[str, list[Ref]], list[Ref]]:
    points: dict[tuple[float, float], Ref] = {}

    def point(p: Point) -> Ref:
        key = (round(p[0], 12), round(p[1], 12))
        if key not in points:
            points[key] = s.geo("addPoint", float(p[0]), float(p[1]), 0.0, H)
        return points[key]

    curves_by_tag: dict[str, list[Ref]] = {}
    loops = []
    for loop in region.loops:
        curves = []
        for piece in loop.pieces:
            parts = piece.segment.gmsh(s, point, refine)
            curves.extend(parts)
            curves_by_tag.setdefault(piece.tag, []).extend(parts)
        loops.append(s.geo("addCurveLoop", curves))
    surface = s.geo("addPlaneSurface", loops)
    if cell == "quad":
        _quads(s, region, surface, curves_by_tag)
    s.model("model.addPhysicalGroup", 2, [surface], name=DOMAIN_GROUP)
    for tag in region.tags():
        s.model("model.addPhysicalGroup", 1, curves_by_tag[tag], name=tag)
    return curves_by_tag, [point(p) for p in region.refine_points]


def _quads(s: Script, region: Region, surface: Ref, curves_by_tag: dict[str, list[Ref]]) -> None:
    outline = region.outer.pieces
    s.model("model.mesh.setRecombine", 2, surface)
    s.model("option.setNumber", "Mesh.RecombinationAlgorithm", 1)
    if len(outline) == 4 and not region.holes and not region.curved():
        # a quadrilateral outline: a structured grid of quads
        nodes = at_least(1, rounded(max(p.segment.length() for p in outline) / H)) + 1
        for tag in region.tags():
            for c in curves_by_tag[tag]:
                s.model("model.mesh.setTransfiniteCurve", c, nodes, "Progression", 1.0)
        s.model("model.mesh.setTransfiniteSurface", surface, "Left", [])
    else:
        for name, value in (("Mesh.RecombineAll", 1), ("Mesh.Algorithm", 8), ("Mesh.SubdivisionAlgorithm", 1)):
            s.model("option.setNumber", name, value)


def structured(geometry: Geometry, cell: str) -> bool:
    """Whether :func:`script` makes a structured grid (no recombination of triangles needed)."""
    if cell != "quad":
        return False
    if isinstance(geometry, Box):
        return True
    return len(geometry.outer.pieces) == 4 and not geometry.holes and not geometry.curved()


def _box(s: Script, box: Box, cell: str) -> tuple[dict[str, list[Ref]], list[Ref]]:
    lo, hi = box.lo, box.hi
    corner = {(i, j, k): s.geo("addPoint", float((lo, hi)[i][0]), float((lo, hi)[j][1]), float((lo, hi)[k][2]), H)
              for i in (0, 1) for j in (0, 1) for k in (0, 1)}
    lines: dict[tuple, Ref] = {}

    def line(a: tuple, b: tuple) -> Any:
        if (b, a) in lines:
            return -lines[b, a]
        if (a, b) not in lines:
            lines[a, b] = s.geo("addLine", corner[a], corner[b])
        return lines[a, b]

    def face(corners: list[tuple]) -> Ref:
        loop = s.geo("addCurveLoop", [line(corners[i], corners[(i + 1) % 4]) for i in range(4)])
        return s.geo("addPlaneSurface", [loop])

    faces = {
        "left": face([(0, 0, 0), (0, 0, 1), (0, 1, 1), (0, 1, 0)]),
        "right": face([(1, 0, 0), (1, 1, 0), (1, 1, 1), (1, 0, 1)]),
        "front": face([(0, 0, 0), (1, 0, 0), (1, 0, 1), (0, 0, 1)]),
        "back": face([(0, 1, 0), (0, 1, 1), (1, 1, 1), (1, 1, 0)]),
        "bottom": face([(0, 0, 0), (0, 1, 0), (1, 1, 0), (1, 0, 0)]),
        "top": face([(0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1)]),
    }
    volume = s.geo("addVolume", [s.geo("addSurfaceLoop", [faces[t] for t in box.tags()])])
    if cell == "quad":
        for (a, b), c in lines.items():
            axis = next(i for i in range(3) if a[i] != b[i])
            s.model("model.mesh.setTransfiniteCurve", c, at_least(1, rounded(abs(hi[axis] - lo[axis]) / H)) + 1,
                    "Progression", 1.0)
        for f in faces.values():
            s.model("model.mesh.setTransfiniteSurface", f, "Left", [])
            s.model("model.mesh.setRecombine", 2, f)
        s.model("model.mesh.setTransfiniteVolume", volume, [])
        s.model("option.setNumber", "Mesh.RecombineAll", 1)
    s.model("model.addPhysicalGroup", 3, [volume], name=DOMAIN_GROUP)
    for tag in box.tags():
        s.model("model.addPhysicalGroup", 2, [faces[tag]], name=tag)
    refine = [s.geo("addPoint", *(float(v) for v in q), H) for q in box.refine_points]
    return {tag: [f] for tag, f in faces.items()}, refine


def _refine_field(s: Script, ids: list[Ref]) -> None:
    dist = s.model("model.mesh.field.add", "Distance", keep=True)
    s.model("model.mesh.field.setNumbers", dist, "PointsList", ids)
    thr = s.model("model.mesh.field.add", "Threshold", keep=True)
    s.model("model.mesh.field.setNumber", thr, "InField", dist)
    for name, value in (("SizeMin", H / 4), ("SizeMax", H), ("DistMin", H / 2), ("DistMax", 6 * H)):
        s.model("model.mesh.field.setNumber", thr, name, value)
    s.model("model.mesh.field.setAsBackgroundMesh", thr)
