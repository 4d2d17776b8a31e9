"""Incompressible flow (casekit.solvers.forms.Flow): ``-nu Laplace(u) [+ (u . grad) u] + grad p
= f``, ``div u = 0`` with velocity (Dirichlet), traction ``nu (grad u) n - p n = g`` (Neumann) and
periodic conditions, on the staggered grid of :mod:`~casekit.tracks.numpy.solvers.staggered`.

The saddle-point system (momentum at every face not given, continuity at every cell) is solved by
a sparse LU factorization (SuperLU with partial pivoting: its zero pressure block rules out the
Jacobi-preconditioned Krylov methods of the other families).  With velocity given on the whole
(non-periodic) boundary the pressure is pinned in one cell, whose continuity row is dropped (it
follows from the others once the O(h^2) net flux of the Dirichlet data on the grid is removed),
and its mean is set to zero after the solve -- the matrix is never singular, and has no dense
row (a Lagrange multiplier for the mean fills a 3-D factorization in: 34 s against 18 s at 16^3).
The convective term is centred, ``sum_b u_b du_k/dx_b`` with ``u_b`` the mean of its four
nearest nodes; Navier-Stokes takes Newton steps (a new factorization each) with the track's
stopping rule, from the Stokes field at viscosity max(nu, 1), and falls back to continuation in the viscosity (1, 1/4,
... down to nu, split where a level fails) when Newton does not converge at nu directly.  A solve that does not converge
raises with the reason; it never writes a field.  The output is the velocity at the box's nodes
(the cell vertices), which the track interpolates onto the evaluation grid.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sps
import scipy.sparse.linalg as spla

from casekit.solvers.forms import Flow, form_of
from casekit.tracks.numpy.solvers import for_forms
from casekit.tracks.numpy.solvers.box import Box
from casekit.tracks.numpy.solvers.linalg import Stats
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
        self.linear = Affine(sps.vstack([r.matrix for r in rows], format="csr"), np.concatenate([r.const for r in rows]))
        self.velocity = int(grid.offsets[grid.dim])

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
        return (self.linear.matrix + sps.vstack(blocks + [sps.csr_matrix((rest, len(x)))])).tocsr()

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
        jac = system.jacobian(x)[free][:, free].tocsc()
        stats.factorizations += 1
        try:
            du = spla.splu(jac, permc_spec="COLAMD").solve(r)
        except RuntimeError as exc:  # SuperLU: "Factor is exactly singular"
            raise RuntimeError(f"the flow system is singular ({exc})") from None
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
