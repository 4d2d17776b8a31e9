"""Derivation: from a case source to the agent-facing ``case_spec`` and the hidden side.

For a manufactured case the forcing, the boundary data of every tag and the initial data are
derived with sympy from the manufactured solution, in the case's own dimension.  Boundary data
never reproduce the solution in the interior (the leak rule of DESIGN section 5):

* on a tag lying on one straight line or plane the data are the solution restricted to it,
  ``u(P(x))`` with ``P`` the orthogonal projection on the line (``u(0, y)`` on ``x = 0``);
* when that restriction would still be close to ``u`` inside (``u`` barely varies across the
  tag), and on curved or many-piece tags, the data are ``u`` composed with a warp
  ``W(p) = p + s phi(p) w`` that is the identity on the tag (``phi`` is a level-set function
  vanishing there: a circle's ``(r^2 - R^2)/2R``, the product over the tag's lines); ``s`` is
  chosen so that the data are far from ``u`` inside, and no copy of the solution's formula is
  left in the text.

Neumann, Robin and traction data use the exact outward normal of the tag.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import sympy as sp

from casekit import derive_support as support
from casekit import leak
from casekit.derive_noise import (
    print_sampler,
    printed_short,
    snap_carrier,
    snap_expr,
    snap_float,
    snap_number,
    snap_text,
)
from casekit.domains import Domain, resolve
from casekit.domains.geometry import LineCarrier
from casekit.errors import CasekitError, Problem
from casekit.expr import COORDS, ExpressionError, T, as_expr, exact, hygiene, param_symbol, size, to_text
from casekit.expr.hygiene import Sampler
from casekit.expr.size import TooLarge
from casekit.families import FAMILIES, Family, Output
from casekit.families.calculus import coords, lap
from casekit.grid import MAX_POINTS_TEXT, Grid, too_many_points
from casekit.model.source import CaseSource, TargetSource, TimeInterval
from casekit.thresholds import evaluation_config

#: the gap that derived boundary data aim for (well above the leak check's minimum)
LIFT_GAP = 0.5
X_, Y_, Z_ = COORDS


@dataclass
class BoundaryData:
    tag: str
    kind: str
    value: Any = None  # sympy scalar or tuple
    alpha: float | None = None
    laplacian: Any = None
    method: str = "given"  # "projection", "warp", "given" (typed by the author), "periodic"


@dataclass
class Derived:
    source: CaseSource
    family: Family
    domain: Domain
    transient: bool
    params: dict[str, Any]
    solution: dict[str, Any] | None
    forcing: dict[str, Any]
    boundary: list[BoundaryData]
    initial: dict[str, Any]
    time: TimeInterval | None
    grid: Grid
    output: Output
    evaluation: dict[str, Any]
    #: which parts of the agent-visible data the author typed (for imported or no-exact cases)
    typed: list[str] = field(default_factory=list)
    #: the requested target values (casekit.targets), checked against the case
    targets: list[TargetSource] = field(default_factory=list)

    @property
    def dim(self) -> int:
        return self.domain.dim

    @property
    def case_id(self) -> str:
        return self.source.id

    @property
    def t_out(self) -> float:
        return float(self.time.t_end) if self.time else 0.0

    @cached_property
    def interior_points(self) -> np.ndarray:
        pts = self.grid.points()
        return pts[self.domain.inside(pts)]

    def case_spec(self) -> dict[str, Any]:
        """The agent-visible case_spec (a fresh copy each call: it is rendered once)."""
        return copy.deepcopy(self._case_spec)

    @cached_property
    def _case_spec(self) -> dict[str, Any]:
        return build_case_spec(self)

    def target_entries(self) -> list[dict[str, Any]]:
        """The agent-visible entries of the targets (never their values)."""
        from casekit.targets import TARGET_KINDS, Context

        ctx = Context(self)
        return [TARGET_KINDS.get(t.kind).entry(t, ctx) for t in self.targets]

    @cached_property
    def target_values(self) -> dict[str, float]:
        """The exact value of every target, from the manufactured solution; raises a
        :class:`CasekitError` listing the targets that cannot be gated (a value near zero, a
        maximum on the boundary).  Hidden: evaluation metadata only."""
        from casekit.targets import MIN_DEPTH, MIN_SHARE, TARGET_KINDS, Context
        from casekit.targets.quadrature import QuadratureError

        if self.solution is None:
            raise CasekitError("target values need a manufactured solution (or the reference solve)", "/targets",
                               self.case_id)
        ctx = Context(self)
        out: dict[str, float] = {}
        problems: list[Problem] = []
        for i, t in enumerate(self.targets):
            ptr = f"/targets/{i}"
            try:
                ex = TARGET_KINDS.get(t.kind).exact(t, ctx)
            except QuadratureError as exc:
                problems.append(Problem(f"target {t.name!r}: {exc}", ptr, self.case_id, check="targets"))
                continue
            if not abs(ex.value) >= MIN_SHARE * ex.scale or not ex.scale > 0:
                problems.append(Problem(
                    f"target {t.name!r} ({t.kind}) is {ex.value:.3e}, below {MIN_SHARE:g} of its natural size "
                    f"{ex.scale:.3e}: a relative error of a near-zero quantity gates nothing", ptr, self.case_id,
                    valid="another kind, boundary part, point or component whose value is not near zero",
                    check="targets"))
            least = MIN_DEPTH * self.domain.geometry.diameter()
            if ex.depth is not None and ex.depth < least:
                where = ", ".join(f"{c:.4g}" for c in ex.where or ())
                problems.append(Problem(
                    f"target {t.name!r}: the maximum is attained at ({where}), {ex.depth:.3g} from the boundary, "
                    "where boundary data give it away", ptr, self.case_id,
                    valid=f"a quantity whose maximum lies at least {least:.3g} inside the domain", check="targets"))
            out[t.name] = float(ex.value)
        if problems:
            raise CasekitError(problems[0].message, problems[0].pointer, self.case_id, valid=problems[0].valid,
                               problems=problems)
        return out

    def hidden_solution_text(self) -> dict[str, Any] | None:
        if self.solution is None:
            return None
        return {k: _text(v) for k, v in self.solution.items()}


# --------------------------------------------------------------------------- entry point
def derive(source: CaseSource) -> Derived:
    """Derive a case; raises a :class:`CasekitError` listing every problem found."""
    d = _Deriver(source)
    derived = d.run()
    if d.problems:
        first = d.problems[0]
        raise CasekitError(first.message, first.pointer, source.id, valid=first.valid,
                           problems=d.problems)
    assert derived is not None
    return derived


class _Deriver:
    def __init__(self, source: CaseSource) -> None:
        self.src = source
        self.problems: list[Problem] = []

    def fail(self, pointer: str, message: str, valid: str | None = None, check: str = "derive") -> None:
        self.problems.append(Problem(message, pointer, self.src.id, valid=valid, check=check))

    # -- parsing ------------------------------------------------------------------------
    def parse(self, value: Any, pointer: str, variables: list[str], params: tuple[str, ...] = ()) -> Any:
        try:
            return exact(as_expr(value, variables=variables, params=params))
        except ExpressionError as exc:
            self.fail(pointer, exc.message, exc.valid, check="expression")
            return None

    def parse_field(self, value: Any, pointer: str, vector: bool, dim: int, variables: list[str]) -> Any:
        if vector:
            if not isinstance(value, list) or len(value) != dim:
                self.fail(pointer, f"expected a list of {dim} component expressions",
                          f"a list of {dim} expressions", check="family")
                return None
            parts = [self.parse(v, f"{pointer}/{i}", variables) for i, v in enumerate(value)]
            return None if any(p is None for p in parts) else tuple(parts)
        if isinstance(value, list):
            self.fail(pointer, "expected one scalar expression, not a list", check="family")
            return None
        return self.parse(value, pointer, variables)

    # -- the derivation -------------------------------------------------------------------
    def run(self) -> Derived | None:
        src = self.src
        try:
            family = FAMILIES.get(src.family)
        except CasekitError as exc:
            self.fail("/family", exc.message, exc.valid, check="family")
            return None
        try:
            domain = resolve(src.domain.template, src.domain.params, case_id=src.id)
        except CasekitError as exc:
            for p in exc.problems or [exc.as_problem("domain")]:
                self.problems.append(Problem(p.message, p.pointer, src.id, valid=p.valid, check="domain"))
            return None
        dim = domain.dim
        if dim not in family.dims:
            self.fail("/domain/template", f"family {family.name!r} has no {dim}-D cases",
                      ", ".join(f"{d}-D" for d in family.dims), check="family")
            return None
        transient = self.time_mode(family)
        variables = [c.name for c in coords(dim)] + (["t"] if transient else [])
        params = self.params(family, dim, variables)
        solution = self.solution(family, dim, variables) if src.manufactured else None
        if solution is not None:  # float noise of its literals (0.39999999999999974) is the short value
            # meant (casekit.derive_noise): the data, the reference and the checks all use that one
            solution = {k: snap_expr(v) for k, v in solution.items()}
        output = self.output(family)
        grid = self.grid(domain)
        if solution is not None:
            self.support(solution, domain)
        if self.problems or output is None or grid is None:
            return None
        typed: list[str] = []
        forcing = self.forcing(family, params, solution, dim, transient, variables, typed)
        initial = self.initial(family, solution, dim, transient, variables, typed)
        derived = Derived(src, family, domain, transient, params, solution, forcing or {}, [],
                          initial or {}, src.pde.time, grid, output,
                          evaluation_config(src.evaluation.to_dict() if src.evaluation else None),
                          typed)
        if self.problems:
            return derived
        derived.boundary = self.boundary(derived, variables)
        derived.targets = self.targets(derived)
        return derived

    def targets(self, d: Derived) -> list[TargetSource]:
        from casekit.targets import TARGET_KINDS, Context

        given = self.src.targets or []
        ctx = Context(d)
        seen: set[str] = set()
        out = []
        for i, t in enumerate(given):
            ptr = f"/targets/{i}"
            if t.name in seen:
                self.fail(f"{ptr}/name", f"target name {t.name!r} is used twice", "distinct names", check="targets")
            seen.add(t.name)
            try:
                kind = TARGET_KINDS.get(t.kind)
            except CasekitError as exc:
                self.fail(f"{ptr}/kind", exc.message, exc.valid, check="targets")
                continue
            issues = kind.check(t, ctx)
            for issue in issues:
                self.fail(f"{ptr}/{issue.field}", f"target {t.name!r}: {issue.message}", issue.valid,
                          check="targets")
            if not issues:
                out.append(t)
        return out

    def time_mode(self, family: Family) -> bool:
        time = self.src.pde.time
        if family.transient and not family.steady_allowed and time is None:
            self.fail("/pde/time", f"family {family.name!r} is time-dependent: give pde.time",
                      "{t0: number, t_end: number}", check="family")
            return True
        if not family.transient and time is not None:
            self.fail("/pde/time", f"family {family.name!r} is steady: remove pde.time", check="family")
            return False
        if time is not None and not time.t_end > time.t0:
            self.fail("/pde/time/t_end", "t_end must be greater than t0", f"a number > {time.t0}",
                      check="family")
        return time is not None

    def params(self, family: Family, dim: int, variables: list[str]) -> dict[str, Any]:
        given = self.src.pde.params or {}
        out: dict[str, Any] = {}
        known = [p.name for p in family.params]
        for name in given:
            if name not in known:
                self.fail(f"/pde/params/{name}", f"unknown parameter {name!r} of family {family.name!r}",
                          ", ".join(known) or "(none)", check="family")
        for p in family.params:
            ptr = f"/pde/params/{p.name}"
            if p.name not in given:
                self.fail(ptr, f"missing parameter {p.name!r} ({p.doc})", p.range_text(), check="family")
                continue
            value = given[p.name]
            if p.kind == "number":
                value = snap_number(value)
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    self.fail(ptr, f"parameter {p.name!r} must be a number", p.range_text(), check="family")
                    continue
                if not _in_range(p, float(value)):
                    self.fail(ptr, f"parameter {p.name!r} = {value} is out of range", p.range_text(),
                              check="range")
                    continue
                # a float parameter meaning a simple rational (nu = 0.3333333333333333) derives as it
                out[p.name] = snap_expr(exact(sp.Float(value) if isinstance(value, float) else sp.Integer(value)))
            elif p.kind == "vector":
                if not (isinstance(value, list) and len(value) == dim
                        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)):
                    self.fail(ptr, f"parameter {p.name!r} must be a list of {dim} numbers",
                              f"[{', '.join(['number'] * dim)}]", check="family")
                    continue
                out[p.name] = tuple(exact(sp.Float(snap_float(float(v)))) for v in value)
            elif p.kind == "field":
                e = self.parse(value, ptr, variables)
                if e is not None:
                    out[p.name] = e
            elif p.kind == "reaction":
                e = self.parse(value, ptr, variables, params=("u",))
                if e is not None:
                    out[p.name] = e
        return out

    def solution(self, family: Family, dim: int, variables: list[str]) -> dict[str, Any] | None:
        given = self.src.manufactured_solution or {}
        names = [u.name for u in family.unknowns]
        out: dict[str, Any] = {}
        for name in given:
            if name not in names:
                self.fail(f"/manufactured_solution/{name}", f"unknown field {name!r} of family "
                          f"{family.name!r}", ", ".join(names), check="family")
        for u in family.unknowns:
            if u.name not in given:
                self.fail(f"/manufactured_solution/{u.name}", f"missing manufactured {u.doc or u.name}",
                          check="family")
                continue
            v = self.parse_field(given[u.name], f"/manufactured_solution/{u.name}", u.vector, dim, variables)
            if v is not None:
                out[u.name] = v
        return out

    def support(self, solution: dict[str, Any], domain: Domain) -> None:
        """A support factor (``casekit.derive_support``) of the accepted form, on a ball inside the
        domain clear of its boundary: the boundary data are then made without it."""
        try:
            factor = support.factor_of(solution)
            if factor is not None:
                support.check_inside(factor, domain)
        except CasekitError as exc:
            self.fail("/manufactured_solution", exc.message, exc.valid, check="support")

    def output(self, family: Family) -> Output | None:
        try:
            return family.output(self.src.output.field)
        except KeyError:
            self.fail("/output/field", f"family {family.name!r} has no output field "
                      f"{self.src.output.field!r}", ", ".join(o.name for o in family.outputs),
                      check="family")
            return None

    def grid(self, domain: Domain) -> Grid | None:
        """The evaluation grid (its bbox defaults to the domain's); whether it covers the domain
        is checked on the case_spec (casekit.validate.case_checks.structure)."""
        g = self.src.eval_grid
        if (g.nz is not None) != (domain.dim == 3):
            self.fail("/eval_grid/nz", "nz is required for 3-D domains and not allowed for 2-D ones",
                      check="grid")
            return None
        refused = too_many_points(g.nx, g.ny, g.nz)
        if refused is not None:
            self.fail("/eval_grid", refused, MAX_POINTS_TEXT, check="grid")
            return None
        bbox = tuple(g.bbox) if g.bbox is not None else domain.bbox()
        if len(bbox) != 2 * domain.dim:
            self.fail("/eval_grid/bbox", f"bbox needs {2 * domain.dim} numbers for a "
                      f"{domain.dim}-D domain", check="grid")
            return None
        return Grid(g.nx, g.ny, tuple(float(v) for v in bbox), g.nz)

    def forcing(self, family: Family, params: dict, solution: dict | None, dim: int,
                transient: bool, variables: list[str], typed: list[str]) -> dict[str, Any] | None:
        given = self.src.pde.forcing
        if given is not None:
            typed.append("forcing")
            out = {}
            vector = any(u.vector for u in family.unknowns[:1])
            for name, value in given.items():
                v = self.parse_field(value, f"/pde/forcing/{name}", vector and isinstance(value, list),
                                     dim, variables)
                if v is not None:
                    out[name] = v
            return out
        if solution is None:
            self.fail("/pde/forcing", "a case without a manufactured solution must give its forcing",
                      check="reference")
            return None
        try:
            return support.through(family.operator, solution, params, dim, transient)
        except CasekitError as exc:
            self.fail("/manufactured_solution", exc.message, exc.valid, check="support")
            return None

    def initial(self, family: Family, solution: dict | None, dim: int, transient: bool,
                variables: list[str], typed: list[str]) -> dict[str, Any] | None:
        wanted = ["u", "v"] if family.time_order == 2 else ["u"]
        given = self.src.initial
        if not transient:
            if given is not None:
                self.fail("/initial", "a steady case has no initial data", check="family")
            return {}
        if given is not None:
            typed.append("initial")
            out = {}
            for name in given:
                if name not in wanted:
                    self.fail(f"/initial/{name}", f"unknown initial field {name!r}", ", ".join(wanted),
                              check="family")
                else:
                    v = self.parse_field(given[name], f"/initial/{name}", False, dim, variables)
                    if v is not None:
                        out[name] = v
            return out
        if solution is None:
            self.fail("/initial", "a case without a manufactured solution must give its initial data",
                      ", ".join(wanted), check="reference")
            return None
        t0 = exact(sp.Float(self.src.pde.time.t0))  # type: ignore[union-attr]
        u = solution["u"]
        out = {"u": u.subs(T, t0)}
        if family.time_order == 2:
            out["v"] = sp.diff(u, T).subs(T, t0)
        return out

    def boundary(self, d: Derived, variables: list[str]) -> list[BoundaryData]:
        src, family, domain = self.src, d.family, d.domain
        tags = domain.tags()
        for tag in src.boundary:
            if tag not in tags:
                self.fail(f"/boundary/{tag}", f"domain {domain.name!r} has no boundary tag {tag!r}",
                          ", ".join(tags), check="boundary")
        periodic_tags = {t for pair in domain.geometry.periodic for t in (pair.source, pair.target)}
        out: list[BoundaryData] = []
        for tag in tags:
            ptr = f"/boundary/{tag}"
            spec = src.boundary.get(tag)
            if spec is None:
                self.fail(ptr, f"boundary part {tag!r} has no condition",
                          ", ".join(family.bc_kinds), check="boundary")
                continue
            if spec.kind not in family.bc_kinds:
                self.fail(f"{ptr}/kind" if not isinstance(spec.to_dict(), str) else ptr,
                          f"family {family.name!r} does not support {spec.kind} conditions",
                          ", ".join(family.bc_kinds), check="boundary")
                continue
            if spec.kind == "periodic":
                out.append(self.periodic(domain, tag, spec, periodic_tags, ptr))
                continue
            if (spec.kind == "robin") != (spec.alpha is not None):
                self.fail(ptr, "alpha is required for robin conditions and only for them",
                          check="boundary")
                continue
            if spec.laplacian is not None and "laplacian" not in family.dirichlet_extra:
                self.fail(f"{ptr}/laplacian", "only biharmonic conditions carry a laplacian", check="boundary")
                continue
            # float geometry (cos 90 deg, 0.5 - 0.2/2) snapped: the data print exactly
            scale = domain.geometry.diameter()
            carriers = [snap_carrier(c, scale) for c in domain.geometry.carriers(tag)]
            normal = carriers[0].normal_expr() if len(carriers) == 1 else None
            if spec.kind in ("neumann", "robin") and normal is None:
                self.fail(ptr, f"{spec.kind} data need a boundary part with one exact normal; {tag!r} "
                          f"has {len(carriers)} different pieces",
                          ", ".join(t for t in tags if len(domain.geometry.carriers(t)) == 1) + " (or dirichlet)",
                          check="boundary")
                continue
            if spec.value is not None or not src.manufactured:
                out.append(self.given_bc(d, tag, spec, variables, ptr))
            else:
                out.append(self.derived_bc(d, tag, spec, carriers, normal))
        self.check_well_posed(d, out)
        return out

    def periodic(self, domain: Domain, tag: str, spec: Any, periodic_tags: set[str], ptr: str) -> BoundaryData:
        if tag not in periodic_tags:
            self.fail(ptr, f"boundary part {tag!r} has no periodic partner on domain {domain.name!r}",
                      ", ".join(sorted(periodic_tags)) or "(no periodic tags on this domain)",
                      check="boundary")
        else:
            for pair in domain.geometry.periodic:
                if tag in (pair.source, pair.target):
                    other = pair.target if tag == pair.source else pair.source
                    partner = self.src.boundary.get(other)
                    if partner is None or partner.kind != "periodic":
                        self.fail(ptr, f"periodic part {tag!r} needs its partner {other!r} periodic too",
                                  check="boundary")
        return BoundaryData(tag, "periodic", method="periodic")

    def given_bc(self, d: Derived, tag: str, spec: Any, variables: list[str], ptr: str) -> BoundaryData:
        if spec.value is None:
            self.fail(f"{ptr}/value", "a case without a manufactured solution must give boundary values",
                      check="reference")
            return BoundaryData(tag, spec.kind)
        d.typed.append(f"boundary/{tag}")
        vector = d.family.unknowns[0].vector
        value = self.parse_field(spec.value, f"{ptr}/value", vector, d.dim, variables)
        lap_v = None
        if "laplacian" in d.family.dirichlet_extra and spec.kind == "dirichlet":
            if spec.laplacian is None and not self.src.manufactured:
                self.fail(f"{ptr}/laplacian", "biharmonic conditions need the laplacian data", check="family")
            elif spec.laplacian is not None:
                lap_v = self.parse(spec.laplacian, f"{ptr}/laplacian", variables)
        return BoundaryData(tag, spec.kind, value, spec.alpha, lap_v, "given")

    def derived_bc(self, d: Derived, tag: str, spec: Any, carriers: list, normal: Any) -> BoundaryData:
        family, dim = d.family, d.dim
        assert d.solution is not None
        # a support factor is zero, with its derivatives, near every boundary part (self.support)
        # composed with the part's warp like any datum: printed as it is, the rest of the solution would
        # hand an agent everything but the support's part, and that is one operator application away
        # (u = datum + A max(0, g)**k, A fitted: 2.7e-16 on a Helmholtz gear)
        sol = {k: support.outside(v) for k, v in d.solution.items()}
        main = family.unknowns[0].name
        if spec.kind == "dirichlet":
            value, method = _dirichlet(d, sol[main], carriers, compare_to=d.solution[main], kind=d.output.kind)
            lap_v = None
            if "laplacian" in family.dirichlet_extra:
                lap_v, _ = _dirichlet(d, lap(sol[main], dim), carriers, compare_to=d.solution[main])
            return BoundaryData(tag, "dirichlet", value, None, lap_v, method)
        flux = family.flux(sol, d.params, normal, dim)  # type: ignore[misc]
        if spec.kind == "robin":
            flux = flux + exact(sp.Float(snap_float(spec.alpha))) * sol[main]
        if isinstance(carriers[0], LineCarrier):
            return BoundaryData(tag, spec.kind, _restrict(flux, carriers[0].projection()), spec.alpha, None,
                                "projection")
        # a curved part: the data composed with the part's warp (same values on the part)
        warp = _warp(d, carriers, d.solution[main],
                     d.output.kind if family.unknowns[0].name == d.output.of else "scalar")
        return BoundaryData(tag, spec.kind, _restrict(flux, warp), spec.alpha, None, "warp")

    def check_well_posed(self, d: Derived, out: list[BoundaryData]) -> None:
        kinds = {b.kind for b in out}
        if d.family.needs_dirichlet and not d.transient and "dirichlet" not in kinds and "robin" not in kinds:
            self.fail("/boundary", f"a steady {d.family.name} problem without any dirichlet (or robin) "
                      "part is singular", "at least one dirichlet boundary part", check="boundary")


# --------------------------------------------------------------------------- helpers
def _dirichlet(d: Derived, u: Any, carriers: list, compare_to: Any = None, kind: str = "scalar"
               ) -> tuple[Any, str]:
    """Leak-free Dirichlet data for ``u`` on a tag (see the module docstring), kept at least
    LIFT_GAP from ``compare_to`` (default ``u``, compared as an output of ``kind``) inside the domain."""
    target = u if compare_to is None else compare_to
    if len(carriers) == 1 and isinstance(carriers[0], LineCarrier):
        g = _restrict(u, carriers[0].projection())
        if leak.min_gap(leak.gaps(g, target, kind, d.interior_points, d.t_out, d.dim)) >= LIFT_GAP:
            return g, "projection"
    warp = _warp(d, carriers, target, kind)
    return _restrict(u, warp), "warp"


#: direction of the warp p -> p + s phi(p) w (not aligned with any axis)
_WARP_DIRECTION = (sp.Integer(1), sp.Rational(1, 2), sp.Rational(1, 3))


def _warp(d: Derived, carriers: list, target: Any, kind: str) -> dict[sp.Symbol, sp.Expr]:
    """The substitution p -> p + s phi(p) w, identity on the tag (phi, a product of the tag's
    level sets, vanishes there), with the smallest round s that moves ``target`` composed with it
    at least LIFT_GAP away from ``target`` inside the domain.  Composing data with it keeps their
    values on the tag and leaves no copy of the solution's formula in the text."""
    pts, t = d.interior_points, d.t_out
    phi = sp.Mul(*[c.level_set() for c in carriers])
    peak = float(np.max(np.abs(leak.evaluate(phi, pts, t, d.dim)))) or 1.0
    phi = phi / exact(sp.Float(float(f"{peak:.2g}")))
    size = d.domain.geometry.diameter()
    s = float(f"{0.05 * size:.1g}")
    coords = [c for c in (X_, Y_, Z_)[: d.dim]]
    for _ in range(12):
        warp = {c: c + exact(sp.Float(s)) * phi * w for c, w in zip(coords, _WARP_DIRECTION, strict=False)}
        if leak.min_gap(leak.gaps(_restrict(target, warp), target, kind, pts, t, d.dim)) >= LIFT_GAP:
            return warp
        s *= 2
    return warp


def _restrict(value: Any, projection: dict | None) -> Any:
    if projection is None:
        return value
    if isinstance(value, tuple):
        return tuple(sp.sympify(v).subs(projection, simultaneous=True) for v in value)
    return sp.sympify(value).subs(projection, simultaneous=True)


def _in_range(p: Any, v: float) -> bool:
    if p.minimum is not None and (v <= p.minimum if p.exclusive_minimum else v < p.minimum):
        return False
    return not (p.maximum is not None and v > p.maximum)


def tidy(e: Any, what: str = "a derived expression") -> Any:
    """A readable but exact form of a derived expression; raises :class:`TooLarge`
    naming ``what`` when its expansion would be too large to print (``casekit.expr.size``)."""
    if isinstance(e, tuple):
        return tuple(tidy(c, what) for c in e)
    # products expanded (exp(a + b) and log(a*b) kept whole): an unexpanded product can spell out
    # the hidden solution (the convective term (u . grad) u of Navier-Stokes carried the velocity
    # verbatim; the validator's leak.text check); refused before expanding when too large
    e = support.expand(e, lambda part: size.expand(part, what))
    # a time-dependent expression is never factored: a common time factor pulled out ((...)*exp(-5*t))
    # prints the time behaviour apart from the spatial shape, more than the derivation requires
    return e if T in e.free_symbols else sp.factor_terms(e)


def _text(v: Any, sampler: Sampler | None = None) -> Any:
    """A derived value as case_spec text; with a ``sampler`` it is made hygienic first (no
    oversized literals, no round-off terms: ``casekit.expr.hygiene``)."""
    if isinstance(v, tuple):
        return [_text(c, sampler) for c in v]
    v = sp.sympify(v)
    if sampler is not None:
        v = hygiene.clean(v, sampler)
    if v.is_Number:
        f = float(v)
        if sampler is not None:  # a few ulps of round-off of a short value (casekit.derive_noise)
            f = printed_short(f) or f
        return int(f) if f.is_integer() and abs(f) < 2**53 else f
    # hygiene's last resort (17-digit doubles) can print a few ulps of round-off of a short value:
    # snapped in place, never further than exactness allows (casekit.derive_noise.snap_text)
    return to_text(v) if sampler is None else snap_text(hygiene.clean_text(v, sampler), v, sampler)


def _sampler(d: Derived) -> Sampler:
    times = (float(d.time.t0), float(d.time.t_end)) if d.time is not None else (0.0,)
    return print_sampler(d.interior_points, times, d.dim)


def build_case_spec(d: Derived) -> dict[str, Any]:
    family, params = d.family, d.source.pde.params or {}
    sampler = _sampler(d)

    def derived_text(what: str, v: Any, simplify: bool = True, typed: Any = None, name: str | None = None) -> Any:
        # typed data stay exactly as the author typed them (validation reports what is wrong)
        if what in d.typed:
            return typed if typed is not None else _text(v)
        label = {"forcing": f"the forcing {name}", "initial": f"the initial data {name}"}.get(
            what, f"the {name or 'boundary'} data on {what.removeprefix('boundary/')}") + " derived from the solution"
        try:  # bounded before any expansion or printing
            v = tidy(v, label) if simplify else v
            for c in v if isinstance(v, tuple) else (v,):
                size.check_printable(c, label)
        except TooLarge as exc:  # named by the field the author wrote
            unknowns = list(d.solution or {})
            pointer = "/manufactured_solution" + (f"/{unknowns[0]}" if len(unknowns) == 1 else "")
            raise CasekitError(exc.message, pointer, d.case_id, valid=exc.valid, problems=[Problem(
                exc.message, pointer, d.case_id, valid=exc.valid, check="size")]) from None
        return _text(v, sampler)

    pde: dict[str, Any] = {"type": family.name, "params": {}}
    for p in family.params:
        if p.name not in params:
            continue
        v = params[p.name]
        pde["params"][p.name] = (_text(d.params[p.name], sampler) if isinstance(v, str)
                                 else [snap_number(c) for c in v] if isinstance(v, list) else snap_number(v))
    given = d.source.pde.forcing or {}
    pde["forcing"] = {k: derived_text("forcing", v, typed=given.get(k), name=k) for k, v in d.forcing.items()}
    if d.time is not None:
        pde["time"] = d.time.to_dict()
    bc: dict[str, list] = {}
    for b in d.boundary:
        if b.kind == "periodic":
            continue
        entry: dict[str, Any] = {"tag": b.tag}
        if b.alpha is not None:
            entry["alpha"] = snap_number(b.alpha)
        # warped data stay factored: expanding a product of level sets cancels catastrophically
        simplify = b.method != "warp"
        src_bc = d.source.boundary.get(b.tag)
        entry["value"] = derived_text(f"boundary/{b.tag}", b.value, simplify, getattr(src_bc, "value", None),
                                      name=b.kind)
        if b.laplacian is not None:
            entry["laplacian"] = derived_text(f"boundary/{b.tag}", b.laplacian, simplify,
                                              getattr(src_bc, "laplacian", None), name="laplacian")
        bc.setdefault(b.kind, []).append(entry)
    periodic = [p for p in d.domain.geometry.periodic
                if any(b.kind == "periodic" and b.tag == p.source for b in d.boundary)]
    if periodic:
        bc["periodic"] = [{"tags": [p.source, p.target], "translation": list(p.translation)}
                          for p in periodic]
    from casekit.prompts.boundary_words import boundary_tags

    domain = {**d.domain.spec(), "boundary_tags": boundary_tags(d.domain)}  # wording from the geometry
    spec: dict[str, Any] = {"pde": pde, "domain": domain, "bc": {
        k: bc[k] for k in ("dirichlet", "neumann", "robin", "periodic") if k in bc}}
    if d.initial:
        given_ic = d.source.initial or {}
        spec["ic"] = {k: derived_text("initial", v, typed=given_ic.get(k), name=k) for k, v in d.initial.items()}
    spec["eval_grid"] = d.grid.spec()
    from casekit.unscored import unscored_points

    unscored = unscored_points(spec)  # where two Dirichlet parts meet with different data: not scored
    if unscored:
        spec["eval_grid"]["unscored"] = unscored
    output: dict[str, Any] = {"format": "npz", "field": d.output.name}
    comps = d.output.components(d.dim)
    if comps:
        output["components"] = comps
    spec["output"] = output
    if d.targets:
        spec["targets"] = d.target_entries()
    return spec


__all__ = ["BoundaryData", "Derived", "derive", "param_symbol", "tidy"]
