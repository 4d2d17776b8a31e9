"""What every NGSolve calibration solver needs from a case_spec: mesh, coefficients, boundary
conditions by name, time, and sampling on the evaluation grid."""

from __future__ import annotations

import math
from typing import Any

import ngsolve as ng
import numpy as np

from casekit.expr.syntax import as_tree
from casekit.solvers.settings import SolveSettings
from casekit.tracks.ngsolve.solvers.coefficients import to_cfs
from casekit.tracks.ngsolve.solvers.geometry import mesh as make_mesh

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

class Problem:
    def __init__(self, case_spec: dict[str, Any], settings: dict[str, Any]) -> None:
        self.spec = case_spec
        self.settings = SolveSettings.for_case(settings, case_spec)
        self.dim = int(case_spec["domain"]["dim"])
        self.mesh = make_mesh(case_spec, self.settings.cells_across, self.settings.geometry)
        time = case_spec["pde"].get("time")
        self.transient = time is not None
        self.t0 = float(time["t0"]) if time else 0.0
        self.t_end = float(time["t_end"]) if time else 0.0
        self.t = ng.Parameter(self.t0)
        self.n = ng.specialcf.normal(self.dim)
        self.h = ng.specialcf.mesh_size
        self.variables = ("x", "y", "z")[: self.dim] + (("t",) if self.transient else ())
        #: built coefficient functions by (value, time parameter, d/dt): building one costs more
        #: than a solve step, and one built on a time Parameter follows it, so a time loop builds
        #: each once; each is compiled (every distinct node evaluated once per point)
        self._cfs: dict[tuple[str, int, bool], tuple[Any, Any]] = {}
        #: per (space, Dirichlet data, time parameter): piecewise boundary CF, work GridFunction, fixed dofs
        self._dirichlet: dict[tuple[int, str, int, bool], tuple[Any, Any, Any, np.ndarray]] = {}
        #: per residual form of a linear problem whose operator does not change: (form, inverse)
        self._inverses: dict[int, tuple[Any, Any]] = {}

    # -- coefficients ------------------------------------------------------------------------
    def cf(self, value: Any, symbols: dict[str, Any] | None = None, t: Any = None, rate: bool = False) -> Any:
        """A case_spec value (number, expression, or component list) as a CoefficientFunction;
        ``rate``: its derivative in time (exact: NGSolve differentiates the function in ``t``)."""
        t = self.t if t is None else t
        if symbols:  # built on trial functions or states: not shared
            return self._build_cf(value, symbols, t)
        key = (repr(value), id(t), rate)
        if key not in self._cfs:
            raw = self._build_cf(value, None, t)
            self._cfs[key] = ((raw.Diff(t) if rate else raw).Compile(), t)  # t kept alive: its id stays unique
        return self._cfs[key][0]

    def _build_cf(self, value: Any, symbols: dict[str, Any] | None, t: Any) -> Any:
        params = tuple(symbols or ())
        parts = value if isinstance(value, list) else [value]
        trees = [as_tree(v, variables=self.variables, params=params) for v in parts]
        cfs = [c if isinstance(c, ng.CoefficientFunction) else ng.CoefficientFunction(c)
               for c in to_cfs(trees, (ng.x, ng.y, ng.z), t, symbols)]
        return ng.CoefficientFunction(tuple(cfs)) if isinstance(value, list) else cfs[0]

    def depends_on_time(self, *values: Any) -> bool:
        """Whether any of the case_spec values (numbers, expressions, component lists) varies in time."""
        return any("t" in as_tree(v, variables=self.variables, params=("u",)).names()
                   for value in values for v in (value if isinstance(value, list) else [value]))

    def param(self, name: str, symbols: dict[str, Any] | None = None, t: Any = None) -> Any:
        return self.cf(self.spec["pde"]["params"][name], symbols, t)

    def forcing(self, t: Any = None) -> Any:
        return self.cf(self.spec["pde"]["forcing"]["f"], t=t)

    # -- boundary ----------------------------------------------------------------------------
    def entries(self, kind: str) -> list[dict[str, Any]]:
        return list(self.spec["bc"].get(kind, []))

    def dirichlet_names(self) -> str:
        return "|".join(e["tag"] for e in self.entries("dirichlet"))

    def ds(self, tag: str) -> Any:
        return ng.ds(definedon=self.mesh.Boundaries(tag))

    def natural(self, u: Any, v: Any, t: Any = None) -> Any:
        """Robin alpha u v minus Neumann/Robin data g v on their parts (None when there are none)."""
        on_u, data = self.natural_parts(u, v, t)
        if on_u is None or data is None:
            return data if on_u is None else on_u
        return on_u + data

    def natural_parts(self, u: Any, v: Any, t: Any = None) -> tuple[Any, Any]:
        """(Robin alpha u v, minus the Neumann/Robin data g v): the part acting on u and the data
        part of :meth:`natural`, each None when there is none."""
        on_u = data = None
        for e in self.entries("robin"):
            term = float(e["alpha"]) * u * v * self.ds(e["tag"])
            on_u = term if on_u is None else on_u + term
        for kind in ("neumann", "robin"):
            for e in self.entries(kind):
                term = -ng.InnerProduct(self.cf(e["value"], t=t), v) * self.ds(e["tag"])
                data = term if data is None else data + term
        return on_u, data

    def set_dirichlet(self, gfu: Any, key: str = "value", t: Any = None, rate: bool = False) -> None:
        """Dirichlet data of every part (the entries' ``key``; ``rate``: its time derivative) into
        the Dirichlet dofs of ``gfu``; its other dofs are kept (``Set`` alone would zero them)."""
        entries = self.entries("dirichlet")
        if not entries:
            return
        data = {e["tag"]: e[key] for e in entries}
        t = self.t if t is None else t
        cache_key = (id(gfu.space), repr(data), id(t), rate)
        if cache_key not in self._dirichlet:  # built once; the boundary CF follows the time parameter
            width = int(gfu.dim)
            zero = ng.CF(tuple([0.0] * width)) if width > 1 else ng.CF(0.0)
            piecewise = self.mesh.BoundaryCF({tag: self.cf(v, t=t, rate=rate) for tag, v in data.items()},
                                             default=zero)
            fixed = ~np.array(list(gfu.space.FreeDofs()), dtype=bool)
            self._dirichlet[cache_key] = (piecewise, ng.GridFunction(gfu.space), (gfu.space, t), fixed)
        piecewise, tmp, _, fixed = self._dirichlet[cache_key]
        tmp.Set(piecewise, ng.BND, definedon=self.mesh.Boundaries("|".join(data)))
        target = gfu.vec.FV().NumPy()
        target[fixed] = tmp.vec.FV().NumPy()[fixed]

    def space(self, order: int, vector: bool = False, inner: int | None = None) -> Any:
        """The (vector) H1 space of ``order`` with the Dirichlet parts; ``inner``: the order of its
        cell-interior functions when above ``order`` (cell bubbles)."""
        flags = {"orderinner": inner} if inner is not None and inner > order else {}
        fes = (ng.VectorH1 if vector else ng.H1)(self.mesh, order=order, dirichlet=self.dirichlet_names(), **flags)
        return ng.Periodic(fes) if self.spec["bc"].get("periodic") else fes

    def robin_nonnegative(self) -> bool:
        """Whether every Robin coefficient is >= 0 (a Robin term then keeps a diffusion operator
        symmetric positive definite)."""
        return all(float(e["alpha"]) >= 0 for e in self.entries("robin"))

    def newton(self, a: Any, gfu: Any, linear: bool = False, data: Any = None, *, spd: bool) -> int:
        """Newton on the residual ``a(u) + data`` (``a`` a form, ``data`` an assembled vector of the
        terms that do not depend on u) from ``gfu`` (its Dirichlet values set), a direct solve per
        step (``spd``: see :data:`DIRECT`); a linear problem takes exactly one step, and its
        residual afterwards is checked (:meth:`check_solved`): a factorisation that fails, or a
        solve that leaves the equations unsolved, is an error naming the system and why, never a
        field."""
        fes = gfu.space
        r, w = gfu.vec.CreateVector(), gfu.vec.CreateVector()
        for it in range(1, self.settings.max_newton_iterations + 1):
            a.AssembleLinearization(gfu.vec)
            a.Apply(gfu.vec, r)
            if data is not None:
                r.data += data
            w.data = self._inverse(a.mat, fes, spd) * r
            gfu.vec.data -= w
            if linear:
                self.check_solved(a, gfu, r, data, spd=spd)
                return it
            if not math.isfinite(ng.Norm(w)):
                raise RuntimeError(f"Newton step {it} of {self.what(fes)} is not finite")
            if ng.Norm(w) <= self.settings.newton_rtol * max(ng.Norm(gfu.vec), 1e-300):
                return it
        raise RuntimeError(f"Newton did not converge in {self.settings.max_newton_iterations} iterations")

    def what(self, fes: Any) -> str:
        return f"the {self.spec['pde']['type']} system ({sum(fes.FreeDofs())} unknowns)"

    def _inverse(self, mat: Any, fes: Any, spd: bool) -> Any:
        """The factorisation of ``mat`` on the free dofs (:data:`DIRECT`); its failure is an error
        naming the system (a singular matrix mostly factorises and leaves a residual that
        :meth:`check_solved` rejects)."""
        inverse, name = DIRECT[spd]
        try:
            return mat.Inverse(fes.FreeDofs(), inverse=inverse)
        except Exception as exc:  # netgen's NgException: the factorisation failed
            raise RuntimeError(f"the linear solve of {self.what(fes)} by {name} failed: {exc} (a singular "
                               "matrix: the discretisation is not well posed on this mesh)") from None

    def check_solved(self, a: Any, gfu: Any, r0: Any, data: Any = None, *, spd: bool) -> None:
        """After a linear solve from the residual ``r0``: the residual of ``a(u) + data`` on the
        free dofs must be at most max(1e3 rtol, 1e-8) of ``r0``'s or ``data``'s, whichever is
        larger (the DOLFINx track's rule, |b - A x| against |b|: a time step starts from the
        previous state, whose residual may be much smaller than the data), and finite."""
        r = gfu.vec.CreateVector()
        a.Apply(gfu.vec, r)
        if data is not None:
            r.data += data
        self._check_residual(gfu.space, r, (r0, data), spd)

    def _check_residual(self, fes: Any, r: Any, scales: tuple[Any, ...], spd: bool) -> None:
        free = np.array(fes.FreeDofs(), dtype=bool)
        before = max(float(np.linalg.norm(v.FV().NumPy()[free])) for v in scales if v is not None)
        after = float(np.linalg.norm(r.FV().NumPy()[free]))
        residual = after / before if before > 0 else after
        limit = max(1e3 * self.settings.rtol, 1e-8)
        if not (math.isfinite(residual) and residual <= limit):
            raise RuntimeError(f"the linear solve of {self.what(fes)} by {DIRECT[spd][1]} left a relative "
                               f"residual {residual:.2e} (accepted: at most {limit:.0e})"
                               + (": is the operator symmetric positive definite, as declared?" if spd else ""))

    def linear_step(self, a: Any, gfu: Any, data: Any = None, *, spd: bool) -> int:
        """The one Newton step on the residual ``A u + data`` of a *bilinear* form ``a`` whose
        operator does not change between calls (time-independent coefficients): A is assembled and
        factorised (:data:`DIRECT`) on the first call and reused; a call costs two products and a
        solve, and its residual is checked as :meth:`check_solved` does (with A itself)."""
        if id(a) not in self._inverses:
            a.AssembleLinearization(gfu.vec)  # what newton() factorises, to the bit
            self._inverses[id(a)] = (a, self._inverse(a.mat, gfu.space, spd))
        inverse = self._inverses[id(a)][1]
        r, after = gfu.vec.CreateVector(), gfu.vec.CreateVector()
        r.data = a.mat * gfu.vec
        if data is not None:
            r.data += data
        gfu.vec.data -= inverse * r
        after.data = a.mat * gfu.vec
        if data is not None:
            after.data += data
        self._check_residual(gfu.space, after, (r, data), spd)
        return 1

    def step_data(self, form: Any) -> StepData:
        return StepData(form)

    def time_steps(self) -> tuple[int, float]:
        return self.settings.steps(self.t0, self.t_end)

    # -- output ------------------------------------------------------------------------------
    def sample(self, u: Any, pts: np.ndarray) -> np.ndarray:
        """u at the grid points; a point just outside the (curved) mesh takes the value at the
        nearest point inside towards its nearest mesh vertex, extrapolated with the gradient
        there (second order, as evaluating in the nearest cell)."""
        coords = [pts[:, i] for i in range(self.dim)]
        mips = self.mesh(*coords)
        found = mips["nr"] >= 0
        width = u.dim if hasattr(u, "dim") else 1
        out = np.full((len(pts), width), np.nan)
        if found.any():
            out[found] = np.asarray(u(mips[found])).reshape(int(found.sum()), width)
        missing = np.flatnonzero(~found)
        if len(missing):
            from scipy.spatial import cKDTree

            verts = np.array([v.point for v in self.mesh.vertices])[:, : self.dim]
            _, nearest = cKDTree(verts).query(pts[missing, : self.dim])
            for fraction in (1e-6, 1e-4, 1e-2, 1e-1, 1.0):
                if not len(missing):
                    break
                shift = fraction * (verts[nearest] - pts[missing, : self.dim])
                moved = pts[missing, : self.dim] + shift
                m = self.mesh(*[moved[:, i] for i in range(self.dim)])
                ok = m["nr"] >= 0
                if ok.any():
                    k = int(ok.sum())
                    value = np.asarray(u(m[ok])).reshape(k, width)
                    jac = np.asarray(ng.Grad(u)(m[ok])).reshape(k, width, self.dim)
                    out[missing[ok]] = value - np.einsum("kwd,kd->kw", jac, shift[ok])
                missing, nearest = missing[~ok], nearest[~ok]
        return out[:, 0] if width == 1 else out


class StepData:
    """The assembled data vector of a linear form at the current time and at the previous step
    (Crank-Nicolson's t_old): each step assembles it once, at the new time.  Kept apart from
    the terms on old states: NGSolve integrates a long forcing expression together with
    gradients of GridFunctions several times slower than the two apart."""

    def __init__(self, form: Any) -> None:
        self.form = form
        form.Assemble()
        self.now, self.before = form.vec.CreateVector(), form.vec.CreateVector()
        self.now.data = form.vec
        self.before.data = form.vec

    def advance(self) -> None:
        """Assemble at the (new) time; the former vector becomes ``before``."""
        self.before.data = self.now
        self.form.Assemble()
        self.now.data = self.form.vec
