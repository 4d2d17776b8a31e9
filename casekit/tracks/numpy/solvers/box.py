"""A box domain (a rectangle or a cuboid) as a uniform grid of nodes, and the second-order
finite-volume operators every solver of the track is made of.

The grid has the nodes of the degree-``degree`` Lagrange space on a ``cells_across`` mesh:
``degree * cells_across`` intervals across the longest side, the same spacing on the others.
Each node owns the cell of the dual grid around it, clipped to the box (half a cell on a face,
a quarter in a corner, ...).  ``-div(kappa grad u)`` is the balance of the fluxes
``kappa (u_q - u_p) / h`` through the dual faces (kappa at the midpoint of the grid edge), divided
by the node's volume; Neumann and Robin data enter as the flux through the node's share of its
boundary faces -- for constant kappa this is the classical ghost-point scheme (the ghost value
eliminated with the centred difference of the boundary condition), and it converges at second
order.  First derivatives (transport) are centred, one-sided second-order differences at the
faces.  A periodic axis has no node on its high side: its last node's neighbour is the first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sps

from casekit.expr import T, as_expr, exact, to_numpy
from casekit.solvers.settings import SolveSettings

#: a case_spec datum as a function of (points (n, dim), t) -> values (n,)
Data = Callable[[np.ndarray, float], np.ndarray]


class Box:
    """The case's box, its boundary conditions by face, and its node grid."""

    def __init__(self, case_spec: dict[str, Any], settings: dict[str, Any]) -> None:
        from casekit.domains import resolve

        self.spec = case_spec
        self.settings = SolveSettings.from_dict(settings)
        dom = case_spec["domain"]
        self.dim = int(dom["dim"])
        bounds = [float(v) for v in dom["bounds"]]
        self.lo, self.hi = np.array(bounds[0::2]), np.array(bounds[1::2])
        extent = self.hi - self.lo
        intervals = self.settings.cells_across * max(1, self.settings.degree)
        self.cells = [max(2, round(float(e) * intervals / float(extent.max()))) for e in extent]
        self.h = extent / np.array(self.cells)
        time = case_spec["pde"].get("time")
        self.transient = time is not None
        self.t0 = float(time["t0"]) if time else 0.0
        self.t_end = float(time["t_end"]) if time else 0.0
        self.variables = ("x", "y", "z")[: self.dim] + (("t",) if self.transient else ())

        bc = case_spec["bc"]
        self.periodic: set[int] = set()
        for pair in bc.get("periodic", []):
            shift = np.abs(np.asarray(pair["translation"], dtype=float))
            self.periodic.add(int(shift.argmax()))
        self.counts = [c if a in self.periodic else c + 1 for a, c in enumerate(self.cells)]
        self.shape = tuple(self.counts)
        self.size = int(np.prod(self.shape))
        self.axes = [self.lo[a] + self.h[a] * np.arange(n) for a, n in enumerate(self.counts)]
        mesh = np.meshgrid(*self.axes, indexing="ij")
        self.points = np.column_stack([m.ravel() for m in mesh])
        self.index = np.arange(self.size).reshape(self.shape)

        # every face of a non-periodic axis carries the tag nearest to its centre
        geometry = resolve(dom["type"], dom["geometry_params"], validated=True).geometry
        tags = list(dom["boundary_tags"])
        self.faces: dict[tuple[int, int], str] = {}
        for a in range(self.dim):
            if a in self.periodic:
                continue
            for side in (0, 1):
                centre = (self.lo + self.hi) / 2
                centre[a] = self.hi[a] if side else self.lo[a]
                self.faces[(a, side)] = min(tags, key=lambda t: float(geometry.tag_distance(t, centre[None])[0]))
        self.conditions: dict[str, tuple[str, dict[str, Any]]] = {}
        for kind in ("dirichlet", "neumann", "robin"):
            for entry in bc.get(kind, []):
                self.conditions[entry["tag"]] = (kind, entry)
        missing = sorted({t for t in self.faces.values() if t not in self.conditions})
        if missing:
            raise ValueError(f"no boundary condition on the boundary parts {missing}")

        # the nodes of Dirichlet faces (a node on several faces: a Dirichlet one decides)
        self.dirichlet = np.zeros(self.size, dtype=bool)
        for (a, side), tag in self.faces.items():
            if self.conditions[tag][0] == "dirichlet":
                self.dirichlet[self.face_nodes(a, side)] = True
        self.free = ~self.dirichlet
        widths = []
        for a, n in enumerate(self.counts):
            w = np.full(n, self.h[a])
            if a not in self.periodic:
                w[0] = w[-1] = self.h[a] / 2
            widths.append(w)
        self.widths = widths
        self.volume = self._outer(widths)

    # -- grid helpers --------------------------------------------------------------------
    def _outer(self, factors: list[np.ndarray]) -> np.ndarray:
        out = np.ones(1)
        for f in factors:
            out = np.multiply.outer(out, f)
        return out.reshape(self.size)

    def edges(self, axis: int) -> tuple[np.ndarray, np.ndarray]:
        """The grid edges along ``axis`` as (low node, high node) arrays (a periodic axis wraps)."""
        n = self.counts[axis]
        low = np.arange(n if axis in self.periodic else n - 1)
        return (np.take(self.index, low, axis=axis).ravel(), np.take(self.index, (low + 1) % n, axis=axis).ravel())

    def face_nodes(self, axis: int, side: int) -> np.ndarray:
        return np.take(self.index, -1 if side else 0, axis=axis).ravel()

    def face_area(self, axis: int) -> np.ndarray:
        """Each node's share of a face normal to ``axis`` (the widths of the other axes)."""
        return self._outer([np.ones(n) if a == axis else self.widths[a] for a, n in enumerate(self.counts)])

    def entries(self, kind: str) -> list[tuple[int, int, dict[str, Any]]]:
        return [(a, s, self.conditions[tag][1]) for (a, s), tag in self.faces.items()
                if self.conditions[tag][0] == kind]

    # -- data ----------------------------------------------------------------------------
    def data(self, value: Any, params: tuple[str, ...] = ()) -> Callable[..., np.ndarray]:
        """A case_spec value (number or expression) as a vectorised function (points, t, **params)."""
        return to_numpy(exact(as_expr(value, variables=self.variables, params=params)), self.dim, params=params)

    def depends_on_time(self, value: Any) -> bool:
        return isinstance(value, str) and T in as_expr(value, variables=self.variables).free_symbols

    def dirichlet_values(self, key: str = "value", component: int | None = None) -> Callable[[float], np.ndarray]:
        """t -> the Dirichlet data (of one ``component`` of vector data) at the Dirichlet nodes
        (in the order of ``flatnonzero``)."""
        owner = np.full(self.size, -1)
        parts = self.entries("dirichlet")
        for i, (a, s, _) in reversed(list(enumerate(parts))):
            owner[self.face_nodes(a, s)] = i
        nodes = np.flatnonzero(self.dirichlet)
        groups = [(nodes[owner[nodes] == i], self.data(_part(e[key], component))) for i, (_, _, e) in enumerate(parts)]
        where = np.searchsorted(nodes, np.concatenate([g for g, _ in groups])) if groups else np.array([], int)

        def values(t: float) -> np.ndarray:
            out = np.empty(len(nodes))
            if groups:
                out[where] = np.concatenate([fn(self.points[g], t) for g, fn in groups])
            return out

        return values

    # -- operators -----------------------------------------------------------------------
    def diffusion(self, kappa: Any = 1.0, t: float = 0.0) -> sps.csr_matrix:
        """-div(kappa grad u) at every node (its row divided by the node's volume), without
        boundary fluxes (those are the Neumann/Robin data: see :meth:`natural`)."""
        coeff = self.data(kappa)
        rows, cols, vals = [], [], []
        for a in range(self.dim):
            left, right = self.edges(a)
            mid = self.points[left].copy()
            mid[:, a] += self.h[a] / 2
            g = coeff(mid, t) * self.face_area(a)[left] / self.h[a]
            rows += [left, right, left, right]
            cols += [left, right, right, left]
            vals += [g, g, -g, -g]
        K = sps.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                           shape=(self.size, self.size))
        return sps.diags(1.0 / self.volume) @ K

    def natural(self, component: int | None = None) -> tuple[sps.csr_matrix, Callable[[float], np.ndarray]]:
        """The Robin term alpha u and the Neumann/Robin data (one ``component`` of vector data) on
        the boundary nodes, per volume: (matrix, t -> load), for flux data
        ``kappa du/dn (+ alpha u) = g``."""
        diag = np.zeros(self.size)
        loads: list[tuple[np.ndarray, np.ndarray, Callable[..., np.ndarray]]] = []
        for kind in ("neumann", "robin"):
            for a, s, e in self.entries(kind):
                nodes = self.face_nodes(a, s)
                weight = self.face_area(a)[nodes] / self.volume[nodes]
                if kind == "robin":
                    np.add.at(diag, nodes, float(e["alpha"]) * weight)
                loads.append((nodes, weight, self.data(_part(e["value"], component))))

        def load(t: float) -> np.ndarray:
            out = np.zeros(self.size)
            for nodes, weight, fn in loads:
                np.add.at(out, nodes, weight * fn(self.points[nodes], t))
            return out

        return sps.diags(diag).tocsr(), load

    def gradient(self, axis: int) -> sps.csr_matrix:
        """d/dx_axis at every node: centred, one-sided (second order) on the faces."""
        n, h = self.counts[axis], self.h[axis]
        if axis in self.periodic:
            d = sps.diags([-np.ones(n - 1), np.ones(n - 1)], [-1, 1], shape=(n, n)).tolil()
            d[0, n - 1], d[n - 1, 0] = -1.0, 1.0
        else:
            d = sps.diags([-np.ones(n - 1), np.ones(n - 1)], [-1, 1], shape=(n, n)).tolil()
            d[0, :3] = [-3.0, 4.0, -1.0]
            d[n - 1, n - 3:] = [1.0, -4.0, 3.0]
        out = sps.identity(1, format="csr")
        for a in range(self.dim):
            out = sps.kron(out, d.tocsr() / (2 * h) if a == axis else sps.identity(self.counts[a]), format="csr")
        return out

    def transport(self, velocity: list[float]) -> sps.csr_matrix:
        """velocity . grad u (a constant velocity)."""
        out = sps.csr_matrix((self.size, self.size))
        for a, b in enumerate(velocity[: self.dim]):
            if float(b) != 0.0:
                out = out + float(b) * self.gradient(a)
        return out.tocsr()

    # -- output --------------------------------------------------------------------------
    def sample(self, u: np.ndarray, points: np.ndarray) -> np.ndarray:
        """Node values at ``points`` by tensor-product cubic spline interpolation (fourth order,
        so the output adds nothing to the scheme's second-order error)."""
        from scipy.interpolate import RegularGridInterpolator

        values = u.reshape(self.shape)
        axes = list(self.axes)
        for a in sorted(self.periodic):  # the high side of a periodic axis repeats the low one
            values = np.concatenate([values, np.take(values, [0], axis=a)], axis=a)
            axes[a] = np.append(axes[a], self.hi[a])
        method = "cubic" if min(len(x) for x in axes) >= 4 else "linear"
        interp = RegularGridInterpolator(tuple(axes), values, method=method, bounds_error=False, fill_value=None)
        return np.asarray(interp(np.clip(points[:, : self.dim], self.lo, self.hi)))


def _part(value: Any, component: int | None) -> Any:
    return value if component is None else value[component]
