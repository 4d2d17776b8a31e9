"""eigen_terms: each additive term of the forcing that the stated operator maps to a multiple of
itself, divided by that multiple, plus a linear background fitted to the Dirichlet data.

A forcing that is a sum of the operator's eigenfunctions -- ``sin(5 pi x) sin(3 pi y) + 0.5 sin(9 pi
x) sin(7 pi y)`` for ``-Laplace(u) = f`` with ``u = 0`` on the unit square's sides -- has the
solution ``sum c_k g_k / lambda_k``: one application of the PDE's operator to each printed term,
which casekit counts as no solve (``casekit.validate.taylor`` draws the same line).
``scaled_forcing`` catches a single eigenfunction; a sum of two with different eigenvalues escaped
it and every span (each term needs its own divisor), and two released numerical-reference cases
were answered exactly that way.  Steady cases with one scalar unknown; terms that are not
eigenfunctions are left out."""

from __future__ import annotations

from typing import Any

import numpy as np

from casekit.solvers.baselines import Inverter, register
from casekit.solvers.baselines.view import AgentView, lstsq

#: a forcing with more additive terms than this is not taken apart
MAX_TERMS = 64
#: relative spread of L(g) / g over the sample points below which g counts as an eigenfunction
EIGEN_SPREAD = 1e-9


def _operator(view: AgentView) -> Any:
    """The steady operator of the case as a function of a sympy expression g (its affine part,
    L(0), left out), or None where it is not one linear map to divide by: built from
    ``casekit.solvers.forms`` and the printed parameters only (an inverter runs in the sandbox,
    where the families' code never goes)."""
    import sympy as sp

    from casekit.expr import COORDS, as_expr, exact, param_symbol
    from casekit.solvers.forms import Biharmonic, Scalar, form_of

    try:
        form = form_of(str(view.spec["pde"].get("type")))
    except KeyError:
        return None
    xs = list(COORDS[: view.dim])
    names = [str(c) for c in xs]
    params = view.spec["pde"].get("params") or {}

    def parse(value: Any, extra: tuple[str, ...] = ()) -> Any:
        return exact(as_expr(value, variables=names, params=extra))

    def laplacian(g: Any) -> Any:
        return sum(sp.diff(g, c, 2) for c in xs)

    if isinstance(form, Biharmonic):
        return lambda g: laplacian(laplacian(g))
    if not isinstance(form, Scalar) or form.burgers:
        return None
    kappa = parse(params[form.diffusion]) if form.diffusion and form.diffusion in params else sp.Integer(1)
    beta = ([parse(b) for b in params[form.convection]] if form.convection and form.convection in params
            else None)
    k = parse(params[form.wavenumber]) if form.wavenumber and form.wavenumber in params else None
    u = param_symbol("u")
    reaction = parse(params[form.reaction], ("u",)) if form.reaction and form.reaction in params else None

    def apply(g: Any) -> Any:
        out = -sum(sp.diff(kappa * sp.diff(g, c), c) for c in xs)
        if beta is not None:
            out += sum(b * sp.diff(g, c) for b, c in zip(beta, xs, strict=False))
        if k is not None:
            out -= k**2 * g
        if reaction is not None:
            out += reaction.subs(u, g) - reaction.subs(u, 0)
        return out

    return apply


def _applies(view: AgentView) -> bool:
    return (not view.transient and isinstance(view.forcing, (str, int, float))
            and _operator(view) is not None)


def _eigen_sum(view: AgentView) -> Any:
    """The sympy sum of c_k g_k / lambda_k over the forcing's eigen terms (0 when none)."""
    import sympy as sp

    from casekit.expr import COORDS, as_expr, exact, to_numpy
    from casekit.expr.size import TooLarge, expand

    operator = _operator(view)
    if operator is None:
        return sp.Integer(0)
    try:
        f = expand(exact(as_expr(view.forcing, variables=[str(c) for c in COORDS[: view.dim]])), "the forcing")
    except TooLarge:
        return sp.Integer(0)
    terms = sp.Add.make_args(f)
    if len(terms) > MAX_TERMS:
        return sp.Integer(0)
    pts = view.points[view.inside][:: max(1, int(view.inside.sum()) // 400)]
    total = sp.Integer(0)
    for term in terms:
        c, g = term.as_coeff_Mul()
        if g.is_number:
            continue
        try:  # a term the operator or the evaluator cannot take is no eigenfunction
            # a support factor max(0, g) differentiates into DiracDelta: zero at every sample point off
            # the sphere where it starts (casekit.derive_support)
            image = operator(g).replace(lambda a: isinstance(a, sp.DiracDelta), lambda a: sp.Integer(0))
            with np.errstate(all="ignore"):
                gv = np.broadcast_to(to_numpy(g, view.dim)(pts, 0.0), (len(pts),)).astype(float)
                lv = np.broadcast_to(to_numpy(image, view.dim)(pts, 0.0), (len(pts),)).astype(float)
        except (ArithmeticError, TypeError, ValueError):
            continue
        use = np.abs(gv) > 1e-8 * max(float(np.max(np.abs(gv), initial=0.0)), 1e-300)
        if use.sum() < 10 or not np.all(np.isfinite(lv[use])):
            continue
        ratios = lv[use] / gv[use]
        lam = float(np.median(ratios))
        if lam != 0.0 and float(np.max(np.abs(ratios - lam))) <= EIGEN_SPREAD * abs(lam):
            total += c * g / sp.Float(lam)
    return total


def _values(view: AgentView) -> np.ndarray:
    from casekit.expr import to_numpy

    s = to_numpy(_eigen_sum(view), view.dim)
    with np.errstate(all="ignore"):
        inside = np.broadcast_to(s(view.points, view.t_end), (len(view.points),)).astype(float)
        if not view.dirichlet:
            return inside
        b_pts = view.boundary_points
        rest = view.boundary_values(view.t_end) - np.broadcast_to(s(b_pts, view.t_end), (len(b_pts),))
    background = [np.ones(len(b_pts))] + [b_pts[:, i] for i in range(view.dim)]
    coef = lstsq(np.column_stack(background), rest[:, None])[:, 0]
    grid = np.column_stack([np.ones(len(view.points))] + [view.points[:, i] for i in range(view.dim)])
    return inside + grid @ coef


register(Inverter("eigen_terms", "each term of the forcing that the operator maps to a multiple of itself, divided by "
                  "that multiple, plus a linear background fitted to the Dirichlet data", _values, applies=_applies))
