"""What each boundary tag of a domain is, in words, derived from its geometry: the wording of
``case_spec.domain.boundary_tags`` (and of ``casekit domain show``).

Every count and shape comes from the tag's own pieces (its segments), never from hand-written
text: the T-junction's wording once said "six straight walls" of a part that has five.  A part
of at most :data:`LISTED` pieces is described piece by piece (a segment by its end points, an
arc by its circle and angles); a longer one by its counts per kind of piece, with its vertices
when it is a closed polygon of at most :data:`VERTICES` corners.

Kept apart from ``casekit.domains`` (the solvers' runtime, whose every byte is part of the
tracks' code hash): wording is for agents, not for solvers.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from casekit.domains.geometry import Box
from casekit.domains.geometry.carriers import fmt

#: a part of at most this many pieces is described piece by piece
LISTED = 8
#: a closed polygon of at most this many corners lists them
VERTICES = 12
#: describe pieces one by one, without a count, up to this many (the wording of the simple parts)
PLAIN = 4


def boundary_tags(domain: Any) -> dict[str, str]:
    """Tag -> wording, for every boundary tag of ``domain`` in its order."""
    return {tag: tag_wording(domain.geometry, tag) for tag in domain.tags()}


def tag_wording(geometry: Any, tag: str) -> str:
    if isinstance(geometry, Box):
        return "the face " + geometry.carriers(tag)[0].describe()
    pieces = geometry.tag_pieces(tag)
    described = [p.segment.describe() for p in pieces]
    if len(pieces) <= PLAIN:
        return "; ".join(described)
    whole = _whole_loop(geometry, pieces)
    counted = count_text(pieces)
    if len(pieces) <= LISTED:
        return (f"{whole}, " if whole else "") + f"{counted}: " + "; ".join(described)
    text = f"{whole}, {counted}" if whole else f"{counted} of the boundary"
    corners = [p.segment.start for p in pieces]
    if whole and len(corners) <= VERTICES and all(p.segment.kind == "straight edges" for p in pieces):
        text += ", the closed polygon through " + ", ".join(f"({fmt(x)}, {fmt(y)})" for x, y in corners)
    return text


def count_text(pieces: list[Any]) -> str:
    """"5 straight edges", "16 straight edges and 16 circular arcs": the number of pieces of each
    kind, kinds in the order they first appear."""
    counts = Counter(p.segment.kind for p in pieces)
    parts = [f"{n} {kind if n != 1 else singular(kind)}" for kind, n in counts.items()]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def singular(kind: str) -> str:
    return kind[:-1] if kind.endswith("s") else kind


def _whole_loop(geometry: Any, pieces: list[Any]) -> str:
    """"the whole outer boundary" / "the whole boundary of the hole" when ``pieces`` are all of
    one loop, else ""."""
    mine = set(map(id, pieces))
    for i, loop in enumerate(geometry.loops):
        if {id(p) for p in loop.pieces} == mine:
            if i == 0:
                return "the whole outer boundary"
            return "the whole boundary of the hole" if len(geometry.holes) == 1 else f"the whole boundary of hole {i}"
    return ""
