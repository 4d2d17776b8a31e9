"""Stokes and steady Navier-Stokes on Taylor-Hood elements; Newton with continuation in the
viscosity from max(nu, 1) for Navier-Stokes (as the DOLFINx solver); without traction parts the
pressure is fixed by a constant null space."""

from __future__ import annotations

from typing import Any

import firedrake as fd
import ufl

from casekit.solvers.forms import FORMS, Flow, form_of
from casekit.tracks.firedrake.solvers import family
from casekit.tracks.firedrake.solvers.problem import Problem


@family(*(name for name, f in FORMS.items() if isinstance(f, Flow)))
def flow(p: Problem) -> tuple[Any, dict[str, Any]]:
    form = form_of(p.spec["pde"]["type"])
    assert isinstance(form, Flow)
    deg = p.settings.degree
    V, Q = fd.VectorFunctionSpace(p.mesh, "CG", deg), fd.FunctionSpace(p.mesh, "CG", deg - 1)
    W = V * Q
    w = fd.Function(W)
    u, pr = ufl.split(w)
    v, q = fd.TestFunctions(W)
    target = float(p.spec["pde"]["params"][form.viscosity])
    convective = form.convective
    nu = fd.Constant(max(target, 1.0) if convective else target)
    F = (nu * ufl.inner(ufl.grad(u), ufl.grad(v)) - pr * ufl.div(v) - q * ufl.div(u)
         - ufl.inner(p.forcing(), v)) * ufl.dx + p.natural(u, v)
    if convective:
        F += ufl.inner(ufl.grad(u) * u, v) * ufl.dx
    bcs = p.dirichlets(W.sub(0))
    nullspace = None
    if not p.entries("neumann"):
        nullspace = fd.MixedVectorSpaceBasis(W, [W.sub(0), fd.VectorSpaceBasis(constant=True, comm=p.mesh.comm)])
    levels = [target]
    while convective and levels[0] < 1.0:
        levels.insert(0, min(1.0, levels[0] * 4))
    iterations = 0
    for level in levels:
        nu.assign(level)
        iterations += p.newton(F, w, bcs, nullspace)
    return w.subfunctions[0], {"dofs": W.dim(), "newton_iterations": iterations, "continuation_levels": len(levels)}
