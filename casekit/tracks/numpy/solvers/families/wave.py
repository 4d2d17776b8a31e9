"""Wave (casekit.solvers.forms.Wave): u_tt - c^2 Laplace(u) = f with u and u_t at t0, Neumann
data ``c^2 du/dn`` and Robin ``c^2 du/dn + alpha u``; Newmark's average acceleration
(trapezoidal, second order, unconditionally stable, energy conserving) with one factorization."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sps

from casekit.solvers.forms import Wave, form_of
from casekit.tracks.numpy.solvers import for_forms
from casekit.tracks.numpy.solvers.box import Box
from casekit.tracks.numpy.solvers.linalg import Stats, block, factorize


@for_forms(Wave)
def wave(box: Box) -> tuple[np.ndarray, dict[str, Any]]:
    spec = box.spec
    form = form_of(spec["pde"]["type"])
    assert isinstance(form, Wave)
    speed = float(spec["pde"]["params"][form.speed])
    robin, load = box.natural()
    L = (box.diffusion(speed**2) + robin).tocsr()
    forcing = box.data(spec["pde"]["forcing"]["f"])
    pts, F, D = box.points, box.free, box.dirichlet

    def b(t: float) -> np.ndarray:
        return np.asarray(forcing(pts, t) + load(t))

    n, dt = box.settings.steps(box.t0, box.t_end)
    stats = Stats(time_steps=n, extra={"scheme": "newmark"})
    dirichlet = box.dirichlet_values()
    u = box.data(spec["ic"]["u"])(pts, box.t0)
    u[D] = dirichlet(box.t0)
    v = box.data(spec["ic"]["v"])(pts, box.t0)
    a = b(box.t0) - L @ u
    q = dt * dt / 4
    lu = factorize(box, sps.identity(int(F.sum()), format="csc") + q * block(L, F, F), stats)
    coupling = block(L, F, D)
    for step in range(1, n + 1):
        t = box.t0 + step * dt
        bt = b(t)
        new = u.copy()
        new[D] = dirichlet(t)
        rhs = u + dt * v + q * (a + bt)
        new[F] = lu.solve(rhs[F] - q * (coupling @ new[D]))
        a_new = bt - L @ new
        v = v + dt / 2 * (a + a_new)
        u, a = new, a_new
    return u, stats.info()
