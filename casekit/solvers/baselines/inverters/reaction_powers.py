"""reaction_powers: a polynomial reaction's top power read back from the forcing, point by point.

A transient manufactured solution is a sum of modes ``u = sum_k S_k(x) phi_k(t)``.  Its forcing
``u_t - div(kappa grad u) + R(u)`` with a reaction ``R`` of degree n >= 2 (``u**3 - u``, ``u*(1 - u)``)
carries ``c_n u**n``, and the group of the forcing whose time factor is ``phi_k**n`` comes from that
term alone: its coefficient is ``c_n S_k**n``.  So the n-th root of each such coefficient is the mode's
shape -- at every point, no PDE solved -- and the answer is ``sum_k S_k phi_k(t_end)``.  For an even
n the roots' signs are chosen, point by point, to agree best with the initial data and with the
groups of products of two modes (``n c_n S_j**(n-1) S_k``...).

On the PDEAgent-Bench siblings with cubic reactions (rotating pairs ``cos(w t)``, ``sin(w t)``) the
cube roots of the ``cos**3`` and ``sin**3`` coefficients gave the answer within 1e-7; no span sees
it (a cube is not a linear combination).  Time factors are told apart as sympy separates them
(``casekit.solvers.baselines.visible.separate``); an exponential's power is its rate times n."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from casekit.solvers.baselines import Inverter, register
from casekit.solvers.baselines.view import AgentView
from casekit.solvers.baselines.visible import time_groups

#: most additive terms of the expanded forcing taken apart
MAX_TERMS = 6000
#: most modes whose signs are chosen together (2**m sign patterns per point)
MAX_MODES = 4


def _reaction(view: AgentView) -> tuple[int, Any] | None:
    """Degree and leading coefficient (an expression of the coordinates: a reaction may vary in
    space) of the printed reaction, None without a polynomial one of degree two or more in u."""
    import sympy as sp

    from casekit.expr import COORDS, ExpressionError, as_expr, param_symbol
    from casekit.solvers.forms import Scalar, form_of

    try:
        form = form_of(str(view.spec["pde"].get("type")))
    except KeyError:
        return None
    params = view.spec["pde"].get("params") or {}
    if not isinstance(form, Scalar) or not form.reaction or form.reaction not in params:
        return None
    u = param_symbol("u")
    try:
        r = as_expr(params[form.reaction], variables=[str(c) for c in COORDS[: view.dim]], params=("u",))
        poly = sp.Poly(r, u)
    except (ExpressionError, sp.PolynomialError):
        return None
    if poly.degree() < 2 or poly.LC().has(u):
        return None
    return poly.degree(), poly.LC()


def _groups(view: AgentView) -> dict[Any, Any] | None:
    """The forcing as {time factor: spatial coefficient} (``visible.time_groups``; without
    ``visible.separate``'s cap on the printed size, within the expansion bounds of
    ``casekit.expr.size``), None when it is not separable."""
    from casekit.expr import COORDS, T, as_expr
    from casekit.expr.size import estimate

    if not isinstance(view.forcing, (str, int, float)):
        return None
    e = as_expr(view.forcing, variables=[*(str(c) for c in COORDS[: view.dim]), "t"])
    if T not in e.free_symbols or estimate(e).too_large:
        return None
    return time_groups(e, MAX_TERMS)


def _modes(groups: dict[Any, Any], n: int) -> dict[Any, Any]:
    """{time factor phi: coefficient of phi**n} for every phi whose n-th power is a group: a
    power of a trigonometric (or other) factor as sympy keeps it, an exponential's as its rate
    times n."""
    import sympy as sp

    from casekit.expr import T

    out: dict[Any, Any] = {}
    for time, coefficient in groups.items():
        base, exp = time.as_base_exp()
        if exp == n and base.has(T) and not isinstance(base, sp.exp) and base != sp.E:
            out[base] = coefficient
        elif isinstance(time, sp.exp) or base == sp.E:
            rate = sp.expand(time.args[0] if isinstance(time, sp.exp) else exp)
            root = sp.exp(sp.expand(rate / n))
            if root in groups:  # a mode of that rate exists (its linear terms printed it)
                out[root] = coefficient
    return out


def _values(view: AgentView) -> np.ndarray:
    from casekit.expr import T, to_numpy

    reaction = _reaction(view)
    groups = _groups(view) if reaction is not None else None
    zero = np.zeros(len(view.points))
    if reaction is None or groups is None:
        return zero
    n, leading = reaction
    modes = _modes(groups, n)
    if not modes or len(modes) > MAX_MODES:
        return zero
    pts = view.points

    def field(e: Any) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.broadcast_to(np.asarray(to_numpy(e, view.dim)(pts, 0.0), dtype=float), (len(pts),))

    def at(phi: Any, t: float) -> float:
        return float(phi.subs(T, t))

    phis = list(modes)
    lead = field(leading)
    with np.errstate(all="ignore"):
        powers = np.array([np.where(lead != 0, field(modes[phi]) / np.where(lead != 0, lead, 1.0), 0.0)
                           for phi in phis])
    if n % 2:
        shapes = np.sign(powers) * np.abs(powers) ** (1.0 / n)
    else:
        shapes = _signed(view, phis, np.maximum(powers, 0.0) ** (1.0 / n), groups, n, lead, field, at)
    return sum(shapes[i] * at(phi, view.t_end) for i, phi in enumerate(phis))


def _signed(view: AgentView, phis: list[Any], sizes: np.ndarray, groups: dict[Any, Any], n: int, lead: np.ndarray,
            field: Any, at: Any) -> np.ndarray:
    """The shapes from their sizes, with the signs (per point) that agree best with the initial data
    and the groups of ``phi_j**(n-1) phi_k``: ``n c_n S_j**(n-1) S_k``."""
    checks: list[tuple[np.ndarray, np.ndarray]] = []  # (target values, pattern -> model) pairs
    patterns = np.array(list(itertools.product((1.0, -1.0), repeat=len(phis))))  # (P, m)
    if view.initial is not None:
        u0 = view.evaluate(view.initial, view.points, view.t0)
        weights = np.array([at(phi, view.t0) for phi in phis])
        model = np.einsum("pm,mn->pn", patterns * weights, sizes)
        checks.append((u0, model))
    for j, k in itertools.permutations(range(len(phis)), 2):
        cross = groups.get(phis[j] ** (n - 1) * phis[k])
        if cross is None:
            continue
        target = field(cross)
        model = n * lead[None, :] * np.einsum("p,n->pn", patterns[:, j] ** (n - 1) * patterns[:, k],
                                              sizes[j] ** (n - 1) * sizes[k])
        checks.append((target, model))
    if not checks:
        return sizes
    misfit = sum(((model - target) / (np.max(np.abs(target)) or 1.0)) ** 2 for target, model in checks)
    best = np.argmin(misfit, axis=0)  # per point
    return patterns[best].T * sizes


register(Inverter("reaction_powers", "each mode's shape as the n-th root of the forcing's coefficient of the mode's "
                  "time factor to the n-th power (a polynomial reaction of degree n >= 2)", _values,
                  applies=lambda view: view.transient and _reaction(view) is not None))
