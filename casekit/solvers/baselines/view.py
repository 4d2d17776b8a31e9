"""What an inverter may use: the agent view (the ``case_spec``) and nothing else.

:class:`AgentView` turns the case_spec into the numbers an inverter works with -- the grid and
its in-domain mask, the output time, the visible expressions evaluated at any points and times,
the Dirichlet data sampled on their own boundary parts -- and fits fields to those boundary
samples by least squares.  Everything here follows from the case_spec alone (the domain's exact
geometry is the template named there, with the parameters printed there).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from casekit.domains import resolve
from casekit.expr.tree import points_function
from casekit.grid import Grid

#: points per boundary piece at which Dirichlet data are sampled for fits
BOUNDARY_SAMPLES = 48
#: relative singular-value cut-off of every least-squares fit
RCOND = 1e-10


@dataclass
class AgentView:
    spec: dict[str, Any]

    # -- the grid and the domain -----------------------------------------------------------
    @cached_property
    def grid(self) -> Grid:
        return Grid.from_spec(self.spec["eval_grid"])

    @property
    def dim(self) -> int:
        return self.grid.dim

    @cached_property
    def points(self) -> np.ndarray:
        return self.grid.points()

    @cached_property
    def domain(self) -> Any:
        dom = self.spec["domain"]
        return resolve(dom["type"], dom["geometry_params"], validated=True)

    @cached_property
    def inside(self) -> np.ndarray:
        return np.asarray(self.domain.inside(self.points), dtype=bool)

    # -- time --------------------------------------------------------------------------------
    @property
    def transient(self) -> bool:
        return bool(self.spec["pde"].get("time"))

    @property
    def t0(self) -> float:
        time = self.spec["pde"].get("time")
        return float(time["t0"]) if time else 0.0

    @property
    def t_end(self) -> float:
        """The output time (0 for a steady case)."""
        time = self.spec["pde"].get("time")
        return float(time["t_end"]) if time else 0.0

    def times(self, between: int = 3) -> list[float]:
        """t0, ``between`` equally spaced interior times and t_end (steady: the one time 0)."""
        if not self.transient:
            return [0.0]
        return [float(t) for t in np.linspace(self.t0, self.t_end, between + 2)]

    # -- visible expressions -----------------------------------------------------------------
    def evaluate(self, value: Any, points: np.ndarray, t: float) -> np.ndarray:
        """A visible value (an expression, or a list of component expressions) at ``points``:
        (N,) or (N, k)."""
        if isinstance(value, list):
            return np.column_stack([points_function(v, self.dim)(points, t) for v in value])
        return points_function(value, self.dim)(points, t)

    @property
    def forcing(self) -> Any:
        forcing = self.spec["pde"].get("forcing") or {}
        return next(iter(forcing.values()), None)

    @property
    def initial(self) -> Any:
        return (self.spec.get("ic") or {}).get("u")

    def data_entries(self, kinds: Sequence[str] = ("dirichlet",)) -> list[tuple[str, dict[str, Any]]]:
        return [(kind, e) for kind in kinds for e in self.spec["bc"].get(kind, [])]

    @property
    def dirichlet(self) -> list[dict[str, Any]]:
        return [e for _, e in self.data_entries(("dirichlet",))]

    @property
    def components(self) -> list[str] | None:
        return self.spec["output"].get("components")

    # -- boundary samples and fits -----------------------------------------------------------
    @cached_property
    def boundary_points(self) -> np.ndarray:
        """Points on the Dirichlet parts, part after part (empty when there is none)."""
        parts = [self.tag_points(e["tag"]) for e in self.dirichlet]
        return np.concatenate(parts) if parts else np.zeros((0, self.dim))

    def tag_points(self, tag: str) -> np.ndarray:
        """The sample points of a boundary part."""
        return self.domain.geometry.tag_points(tag, self._per_part)

    def tag_normals(self, tag: str) -> np.ndarray:
        """The outward unit normals at :meth:`tag_points`."""
        return self.domain.geometry.tag_normals(tag, self._per_part)

    @property
    def _per_part(self) -> int:
        return BOUNDARY_SAMPLES if self.dim == 2 else 9

    def boundary_values(self, t: float) -> np.ndarray:
        """The Dirichlet data at :attr:`boundary_points` and time ``t``: (M,) or (M, k)."""
        parts = [self.evaluate(e["value"], self.tag_points(e["tag"]), t) for e in self.dirichlet]
        return np.concatenate(parts) if parts else np.zeros(0)

    def fit_on_boundary(self, fields: list[Any], t: float, at: np.ndarray | None = None) -> np.ndarray:
        """The combination of ``fields`` (each a function ``points -> values`` of shape (N,))
        that best matches the Dirichlet data at time ``t`` on the boundary, evaluated at ``at``
        (default: every grid point): (N,) or (N, k) like the data (one fit per component)."""
        b_pts = self.boundary_points
        data = self.boundary_values(t)
        where = self.points if at is None else at
        if len(b_pts) == 0:
            return np.zeros(len(where))
        with np.errstate(all="ignore"):
            basis_b = np.column_stack([np.broadcast_to(f(b_pts), (len(b_pts),)) for f in fields])
            basis_g = np.column_stack([np.broadcast_to(f(where), (len(where),)) for f in fields])
        cols = data if data.ndim == 2 else data[:, None]
        coef = lstsq(basis_b, cols)
        out = basis_g @ coef
        return out if data.ndim == 2 else out[:, 0]


def lstsq(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Least squares with scaled columns and a relative singular-value cut-off; non-finite
    columns take no part."""
    a = np.where(np.isfinite(a), a, 0.0)
    scale = np.linalg.norm(a, axis=0)
    scale[scale == 0] = 1.0
    coef, *_ = np.linalg.lstsq(a / scale, np.where(np.isfinite(b), b, 0.0), rcond=RCOND)
    return coef / scale[:, None] if coef.ndim == 2 else coef / scale
