"""Newton's method on the residual of one form, for the NGSolve solvers.

The residual is ``a(u) + data`` (``a`` a form, ``data`` an assembled vector of the terms that do
not depend on u).  Its Jacobian is the linearisation of ``jacobian``: a form with the terms of
``a`` that act on u and none of its data (by default ``a`` itself).  Linearising a form costs
several evaluations of its whole integrand per point (one per component of the trial functions,
in automatic differentiation), and a manufactured forcing is a long expression that contributes
nothing to the Jacobian: the elasticity calibration of ``linear_elasticity_exp_decay`` spent
3-4 s of its 10 s there, the Navier-Stokes ones most of their assembly.

Newton stops, as the DOLFINx track's does, when the residual on the free dofs is at most
``newton_rtol`` of the first one (or below the absolute floors), so the step that would only
confirm convergence is never factorised.  ``SolveSettings.newton`` says how the Jacobian is
treated: "standard" (what the calibration times) assembles and factorises a new one at every
iteration; "modified" (the build's reference levels, which nothing times) keeps the last
factorisation, from iteration to iteration and from one call to the next (a time loop's steps),
while its steps bring the residual down to at most :data:`STALE_ACCEPT` of what it was.
"""

from __future__ import annotations

import math
from typing import Any

import ngsolve as ng

from casekit.solvers.settings import SolveSettings
from casekit.tracks.ngsolve.solvers.linalg import Direct, Factor, Solver, check_residual, free_mask, norm

#: a step of the kept factorisation is taken when it brings the residual down to at most this
#: fraction of what it was (a new Jacobian's step is taken instead otherwise), and the
#: factorisation is tried for the next step only if it brought it down to at most STALE_KEEP
#: (the DOLFINx track's values, measured there)
STALE_ACCEPT = 0.5
STALE_KEEP = 0.01


class Newton:
    """Newton on ``a(u) + data`` in the space ``fes``; ``spd`` declares the Jacobian symmetric
    positive definite (:data:`~casekit.tracks.ngsolve.solvers.linalg.DIRECT`), ``factor`` how it
    is factorised."""

    def __init__(self, a: Any, fes: Any, settings: SolveSettings, family: str, *, spd: bool,
                 jacobian: Any = None, factor: Factor = Direct) -> None:
        self.a, self.jacobian = a, jacobian if jacobian is not None else a
        self.fes, self.settings, self.spd, self.factor = fes, settings, spd, factor
        self.mask = free_mask(fes)
        self.what = f"the {family} system ({int(self.mask.sum())} unknowns)"
        self.solver: Solver | None = None  # the last factorisation
        self.reuse = False  # whether the next iteration tries it first (modified Newton)
        self.factorizations = 0

    def residual(self, u: Any, data: Any, out: Any) -> float:
        self.a.Apply(u, out)
        if data is not None:
            out.data += data
        return norm(out, self.mask)

    def factorise(self, u: Any) -> Solver:
        """The Jacobian at ``u`` assembled into the form's matrix and factorised: the kept solver
        factorises its new values again when it can (``update``), else a new one is made."""
        self.jacobian.AssembleLinearization(u)
        update = getattr(self.solver, "update", None)
        if update is not None:
            update()
        else:
            self.solver = None  # freed before the next is made: one factorisation in memory at a time
            self.solver = self.factor(self.jacobian.mat, self.fes, self.spd, self.what)
        self.factorizations += 1
        return self.solver  # type: ignore[return-value]

    def linear(self, gfu: Any, data: Any = None) -> int:
        """The one step of a linear problem, checked: the residual A w - r of its solve on the free
        dofs (:func:`~casekit.tracks.ngsolve.solvers.linalg.check_residual`)."""
        u = gfu.vec
        r, w, after = u.CreateVector(), u.CreateVector(), u.CreateVector()
        self.residual(u, data, r)
        solver = self.factorise(u)
        solver.solve(r, w)
        u.data -= w
        after.data = r - self.jacobian.mat * w  # the residual at u - w
        self.solver = None
        check_residual(self.what, solver.method, self.mask, after, (r, data), self.settings.rtol, self.spd)
        return 1

    def fixed(self, gfu: Any, data: Any = None) -> int:
        """The one step of a linear problem whose operator does not change between calls (a time
        loop with time-independent coefficients): factorised on the first call and reused; the
        residual is the matrix's product (the form is bilinear), before and after, checked."""
        u = gfu.vec
        solver = self.solver or self.factorise(u)
        A = self.jacobian.mat
        r, w, after = u.CreateVector(), u.CreateVector(), u.CreateVector()
        r.data = A * u
        if data is not None:
            r.data += data
        solver.solve(r, w)
        u.data -= w
        after.data = r - A * w
        check_residual(self.what, solver.method, self.mask, after, (r, data), self.settings.rtol, self.spd)
        return 1

    def solve(self, gfu: Any, data: Any = None) -> int:
        """Newton iterations from ``gfu`` (its Dirichlet values set): at most
        ``max_newton_iterations`` with a new Jacobian (and as many steps of a kept one); returns
        the number of steps taken."""
        s, u = self.settings, gfu.vec
        cap, keeps = s.max_newton_iterations, s.newton == "modified"
        r, trial, w = u.CreateVector(), u.CreateVector(), u.CreateVector()
        first = current = self.residual(u, data, r)
        steps = fresh = kept = 0
        while not ((steps and current <= max(s.newton_rtol * first, 1e-12)) or current < 1e-14):
            if keeps and self.reuse and self.solver is not None and kept < cap:
                kept += 1
                self.solver.solve(r, w)
                u.data -= w
                after = self.residual(u, data, trial)
                if after <= STALE_ACCEPT * current:  # False for NaN
                    self.reuse = after <= STALE_KEEP * current
                    r.data = trial
                    current, steps = after, steps + 1
                    continue
                u.data += w
            if fresh == cap:
                raise RuntimeError(f"Newton did not converge in {cap} iterations (residual {current:.3e}, "
                                   f"initial {first:.3e})")
            fresh += 1
            self.factorise(u).solve(r, w)
            if not math.isfinite(ng.Norm(w)):
                raise RuntimeError(f"Newton step {steps + 1} of {self.what} is not finite")
            u.data -= w
            current, steps = self.residual(u, data, r), steps + 1
            self.reuse = True
        return steps
