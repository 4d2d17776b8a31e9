"""Linear algebra of the NGSolve solvers: direct factorisations, Krylov solves, checked solves.

A linear system is solved by a factorisation (:class:`Direct`, or a family's own, such as
:class:`MeanFree` for a pressure fixed by its mean), except a system solved once (one right-hand
side for one assembled operator: a linear problem's one step) that is large, which is solved as the
DOLFINx track solves it (:func:`krylov`): on a 3-D mesh, or above :data:`DIRECT_LIMIT` unknowns
when symmetric positive definite, by a Krylov method with an NGSolve preconditioner
(:class:`Krylov`, :func:`preconditioner_for`).  Every solve is checked: the residual it leaves
on the free dofs must be at most max(1e3 rtol, 1e-8) of what it started from; a Krylov solve that
does not meet this is replaced by the direct factorisation, and a direct solve that does not is an
error naming the system and the method -- a solve that did not solve is never a field.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol

import ngsolve as ng
import numpy as np
from ngsolve.krylovspace import CGSolver, GMRESSolver

#: the direct solver of a linear system, by the call site's declaration ``spd`` that its operator
#: is symmetric positive definite on the free dofs (diffusion, mass plus diffusion, elasticity,
#: with Robin coefficients >= 0): NGSolve's sparse Cholesky then, UMFPACK's LU for every other
#: (Helmholtz, convection, Newton linearisations, saddle points).  Single-threaded, as every run
#: is (OMP_NUM_THREADS=1), the two take about as long (2-D P2 Laplacian, 524k unknowns: 6.6 s and
#: 5.1 s; 3-D P2, 64k: 6.7 s and 6.1 s; UMFPACK is several times slower only with multithreaded
#: BLAS on a busy machine), and Cholesky needs half the memory (0.4 GB against 1.0 GB for either):
#: what lets a large case stay under the memory limit.  A wrong declaration cannot pass unseen:
#: Cholesky of a nonsymmetric matrix solves another system, and the residual check rejects it.
DIRECT = {True: ("sparsecholesky", "sparse Cholesky"), False: ("umfpack", "UMFPACK")}


class Solver(Protocol):
    """A factorised system: ``solve(r, out)`` puts the solution for the right-hand side ``r``
    (its free rows) into ``out`` (zero on the other dofs); ``method`` names it for messages.  One
    made from a matrix may also have ``update()``: factorise the matrix's new values again, keeping
    the analysis of its sparsity (which a Jacobian's assembly never changes)."""

    method: str

    def solve(self, r: Any, out: Any) -> None: ...


#: how a matrix on a space's free dofs is factorised: (matrix, space, spd, what the system is)
Factor = Callable[[Any, Any, bool, str], Solver]


def factorise(mat: Any, free: Any, spd: bool, what: str) -> Any:
    """NGSolve's factorisation of ``mat`` on the dofs ``free`` (:data:`DIRECT`); its failure is an
    error naming the system (a singular matrix mostly factorises and leaves a residual that the
    check rejects)."""
    inverse, name = DIRECT[spd]
    try:
        return mat.Inverse(free, inverse=inverse)
    except Exception as exc:  # netgen's NgException: the factorisation failed
        raise RuntimeError(f"the linear solve of {what} by {name} failed: {exc} (a singular "
                           "matrix: the discretisation is not well posed on this mesh)") from None


class Direct:
    """The matrix factorised on the space's free dofs (:data:`DIRECT`)."""

    def __init__(self, mat: Any, fes: Any, spd: bool, what: str) -> None:
        self.inverse = factorise(mat, fes.FreeDofs(), spd, what)
        self.method = DIRECT[spd][1]

    def solve(self, r: Any, out: Any) -> None:
        out.data = self.inverse * r

    def update(self) -> None:
        """UMFPACK's numeric factorisation again on its symbolic one (a quarter of a factorisation
        of a Burgers Jacobian), sparse Cholesky's on its ordering: the same factors as anew."""
        self.inverse.Update()


def free_mask(fes: Any) -> np.ndarray:
    return np.array(fes.FreeDofs(), dtype=bool)


def norm(vec: Any, mask: np.ndarray) -> float:
    return float(np.linalg.norm(vec.FV().NumPy()[mask]))


def residual_limit(rtol: float) -> float:
    """The largest relative residual a linear solve at tolerance ``rtol`` may leave (the DOLFINx
    track's rule: a Krylov method stops on a preconditioned residual, which may sit a few orders of
    magnitude from the true one; a solve that did not solve is off by orders more)."""
    return max(1e3 * rtol, 1e-8)


def residual_failure(what: str, method: str, mask: np.ndarray, r: Any, scales: tuple[Any, ...], rtol: float,
                     spd: bool = False) -> str:
    """Why the residual ``r`` a linear solve left on the free dofs is not accepted ("" when it is):
    it must be at most :func:`residual_limit` of the largest of ``scales`` (the right-hand side,
    the data; the DOLFINx track's rule, |b - A x| against |b|: a time step starts from the previous
    state, whose residual may be much smaller than the data), and finite."""
    before = max(norm(v, mask) for v in scales if v is not None)
    after = norm(r, mask)
    residual = after / before if before > 0 else after
    limit = residual_limit(rtol)
    if math.isfinite(residual) and residual <= limit:
        return ""
    return (f"the linear solve of {what} by {method} left a relative residual {residual:.2e} "
            f"(accepted: at most {limit:.0e})"
            + (": is the operator symmetric positive definite, as declared?" if spd else ""))


def check_residual(what: str, method: str, mask: np.ndarray, r: Any, scales: tuple[Any, ...], rtol: float,
                   spd: bool = False) -> None:
    """:func:`residual_failure` as an error."""
    why = residual_failure(what, method, mask, r, scales, rtol, spd)
    if why:
        raise RuntimeError(why)


#: symmetric positive definite systems solved once of more unknowns than this (any size on a 3-D
#: mesh) are solved by CG instead of a factorisation (the DOLFINx track's limit)
DIRECT_LIMIT = 60_000

def preconditioner_for(fes: Any) -> str | None:
    """NGSolve's preconditioner of the Krylov solves on ``fes``, None when the space has none that
    is more than a factorisation (the system is then factorised).  All work on a single, unrefined
    mesh and keep the Dirichlet dofs out:

    - a scalar H1 space of order >= 2: "multigrid", NGSolve's two-level method there -- a block
      Gauss-Seidel smoother on the high-order dofs, the lowest-order (P1) system factorised.  The
      3-D P2 Laplacian of ``poisson_3d_highfreq`` (67k unknowns), to a relative residual 1e-12,
      its setup (within the assembly) included: sparse Cholesky 6.1 s; CG with "multigrid" 12
      iterations, 1.2 s; "local" (Jacobi) 146, 0.6 s (but its count grows with the mesh);
      "h1amg" 30, 5.1 s; "bddc" (its wirebasket factorised) 2, 5.5 s, with coarsetype "h1amg" 30,
      4.8 s.  A 2-D P2 Laplacian of 290k unknowns: sparse Cholesky 2.6 s, CG 6 iterations 1.6 s.
    - a scalar H1 space of order 1 (its low-order space is itself, where "multigrid" factorises
      the whole system: 2 iterations, as long as Cholesky): "h1amg", NGSolve's algebraic
      multigrid for nodal dofs (3-D P1, 39k unknowns: Cholesky 3.7 s, CG 16 iterations 2.1 s).
    - other spaces (VectorH1, whose "multigrid" has no low-order space and factorises the whole
      system: elasticity of 22k unknowns, 2 iterations, 1.5 s against Cholesky's 1.3 s; Periodic,
      on which "multigrid" finds no prolongation): none.
    """
    low = fes.lospace
    if low is None:
        return None
    return "h1amg" if low.ndof == fes.ndof else "multigrid"


#: iteration caps: a Krylov solve that reaches one is replaced by the factorisation
CG_MAX_IT = 500
GMRES_MAX_IT = 600
GMRES_RESTART = 200


def krylov(dim: int, size: int, spd: bool, linear_solver: str) -> bool:
    """Whether a system of ``size`` unknowns on a ``dim``-D mesh, solved once, is solved by a Krylov
    method (the DOLFINx track's rule): on a 3-D mesh, or above :data:`DIRECT_LIMIT` unknowns when
    symmetric positive definite; at every size when the settings ask for ``iterative``."""
    return linear_solver == "iterative" or dim == 3 or (spd and size > DIRECT_LIMIT)


class Krylov:
    """A system solved by CG (``spd``) or restarted GMRES, preconditioned by ``pre`` (a preconditioner
    registered on the matrix's form before its assembly, so it follows every assembly), to the
    relative tolerance ``rtol``.  A solve whose residual on the free dofs is above
    :func:`residual_limit` of the right-hand side's (or that raises) is done again by the direct
    factorisation (:class:`Direct`); ``fallback`` then says why."""

    def __init__(self, mat: Any, fes: Any, spd: bool, what: str, *, pre: Any, rtol: float,
                 max_iterations: int | None = None) -> None:
        self.mat, self.fes, self.spd, self.what, self.pre, self.rtol = mat, fes, spd, what, pre, rtol
        self.max_iterations = max_iterations or (CG_MAX_IT if spd else GMRES_MAX_IT)
        self.mask = free_mask(fes)
        self.method = f"{'CG' if spd else 'GMRES'} + NGSolve {preconditioner_for(fes)}"
        self.iterations = 0
        self.fallback = ""

    def solve(self, r: Any, out: Any) -> None:
        b = r.CreateVector()
        b.data = r
        b.FV().NumPy()[~self.mask] = 0.0  # the free rows only, as a factorisation on them reads
        if self.spd:
            solver = CGSolver(self.mat, self.pre, tol=self.rtol, maxiter=self.max_iterations)
        else:
            solver = GMRESSolver(self.mat, self.pre, tol=self.rtol, maxiter=self.max_iterations,
                                 restart=GMRES_RESTART)
        try:
            solver.Solve(rhs=b, sol=out)
            out.FV().NumPy()[~self.mask] = 0.0
            left = b.CreateVector()
            left.data = b - self.mat * out
            why = residual_failure(self.what, self.method, self.mask, left, (b,), self.rtol, self.spd)
        except Exception as exc:  # netgen's NgException, or a breakdown
            why = f"the linear solve of {self.what} by {self.method} raised {exc}"
        self.iterations = solver.iterations
        if why:
            direct = Direct(self.mat, self.fes, self.spd, self.what)
            direct.solve(r, out)
            self.fallback = f"{why} after {solver.iterations} iterations: {direct.method}"
            self.method = f"{direct.method} (after {self.method} did not solve)"


class MeanFree:
    """A saddle point whose pressure is fixed by its mean: velocity and pressure x and one Lagrange
    multiplier l, K = [[A, c], [b^T, 0]].  The multiplier is coupled to every pressure dof, a dense
    row and column that UMFPACK factorises about seven times slower than the rest (a 2-D P2-P1
    system of 24.5k unknowns: 7.8 s against 1.1 s).  So A is factorised without them and with one
    pressure dof ``pin`` fixed instead, and K's solution follows from that factorisation exactly:
    the pressure constants ``z`` span the kernels of A and of its transpose (velocity given on the
    whole non-periodic boundary), so for K (x, l) = (r, s)

        l = z.r / z.c,   x0 = A_pinned^-1 (r - c l),   x = x0 + (s - b.x0) / (b.z) z.

    The caller's residual check covers K's whole system, the multiplier's row included."""

    def __init__(self, mat: Any, fes: Any, spd: bool, what: str, *, multiplier: int, constant: np.ndarray) -> None:
        assert not spd, "a saddle point is not positive definite"
        free = ng.BitArray(fes.FreeDofs())
        free.Clear(multiplier)
        pressure = np.flatnonzero(constant)
        free.Clear(int(pressure[0]))
        self.inverse = factorise(mat, free, False, what)
        self.method = DIRECT[False][1] + " (the multiplier of the pressure's mean eliminated)"
        self.mat, self.z, self.multiplier = mat, constant, multiplier
        self.mask = free_mask(fes)
        self.mask[multiplier] = False
        self.work = mat.CreateColVector()
        self._couplings()

    def _couplings(self) -> None:
        """The multiplier's column c and row b on the other free dofs."""
        unit, column, row = self.work.CreateVector(), self.work.CreateVector(), self.work.CreateVector()
        unit[:] = 0.0
        unit[self.multiplier] = 1.0
        column.data = self.mat * unit
        row.data = self.mat.T * unit
        self.c = np.where(self.mask, column.FV().NumPy(), 0.0)
        self.b = np.where(self.mask, row.FV().NumPy(), 0.0)
        self.zc, self.bz = float(self.z @ self.c), float(self.b @ self.z)

    def update(self) -> None:
        self.inverse.Update()
        self._couplings()

    def solve(self, r: Any, out: Any) -> None:
        rv = np.where(self.mask, r.FV().NumPy(), 0.0)
        lagrange = float(self.z @ rv) / self.zc
        self.work.FV().NumPy()[:] = rv - self.c * lagrange
        out.data = self.inverse * self.work
        x = out.FV().NumPy()
        x += (float(r.FV().NumPy()[self.multiplier]) - float(self.b @ x)) / self.bz * self.z
        x[self.multiplier] = lagrange


def pressure_constant(space: Any, pressure: int) -> np.ndarray:
    """The coefficients of the constant 1 in component ``pressure`` of the compound ``space`` (zero
    elsewhere): 1 at the pressure's vertex dofs, 0 at its higher-order ones (NGSolve's H1 basis)."""
    gf = ng.GridFunction(space)
    gf.components[pressure].Set(1.0)
    z = gf.vec.FV().NumPy().copy()
    exact = np.round(z)
    if np.max(np.abs(z - exact)) > 1e-8 or not set(np.unique(exact)) <= {0.0, 1.0}:
        raise RuntimeError("the pressure constant is not 0 and 1 on the pressure's dofs")
    return exact
