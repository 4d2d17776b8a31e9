"""Source code that builds a domain's gmsh model for agents' scaffolds (which cannot import
casekit): the very script casekit meshes with (``casekit.domains.model``), printed."""

from __future__ import annotations

from casekit.domains import model
from casekit.domains.template import Domain


def gmsh_python(domain: Domain, indent: str = "    ") -> str:
    """The body of ``def build_gmsh_model(h):`` (gmsh initialised by the caller): geometry with
    the geo kernel, physical groups named by boundary tag (the domain's is called ``domain``),
    periodic pairs, size constraints, and a simplex mesh of size h."""
    body = model.script(domain.geometry).source(indent)
    return f"{body}\n{indent}gmsh.model.mesh.generate({domain.dim})"


def has_curves(domain: Domain) -> bool:
    """Whether any boundary piece is curved (then quadratic geometry pays off)."""
    return domain.geometry.curved()
