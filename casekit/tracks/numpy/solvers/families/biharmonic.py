"""Biharmonic (casekit.solvers.forms.Biharmonic): Laplace^2 u = f with u and Laplace(u) given on
the boundary, as two Dirichlet Poisson solves with one factorization: Laplace w = f with
w = Laplace(u) on the boundary, then Laplace u = w with u given."""

from __future__ import annotations

from typing import Any

import numpy as np

from casekit.solvers.forms import Biharmonic
from casekit.tracks.numpy.solvers import for_forms
from casekit.tracks.numpy.solvers.box import Box
from casekit.tracks.numpy.solvers.linalg import Stats, block, factorize


@for_forms(Biharmonic)
def biharmonic(box: Box) -> tuple[np.ndarray, dict[str, Any]]:
    if box.entries("neumann") or box.entries("robin"):
        raise ValueError("the biharmonic solver takes u and Laplace(u) on every boundary part (Dirichlet)")
    stats = Stats()
    F, D = box.free, box.dirichlet
    minus_laplace = box.diffusion(1.0)
    lu = factorize(box, block(minus_laplace, F, F), stats)
    coupling = block(minus_laplace, F, D)
    f = box.data(box.spec["pde"]["forcing"]["f"])(box.points, 0.0)
    w = np.zeros(box.size)
    w[D] = box.dirichlet_values("laplacian")(0.0)
    w[F] = lu.solve(-f[F] - coupling @ w[D])
    u = np.zeros(box.size)
    u[D] = box.dirichlet_values("value")(0.0)
    u[F] = lu.solve(-w[F] - coupling @ u[D])
    return u, stats.info()
