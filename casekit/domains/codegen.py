"""Source code that builds a domain's gmsh model: the same geometry and boundary tags as casekit,
written out for agents' scaffolds (which cannot import casekit)."""

from __future__ import annotations

import math

from casekit.domains.geometry import Arc, Box, Line, Region
from casekit.domains.template import Domain


def gmsh_python(domain: Domain, indent: str = "    ") -> str:
    """The body of ``def build_gmsh_model(h):`` (gmsh initialised by the caller): geometry with
    the geo kernel, physical groups named by boundary tag (the domain's is called ``domain``),
    periodic pairs, and a 2-D or 3-D mesh of size h."""
    g = domain.geometry
    lines = ["geo = gmsh.model.geo", "points = {}", "",
             "def point(x, y, z=0.0):",
             "    key = (round(x, 12), round(y, 12), round(z, 12))",
             "    if key not in points:",
             "        points[key] = geo.addPoint(x, y, z, h)",
             "    return points[key]", ""]
    if isinstance(g, Box):
        (x0, y0, z0), (x1, y1, z1) = g.lo, g.hi
        lines += [f"box = gmsh.model.occ.addBox({x0!r}, {y0!r}, {z0!r}, {x1 - x0!r}, {y1 - y0!r}, {z1 - z0!r})",
                  "gmsh.model.occ.synchronize()",
                  "gmsh.option.setNumber('Mesh.MeshSizeMax', h)",
                  "gmsh.model.addPhysicalGroup(3, [box], name='domain')",
                  f"lo, hi = ({x0!r}, {y0!r}, {z0!r}), ({x1!r}, {y1!r}, {z1!r})",
                  "names = {(0, 0): 'left', (0, 1): 'right', (1, 0): 'front', (1, 1): 'back', (2, 0): 'bottom',",
                  "         (2, 1): 'top'}",
                  "for _, face in gmsh.model.getBoundary([(3, box)], oriented=False):",
                  "    c = gmsh.model.occ.getCenterOfMass(2, face)",
                  "    axis = next(i for i in range(3) if abs(c[i] - lo[i]) < 1e-9 or abs(c[i] - hi[i]) < 1e-9)",
                  "    side = int(abs(c[axis] - hi[axis]) < 1e-9)",
                  "    gmsh.model.addPhysicalGroup(2, [face], name=names[axis, side])",
                  "gmsh.model.mesh.generate(3)"]
        return "\n".join(indent + ln if ln else "" for ln in lines)
    assert isinstance(g, Region)
    lines += ["curves = {}  # boundary tag -> curve ids", "loops = []"]
    for loop in g.loops:
        lines.append("loop = []")
        for piece in loop.pieces:
            seg = piece.segment
            if isinstance(seg, Line):
                lines.append(f"c = geo.addLine(point({seg.a[0]!r}, {seg.a[1]!r}), point({seg.b[0]!r}, {seg.b[1]!r}))")
                lines.append(f"loop.append(c); curves.setdefault({piece.tag!r}, []).append(c)")
            else:
                lines += _arc(seg, piece.tag)
        lines.append("loops.append(geo.addCurveLoop(loop))")
    lines += ["surface = geo.addPlaneSurface(loops)", "geo.synchronize()",
              "gmsh.model.addPhysicalGroup(2, [surface], name='domain')",
              "for tag, ids in curves.items():",
              "    gmsh.model.addPhysicalGroup(1, ids, name=tag)"]
    for pair in g.periodic:
        t = [*list(pair.translation), 0.0]
        lines.append(f"# {pair.target} = {pair.source} moved by {list(pair.translation)} (periodic pair)")
        lines.append(f"gmsh.model.mesh.setPeriodic(1, curves[{pair.target!r}], curves[{pair.source!r}], "
                     f"[1, 0, 0, {t[0]!r}, 0, 1, 0, {t[1]!r}, 0, 0, 1, 0, 0, 0, 0, 1])")
    lines += ["gmsh.option.setNumber('Mesh.MeshSizeMax', h)", "gmsh.model.mesh.generate(2)"]
    return "\n".join(indent + ln if ln else "" for ln in lines)


def _arc(arc: Arc, tag: str) -> list[str]:
    """An arc as pieces of at most 90 degrees (gmsh needs less than 180)."""
    n = max(1, math.ceil(abs(arc.sweep) / (math.pi / 2) - 1e-9))
    cx, cy = arc.center
    out = [f"centre = point({cx!r}, {cy!r})"]
    for i in range(n):
        a = arc.start_angle + arc.sweep * i / n
        b = arc.start_angle + arc.sweep * (i + 1) / n
        pa = arc.start if i == 0 else (cx + arc.radius * math.cos(a), cy + arc.radius * math.sin(a))
        pb = arc.end if i == n - 1 else (cx + arc.radius * math.cos(b), cy + arc.radius * math.sin(b))
        out.append(f"c = geo.addCircleArc(point({pa[0]!r}, {pa[1]!r}), centre, point({pb[0]!r}, {pb[1]!r}))")
        out.append(f"loop.append(c); curves.setdefault({tag!r}, []).append(c)")
    return out


def has_curves(domain: Domain) -> bool:
    """Whether any boundary piece is curved (then quadratic geometry pays off)."""
    g = domain.geometry
    return isinstance(g, Region) and any(isinstance(p.segment, Arc) for p in g.pieces())
