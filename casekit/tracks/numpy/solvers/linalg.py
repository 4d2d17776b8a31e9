"""Sparse solves, Newton's method on the free (non-Dirichlet) nodes, and time marching of
first-order problems ``u_t + S(u, t) = 0`` (Crank-Nicolson, BDF2 started with one Crank-Nicolson
step, backward Euler).

Systems are solved directly (SuperLU) where :func:`direct_fits` -- up to :data:`DIRECT_LIMIT_2D`
unknowns on a 2-D grid (a 5-point convection-diffusion operator at 622 intervals across, 387k
unknowns: 5.7 s to factorize, 27M non-zeros in the factors, 0.1 s a solve), up to
:data:`DIRECT_LIMIT` unknowns and :data:`DIRECT_NONZEROS_3D` non-zeros on a 3-D one (whose factors
fill in much faster) -- and by a Jacobi-preconditioned Krylov method above (where a sparse
factorization's fill-in costs minutes; a fine 2-D reference level of a convection-dominated case
took BiCGSTAB past its CPU limit before): conjugate gradients when the volume-weighted
matrix is symmetric (diffusion, Robin, reaction), BiCGSTAB otherwise (restarted GMRES after a
breakdown), to the relative residual ``rtol`` of the settings; ``linear_solver: iterative`` asks
for the Krylov method at every size.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sps
import scipy.sparse.linalg as spla

from casekit.tracks.numpy.solvers.box import Box

#: (node values, t) -> the spatial residual S(u, t) at every node
Residual = Callable[[np.ndarray, float], np.ndarray]
#: (node values, t) -> dS/du at every node (sparse)
Jacobian = Callable[[np.ndarray, float], sps.spmatrix]


#: the largest system solved by a sparse factorization on a 2-D grid; on a 3-D grid (whose factors
#: fill in much faster) the largest and the most non-zeros
DIRECT_LIMIT_2D = 500_000
DIRECT_LIMIT = 40_000
DIRECT_NONZEROS_3D = 200_000


def direct_fits(dim: int, matrix: sps.spmatrix) -> bool:
    """Whether ``matrix`` (on a ``dim``-D grid) is solved by a sparse factorization."""
    if dim <= 2:
        return matrix.shape[0] <= DIRECT_LIMIT_2D
    return matrix.shape[0] <= DIRECT_LIMIT and matrix.nnz <= DIRECT_NONZEROS_3D


@dataclass
class Stats:
    newton_iterations: int = 0
    factorizations: int = 0
    krylov_iterations: int = 0
    time_steps: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def info(self) -> dict[str, Any]:
        out = {"newton_iterations": self.newton_iterations, "factorizations": self.factorizations}
        if self.krylov_iterations:
            out["krylov_iterations"] = self.krylov_iterations
        if self.time_steps:
            out["time_steps"] = self.time_steps
        return {**out, **self.extra}


class Krylov:
    """CG or BiCGSTAB with Jacobi preconditioning on the volume-weighted system (the finite-volume
    balance, symmetric for a symmetric operator)."""

    def __init__(self, matrix: sps.spmatrix, weights: np.ndarray, rtol: float, stats: Stats) -> None:
        self.weights = weights
        self.matrix = (sps.diags(weights) @ sps.csr_matrix(matrix)).tocsr()
        asym = abs(self.matrix - self.matrix.T).max() if self.matrix.nnz else 0.0
        self.symmetric = bool(asym <= 1e-12 * abs(self.matrix).max())
        inverse = 1.0 / self.matrix.diagonal()
        n = self.matrix.shape[0]
        self.preconditioner = spla.LinearOperator((n, n), matvec=lambda x: inverse * x)
        self.rtol, self.stats = rtol, stats

    def solve(self, r: np.ndarray) -> np.ndarray:
        b = self.weights * r
        if not np.any(b):
            return np.zeros_like(b)

        def count(_: Any) -> None:
            self.stats.krylov_iterations += 1

        n = self.matrix.shape[0]
        if self.symmetric:
            x, info = spla.cg(self.matrix, b, rtol=self.rtol, atol=0.0, M=self.preconditioner, maxiter=20 * n,
                              callback=count)
        else:
            x, info = spla.bicgstab(self.matrix, b, rtol=self.rtol, atol=0.0, M=self.preconditioner, maxiter=20 * n,
                                    callback=count)
            if info < 0:  # a breakdown of BiCGSTAB: restarted GMRES, which cannot break down
                x, info = spla.gmres(self.matrix, b, rtol=self.rtol, atol=0.0, M=self.preconditioner, restart=30,
                                     maxiter=max(1, n // 30), callback=count, callback_type="pr_norm")
        if info != 0:
            raise RuntimeError(f"the Krylov solve did not reach the relative residual {self.rtol:g} (info {info})")
        return np.asarray(x)


def block(matrix: sps.spmatrix, rows: np.ndarray, cols: np.ndarray) -> sps.csc_matrix:
    return sps.csr_matrix(matrix)[rows][:, cols].tocsc()


def factorize(box: Box, matrix: sps.spmatrix, stats: Stats, weights: np.ndarray | None = None,
              krylov: bool = False) -> Any:
    """A solver of the free-node system ``matrix`` (an object with ``solve(rhs)``); ``weights``:
    the volumes of its rows (default: the free nodes'); ``krylov`` at every size."""
    if not direct_fits(box.dim, matrix) or krylov or box.settings.linear_solver == "iterative":
        return Krylov(matrix, box.volume[box.free] if weights is None else weights, box.settings.rtol, stats)
    stats.factorizations += 1
    return spla.splu(sps.csc_matrix(matrix), permc_spec="MMD_AT_PLUS_A")


def newton(box: Box, residual: Callable[[np.ndarray], np.ndarray], jacobian: Callable[[np.ndarray], sps.spmatrix],
           u: np.ndarray, stats: Stats, *, linear: bool = False, lu: Any = None) -> np.ndarray:
    """Solve residual(u) = 0 on the free nodes from ``u`` (its Dirichlet values set); a linear
    problem takes one step (with the factorization ``lu`` when given)."""
    free = box.free
    s = box.settings
    for _ in range(s.max_newton_iterations):
        stats.newton_iterations += 1
        r = residual(u)[free]
        solver = lu if lu is not None else factorize(box, block(jacobian(u), free, free), stats)
        du = solver.solve(r)
        u[free] -= du
        if linear or np.linalg.norm(du) <= s.newton_rtol * max(float(np.linalg.norm(u[free])), 1e-300):
            return u
    raise RuntimeError(f"Newton did not converge in {s.max_newton_iterations} iterations")


def march(box: Box, spatial: Residual, jacobian: Jacobian, initial: np.ndarray,
          dirichlet: Callable[[float], np.ndarray], stats: Stats, *, linear: bool, constant: bool) -> np.ndarray:
    """u(t_end) of u_t + S(u, t) = 0 from ``initial`` at t0 (Dirichlet nodes follow
    ``dirichlet(t)``); a linear problem with a ``constant`` Jacobian factorizes once per scheme."""
    n, dt = box.settings.steps(box.t0, box.t_end)
    scheme = box.settings.scheme
    if scheme not in ("crank_nicolson", "bdf2", "backward_euler"):
        raise ValueError(f"unknown time scheme {scheme!r}; known: crank_nicolson, bdf2, backward_euler")
    D = box.dirichlet
    u = initial.copy()
    u[D] = dirichlet(box.t0)
    previous = u.copy()
    factors: dict[str, Any] = {}
    for step in range(1, n + 1):
        t_old, t = box.t0 + (step - 1) * dt, box.t0 + step * dt
        kind = "crank_nicolson" if scheme == "bdf2" and step == 1 else scheme
        if kind == "crank_nicolson":
            c, theta, known = 1.0 / dt, 0.5, -u / dt + 0.5 * spatial(u, t_old)
        elif kind == "bdf2":
            c, theta, known = 1.5 / dt, 1.0, (-2.0 * u + 0.5 * previous) / dt
        else:
            c, theta, known = 1.0 / dt, 1.0, -u / dt

        def res(w: np.ndarray, c: float = c, theta: float = theta, known: np.ndarray = known,
                t: float = t) -> np.ndarray:
            return c * w + known + theta * spatial(w, t)

        def jac(w: np.ndarray, c: float = c, theta: float = theta, t: float = t) -> sps.spmatrix:
            return c * sps.identity(box.size, format="csr") + theta * jacobian(w, t)

        lu = None
        if linear and constant:
            if kind not in factors:
                factors[kind] = factorize(box, block(jac(u), box.free, box.free), stats)
            lu = factors[kind]
        new = u.copy()
        new[D] = dirichlet(t)
        new = newton(box, res, jac, new, stats, linear=linear, lu=lu)
        previous, u = u, new
    stats.time_steps += n
    return u
