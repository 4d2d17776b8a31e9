"""What every NGSolve calibration solver needs from a case_spec: mesh, coefficients, boundary
conditions by name, time, and sampling on the evaluation grid."""

from __future__ import annotations

from typing import Any

import ngsolve as ng
import numpy as np

from casekit.expr.syntax import as_tree
from casekit.solvers.settings import SolveSettings
from casekit.tracks.ngsolve.solvers.coefficients import to_cfs
from casekit.tracks.ngsolve.solvers.geometry import mesh as make_mesh
from casekit.tracks.ngsolve.solvers.linalg import Direct, Factor
from casekit.tracks.ngsolve.solvers.newton import Newton


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
        #: per (space, Dirichlet data, time parameter): each part's (CF, region, its fixed dofs), a work GridFunction
        self._dirichlet: dict[tuple[int, str, int, bool], tuple[list[tuple[Any, Any, np.ndarray]], Any, Any]] = {}
        #: per residual form: its Newton (which keeps the form alive: its id stays unique)
        self._newtons: dict[int, Newton] = {}
        self._released = 0  # factorisations of the Newtons released
        self._released_krylov: list[Newton] = []  # the released Newtons that solved by a Krylov method

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
        the Dirichlet dofs of ``gfu``; its other dofs are kept (``Set`` alone would zero them).

        Each part is set on its own, in the case_spec's order, a later part's value winning at a
        vertex two parts share -- the DOLFINx track's rule (one boundary condition per part, the
        last applied last).  Setting all parts at once averaged discontinuous data at a shared
        corner (the lid-driven cavity's lid corners got 0.5 and a P3 ladder that did not converge:
        refinement gaps 4.7e-3 then 7.1e-3)."""
        entries = self.entries("dirichlet")
        if not entries:
            return
        t = self.t if t is None else t
        cache_key = (id(gfu.space), repr([(e["tag"], e[key]) for e in entries]), id(t), rate)
        if cache_key not in self._dirichlet:  # built once; each part's CF follows the time parameter
            fixed = ~np.array(list(gfu.space.FreeDofs()), dtype=bool)
            parts = []
            for e in entries:
                region = self.mesh.Boundaries(e["tag"])
                on_part = np.array(list(gfu.space.GetDofs(region)), dtype=bool) & fixed
                parts.append((self.cf(e[key], t=t, rate=rate), region, on_part))
            self._dirichlet[cache_key] = (parts, ng.GridFunction(gfu.space), (gfu.space, t))
        parts, tmp, _ = self._dirichlet[cache_key]
        target = gfu.vec.FV().NumPy()
        for cf, region, on_part in parts:
            tmp.Set(cf, ng.BND, definedon=region)
            target[on_part] = tmp.vec.FV().NumPy()[on_part]

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

    def newton(self, a: Any, gfu: Any, linear: bool = False, data: Any = None, *, spd: bool,
               jacobian: Any = None, factor: Factor = Direct, linear_part: Any = None,
               max_iterations: int | None = None) -> int:
        """Newton on the residual ``a(u) + data`` (plus ``linear_part(u)``, a form assembled once)
        from ``gfu`` (its Dirichlet values set); the Jacobian is the linearisation of ``jacobian``
        (``a``'s terms on u without its data; default ``a``), factorised by ``factor`` (``spd``: see
        :data:`~.linalg.DIRECT`); a linear problem takes exactly one step, checked
        (:class:`~.newton.Newton`; a large one by a Krylov method, :func:`~.linalg.krylov`): a
        factorisation that fails, or a solve that leaves the equations unsolved, is an error naming
        the system and why, never a field.  Returns the number of steps."""
        n = self._newton(a, gfu.space, spd, jacobian, factor, linear_part, once=linear)
        return n.linear(gfu, data) if linear else n.solve(gfu, data, max_iterations)

    def linear_step(self, a: Any, gfu: Any, data: Any = None, *, spd: bool, factor: Factor = Direct) -> int:
        """The one Newton step on the residual ``A u + data`` of a *bilinear* form ``a`` whose
        operator does not change between calls (time-independent coefficients): A is assembled and
        factorised on the first call and reused; a call costs two products and a solve, checked."""
        return self._newton(a, gfu.space, spd, None, factor).fixed_step(gfu, data)

    def _newton(self, a: Any, fes: Any, spd: bool, jacobian: Any, factor: Factor, linear_part: Any = None,
                once: bool = False) -> Newton:
        """The Newton of the form ``a``, made on its first use: it keeps its factorisation from one
        call to the next (a fixed operator's, a modified Newton's); ``once``: each of its
        assemblies is solved once (a linear problem's)."""
        if id(a) not in self._newtons:
            self._newtons[id(a)] = Newton(a, fes, self.settings, self.spec["pde"]["type"], spd=spd,
                                          jacobian=jacobian, factor=factor, linear_part=linear_part, once=once)
        return self._newtons[id(a)]

    def release(self, a: Any) -> None:
        """Forget the Newton of the form ``a`` and free its factorisation and matrices (a scheme
        that has ended); what its Krylov solves did stays for the solver info."""
        newton = self._newtons.pop(id(a), None)
        if newton is not None:
            self._released += newton.factorizations
            newton.free()
            self._released_krylov.append(newton)

    @property
    def factorizations(self) -> int:
        """How many Jacobians (or fixed operators) the solve has factorised."""
        return self._released + sum(n.factorizations for n in self._newtons.values())

    def linear_solver_info(self) -> dict[str, Any]:
        """How the linear systems were solved, for the solver info: the Krylov solves' iterations
        and preconditioner, and why one was replaced by a factorisation (none when all were
        factorised)."""
        krylov = [n for n in [*self._released_krylov, *self._newtons.values()] if n.preconditioner is not None]
        if not krylov:
            return {}
        info: dict[str, Any] = {"linear_iterations": sum(n.linear_iterations for n in krylov),
                                "preconditioner": krylov[0].preconditioner_name}
        fallbacks = [n.fallback for n in krylov if n.fallback]
        return {**info, "fallback": fallbacks[0]} if fallbacks else info

    def zero(self, width: int = 1) -> Any:
        """A zero of ``width`` components standing in for data in a Jacobian's form
        (:meth:`newton`): a Parameter, which NGSolve does not fold away, so the form keeps the
        data term's test function and with it the integration rule of the residual's form."""
        zero = ng.Parameter(0.0)
        return ng.CoefficientFunction(tuple([zero] * width)) if width > 1 else zero

    def step_data(self, form: Any, *coefficients: Any) -> StepData:
        """The data vector of ``form`` (forcing and Neumann/Robin data, and the case_spec values of
        ``coefficients`` it also holds) along a time loop: assembled once when none varies in time."""
        values = [self.spec["pde"]["forcing"]["f"], *coefficients]
        values += [e["value"] for kind in ("neumann", "robin") for e in self.entries(kind)]
        return StepData(form, steady=not self.depends_on_time(*values))

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
    gradients of GridFunctions several times slower than the two apart.  ``steady``: the data do
    not vary in time, and the vector is assembled once."""

    def __init__(self, form: Any, steady: bool = False) -> None:
        self.form, self.steady = form, steady
        form.Assemble()
        self.now, self.before = form.vec.CreateVector(), form.vec.CreateVector()
        self.now.data = form.vec
        self.before.data = form.vec

    def advance(self) -> None:
        """Assemble at the (new) time; the former vector becomes ``before``."""
        if self.steady:
            return
        self.before.data = self.now
        self.form.Assemble()
        self.now.data = self.form.vec
