"""Newton's method on the residual of one form, for the NGSolve solvers.

The residual is ``a(u) + data`` (``a`` a form, ``data`` an assembled vector of the terms that do
not depend on u).  Its Jacobian is the linearisation of ``jacobian``: a form with the terms of
``a`` that act on u and none of its data (by default ``a`` itself).  Linearising a form costs
several evaluations of its whole integrand per point (one per component of the trial functions,
in automatic differentiation), and a manufactured forcing is a long expression that contributes
nothing to the Jacobian: the elasticity calibration of ``linear_elasticity_exp_decay`` spent
3-4 s of its 10 s there, the Navier-Stokes ones most of their assembly.  A ``linear_part`` (a form
of the residual's terms that are linear in u with an operator that never changes: a time step's
mass and diffusion) is assembled once; ``a`` then holds the other terms only, and an iteration
assembles those alone (half the element loop of a reaction-diffusion step).

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
import numpy as np

from casekit.solvers.settings import SolveSettings
from casekit.tracks.ngsolve.solvers.linalg import (
    Direct,
    Factor,
    Krylov,
    Solver,
    check_residual,
    free_mask,
    krylov,
    norm,
    preconditioner_for,
)

#: a step of the kept factorisation is taken when it brings the residual down to at most this
#: fraction of what it was (a new Jacobian's step is taken instead otherwise), and the
#: factorisation is tried for the next step only if it brought it down to at most STALE_KEEP
#: (the DOLFINx track's values, measured there)
STALE_ACCEPT = 0.5
STALE_KEEP = 0.01


def same_pattern(a: Any, b: Any) -> bool:
    """Whether two sparse matrices have the same nonzero pattern (their values then add up as
    vectors)."""
    (_, cols_a, rows_a), (_, cols_b, rows_b) = a.CSR(), b.CSR()
    return bool(np.array_equal(np.asarray(rows_a), np.asarray(rows_b))
                and np.array_equal(np.asarray(cols_a), np.asarray(cols_b)))


class Newton:
    """Newton on ``a(u) + data`` in the space ``fes``; ``spd`` declares the Jacobian symmetric
    positive definite (:data:`~casekit.tracks.ngsolve.solvers.linalg.DIRECT`), ``factor`` how it
    is factorised.  ``once``: the form is a linear problem's, each of its assemblies solved once
    (:meth:`linear`); a large one (:func:`~casekit.tracks.ngsolve.solvers.linalg.krylov`) is then
    solved by a Krylov method, whose preconditioner is registered on the Jacobian's form here,
    before its first assembly (NGSolve's preconditioners are set up from the element matrices
    during the assembly, and follow every assembly after)."""

    def __init__(self, a: Any, fes: Any, settings: SolveSettings, family: str, *, spd: bool,
                 jacobian: Any = None, factor: Factor = Direct, linear_part: Any = None,
                 once: bool = False) -> None:
        self.a, self.jacobian = a, jacobian if jacobian is not None else a
        self.linear_part = linear_part
        self.fes, self.settings, self.spd, self.factor = fes, settings, spd, factor
        self.mask = free_mask(fes)
        self.what = f"the {family} system ({int(self.mask.sum())} unknowns)"
        self.solver: Solver | None = None  # the last factorisation
        self.matrix: Any = None  # the matrix it is of
        self.reuse = False  # whether the next iteration tries it first (modified Newton)
        self.factorizations = 0
        self._linear: Any = None  # the linear part's matrix, once assembled
        self._sum: Any = None  # the linear part's matrix plus the Jacobian's
        #: the Krylov solves' preconditioner (None: factorised); a special factorisation (a saddle
        #: point's), a Jacobian with a linear part assembled apart, or a space without a
        #: preconditioner of its own is always factorised
        self.preconditioner: Any = None
        self.preconditioner_name = preconditioner_for(fes)
        if once and factor is Direct and linear_part is None and self.preconditioner_name and \
                krylov(fes.mesh.dim, int(self.mask.sum()), spd, settings.linear_solver):
            self.preconditioner = ng.Preconditioner(self.jacobian, self.preconditioner_name)
        self.linear_iterations = 0
        self.fallback = ""  # why a Krylov solve was replaced by the factorisation ("" when none was)

    def linear_matrix(self, u: Any) -> Any:
        """The linear part's matrix, assembled on first use (its linearisation: the matrix itself)."""
        if self._linear is None:
            self.linear_part.AssembleLinearization(u)
            self._linear = self.linear_part.mat
        return self._linear

    def residual(self, u: Any, data: Any, out: Any) -> float:
        self.a.Apply(u, out)
        if self.linear_part is not None:
            out.data += self.linear_matrix(u) * u
        if data is not None:
            out.data += data
        return norm(out, self.mask)

    def jacobian_at(self, u: Any) -> Any:
        """The Jacobian at ``u``: the form's linearisation, plus the linear part's matrix (summed
        value by value into a kept matrix: forms on one space share their sparsity pattern)."""
        self.jacobian.AssembleLinearization(u)
        if self.linear_part is None:
            return self.jacobian.mat
        linear = self.linear_matrix(u)
        if self._sum is None:
            if not same_pattern(linear, self.jacobian.mat):
                raise RuntimeError(f"the linear part of {self.what} has another sparsity pattern than its Jacobian")
            self._sum = linear.CreateMatrix()
        self._sum.AsVector().data = linear.AsVector() + self.jacobian.mat.AsVector()
        return self._sum

    def factorise(self, u: Any) -> Solver:
        """The Jacobian at ``u`` assembled and factorised: the kept solver factorises the new values
        of its matrix again when it can (``update``), else a new one is made."""
        matrix = self.jacobian_at(u)
        update = getattr(self.solver, "update", None)
        if update is not None and matrix is self.matrix:
            update()
        elif self.preconditioner is not None:
            self.solver = Krylov(matrix, self.fes, self.spd, self.what, pre=self.preconditioner.mat,
                                 rtol=self.settings.rtol)
            self.matrix = matrix
        else:
            self.solver = None  # freed before the next is made: one factorisation in memory at a time
            self.solver = self.factor(matrix, self.fes, self.spd, self.what)
            self.matrix = matrix
        self.factorizations += 1
        return self.solver  # type: ignore[return-value]

    def free(self) -> None:
        """Drop the factorisation and the matrices (the scheme has ended); counts and the Krylov
        solves' record stay."""
        self.solver = self.matrix = self._sum = self._linear = None

    def linear(self, gfu: Any, data: Any = None) -> int:
        """One Newton step, checked: the residual r - J w of its linear solve on the free dofs
        (:func:`~casekit.tracks.ngsolve.solvers.linalg.check_residual`).  For a linear problem the
        step is the solution; Navier-Stokes takes it as its first step from rest, so the form's own
        residual after it is not zero and cannot be the check."""
        u = gfu.vec
        r, w, after = u.CreateVector(), u.CreateVector(), u.CreateVector()
        self.residual(u, data, r)
        solver = self.factorise(u)
        solver.solve(r, w)
        if isinstance(solver, Krylov):
            self.linear_iterations += solver.iterations
            self.fallback = solver.fallback or self.fallback
        u.data -= w
        after.data = r - self.matrix * w  # the linear solve's residual
        self.solver = self.matrix = None
        check_residual(self.what, solver.method, self.mask, after, (r, data), self.settings.rtol, self.spd)
        return 1

    def fixed_step(self, gfu: Any, data: Any = None) -> int:
        """The one step of a linear problem whose operator does not change between calls (a time
        loop with time-independent coefficients): factorised on the first call and reused; the
        residual is the matrix's product (the form is bilinear), before and after, checked."""
        u = gfu.vec
        solver = self.solver or self.factorise(u)
        A = self.matrix
        r, w, after = u.CreateVector(), u.CreateVector(), u.CreateVector()
        r.data = A * u
        if data is not None:
            r.data += data
        solver.solve(r, w)
        u.data -= w
        after.data = r - A * w
        check_residual(self.what, solver.method, self.mask, after, (r, data), self.settings.rtol, self.spd)
        return 1

    def solve(self, gfu: Any, data: Any = None, max_iterations: int | None = None) -> int:
        """Newton iterations from ``gfu`` (its Dirichlet values set): at most ``max_iterations``
        (default ``max_newton_iterations``) with a new Jacobian, and as many steps of a kept one;
        returns the number of steps taken."""
        s, u = self.settings, gfu.vec
        cap, keeps = max_iterations or s.max_newton_iterations, s.newton == "modified"
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
