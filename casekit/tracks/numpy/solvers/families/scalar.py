"""Scalar second-order families (casekit.solvers.forms.Scalar):
``[u_t] - div(kappa grad u) + beta . grad u + c u + R(u) [+ u (b . grad u)] = f`` with
Dirichlet, Neumann (``kappa du/dn = g``), Robin (``kappa du/dn + alpha u = g``) and periodic
conditions; Newton's method for a nonlinear R(u) or the Burgers transport."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sps

from casekit.solvers.forms import Scalar, form_of
from casekit.tracks.numpy.solvers import for_forms
from casekit.tracks.numpy.solvers.box import Box
from casekit.tracks.numpy.solvers.linalg import Stats, march, newton


def _reaction(box: Box, value: Any) -> tuple[Any, Any, bool, bool]:
    """R(u) and R'(u) as vectorised functions (points, t, u=values), whether R is linear in u, and
    whether R' is constant in time (then a linear problem keeps its matrix)."""
    from casekit.expr import T, as_expr, exact, param_symbol, to_numpy

    u = param_symbol("u")
    expr = exact(as_expr(value, variables=box.variables, params=("u",)))
    derivative = expr.diff(u)
    fn = to_numpy(expr, box.dim, params=("u",))
    dfn = to_numpy(derivative, box.dim, params=("u",))
    return fn, dfn, expr.diff(u, 2) == 0, not ({u, T} & derivative.free_symbols)


@for_forms(Scalar)
def scalar(box: Box) -> tuple[np.ndarray, dict[str, Any]]:
    spec = box.spec
    form = form_of(spec["pde"]["type"])
    assert isinstance(form, Scalar)
    params = spec["pde"]["params"]
    kappa = params[form.diffusion] if form.diffusion else 1.0
    robin, load = box.natural()
    extra = sps.csr_matrix((box.size, box.size))
    if form.convection:
        extra = extra + box.transport(params[form.convection])
    if form.wavenumber:
        extra = extra - float(params[form.wavenumber]) ** 2 * sps.identity(box.size, format="csr")
    moving = box.depends_on_time(kappa)
    fixed = None if moving else (box.diffusion(kappa) + robin + extra).tocsr()

    def operator(t: float) -> sps.csr_matrix:
        return fixed if fixed is not None else (box.diffusion(kappa, t) + robin + extra).tocsr()

    forcing = box.data(spec["pde"]["forcing"]["f"])
    linear = constant = True
    reaction = dreaction = None
    if form.reaction:
        reaction, dreaction, linear, constant = _reaction(box, params[form.reaction])
    burgers = None
    if form.burgers:
        burgers = box.transport(params[form.burgers])
        linear = False
    pts = box.points

    def spatial(u: np.ndarray, t: float) -> np.ndarray:
        out = operator(t) @ u - forcing(pts, t) - load(t)
        if reaction is not None:
            out += reaction(pts, t, u=u)
        if burgers is not None:
            out += u * (burgers @ u)
        return np.asarray(out)

    def jacobian(u: np.ndarray, t: float) -> sps.spmatrix:
        out = operator(t)
        if dreaction is not None:
            out = out + sps.diags(dreaction(pts, t, u=u))
        if burgers is not None:
            out = out + sps.diags(burgers @ u) + sps.diags(u) @ burgers
        return out.tocsr()

    stats = Stats(extra={"scheme": box.settings.scheme} if box.transient else {})
    dirichlet = box.dirichlet_values()
    if box.transient:
        initial = box.data(spec["ic"]["u"])(pts, box.t0)
        u = march(box, spatial, jacobian, initial, dirichlet, stats, linear=linear, constant=constant and not moving)
    else:
        u = np.zeros(box.size)
        u[box.dirichlet] = dirichlet(0.0)
        u = newton(box, lambda w: spatial(w, 0.0), lambda w: jacobian(w, 0.0), u, stats, linear=linear)
    return u, stats.info()
