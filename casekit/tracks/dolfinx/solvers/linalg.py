"""Linear algebra of the DOLFINx solvers: periodic reduction, Dirichlet rows, linear solves, Newton.

Periodicity is enforced, not approximated: a restriction operator ``P`` (full dofs x reduced
dofs) copies every dof on a periodic target side from its partner on the source side, and the
system solved is ``P^T A P u_r = P^T b``, ``u = P u_r``.  Dirichlet conditions are applied to the
(reduced) system by symmetric elimination, and the solver is set up once and reused for every
right-hand side of a time loop.

Systems are solved directly (MUMPS LU) unless they are large: a system the family declares
symmetric positive definite (diffusion, elasticity, mass plus stiffness) above
:data:`DIRECT_LIMIT` unknowns, or on a 3-D mesh when it is solved once (a factorisation reused
over a time loop pays for itself), is solved by conjugate gradients with PETSc's algebraic
multigrid (GAMG); a saddle-point system (Stokes: the family gives its fields and a block-diagonal
preconditioner, :class:`SaddlePoint`) by LU up to :data:`SADDLE_DIRECT_LIMIT` unknowns on a 3-D
mesh and by MINRES with that preconditioner above it; any other system solved once on a 3-D mesh
(convection-diffusion) by GMRES with ILU(0).  ILU(0) is never applied to a saddle-point system:
its zero pressure block makes the factors nearly singular, and GMRES, which watches the
*preconditioned* residual, then reports convergence on a field whose true residual is O(1) (the
3-D Stokes calibration of ``stokes_3d_basic`` did, e_base 0.998).

Every solve is checked, whatever its method: PETSc's converged reason must be a convergence and
the true residual ``|b - A x|`` at most :func:`residual_limit` of ``|b|``.  A Krylov solve that
fails the check is replaced by LU (the solver info's ``fallback`` says why); an LU solve that
fails it raises :class:`LinearSolveError` naming the system, the method, the reason and the
residual -- a solve that did not solve is an error, never a field.  Krylov solves stop at the
relative residual ``rtol`` of the settings; ``linear_solver: iterative`` asks for them at every
size.  A 3-D P2 convection-diffusion system of 24k unknowns: MUMPS 0.66 s, GMRES + ILU(0) 42
iterations, 0.05 s; a 3-D P2-P1 Stokes system of 22k (77k) unknowns: MUMPS 2.4 s (19 s, 1.9 GB),
MINRES 250 iterations 7 s (33 s, 1.0 GB).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import dolfinx_solver  # noqa: F401
import numpy as np
import ufl
from dolfinx import fem
from dolfinx.fem import petsc as fpetsc
from petsc4py import PETSc

from casekit.tracks.dolfinx.solvers.problem import Dirichlet, Problem


class LinearSolveError(RuntimeError):
    """A linear solve that did not solve (its converged reason or its true residual say so)."""


@dataclass(frozen=True)
class SaddlePoint:
    """What a saddle-point system (velocity and pressure) needs to be solved iteratively: its
    fields (named sub-spaces of the mixed space), and the symmetric positive definite
    block-diagonal form that preconditions it (for Stokes: the viscous operator on the velocity,
    the pressure mass matrix scaled by 1/nu), spectrally equivalent to the system whatever the mesh
    size and the viscosity.  Nothing is collapsed or compiled unless the system is solved
    iteratively."""

    fields: tuple[tuple[str, Any], ...]
    preconditioner: Any


@dataclass
class Stats:
    linear_solves: int = 0
    linear_iterations: int = 0
    #: operators set up for solving: LU factorisations (the numeric one, when a Newton iteration
    #: refactorises its Jacobian), or a Krylov solver's preconditioner
    factorizations: int = 0
    newton_iterations: int = 0
    time_steps: int = 0
    dofs: int = 0
    ksp_type: str = "preonly"
    pc_type: str = "lu"
    #: why a Krylov solve was replaced by LU ("" when none was)
    fallback: str = ""

    def info(self) -> dict[str, Any]:
        info = {"dofs": self.dofs, "linear_iterations": self.linear_iterations,
                "linear_solves": self.linear_solves, "factorizations": self.factorizations,
                "newton_iterations": self.newton_iterations, "time_steps": self.time_steps,
                "ksp_type": self.ksp_type, "pc_type": self.pc_type}
        return {**info, "fallback": self.fallback} if self.fallback else info


# --------------------------------------------------------------------------- periodicity
def collapse(space: Any) -> tuple[Any, np.ndarray]:
    """A sub-space as a space of its own and the parent dofs of its dofs."""
    collapsed, dofs = space.collapse()
    return collapsed, np.asarray(dofs[0] if isinstance(dofs, list) else dofs)


def _scalar_leaves(space: Any) -> list[tuple[Any, np.ndarray]]:
    """(collapsed scalar space, parent dof indices) for every scalar component of ``space``."""
    n = space.num_sub_spaces
    if n == 0:
        if space.component():
            return [collapse(space)]
        return [(space, np.arange(space_size(space)))]
    return [leaf for i in range(n) for leaf in _scalar_leaves(space.sub(i))]


@dataclass
class Reduction:
    """u = P u_r: target dofs copy their periodic source dofs."""

    P: PETSc.Mat
    representative: np.ndarray  # full dof -> the full dof it copies (itself when kept)
    reduced_index: np.ndarray  # full dof -> reduced dof

    @classmethod
    def build(cls, problem: Problem, space: Any) -> Reduction | None:
        pairs = problem.periodic_pairs()
        if not pairs:
            return None
        size = space_size(space)
        rep = np.arange(size)
        geo = problem.domain.geometry
        tol = 1e-8 * geo.diameter()
        for leaf, dofs in _scalar_leaves(space):
            coords = leaf.tabulate_dof_coordinates()[:, : problem.dim]
            keys = {tuple(np.round(c / tol).astype(np.int64)): d for c, d in zip(coords, dofs, strict=True)}
            for source, target, shift in pairs:
                on_target = geo.tag_distance(target, coords) < tol
                for c, d in zip(coords[on_target], dofs[on_target], strict=True):
                    partner = keys.get(tuple(np.round((c - shift) / tol).astype(np.int64)))
                    if partner is None:
                        raise RuntimeError(f"periodic dof at {c} on {target!r} has no partner on {source!r}")
                    rep[d] = partner
        for _ in range(4):  # a corner may map through two pairs
            rep = rep[rep]
        kept = np.flatnonzero(rep == np.arange(size))
        reduced_index = np.full(size, -1)
        reduced_index[kept] = np.arange(len(kept))
        reduced_index = reduced_index[rep]
        P = PETSc.Mat().createAIJ([size, len(kept)], nnz=1)
        P.setUp()
        for i in range(size):
            P.setValue(i, int(reduced_index[i]), 1.0)
        P.assemble()
        return cls(P, rep, reduced_index)

    def matrix(self, A: PETSc.Mat, out: PETSc.Mat | None = None) -> PETSc.Mat:
        """P^T A P; into ``out`` (a matrix this made before from a matrix of ``A``'s nonzero
        pattern: it keeps its own) when given."""
        return A.PtAP(self.P) if out is None else A.PtAP(self.P, result=out)

    def vector(self, b: PETSc.Vec) -> PETSc.Vec:
        out = self.P.createVecRight()
        self.P.multTranspose(b, out)
        return out

    def expand(self, ur: PETSc.Vec, u: PETSc.Vec) -> None:
        self.P.mult(ur, u)


# --------------------------------------------------------------------------- Dirichlet rows
def dirichlet_rows(bcs: list[Dirichlet], size: int, reduction: Reduction | None) -> tuple[np.ndarray, np.ndarray]:
    """(rows, values) of the Dirichlet dofs of a space with ``size`` dofs, in the (reduced) numbering."""
    work = np.zeros(size)
    rows = []
    for d in bcs:
        dofs, first_ghost = d.bc.dof_indices()
        rows.append(dofs[:first_ghost])
        d.bc.set(work)
    if not rows:
        return np.zeros(0, dtype=np.int32), np.zeros(0)
    r = np.concatenate(rows)
    v = work[r]
    if reduction is not None:
        r = reduction.reduced_index[r]
    r, first = np.unique(r, return_index=True)
    return r.astype(np.int32), v[first]


def space_size(space: Any) -> int:
    return space.dofmap.index_map.size_local * space.dofmap.index_map_bs


#: symmetric positive definite systems of more unknowns than this (any size on a 3-D mesh) are
#: solved by CG + GAMG instead of LU
DIRECT_LIMIT = 60_000

#: saddle-point systems of more unknowns than this on a 3-D mesh are solved by MINRES with their
#: block-diagonal preconditioner instead of LU (MUMPS factors 77k P2-P1 unknowns in 1.9 GB, and
#: its memory grows faster than the system's in 3-D)
SADDLE_DIRECT_LIMIT = 100_000


#: how many GMRES iterations (restarted after GMRES_RESTART) before LU takes over
GMRES_MAX_IT = 600
GMRES_RESTART = 200
#: how many MINRES iterations before LU takes over
MINRES_MAX_IT = 2000

#: what the solver info and the error messages call each method
METHODS = {"lu": "LU (MUMPS)", "cg": "CG + GAMG", "gmres": "GMRES + ILU(0)",
           "minres": "MINRES + block-diagonal preconditioner (GAMG, Jacobi)"}

#: a solve is accepted when its true relative residual is at most RESIDUAL_SLACK times the Krylov
#: tolerance, and never required below RESIDUAL_FLOOR: a left-preconditioned Krylov method stops
#: on the preconditioned residual, which may sit a few orders of magnitude from the true one; a
#: solve that did not solve is off by orders more (``stokes_3d_basic``: 1.0)
RESIDUAL_SLACK = 1e3
RESIDUAL_FLOOR = 1e-8


def residual_limit(rtol: float) -> float:
    """The largest true relative residual |b - A x| / |b| a solve at tolerance ``rtol`` may leave."""
    return max(RESIDUAL_SLACK * rtol, RESIDUAL_FLOOR)


def reason_name(reason: int) -> str:
    """PETSc's name of a KSP converged reason (``DIVERGED_ITS (-3)``)."""
    names = {int(v): k for k, v in vars(PETSc.KSP.ConvergedReason).items() if k.isupper() and isinstance(v, int)}
    return f"{names.get(int(reason), 'UNKNOWN')} ({int(reason)})"


