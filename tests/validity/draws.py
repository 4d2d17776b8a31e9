"""Design points drawn afresh by the validity tests: every transient family and peak cases."""

from __future__ import annotations

from typing import Any

FRESH: list[tuple[str, str, dict[str, Any]]] = [
    ("heat", "l_shape", {"horizon": "long", "solution": "smooth", "bc": "dirichlet"}),
    ("heat", "unit_square", {"horizon": "short", "solution": "peak", "bc": "dirichlet"}),
    ("wave", "unit_square", {"speed": "fast", "horizon": "short", "bc": "dirichlet"}),
    ("burgers", "unit_square", {"viscosity": "moderate", "horizon": "long", "solution": "front", "bc": "dirichlet"}),
    ("reaction_diffusion", "unit_square", {"reaction": "cubic", "stiffness": "mild", "time": "transient",
                                           "bc": "dirichlet"}),
    ("convection_diffusion", "circle", {"peclet": "low", "time": "transient", "bc": "dirichlet"}),
    ("poisson", "circle", {"solution": "peak", "bc": "dirichlet"}),
]
