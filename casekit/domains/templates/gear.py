"""A gear: a base circle with trapezoidal teeth (circular arcs between and on top of the teeth).

Tooth k occupies the angles [rotation + k pitch, rotation + k pitch + tooth_width pitch] at its
root, so teeth cannot overlap while ``tooth_width`` < 1; its range keeps at least a fifth of the
pitch between neighbouring teeth (and no tooth thinner than a fifth of it).
"""

import math

from casekit.domains.geometry import Arc, Line, Loop, Piece, Region
from casekit.domains.template import DomainTemplate, integer, number, point, register


def _geometry(p: dict) -> Region:
    c = tuple(p["center"])
    n, r0, h = p["teeth"], p["base_radius"], p["tooth_height"]
    r1 = r0 + h
    pitch = 2 * math.pi / n
    width = p["tooth_width"] * pitch  # angular width of a tooth at its root
    taper = 0.15 * width  # the flanks lean in by this angle at the tip
    rot = math.radians(p["rotation"])
    pieces = []
    roots = []
    for k in range(n):
        a0 = rot + k * pitch
        a1 = a0 + width
        root0 = (c[0] + r0 * math.cos(a0), c[1] + r0 * math.sin(a0))
        tip = Arc(c, r1, a0 + taper, width - 2 * taper)
        root1 = (c[0] + r0 * math.cos(a1), c[1] + r0 * math.sin(a1))
        gap = Arc(c, r0, a1, pitch - width)
        pieces += [Piece(Line(root0, tip.start), "boundary"), Piece(tip, "boundary"),
                   Piece(Line(tip.end, root1), "boundary"), Piece(gap, "boundary")]
        roots += [root0, root1]
    return Region(Loop(tuple(pieces)), refine_points=tuple(roots))


register(DomainTemplate(
    name="gear",
    dim=2,
    summary="a gear with trapezoidal teeth",
    params={
        "center": point([0.0, 0.0], "centre of the gear"),
        "teeth": integer(8, "number of teeth", minimum=3, maximum=48),
        "base_radius": number(0.5, "radius of the base (root) circle", exclusiveMinimum=0.0),
        "tooth_height": number(0.2, "radial height of a tooth", exclusiveMinimum=0.0),
        "tooth_width": number(0.5, "angular width of a tooth at its root, as a fraction of the pitch",
                              minimum=0.2, maximum=0.8),
        "rotation": number(0.0, "angle of the first tooth's leading flank, degrees from the x axis",
                           minimum=-360.0, maximum=360.0),
    },
    geometry=_geometry,
    describe=lambda p: (f"a gear centred at ({p['center'][0]:g}, {p['center'][1]:g}) with {p['teeth']} "
                        f"trapezoidal teeth of height {p['tooth_height']:g} on a base circle of radius "
                        f"{p['base_radius']:g}"),
    tag_wording=lambda p: {"boundary": f"the whole gear outline ({p['teeth']} teeth: straight flanks, circular "
                           "tips and circular gaps)"},
))