def _ksp(A: PETSc.Mat, stats: Stats, prefix: str, method: str = "lu", rtol: float = 1e-10,
         P: PETSc.Mat | None = None, fields: list[tuple[str, np.ndarray]] | None = None) -> PETSc.KSP:
    """A solver of ``A``: ``lu`` (MUMPS), ``cg`` (``A`` symmetric positive definite; conjugate
    gradients preconditioned by algebraic multigrid), ``gmres`` (GMRES with ILU(0)) or ``minres``
    (``A`` symmetric, a saddle point of ``fields``; MINRES preconditioned by the symmetric positive
    definite block diagonal of ``P``: GAMG on the first field's block, Jacobi on the others' --
    a mass matrix).  The caller checks convergence (:func:`solve_checked`)."""
    ksp = PETSc.KSP().create(A.getComm())
    ksp.setOptionsPrefix(prefix)
    ksp.setOperators(A) if P is None else ksp.setOperators(A, P)
    pc = ksp.getPC()
    if method == "cg":
        ksp.setType("cg")
        ksp.setTolerances(rtol=rtol, atol=1e-300, max_it=1000)
        pc.setType("gamg")
    elif method == "gmres":
        ksp.setType("gmres")
        ksp.setGMRESRestart(GMRES_RESTART)
        ksp.setTolerances(rtol=rtol, atol=1e-300, max_it=GMRES_MAX_IT)
        pc.setType("ilu")
    elif method == "minres":
        if P is None or not fields:
            raise ValueError("MINRES needs the preconditioner's matrix and the fields")
        ksp.setType("minres")
        # stop on the true residual: the preconditioned one is what misled GMRES + ILU(0)
        ksp.setNormType(PETSc.KSP.NormType.UNPRECONDITIONED)
        ksp.setTolerances(rtol=rtol, atol=1e-300, max_it=MINRES_MAX_IT)
        pc.setType("fieldsplit")
        pc.setFieldSplitIS(*[(name, PETSc.IS().createGeneral(dofs.astype(np.int32), comm=A.getComm()))
                             for name, dofs in fields])
        pc.setFieldSplitType(PETSc.PC.CompositeType.ADDITIVE)
        ksp.setUp()
        for i, sub in enumerate(pc.getFieldSplitSubKSP()):
            sub.setType("preonly")
            sub.getPC().setType("gamg" if i == 0 else "jacobi")
    else:
        ksp.setType("preonly")
        pc.setType("lu")
        pc.setFactorSolverType("mumps")
    stats.ksp_type, stats.pc_type = ksp.getType(), pc.getType()
    ksp.setFromOptions()
    return ksp


