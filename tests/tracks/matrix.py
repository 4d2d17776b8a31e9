"""The convergence matrix every track's solvers are checked against (one place: tracks never copy
it).  A row is a seeded case of a family on a domain, the element degree, two resolutions and the
expected order of the relative L2 error on the evaluation grid.  A track runs the rows it
supports, or the subset its ``convergence_rows`` names (slow libraries); a row below its family's
``min_degree`` (no finite-element pair of that degree) runs only on the tracks that name it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Row:
    family: str
    domain: str
    degree: int
    cells: tuple[int, int]
    order: int
    levels: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.family}-{self.domain}" + (f"-{self.levels['bc']}" if "bc" in self.levels else "")


MATRIX = [
    Row("poisson", "unit_square", 2, (16, 32), 3, {"bc": "robin"}),  # the bubble squared on the Robin sides: 2.68 at 10
    Row("poisson", "unit_square", 1, (16, 32), 2, {"bc": "dirichlet"}),
    Row("poisson", "annulus", 2, (16, 32), 3, {"bc": "mixed", "coefficient": "variable"}),
    Row("poisson", "periodic_square", 2, (10, 20), 3),
    Row("poisson", "ellipse", 2, (16, 32), 3, {"bc": "mixed"}),
    Row("helmholtz", "unit_square", 2, (12, 24), 3, {"bc": "mixed"}),
    Row("helmholtz", "circle", 2, (16, 32), 3, {"bc": "robin"}),
    Row("biharmonic", "unit_square", 2, (10, 20), 3),
    Row("biharmonic", "circle", 2, (10, 20), 3),
    Row("linear_elasticity", "unit_square", 2, (8, 16), 3, {"bc": "mixed"}),
    Row("linear_elasticity", "annulus", 2, (20, 40), 3),  # pre-asymptotic at 16 (order 2.66)
    Row("linear_elasticity", "circle", 2, (12, 24), 3),
    Row("linear_elasticity", "ellipse", 2, (12, 24), 3, {"bc": "mixed"}),
    Row("heat", "unit_square", 1, (16, 32), 2, {"bc": "mixed"}),  # three modes: pre-asymptotic at 10
    Row("heat", "circle", 1, (10, 20), 2, {"bc": "robin"}),
    Row("heat", "annulus", 1, (20, 40), 2, {"bc": "mixed"}),
    Row("convection_diffusion", "unit_square", 2, (16, 32), 3, {"bc": "mixed"}),  # with the bubble: 2.67 at 10
    Row("convection_diffusion", "annulus", 1, (16, 32), 2, {"time": "transient"}),
    Row("reaction_diffusion", "unit_square", 2, (16, 32), 3, {"reaction": "cubic", "bc": "robin"}),
    Row("reaction_diffusion", "circle", 1, (10, 20), 2, {"time": "transient", "reaction": "logistic"}),
    Row("stokes", "unit_square", 2, (8, 16), 3, {"bc": "mixed"}),
    Row("stokes", "annulus", 2, (16, 32), 3),
    Row("navier_stokes", "unit_square", 2, (8, 16), 3, {"reynolds": "medium"}),
    Row("navier_stokes", "circle", 2, (10, 20), 3),
    Row("burgers", "unit_square", 1, (16, 32), 2, {"bc": "mixed"}),
    Row("burgers", "circle", 1, (10, 20), 2),
    Row("wave", "unit_square", 1, (16, 32), 2, {"bc": "mixed"}),
    Row("wave", "annulus", 1, (16, 32), 2),
    # degree 1 on the periodic square: every kind of form but flow at order 2, for second-order tracks
    # (finite differences) as much as for P1
    Row("poisson", "periodic_square", 1, (24, 48), 2, {"bc": "robin", "coefficient": "variable"}),
    Row("helmholtz", "periodic_square", 1, (16, 32), 2, {"bc": "robin"}),
    Row("biharmonic", "periodic_square", 1, (16, 32), 2),
    Row("convection_diffusion", "periodic_square", 1, (16, 32), 2,
        {"peclet": "low", "time": "transient", "bc": "mixed"}),
    Row("reaction_diffusion", "periodic_square", 1, (16, 32), 2,
        {"time": "transient", "reaction": "logistic", "bc": "robin"}),
    Row("wave", "periodic_square", 1, (24, 48), 2),
    Row("linear_elasticity", "periodic_square", 1, (16, 32), 2, {"bc": "mixed", "compressibility": "compressible"}),
    # flow below its family's min_degree (no Taylor-Hood pair): second-order schemes of their own (the
    # numpy track's MAC grid), run only by the tracks that name them
    Row("stokes", "unit_square", 1, (16, 32), 2, {"bc": "dirichlet"}),
    Row("navier_stokes", "unit_square", 1, (16, 32), 2, {"reynolds": "medium", "bc": "dirichlet"}),
    Row("stokes", "periodic_square", 1, (16, 32), 2, {"bc": "mixed"}),
]
