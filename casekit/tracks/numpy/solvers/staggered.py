"""A staggered (MAC) grid on the box: velocity components on the cell faces normal to them,
pressure at the cell centres, and the second-order operators of incompressible flow on it.

The cells are the box's (:class:`~casekit.tracks.numpy.solvers.box.Box`: the intervals between
its nodes).  Component ``k`` lives on the faces normal to axis ``k`` -- nodes on the boundary
along ``k``, cell-centred along the other axes -- so the divergence of a cell is exact in the
face values and the pressure gradient at a face is the centred difference of the two cells it
separates: no spurious pressure modes, no stabilisation.

Every operator is *affine* in the unknown vector (:class:`Affine`): a value that falls outside
the grid is a ghost value, a combination of unknowns and boundary data.  Across a wall along an
axis where the component is cell-centred (the *tangential* components):

- Dirichlet: the quadratic ghost ``(8 w - 6 u_0 + u_1) / 3`` through the wall value ``w`` (its
  second difference is consistent, where the linear ghost ``2 w - u_0`` is not);
- traction (``nu du/dn - p n = g``; ``n_k = 0`` for a tangential component, so ``nu du_k/dn =
  g_k``): the flux ghost ``u_0 + h g_k / nu``.

The *normal* component on a wall is a node: given (Dirichlet), or (traction) the unknown of a
half-cell balance ``(2/h) [(-nu du/dn + p n) through the cell-centre side - g_k]`` -- the
pressure is at that cell centre, so the balance needs no extrapolation.  Both closures are those
of a finite-volume scheme, second order for the velocity.  A periodic axis wraps around.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sps

from casekit.tracks.numpy.solvers.box import Box


class Affine:
    """Values ``matrix @ X + const`` (one row per value) of the unknown vector ``X``."""

    def __init__(self, matrix: sps.spmatrix, const: np.ndarray) -> None:
        self.matrix = sps.csr_matrix(matrix)
        self.const = np.asarray(const, dtype=float)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(self.matrix @ x + self.const)

    def __add__(self, other: Affine) -> Affine:
        return Affine(self.matrix + other.matrix, self.const + other.const)

    def __sub__(self, other: Affine) -> Affine:
        return Affine(self.matrix - other.matrix, self.const - other.const)

    def __rmul__(self, c: float) -> Affine:
        return Affine(c * self.matrix, c * self.const)

    def take(self, rows: np.ndarray) -> Affine:
        return Affine(self.matrix[rows], self.const[rows])

    def where(self, mask: np.ndarray, other: Affine) -> Affine:
        """``other``'s rows where ``mask``, this one's elsewhere."""
        keep = sps.diags((~mask).astype(float))
        take = sps.diags(mask.astype(float))
        return Affine(keep @ self.matrix + take @ other.matrix, np.where(mask, other.const, self.const))


class Staggered:
    """The MAC unknowns of ``box`` (velocity components, then pressure) and their operators."""

    def __init__(self, box: Box, nu: float) -> None:
        self.box, self.nu, self.dim = box, nu, box.dim
        self.cells, self.h, self.lo = list(box.cells), box.h, box.lo
        self.periodic = box.periodic
        self.kind: dict[tuple[int, int], str] = {}
        self.entry: dict[tuple[int, int], dict[str, Any]] = {}
        for face, tag in box.faces.items():
            kind, entry = box.conditions[tag]
            if kind not in ("dirichlet", "neumann"):
                raise ValueError(f"the flow solver takes velocity (Dirichlet) and traction (Neumann) data, not "
                                 f"{kind} (boundary part {tag!r})")
            self.kind[face], self.entry[face] = kind, entry
        if not self.kind:
            raise ValueError("a flow periodic in every direction has no velocity datum (its mean is free): "
                             "give velocity or traction data on one pair of sides")
        self.shapes = [tuple(self.nodes(a) if a == k else n for a, n in enumerate(self.cells))
                       for k in range(self.dim)] + [tuple(self.cells)]
        sizes = [int(np.prod(s)) for s in self.shapes]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        #: no boundary part takes a traction: the pressure is pinned in the first cell, whose
        #: continuity row then follows from the others (the data's net flux made zero:
        #: :meth:`balance_flux`), and its mean is restored after the solve (:meth:`mean_free`)
        self.pinned = "neumann" not in self.kind.values()
        self.size = int(self.offsets[-1])
        self.known = np.zeros(self.size, dtype=bool)
        for k in range(self.dim):
            idx = self.indices(k)
            for side in (0, 1):
                if self.kind.get((k, side)) == "dirichlet":
                    self.known[self.offsets[k] + np.flatnonzero(idx[k] == side * self.cells[k])] = True
        self._data: dict[tuple[int, int, int], Any] = {}

    # -- indexing ------------------------------------------------------------------------
    def nodes(self, axis: int) -> int:
        """The faces across ``axis`` (a periodic axis has no face on its high side)."""
        return self.cells[axis] if axis in self.periodic else self.cells[axis] + 1

    def indices(self, k: int) -> np.ndarray:
        """The grid indices (dim, n) of component ``k``'s nodes (``k = dim``: the cells), C order."""
        return np.indices(self.shapes[k]).reshape(self.dim, -1)

    def ids(self, k: int, idx: np.ndarray) -> np.ndarray:
        """Global unknown numbers of component ``k``'s nodes ``idx`` (periodic axes wrap)."""
        idx = idx.copy()
        for a in self.periodic:
            idx[a] %= self.shapes[k][a]
        return self.offsets[k] + np.ravel_multi_index(tuple(idx), self.shapes[k])

    def points(self, k: int, idx: np.ndarray) -> np.ndarray:
        """Coordinates (n, dim) of component ``k``'s nodes ``idx`` (on faces along ``k``)."""
        shift = np.array([0.0 if a == k else 0.5 for a in range(self.dim)])
        return self.lo + self.h * (idx.T + shift)

    def pick(self, k: int, idx: np.ndarray) -> Affine:
        """The unknowns of component ``k`` at the nodes ``idx`` themselves."""
        n = idx.shape[1]
        return Affine(sps.csr_matrix((np.ones(n), (np.arange(n), self.ids(k, idx))), shape=(n, self.size)),
                      np.zeros(n))

    # -- boundary data -------------------------------------------------------------------
    def wall_data(self, face: tuple[int, int], k: int, points: np.ndarray) -> np.ndarray:
        """Component ``k`` of the data of ``face`` (velocity or traction) at ``points`` on it."""
        key = (*face, k)
        if key not in self._data:
            self._data[key] = self.box.data(self.entry[face]["value"][k])
        return np.asarray(self._data[key](points, 0.0), dtype=float) * np.ones(len(points))

    def on_wall(self, points: np.ndarray, axis: int, side: int) -> np.ndarray:
        out = points.copy()
        out[:, axis] = self.lo[axis] + side * self.cells[axis] * self.h[axis]
        return out

    # -- operators on component k (one row per node of k) --------------------------------
    def shift(self, k: int, b: int, s: int) -> Affine:
        """u_k one step (``s`` = +-1) along axis ``b`` from each node of ``k``: a ghost value
        across a wall when ``b != k``; zero rows beyond the boundary nodes when ``b == k``."""
        idx = self.indices(k)
        n = idx.shape[1]
        j = idx[:, :].copy()
        j[b] += s
        limit = self.shapes[k][b]
        inside = np.ones(n, dtype=bool) if b in self.periodic else (j[b] >= 0) & (j[b] < limit)
        rows = np.flatnonzero(inside)
        out = Affine(sps.csr_matrix((np.ones(len(rows)), (rows, self.ids(k, j[:, rows]))), shape=(n, self.size)),
                     np.zeros(n))
        if b == k or inside.all():
            return out
        side = int(s > 0)
        wall = ~inside
        at = idx[:, wall]
        pts = self.on_wall(self.points(k, at), b, side)
        own = self.ids(k, at)
        inner = at.copy()
        inner[b] -= s
        m = int(wall.sum())
        r = np.flatnonzero(wall)
        if self.kind[(b, side)] == "dirichlet":  # quadratic ghost through the wall value
            w = self.wall_data((b, side), k, pts)
            ghost = sps.csr_matrix((np.concatenate([np.full(m, -2.0), np.full(m, 1.0 / 3.0)]),
                                    (np.concatenate([r, r]), np.concatenate([own, self.ids(k, inner)]))),
                                   shape=(n, self.size))
            const = np.zeros(n)
            const[r] = 8.0 * w / 3.0
        else:  # the tangential traction nu du_k/dn = g_k (outward normal)
            g = self.wall_data((b, side), k, pts)
            ghost = sps.csr_matrix((np.ones(m), (r, own)), shape=(n, self.size))
            const = np.zeros(n)
            const[r] = self.h[b] * g / self.nu
        return Affine(out.matrix + ghost, const)

    def ends(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Masks of component ``k``'s nodes on its low and high walls (none on a periodic axis)."""
        idx = self.indices(k)
        if k in self.periodic:
            none = np.zeros(idx.shape[1], dtype=bool)
            return none, none
        return idx[k] == 0, idx[k] == self.cells[k]

    def second_difference(self, k: int, b: int) -> Affine:
        """d2 u_k / dx_b^2; along ``k`` on a traction wall the half-cell flux balance
        ``(2/h) [(u_inner - u_wall) / h + g_k / nu]``."""
        h = self.h[b]
        own = self.pick(k, self.indices(k))
        out = (1.0 / h**2) * (self.shift(k, b, 1) - 2.0 * own + self.shift(k, b, -1))
        if b != k:
            return out
        idx = self.indices(k)
        for side, mask in enumerate(self.ends(k)):
            if not mask.any() or self.kind[(k, side)] != "neumann":
                continue
            g = np.zeros(len(mask))
            g[mask] = self.wall_data((k, side), k, self.points(k, idx[:, mask]))
            inner = idx.copy()
            inner[k] = np.clip(idx[k] + (-1 if side else 1), 0, self.cells[k])
            balance = (2.0 / h**2) * (self.pick(k, inner) - own) + Affine(sps.csr_matrix(own.matrix.shape),
                                                                          2.0 * g / (h * self.nu))
            out = out.where(mask, balance)
        return out

    def first_difference(self, k: int, b: int) -> Affine:
        """d u_k / dx_b, centred; one-sided (second order) at the wall nodes along ``k``."""
        h = self.h[b]
        out = (0.5 / h) * (self.shift(k, b, 1) - self.shift(k, b, -1))
        if b != k:
            return out
        idx = self.indices(k)
        for side, mask in enumerate(self.ends(k)):
            if not mask.any():
                continue
            step = -1 if side else 1
            near = [idx.copy() for _ in range(3)]
            for i, node in enumerate(near):
                node[k] = np.clip(idx[k] + i * step, 0, self.cells[k])
            one_sided = (step * 0.5 / h) * (-3.0 * self.pick(k, near[0]) + 4.0 * self.pick(k, near[1])
                                            - self.pick(k, near[2]))
            out = out.where(mask, one_sided)
        return out

    def pressure_gradient(self, k: int) -> Affine:
        """dp/dx_k at component ``k``'s nodes: the difference of the two cells a face separates;
        on a traction wall the half-cell balance's ``-+ (2/h) p`` of the cell at the wall."""
        idx = self.indices(k)
        n, h, N = idx.shape[1], self.h[k], self.cells[k]
        low, high = self.ends(k)
        interior = ~(low | high)
        right, left = idx.copy(), idx.copy()
        left[k] -= 1
        right[k] = np.minimum(right[k], N - 1)
        left[k] = np.maximum(left[k], 0) if k not in self.periodic else left[k]
        r = np.arange(n)
        p = self.dim
        vals_r = np.where(interior, 1.0 / h, 0.0)
        vals_l = np.where(interior, -1.0 / h, 0.0)
        if self.kind.get((k, 0)) == "neumann":
            vals_r = np.where(low, 2.0 / h, vals_r)
        if self.kind.get((k, 1)) == "neumann":
            vals_l = np.where(high, -2.0 / h, vals_l)
        matrix = sps.csr_matrix((np.concatenate([vals_r, vals_l]),
                                 (np.concatenate([r, r]), np.concatenate([self.ids(p, right), self.ids(p, left)]))),
                                shape=(n, self.size))
        return Affine(matrix, np.zeros(n))

    def mean_velocity(self, k: int, b: int) -> Affine:
        """u_b at component ``k``'s nodes (``b != k``): the mean of its four nearest nodes, a ghost
        value standing in for one across a wall along ``k``."""
        idx = self.indices(k)
        N = self.cells[k]
        minus, plus = self.shift(b, k, -1), self.shift(b, k, 1)
        total: Affine | None = None
        for c in (idx[k] - 1, idx[k]):
            for f in (idx[b], idx[b] + 1):
                node = idx.copy()
                node[b] = f
                node[k] = c
                if k in self.periodic:
                    part = self.pick(b, node)
                else:
                    low, high = c < 0, c >= N
                    node[k] = np.clip(c, 0, N - 1)
                    local = self.ids(b, node) - self.offsets[b]
                    part = self.pick(b, node).where(low, minus.take(local)).where(high, plus.take(local))
                total = part if total is None else total + part
        assert total is not None
        return 0.25 * total

    # -- the system ----------------------------------------------------------------------
    def forcing(self, k: int, values: Any) -> np.ndarray:
        idx = self.indices(k)
        return np.asarray(self.box.data(values[k])(self.points(k, idx), 0.0), dtype=float) * np.ones(idx.shape[1])

    def divergence(self) -> Affine:
        """div u of every cell (the first one's row pins its pressure when :attr:`pinned`)."""
        p = self.dim
        cells = self.indices(p)
        n = cells.shape[1]
        out = Affine(sps.csr_matrix((n, self.size)), np.zeros(n))
        for a in range(self.dim):
            high = cells.copy()
            high[a] += 1
            out = out + (1.0 / self.h[a]) * (self.pick(a, high) - self.pick(a, cells))
        if self.pinned:
            first = np.zeros(n, dtype=bool)
            first[0] = True
            out = out.where(first, self.pick(p, cells))
        return out

    def balance_flux(self, x: np.ndarray) -> None:
        """With velocity given on the whole boundary, remove the net flux of its normal
        component on the grid (the midpoint rule of a zero integral: O(h^2)) evenly from the wall
        nodes, so that the continuity rows are consistent."""
        if not self.pinned:
            return
        flux, area, walls = 0.0, 0.0, []
        for k in range(self.dim):
            idx = self.indices(k)
            face = float(np.prod([self.h[a] for a in range(self.dim) if a != k]))
            for side in (0, 1):
                if (k, side) not in self.kind:
                    continue
                at = self.offsets[k] + np.flatnonzero(idx[k] == side * self.cells[k])
                sign = 1.0 if side else -1.0
                flux += sign * face * float(x[at].sum())
                area += face * len(at)
                walls.append((at, sign))
        for at, sign in walls:
            x[at] -= sign * flux / area

    def mean_free(self, x: np.ndarray) -> None:
        """A pinned pressure made mean-free (the normalisation of a pressure fixed up to a constant)."""
        if self.pinned:
            p = slice(self.offsets[self.dim], self.offsets[self.dim + 1])
            x[p] -= x[p].mean()

    def velocity_at_vertices(self, x: np.ndarray) -> np.ndarray:
        """The velocity at the box's nodes (the cell vertices), (box.size, dim): each component
        averaged across the axes where it is cell-centred, the wall value (Dirichlet) or the flux
        ghost's mean (traction) on a wall."""
        out = []
        for k in range(self.dim):
            arr = x[self.offsets[k]:self.offsets[k + 1]].reshape(self.shapes[k])
            pos = [self.lo[a] + self.h[a] * (np.arange(self.shapes[k][a]) + (0.0 if a == k else 0.5))
                   for a in range(self.dim)]
            for b in range(self.dim):
                if b == k:
                    continue
                vertices = self.lo[b] + self.h[b] * np.arange(self.nodes(b))
                if b in self.periodic:
                    arr = 0.5 * (arr + np.roll(arr, 1, axis=b))
                    pos[b] = vertices
                    continue
                mid = 0.5 * (np.take(arr, range(1, arr.shape[b]), axis=b) + np.take(arr, range(arr.shape[b] - 1),
                                                                                     axis=b))
                walls = []
                for side in (0, 1):
                    edge = np.take(arr, [-1 if side else 0], axis=b)
                    wall_pos = list(pos)
                    wall_pos[b] = np.array([vertices[-1] if side else vertices[0]])
                    mesh = np.meshgrid(*wall_pos, indexing="ij")
                    pts = np.column_stack([m.ravel() for m in mesh])
                    data = self.wall_data((b, side), k, pts).reshape(edge.shape)
                    walls.append(data if self.kind[(b, side)] == "dirichlet"
                                 else edge + 0.5 * self.h[b] * data / self.nu)
                arr = np.concatenate([walls[0], mid, walls[1]], axis=b)
                pos[b] = vertices
            out.append(arr.ravel())
        return np.column_stack(out)