def solve_checked(ksp: PETSc.KSP, method: str, b: PETSc.Vec, x: PETSc.Vec, rtol: float) -> str:
    """Solve ``A x = b`` with ``ksp`` (of operator ``A``); "" when the solve is accepted, else
    why not: PETSc's converged reason is not a convergence, or the true relative residual
    |b - A x| / |b| is above :func:`residual_limit` (or not finite), or PETSc raised."""
    name = METHODS.get(method, method)
    try:
        ksp.solve(b, x)
    except PETSc.Error as exc:
        return f"{name} raised PETSc error {getattr(exc, 'ierr', exc)}"
    reason, its = ksp.getConvergedReason(), ksp.getIterationNumber()
    A = ksp.getOperators()[0]
    r = b.duplicate()
    A.mult(x, r)
    r.aypx(-1.0, b)  # r = b - A x
    b_norm, r_norm = b.norm(), r.norm()
    residual = r_norm / b_norm if b_norm > 0 else r_norm
    limit = residual_limit(rtol)
    if reason > 0 and np.isfinite(residual) and residual <= limit:
        return ""
    after = f" after {its} iterations" if method != "lu" else ""
    return (f"{name} stopped with {reason_name(reason)}{after}, true relative residual {residual:.2e} "
            f"(accepted: at most {limit:.0e})")


