"""Private solve settings (the ``calibration`` block of a case source, and reference levels)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

#: the ways a nonlinear solve may treat its Jacobian (:attr:`SolveSettings.newton`)
NEWTON_KINDS = ("standard", "modified")


@dataclass(frozen=True)
class SolveSettings:
    cells_across: int = 32
    degree: int = 2
    cell: str = "simplex"
    dt: float | None = None
    scheme: str = "crank_nicolson"
    stabilization: str = "none"
    linear_solver: str = "direct"
    rtol: float = 1e-10
    newton_rtol: float = 1e-10
    max_newton_iterations: int = 30
    #: order of the geometry (2: curved cells that follow circular boundaries); default
    #: min(degree, 2), so curved boundaries do not limit the convergence of P2
    geometry_order: int | None = None
    #: grade the mesh towards the domain's re-entrant corners (cells 4x smaller there), where a
    #: solution is singular; a build sets it off for manufactured solutions, which are smooth
    #: there, so that the calibration spends no degrees of freedom on a singularity that is not
    corner_refinement: bool = True
    #: how a nonlinear solve treats its Jacobian: "standard" -- a new one, factorised, at every
    #: Newton iteration, as a standard solver (PETSc's SNES, PDEAgent-Bench's oracle) does: what the
    #: calibration times, so an agent's budget (a multiple of t_base) is a standard solver's;
    #: "modified" -- the factorisation is kept while its steps contract the residual well (the build's
    #: reference levels, which nothing times: 2-6x cheaper, the same converged field); a track without
    #: the modified one solves the standard way
    newton: str = "standard"

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> SolveSettings:
        data = dict(data or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown solve settings {unknown}; known: {sorted(known)}")
        if data.get("newton", "standard") not in NEWTON_KINDS:
            raise ValueError(f"newton {data['newton']!r} is not one of {', '.join(NEWTON_KINDS)}")
        return cls(**data)

    @classmethod
    def for_case(cls, data: dict[str, Any] | None, case_spec: dict[str, Any]) -> SolveSettings:
        """The settings, refined as a diagnostic run asks: a case_spec with ``resolution`` (cells
        across the domain, set only by the evaluator's self-convergence runs) replaces
        ``cells_across`` and scales the time step with it, so space and time refine together."""
        st = cls.from_dict(data)
        n = case_spec.get("resolution")
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            return st
        dt = st.dt * st.cells_across / n if st.dt is not None else None
        return replace(st, cells_across=n, dt=dt)

    @property
    def geometry(self) -> int:
        return self.geometry_order if self.geometry_order is not None else min(self.degree, 2)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def steps(self, t0: float, t_end: float) -> tuple[int, float]:
        """Number of time steps and the step that divides [t0, t_end] evenly."""
        if self.dt is None:
            raise ValueError("a transient case needs a time step (calibration dt)")
        n = max(1, round((t_end - t0) / self.dt))
        return n, (t_end - t0) / n
