"""Incompressible flow (casekit.solvers.forms.Flow): ``-nu Laplace(u) [+ (u . grad) u] + grad p
= f``, ``div u = 0`` with velocity (Dirichlet), traction ``nu (grad u) n - p n = g`` (Neumann) and
periodic conditions, on the staggered grid of :mod:`~casekit.tracks.numpy.solvers.staggered`.

The saddle-point system (momentum at every face not given, continuity at every cell) is solved by a
sparse LU factorization (SuperLU with partial pivoting: its zero pressure block rules out the
Jacobi-preconditioned Krylov methods of the other families) where the track factorizes its other
systems (``linalg.direct_fits``: the factors of a large 3-D saddle system fill in to minutes).
Above, by GMRES preconditioned block-triangularly (:class:`BlockSolver`): the velocity by the LU
factors of each component's viscous operator at the system's viscosity -- factorized once per
viscosity, for every Newton step -- and the pressure by the Schur complement's spectral equivalent
on a MAC grid, the identity over the viscosity (unit cube, 20 intervals: 55 GMRES iterations and 1.2
s per Newton step against ~50 s for the LU of the whole system); GMRES that does not reach its
residual falls back to the factorization. With velocity given on the whole (non-periodic) boundary
the pressure is pinned in one cell, whose continuity row is dropped (it follows from the others once
the O(h^2) net flux of the Dirichlet data on the grid is removed), and its mean is set to zero after
the solve -- the matrix is never singular, and has no dense row (a Lagrange multiplier for the mean
fills a 3-D factorization in: 34 s against 18 s at 16^3). The convective term is centred, ``sum_b
u_b du_k/dx_b`` with ``u_b`` the mean of its four nearest nodes; Navier-Stokes takes Newton steps (a new
Jacobian each) with the track's stopping rule, from the Stokes field at viscosity max(nu,
1), and falls back to continuation in the viscosity (1, 1/4, ... down to nu, split where a level
fails) when Newton does not converge at nu directly. A solve that does not converge raises with the
reason; it never writes a field. The output is the velocity at the box's nodes (the cell vertices),
which the track interpolates onto the evaluation grid.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import scipy.sparse as sps
import scipy.sparse.linalg as spla

from casekit.solvers.forms import Flow, form_of
from casekit.tracks.numpy.solvers import for_forms
from casekit.tracks.numpy.solvers.box import Box
from casekit.tracks.numpy.solvers.linalg import Stats, direct_fits
from casekit.tracks.numpy.solvers.staggered import Affine, Staggered

#: Newton steps at the target viscosity before falling back to continuation
DIRECT_ITERATIONS = 10


class System:
    """The residual of the flow equations on the staggered grid at viscosity ``nu`` and its
    Jacobian, one row per unknown (momentum of each face, continuity of each cell)."""

    def __init__(self, box: Box, nu: float, convective: bool) -> None:
        grid = self.grid = Staggered(box, nu)
        forcing = box.spec["pde"]["forcing"]["f"]
        rows: list[Affine] = []
        self.convection: list[list[tuple[Affine, Affine]]] = []
        for k in range(grid.dim):
            viscous = grid.second_difference(k, 0)
            for b in range(1, grid.dim):
                viscous = viscous + grid.second_difference(k, b)
            f = grid.forcing(k, forcing)
            rows.append((-nu) * viscous + grid.pressure_gradient(k) - Affine(sps.csr_matrix((len(f), grid.size)), f))
            if convective:
                self.convection.append([(grid.pick(k, grid.indices(k)) if b == k else grid.mean_velocity(k, b),
                                         grid.first_difference(k, b)) for b in range(grid.dim)])
        rows.append(grid.divergence())
        self.linear = Affine(sps.vstack([r.matrix for r in rows], format="csr"),
                             np.concatenate([r.const for r in rows]))
        self.velocity = int(grid.offsets[grid.dim])
        self.nu = nu
        self._block: BlockSolver | None = None

    def solve(self, jac: sps.csc_matrix, r: np.ndarray, settings: Any, stats: Stats) -> np.ndarray:
        """jac^-1 r on the free unknowns: a factorization where the track factorizes, else
        :class:`BlockSolver` (its factors kept for the next Newton step)."""
        if direct_fits(self.grid.dim, jac):
            return direct(jac, r, stats)
        if self._block is None:
            self._block = BlockSolver(self, stats)
        return self._block.solve(jac, r, settings, stats)

    def residual(self, x: np.ndarray) -> np.ndarray:
        out = self.linear(x)
        for k, terms in enumerate(self.convection):
            out[self.grid.offsets[k]:self.grid.offsets[k + 1]] += sum(mean(x) * slope(x) for mean, slope in terms)
        return out

    def jacobian(self, x: np.ndarray) -> sps.csr_matrix:
        if not self.convection:
            return self.linear.matrix
        blocks = []
        for terms in self.convection:
            block = sps.csr_matrix(terms[0][1].matrix.shape)
            for mean, slope in terms:  # d/dx (mean(x) * slope(x))
                block = block + sps.diags(slope(x)) @ mean.matrix + sps.diags(mean(x)) @ slope.matrix
            blocks.append(block)
        rest = self.linear.matrix.shape[0] - self.velocity
        return (self.linear.matrix + sps.vstack([*blocks, sps.csr_matrix((rest, len(x)))])).tocsr()

    def start(self) -> np.ndarray:
        """Zero but for the Dirichlet velocity nodes, which hold their data."""
        g = self.grid
        x = np.zeros(g.size)
        for k in range(g.dim):
            idx = g.indices(k)
            for side in (0, 1):
                if g.kind.get((k, side)) != "dirichlet":
                    continue
                mask = idx[k] == side * g.cells[k]
                x[g.offsets[k] + np.flatnonzero(mask)] = g.wall_data((k, side), k, g.points(k, idx[:, mask]))
        g.balance_flux(x)
        return x


def direct(jac: sps.csc_matrix, r: np.ndarray, stats: Stats) -> np.ndarray:
    stats.factorizations += 1
    try:
        return np.asarray(spla.splu(jac, permc_spec="COLAMD").solve(r))
    except RuntimeError as exc:  # SuperLU: "Factor is exactly singular"
        raise RuntimeError(f"the flow system is singular ({exc})") from None


class BlockSolver:
    """GMRES on the free saddle system ``[[A, G], [D, C]]`` (``C``: the pinned pressure's row)
    with the block upper-triangular preconditioner ``[[A0, G], [0, S0]]``: ``A0`` each velocity
    component's viscous operator (its diagonal block of the Stokes system at the viscosity,
    factorized once), ``S0`` the Schur complement ``C - D A^-1 G`` as a MAC grid has it up to
    O(1) factors, ``1/nu`` on every continuity row (``-D A^-1 G ~ (1/nu) D Laplace^-1 D^T ~ I/nu``)
    and the pinned row's own ``1``."""

    #: GMRES's residual relative to the right-hand side (Newton's update rule is ``newton_rtol``)
    RTOL = 1e-12
    RESTART = 200
    MAX_ITERATIONS = 2000

    def __init__(self, system: System, stats: Stats) -> None:
        grid = system.grid
        free = ~grid.known
        # the linear part holds no convection (System.convection is kept apart): the Stokes operator
        viscous = sps.csr_matrix(system.linear.matrix)[free][:, free]
        ends = [int(free[:o].sum()) for o in grid.offsets[:grid.dim + 1]]
        self.parts = list(itertools.pairwise(ends))
        self.velocity = ends[-1]
        self.factors = [spla.splu(viscous[a:b, a:b].tocsc(), permc_spec="MMD_AT_PLUS_A") for a, b in self.parts]
        stats.factorizations += len(self.factors)
        pressure = viscous[self.velocity:, self.velocity:].diagonal()
        self.schur = np.where(pressure != 0.0, pressure, 1.0 / system.nu)

    def _precondition(self, g: sps.csr_matrix, v: np.ndarray) -> np.ndarray:
        yp = v[self.velocity:] / self.schur
        w = v[:self.velocity] - g @ yp
        return np.concatenate([*(f.solve(w[a:b]) for f, (a, b) in zip(self.factors, self.parts, strict=True)), yp])

    def solve(self, jac: sps.csc_matrix, r: np.ndarray, settings: Any, stats: Stats) -> np.ndarray:
        matrix = jac.tocsr()
        g = matrix[:self.velocity, self.velocity:]
        n = matrix.shape[0]
        count = [0]

        def step(_: Any) -> None:
            count[0] += 1

        du, info = spla.gmres(matrix, r, M=spla.LinearOperator((n, n), matvec=lambda v: self._precondition(g, v)),
                              rtol=self.RTOL, atol=0.0, restart=self.RESTART,
                              maxiter=self.MAX_ITERATIONS // self.RESTART, callback=step, callback_type="pr_norm")
        stats.krylov_iterations += count[0]
        if info != 0:  # not reached: the factorization answers (slowly) rather than a loose update
            stats.extra["krylov_fallbacks"] = stats.extra.get("krylov_fallbacks", 0) + 1
            return direct(jac, r, stats)
        return np.asarray(du)


def newton(system: System, x: np.ndarray, settings: Any, stats: Stats, *, linear: bool,
           iterations: int | None = None) -> np.ndarray:
    """Solve residual(x) = 0 for the free unknowns from ``x`` (its Dirichlet values set): the
    update relative to the free unknowns below ``newton_rtol`` (the track's rule, ``linalg.newton``);
    a linear problem takes one step."""
    free = ~system.grid.known
    limit = iterations or settings.max_newton_iterations
    r = system.residual(x)[free]
    for _ in range(limit):
        stats.newton_iterations += 1
        du = system.solve(system.jacobian(x)[free][:, free].tocsc(), r, settings, stats)
        if not np.all(np.isfinite(du)):
            raise RuntimeError("Newton's update is not finite")
        x[free] -= du
        r = system.residual(x)[free]
        if linear or np.linalg.norm(du) <= settings.newton_rtol * max(float(np.linalg.norm(x[free])), 1e-300):
            return x
    raise RuntimeError(f"Newton did not converge in {limit} iterations")


@for_forms(Flow)
def flow(box: Box) -> tuple[np.ndarray, dict[str, Any]]:
    spec = box.spec
    form = form_of(spec["pde"]["type"])
    assert isinstance(form, Flow)
    if box.transient:
        raise ValueError("the flow solver is steady (the case has a time interval)")
    nu = float(spec["pde"]["params"][form.viscosity])
    settings = box.settings
    stats = Stats()
    # Navier-Stokes starts from the Stokes field at viscosity max(nu, 1), as the DOLFINx track does
    stokes = System(box, max(nu, 1.0) if form.convective else nu, False)
    x = newton(stokes, stokes.start(), settings, stats, linear=True)
    if form.convective:
        x, levels = navier_stokes(box, nu, x, stats)
        stats.extra["continuation_levels"] = levels
    stokes.grid.mean_free(x)
    info = {**stats.info(), "scheme": "mac", "unknowns": int((~stokes.grid.known).sum())}
    return stokes.grid.velocity_at_vertices(x), info


def navier_stokes(box: Box, nu: float, stokes: np.ndarray, stats: Stats) -> tuple[np.ndarray, int]:
    """Newton at ``nu`` from the Stokes field; on failure continuation 1, 1/4, ..., nu, each level
    from the last converged field, a level Newton cannot reach split at the geometric mean (at most
    :data:`MAX_LEVELS`), as the DOLFINx track does.  Raises with the viscosity and the levels done."""
    settings = box.settings
    direct = min(DIRECT_ITERATIONS, settings.max_newton_iterations)
    try:
        return newton(System(box, nu, True), stokes.copy(), settings, stats, linear=False, iterations=direct), 1
    except RuntimeError as exc:
        if nu >= 1.0:
            raise RuntimeError(f"{exc} at viscosity {nu:g}") from None
    levels = [nu]
    while levels[0] < 1.0:
        levels.insert(0, min(1.0, levels[0] * 4))
    done: list[float] = []
    converged = stokes.copy()
    while levels:
        try:
            x = newton(System(box, levels[0], True), converged.copy(), settings, stats, linear=False)
        except RuntimeError as exc:
            if not done or len(done) + len(levels) >= MAX_LEVELS:
                raise RuntimeError(f"{exc} at viscosity {levels[0]:.4g} (continuation {done})") from None
            levels.insert(0, (done[-1] * levels[0]) ** 0.5)
            continue
        converged = x
        done.append(levels.pop(0))
    return converged, len(done)


#: most viscosity levels of one continuation
MAX_LEVELS = 16