def method(problem: Problem, size: int, spd: bool, once: bool, saddle: bool = False) -> str:
    """How a system of ``size`` unknowns (solved ``once``, or for many right-hand sides) is
    solved: ``cg``, ``gmres``, ``minres`` or ``lu`` (see the module's notes)."""
    s = problem.settings
    if saddle:
        large = problem.dim == 3 and size > SADDLE_DIRECT_LIMIT
        return "minres" if s.linear_solver == "iterative" or large else "lu"
    if spd and (s.linear_solver == "iterative" or size > DIRECT_LIMIT or (once and problem.dim == 3)):
        return "cg"
    if not spd and (s.linear_solver == "iterative" or (once and problem.dim == 3)):
        return "gmres"
    return "lu"


class LinearSystem:
    """A x = b with fixed matrix and Dirichlet rows; factorised once, solved for many b."""

    def __init__(self, problem: Problem, a: Any, space: Any, bcs: list[Dirichlet], stats: Stats,
                 *, pin: np.ndarray | None = None, spd: bool = False, once: bool = False,
                 saddle: SaddlePoint | None = None) -> None:
        """``spd``: the family's promise that ``a`` is symmetric positive definite once the
        Dirichlet rows are eliminated (it may then be solved iteratively); ``once``: a single
        right-hand side will be solved; ``saddle``: ``a`` is a symmetric saddle-point system, its
        fields and preconditioner (it is then never given to GMRES + ILU(0))."""
        self.problem = problem
        self.space = space
        self.bcs = bcs
        self.reduction = Reduction.build(problem, space)
        self.stats = stats
        A = fpetsc.assemble_matrix(a if isinstance(a, fem.Form) else problem.form(a))
        A.assemble()
        self.A0 = self.reduction.matrix(A) if self.reduction else A
        self.pin = pin
        rows, _ = self._rows()
        self.Az = self.A0.copy()
        self.Az.zeroRowsColumns(rows, 1.0)
        size = self.Az.getSize()[0]
        self.what = f"the {problem.spec['pde']['type']} system ({size} unknowns)"
        self.method = method(problem, size, spd, once, saddle is not None)
        P, fields = None, None
        if self.method == "minres" and saddle is not None:
            P, fields = self._preconditioner(saddle, rows)
        self.ksp = _ksp(self.Az, stats, f"ck{id(self)}_", self.method, problem.settings.rtol, P, fields)
        stats.factorizations += 1
        stats.dofs = A.getSize()[0]

    def _preconditioner(self, saddle: SaddlePoint, rows: np.ndarray) -> tuple[PETSc.Mat, list[tuple[str, np.ndarray]]]:
        """The preconditioner's matrix (reduced, with the system's Dirichlet and pinned rows) and
        the fields' dofs in the (reduced) numbering of the system."""
        form = saddle.preconditioner
        P = fpetsc.assemble_matrix(form if isinstance(form, fem.Form) else self.problem.form(form))
        P.assemble()
        if self.reduction:
            P = self.reduction.matrix(P)
        P.zeroRowsColumns(rows, 1.0)
        red = self.reduction
        fields = []
        for name, sub in saddle.fields:
            dofs = collapse(sub)[1]
            fields.append((name, np.unique(red.reduced_index[dofs] if red else dofs)))
        return P, fields

    def _rows(self) -> tuple[np.ndarray, np.ndarray]:
        rows, vals = dirichlet_rows(self.bcs, space_size(self.space), self.reduction)
        if self.pin is not None:
            extra = self.reduction.reduced_index[self.pin] if self.reduction else self.pin
            rows = np.concatenate([rows, extra]).astype(np.int32)
            vals = np.concatenate([vals, np.zeros(len(extra))])
        return rows, vals

    def solve(self, L: Any, out: fem.Function) -> None:
        """Solve with right-hand side ``L`` (a UFL form or a compiled ``fem.Form``) into ``out``;
        a Krylov solve that fails its check (:func:`solve_checked`) is redone by LU, an LU solve
        that fails it raises :class:`LinearSolveError`."""
        b = fpetsc.assemble_vector(L if isinstance(L, fem.Form) else self.problem.form(L))
        b.ghostUpdate(addv=PETSc.InsertMode.ADD, mode=PETSc.ScatterMode.REVERSE)
        br = self.reduction.vector(b) if self.reduction else b
        rows, vals = self._rows()
        xd = self.A0.createVecRight()
        xd.setValues(rows, vals)
        xd.assemble()
        lifted = br.duplicate()
        self.A0.mult(xd, lifted)
        br.axpy(-1.0, lifted)
        br.setValues(rows, vals)
        br.assemble()
        xr = self.Az.createVecRight()
        rtol = self.problem.settings.rtol
        why = solve_checked(self.ksp, self.method, br, xr, rtol)
        self.stats.linear_iterations += max(1, self.ksp.getIterationNumber())
        if why and self.method != "lu":
            self.stats.fallback = f"{why}: LU"
            self.ksp.destroy()
            self.method = "lu"
            self.ksp = _ksp(self.Az, self.stats, f"ck{id(self)}_lu_", "lu")
            self.stats.factorizations += 1
            xr.zeroEntries()
            again = solve_checked(self.ksp, "lu", br, xr, rtol)
            why = f"{why}; then {again}" if again else ""
        if why:
            raise LinearSolveError(f"the linear solve of {self.what} failed: {why}")
        self.stats.linear_solves += 1
        if self.reduction:
            self.reduction.expand(xr, out.x.petsc_vec)
        else:
            xr.copy(out.x.petsc_vec)
        out.x.scatter_forward()


