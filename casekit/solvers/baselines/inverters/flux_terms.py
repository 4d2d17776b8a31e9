"""flux_terms: the dictionary of ``forcing_terms`` fitted to *every* datum at t_end -- Dirichlet
values, and Neumann and Robin data through the flux ``kappa du/dn (+ alpha u)``.

The flux coefficient is not named in the view as such: each candidate the printed parameters
allow (1, every positive numeric parameter and its square: kappa, epsilon, nu, c**2) is tried
and the fit that matches the data best is kept.  A part that vanishes on Dirichlet parts but shows
a slope where fluxes are given is read this way (all-Robin cases whose bubble had simple zeros were
inverted to round-off); a bubble whose value and normal slope vanish where fluxes are given is not.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from casekit.solvers.baselines import Inverter, register
from casekit.solvers.baselines.view import AgentView, lstsq
from casekit.solvers.baselines.visible import printed, term_exprs

FLUX_KINDS = ("neumann", "robin")


def _scalar_fluxes(view: AgentView) -> bool:
    """Whether the case gives flux data of a scalar unknown (a traction is a vector)."""
    entries = view.data_entries(FLUX_KINDS)
    return bool(entries) and not any(isinstance(e["value"], list) for _, e in entries)


def _kappas(view: AgentView) -> list[float]:
    out = {1.0}
    for v in (view.spec["pde"].get("params") or {}).values():
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
            out |= {float(v), float(v) ** 2}
    return sorted(out)


def _dictionary(view: AgentView) -> list[Any]:
    import sympy as sp

    from casekit.expr import COORDS

    return [e for _, e in term_exprs(printed(view), view.dim)] + [sp.Integer(1), *COORDS[: view.dim]]


def _values(view: AgentView) -> np.ndarray:
    import sympy as sp

    from casekit.expr import COORDS, to_numpy

    dim, t = view.dim, view.t_end
    fields = _dictionary(view)

    def columns(exprs: list[Any], pts: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.column_stack([np.broadcast_to(to_numpy(e, dim)(pts, t), (len(pts),)) for e in exprs])

    value_rows, value_data = [], []
    for e in view.dirichlet:
        pts = view.tag_points(e["tag"])
        value_rows.append(columns(fields, pts))
        value_data.append(view.evaluate(e["value"], pts, t))
    flux_parts = []  # (values, normal slopes, alpha, data) per flux part
    for _, e in view.data_entries(FLUX_KINDS):
        pts, normals = view.tag_points(e["tag"]), view.tag_normals(e["tag"])
        if len(normals) != len(pts):
            continue
        grads = [columns([sp.diff(f, c) for f in fields], pts) for c in COORDS[:dim]]
        slope = sum(g * normals[:, i:i + 1] for i, g in enumerate(grads))
        flux_parts.append((columns(fields, pts), slope, float(e.get("alpha") or 0.0),
                           view.evaluate(e["value"], pts, t)))
    best: tuple[float, np.ndarray] | None = None
    for kappa in _kappas(view):
        rows = value_rows + [kappa * s + alpha * v for v, s, alpha, _ in flux_parts]
        data = value_data + [d for *_, d in flux_parts]
        a, b = np.vstack(rows), np.concatenate(data)
        coef = lstsq(a, b[:, None])[:, 0]
        with np.errstate(all="ignore"):
            misfit = float(np.linalg.norm(np.where(np.isfinite(a), a, 0.0) @ coef - b))
        if np.isfinite(misfit) and (best is None or misfit < best[0]):
            best = (misfit, coef)
    coef = best[1] if best is not None else np.zeros(len(fields))
    with np.errstate(all="ignore"):
        return columns(fields, view.points) @ coef


register(Inverter("flux_terms", "the forcing's and initial data's additive terms plus a linear background, fitted "
                  "to the Dirichlet values and the Neumann and Robin data (kappa du/dn + alpha u, kappa from the "
                  "printed parameters) at t_end",
                  _values,
                  applies=lambda view: view.components is None and _scalar_fluxes(view)))