def solve_linear(problem: Problem, a: Any, L: Any, space: Any, bcs: list[Dirichlet], stats: Stats,
                 pin: np.ndarray | None = None, spd: bool = False, saddle: SaddlePoint | None = None) -> fem.Function:
    u = fem.Function(space)
    a_form, L_form = problem.forms(a, L)
    LinearSystem(problem, a_form, space, bcs, stats, pin=pin, spd=spd, once=True, saddle=saddle).solve(L_form, u)
    return u


class Newton:
    """F(u; v) = 0 by Newton's method; the forms are compiled once and reused (time loops).

    The factorised Jacobian is kept from one iteration to the next and from one solve to the next
    (a time loop solves every step of a scheme with one Newton).  An iteration first tries the step
    of the kept factorisation (a modified Newton step: one back-substitution and one residual) and
    takes it when it brings the residual down to at most :data:`STALE_ACCEPT` of what it was;
    otherwise that step is undone and the Jacobian is assembled at the current iterate into the
    kept matrix and factorised again -- numerically only: its sparsity never changes, so the
    symbolic analysis of the first factorisation is reused -- for a damped Newton step.  The
    stopping test is the same whichever steps reached it (the residual at most ``newton_rtol`` of
    the first one, or below the absolute floors), so the solution meets the same tolerance.

    A reaction-diffusion time step or a Burgers step barely changes the Jacobian: most steps then
    cost back-substitutions only, where each iteration of Newton proper costs an assembly and a
    factorisation.  Measured (CPU seconds of the solve, Newton refactorising every iteration ->
    this): the logistic reaction-diffusion reference level L1 of
    ``reaction_diffusion_no_exact_localized_sink_logistic`` (P2, 179k unknowns, 70 BDF2 steps)
    312 s, 140 factorisations -> 55 s, 2; its level L2 (317k, 140 steps) 142 s, 2 factorisations;
    the Burgers calibration of ``burgers_square_v1`` (P2, 66k, 10 steps) 26 s -> 10 s; fields
    agree to 1e-11."""

    def __init__(self, problem: Problem, F: Any, u: fem.Function, bcs: list[Dirichlet], stats: Stats,
                 pin: np.ndarray | None = None) -> None:
        self.problem, self.u, self.bcs, self.stats, self.pin = problem, u, bcs, stats, pin
        self.space = u.function_space
        self.reduction = Reduction.build(problem, self.space)
        self.J, self.F = problem.forms(ufl.derivative(F, u, ufl.TrialFunction(self.space)), F)
        self.du = fem.Function(self.space)
        stats.dofs = space_size(self.space)
        rows, _ = dirichlet_rows(bcs, space_size(self.space), self.reduction)
        if pin is not None:
            red = self.reduction
            rows = np.concatenate([rows, red.reduced_index[pin] if red else pin]).astype(np.int32)
        self.rows = rows  # Dirichlet and pinned rows of the (reduced) system
        self.jacobian: PETSc.Mat | None = None  # assembled on the full space
        self.A: PETSc.Mat | None = None  # the (reduced) system matrix the kept factorisation is of
        self.ksp: PETSc.KSP | None = None  # the kept factorisation
        self.reuse = False  # whether the next iteration tries the kept factorisation first
        #: whether steps of a kept factorisation are tried at all (SolveSettings.newton): the
        #: calibration, which is timed, refactorises at every iteration as a standard solver does
        self.keeps = problem.settings.newton == "modified"

    def residual(self) -> tuple[PETSc.Vec, float]:
        """-F(u) on the (reduced) dofs with Dirichlet and pinned rows zeroed, and its norm."""
        red = self.reduction
        b = fpetsc.assemble_vector(self.F)
        b.ghostUpdate(addv=PETSc.InsertMode.ADD, mode=PETSc.ScatterMode.REVERSE)
        if red:
            b = red.vector(b)
        b.scale(-1.0)
        b.setValues(self.rows, np.zeros(len(self.rows)))
        b.assemble()
        return b, float(b.norm())

    def factorise(self) -> None:
        """Assemble the Jacobian at the current u into the kept matrices and have the kept solver
        factorise it at its next solve (PETSc refactorises a matrix whose values changed, and
        redoes the symbolic analysis only if its nonzero pattern did: it does not)."""
        if self.jacobian is None:
            self.jacobian = fpetsc.create_matrix(self.J)
        self.jacobian.zeroEntries()
        fpetsc.assemble_matrix(self.jacobian, self.J)
        self.jacobian.assemble()
        red = self.reduction
        self.A = (red.matrix(self.jacobian, self.A) if red else self.jacobian)
        self.A.zeroRowsColumns(self.rows, 1.0)  # keeps the nonzero pattern (values zeroed)
        if self.ksp is None:
            self.ksp = _ksp(self.A, self.stats, "cknewton_")
        else:
            self.ksp.setOperators(self.A)
        self.stats.factorizations += 1

    def direction(self, b: PETSc.Vec) -> str:
        """Solve (kept Jacobian) du = b into ``self.du``; "" when the solve is accepted, else why
        not (:func:`solve_checked`)."""
        assert self.A is not None and self.ksp is not None
        x = self.A.createVecRight()
        why = solve_checked(self.ksp, "lu", b, x, self.problem.settings.rtol)
        if why:
            return why
        self.stats.linear_solves += 1
        self.stats.linear_iterations += max(1, self.ksp.getIterationNumber())
        if self.reduction:
            self.reduction.expand(x, self.du.x.petsc_vec)
        else:
            x.copy(self.du.x.petsc_vec)
        return ""

    def _set(self, values: np.ndarray) -> None:
        self.u.x.array[:] = values
        self.u.x.scatter_forward()

    def solve(self, max_iterations: int | None = None) -> int:
        """Newton iterations from the current u (its Dirichlet values are imposed first): at most
        ``max_iterations`` (default: the settings') with a new Jacobian, and as many steps of a
        kept one (so at most that many back-substitutions are wasted on refused steps).  A step
        with a new Jacobian that raises the residual is halved until it does not (at most
        :data:`MAX_HALVINGS` times): far from the solution a full step can leave the basin for
        good.  Returns the number of steps taken."""
        s, u = self.problem.settings, self.u
        for d in self.bcs:
            d.bc.set(u.x.array)
        u.x.scatter_forward()
        cap = max_iterations or s.max_newton_iterations
        b, norm = self.residual()
        r0 = norm
        steps = fresh = kept = 0
        while True:
            if (norm <= max(s.newton_rtol * r0, 1e-12) and steps) or norm < 1e-14:
                self.stats.newton_iterations += steps
                return steps
            start = u.x.array.copy()
            if self.reuse and self.keeps and kept < cap:
                kept += 1
                if not self.direction(b):
                    self._set(start + self.du.x.array)
                    trial_b, trial = self.residual()
                    if trial <= STALE_ACCEPT * norm:  # False for NaN
                        self.reuse = trial <= STALE_KEEP * norm
                        b, norm, steps = trial_b, trial, steps + 1
                        continue
                    self._set(start)
            if fresh == cap:
                raise RuntimeError(f"Newton did not converge in {cap} iterations (residual {norm:.3e}, "
                                   f"initial {r0:.3e}; {kept} steps of a kept Jacobian tried besides)")
            fresh += 1
            self.factorise()
            why = self.direction(b)
            if why:
                family = self.problem.spec["pde"]["type"]
                raise LinearSolveError(f"the linear solve of Newton step {steps + 1} of the {family} system "
                                       f"({self.A.getSize()[0]} unknowns) failed: {why}")
            step = 1.0
            for _ in range(MAX_HALVINGS + 1):
                self._set(start + step * self.du.x.array)
                b, trial = self.residual()
                if trial < norm or step < 2.0 ** -MAX_HALVINGS:
                    break
                step /= 2
            norm, steps = trial, steps + 1
            self.reuse = True


#: a step of the kept factorisation is taken when it brings the residual down to at most this
#: fraction of what it was (a new Jacobian's step is taken instead otherwise) ...
STALE_ACCEPT = 0.5
#: ... and the factorisation is tried for the next step only if it brought the residual down to at
#: most this fraction: a modified Newton iteration that contracts more slowly takes many steps where
#: a new Jacobian takes one or two, and each step costs a residual -- the larger cost of a manufactured
#: case, whose forcing is a long expression (a Burgers calibration of 18.8k unknowns, 80 steps: 0.09 s
#: a residual, 0.3 s a first factorisation; kept at 0.1: 503 steps, 3 factorisations, CPU 33 s; at
#: 0.01: 348 steps, 14 factorisations, 24 s; Newton refactorising every iteration: 160, 160, 40 s)
STALE_KEEP = 0.01

#: how often a Newton step that raises the residual is halved
MAX_HALVINGS = 6


def newton(problem: Problem, F: Any, u: fem.Function, bcs: list[Dirichlet], stats: Stats,
           pin: np.ndarray | None = None) -> None:
    Newton(problem, F, u, bcs, stats, pin).solve()
