"""Semantic checks of a case (a :class:`CaseView`): one registered function per rule.

* ``residual`` -- the stated forcing satisfies the stated PDE with the hidden solution, in the
  case's own dimension (exactly, symbolically; numerically-zero-but-inexact is its own class);
  constraints such as div(u) = 0 hold.
* ``boundary_data`` / ``initial_data`` -- the stated data agree with the hidden solution on
  each boundary part (with the exact outward normal) and at t0.
* ``leak`` -- no visible expression reproduces the hidden solution inside the domain.
* ``coefficients`` -- positive coefficients are positive on the domain.
* ``periodicity`` -- a periodic case has a periodic solution.
* ``float_noise`` -- no agent-visible literal is round-off of a short value or of zero
  (``casekit.derive_noise``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp

from casekit import derive_noise, leak
from casekit import derive_support as support
from casekit.domains.geometry import BOUNDARY_TOL
from casekit.errors import CasekitError, Problem
from casekit.expr import COORDS, T, as_expr, exact, hygiene
from casekit.expr.hygiene import Sampler
from casekit.families.base import DATA_BC_KINDS
from casekit.families.calculus import lap
from casekit.families.inflow import traction_inflow
from casekit.registry import Registry
from casekit.scoring.artifacts import output_names
from casekit.validate import inversion, span, taylor
from casekit.validate.view import CaseView, parse_all, visible_values


@dataclass(frozen=True)
class Settings:
    gap_min: float = leak.GAP_MIN
    residual_tol: float = 1e-9
    #: an exact forcing whose double-precision evaluation still differs from the operator's by more
    #: than this (cancellation in an expanded polynomial) fails: an agent evaluating it would be off
    #: in digits within two orders of the smallest accuracy threshold (tau_min 1e-6)
    rounding_tol: float = 1e-8
    data_tol: float = 1e-8
    #: smallest relative error of any inverter and smallest span residual (casekit.validate.span)
    span_gap_min: float = span.SPAN_GAP_MIN


Check = Callable[[CaseView, Settings], list[Problem]]
CHECKS: Registry[Check] = Registry("case check")


def check(name: str) -> Callable[[Check], Check]:
    def deco(fn: Check) -> Check:
        return CHECKS.register(name, fn)

    return deco


def _times(view: CaseView) -> list[float]:
    if not view.transient:
        return [0.0]
    return [view.t0, 0.5 * (view.t0 + view.t_end), view.t_end]


def _values(expr: Any, pts: np.ndarray, t: float, dim: int) -> np.ndarray:
    return leak.evaluate(expr, pts, t, dim)


def _rel(a: np.ndarray, b: np.ndarray, floor: float = 0.0) -> float:
    """RMS difference relative to the larger RMS of the two (or ``floor``, the problem's scale,
    when both are tiny)."""
    rms = lambda v: float(np.sqrt(np.mean(np.square(np.ravel(v)))))  # noqa: E731
    return rms(np.ravel(a) - np.ravel(b)) / max(rms(a), rms(b), floor, 1e-300)


#: points of the high-precision identity test (rational, away from special values)
_PROBES = ({"x": "0.3717", "y": "0.6129", "z": "0.2243", "t": "0.4471"},
           {"x": "0.8123", "y": "0.1931", "z": "0.7057", "t": "0.1237"},
           {"x": "0.5471", "y": "0.4387", "z": "0.9113", "t": "0.8761"})


def _exactly_zero(e: sp.Expr) -> bool:
    """Whether ``e`` is identically zero: structurally, after expansion when small, else by
    evaluating the exact (float-free) expression at three rational points with 60 digits -- an
    identity test that floats rounded to 16 digits cannot pass and that never hangs."""
    e = exact(sp.sympify(e))
    if e == 0:
        return True
    if sp.count_ops(e) < 60 and sp.expand(e) == 0:
        return True
    free = {s.name: s for s in e.free_symbols}
    terms = e.args if isinstance(e, sp.Add) else (e,)
    for probe in _PROBES:
        subs = {free[k]: sp.Rational(v) for k, v in probe.items() if k in free}
        value = abs(complex(e.evalf(60, subs=subs)))
        scale = 1 + sum(abs(complex(t.evalf(30, subs=subs))) for t in terms)
        if not value <= 1e-40 * scale:
            return False
    return True


#: domain points (evenly strided among the sample points) of the high-precision comparison
PRECISE_POINTS = 6
#: digits of the high-precision comparison
PRECISE_DIGITS = 40


def _precise_rel(a: Any, b: Any, pts: np.ndarray, times: list[float], dim: int) -> float:
    """The true difference of two expressions (the operator's ``a`` and the stated ``b``), evaluated
    with :data:`PRECISE_DIGITS` digits at :data:`PRECISE_POINTS` of ``pts`` at each time, relative to
    what a double-precision evaluation of ``b`` can resolve at that point: the larger of ``b``'s RMS
    on ``pts`` and the sum of the magnitudes of ``b``'s additive terms there.

    A derived forcing is printed hygienically (``casekit.expr.hygiene``: large exact numbers as
    17-digit floats, terms below 1e-14 of their sum's scale dropped), so it is no longer exactly the
    operator's and the symbolic identity test fails; when its terms cancel (a wave on a dumbbell:
    terms of 1e6 summing to 40) the double-precision comparison measures the rounding of evaluating
    two such sums (1e-12), not what was printed, whose true difference is 1e-17 of its terms.  Any
    solver evaluating ``b`` in double precision rounds at 1e-16 of those terms: a difference below
    :data:`DOUBLE_PRECISION` of them is exact for every solver, a wrong or rounded forcing (a typed
    decimal) differs by far more."""
    comps_a, comps_b = _components(a), _components(b)
    if len(comps_a) != len(comps_b) or not len(pts):
        return float("inf")
    picks = pts[np.linspace(0, len(pts) - 1, min(PRECISE_POINTS, len(pts))).astype(int)]
    worst = 0.0
    for t in times:
        for ca, cb in zip(comps_a, comps_b, strict=True):
            rms = float(np.sqrt(np.mean(np.square(_values(cb, pts, t, dim)))))
            stated = exact(sp.sympify(cb))
            diff = exact(sp.sympify(ca)) - stated
            symbols = {s.name: s for s in diff.free_symbols | stated.free_symbols}
            if set(symbols) - {"x", "y", "z", "t"} or not np.isfinite(rms):
                return float("inf")
            for p in picks:
                subs = {symbols[n]: sp.Rational(repr(float(v))) for n, v in zip(("x", "y", "z"), p, strict=False)
                        if n in symbols}
                if "t" in symbols:
                    subs[symbols["t"]] = sp.Rational(repr(float(t)))
                value = abs(complex(diff.evalf(PRECISE_DIGITS, subs=subs)))
                terms = sum(abs(complex(term.evalf(20, subs=subs))) for term in sp.Add.make_args(stated))
                scale = max(rms, terms)
                if scale == 0.0:
                    return float("inf") if value else 0.0
                worst = max(worst, value / scale)
    return worst


def _components(v: Any) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


#: a stated expression that equals the derived one to this relative precision is exact for every
#: solver (hygienic text prints oversized exact numbers as 17-digit floats and drops round-off)
DOUBLE_PRECISION = 1e-13


@check("hygiene")
def expression_hygiene(view: CaseView, s: Settings) -> list[Problem]:
    """Every agent-visible expression can be transcribed as written: bounded literals, no
    round-off terms (``casekit.expr.hygiene``)."""
    sampler = Sampler(view.sample_points(150), tuple(sorted({view.t0, view.t_end})), view.dim)
    problems: list[Problem] = []
    for pointer, value, params in visible_values(view.spec, view.family):
        try:
            parts = [as_expr(v, variables=view.variables, params=params)
                     for v in (value if isinstance(value, list) else [value])]
        except CasekitError:
            continue  # reported by the expression check
        for part in parts:
            for v in hygiene.violations(part, sampler if not params else None):
                problems.append(view.problem(pointer, v.message, "hygiene",
                                             f"literals of at most {hygiene.MAX_DIGITS} digits, floats of at most 17 "
                                             "significant digits, no round-off terms"))
    return problems


def _numbers(value: Any, pointer: str) -> list[tuple[str, float]]:
    """(pointer, value) of every number of a case_spec block, in JSON numbers and in prose."""
    if isinstance(value, dict):
        return [n for k, v in value.items() for n in _numbers(v, f"{pointer}/{k}")]
    if isinstance(value, list):
        return [n for i, v in enumerate(value) for n in _numbers(v, f"{pointer}/{i}")]
    if isinstance(value, float):
        return [(pointer, value)]
    if isinstance(value, str):
        return [(pointer, float(m)) for m in derive_noise._NUMBER.findall(value)]
    return []


@check("float_noise")
def float_noise(view: CaseView, s: Settings) -> list[Problem]:
    """No agent-visible literal is float noise (``casekit.derive_noise``).  In an expression, as the
    print pass judges it (:func:`casekit.derive_noise.text_noise`, on the points derivation prints
    against): a long literal within a few ulps of a short decimal or simple rational it is not the
    nearest double of (``0.7999999999999998``), or a long literal below 1e-12 whose removal does
    not move the expression (``sin(6.123233995736766e-17*pi*y)``, ``cos(90 deg)`` evaluated in
    floats); a derived 17-digit literal further from a short value is an exact value rounded,
    never noise.  A JSON number (or a number in prose) within 1e-12 relative of a short value it
    is not the nearest double of (derivation snaps those where it reads them).  The hygiene check
    accepts any 17-digit double; this one says which are round-off of what an author would have
    written."""
    valid = "the short value itself (0.8, 1/9, 0), as an author would write it"
    problems: list[Problem] = []
    seen: set[str] = set()
    sampler = derive_noise.print_sampler(view.interior_points, (view.t0, view.t_end) if view.transient else (0.0,),
                                    view.dim)
    for pointer, value, params in visible_values(view.spec, view.family):
        seen.add(pointer)
        texts = [v if isinstance(v, str) else repr(v) for v in (value if isinstance(value, list) else [value])
                 if isinstance(v, (str, int, float)) and not isinstance(v, bool)]
        found = [n for text in texts for n in derive_noise.text_noise(text, params, sampler)]
        for why in dict.fromkeys(n.why for n in found):
            problems.append(view.problem(pointer, why, "float_noise", valid))
    for pointer, v in _numbers(view.spec, ""):
        if pointer not in seen and not pointer.startswith(tuple(f"{p}/" for p in seen)):
            noisy = derive_noise.is_noise(v)
            if noisy:
                problems.append(view.problem(pointer, noisy, "float_noise", valid))
    return problems


@check("traction_inflow")
def traction_inflow_check(view: CaseView, s: Settings) -> list[Problem]:
    """No traction part lets the flow in above the family's Reynolds limit
    (``casekit.families.inflow``)."""
    if view.solution is None or view.transient or view.family.traction_inflow_limit is None:
        return []
    entries = list(enumerate(view.spec["bc"].get("neumann", [])))
    tags = [e["tag"] for _, e in entries if e["tag"] in view.domain.tags()]
    found = {i.tag: i for i in traction_inflow(view.family.traction_inflow_limit, view.params,
                                               view.solution[view.family.unknowns[0].name],
                                               view.domain.geometry, tags)}
    return [view.problem(f"/bc/neumann/{i}", found[e["tag"]].message(), "traction_inflow",
                         "a Dirichlet condition on that part, a part where the flow leaves, or a lower Reynolds "
                         "number") for i, e in entries if e["tag"] in found]


@check("residual")
def residual(view: CaseView, s: Settings) -> list[Problem]:
    if view.solution is None:
        return []
    expected = support.through(view.family.operator, view.solution, view.params, view.dim, view.transient)
    stated = {k: view.expr(v) for k, v in view.spec["pde"].get("forcing", {}).items()}
    problems: list[Problem] = []
    pts = view.sample_points(200)
    for name, value in expected.items():
        ptr = f"/pde/forcing/{name}"
        if name not in stated:
            problems.append(view.problem(ptr, f"forcing {name!r} is missing", "residual"))
            continue
        if len(_components(value)) != len(_components(stated[name])):
            problems.append(view.problem(ptr, f"forcing {name!r} has {len(_components(stated[name]))} "
                                         f"components, the {view.dim}-D PDE needs {len(_components(value))}",
                                         "residual"))
            continue
        worst = max(_rel(_values(value, pts, t, view.dim), _values(stated[name], pts, t, view.dim))
                    for t in _times(view))
        identical = worst <= DOUBLE_PRECISION or all(
            _exactly_zero(sp.sympify(a) - b)
            for a, b in zip(_components(value), _components(stated[name]), strict=True)
        ) or _precise_rel(value, stated[name], pts, _times(view), view.dim) <= DOUBLE_PRECISION
        if identical and worst > s.rounding_tol:
            problems.append(view.problem(
                ptr, f"the stated forcing is exact but cancels in double precision (relative rounding "
                f"{worst:.2e}, at most {s.rounding_tol:g})", "residual",
                "a better-conditioned solution (smaller polynomial degree)"))
        elif not identical and worst > s.residual_tol:
            problems.append(view.problem(
                ptr, f"the stated forcing does not satisfy the {view.dim}-D {view.family.name} "
                f"equation with the manufactured solution (relative residual {worst:.2e})",
                "residual", f"the forcing derived from the solution in {view.dim}-D"))
        elif not identical:
            problems.append(view.problem(
                ptr, f"the stated forcing matches the PDE only up to rounding (relative residual "
                f"{worst:.1e}); the residual is not exactly zero", "residual_inexact",
                "an exact forcing (derived, never typed)"))
    for name, value in view.family.constraints(view.solution, view.params, view.dim).items():
        worst = max(float(np.max(np.abs(_values(value, pts, t, view.dim)))) for t in _times(view))
        if worst > s.residual_tol and not _exactly_zero(value):
            problems.append(view.problem("/", f"the manufactured solution violates {name} = 0 "
                                         f"(max {worst:.2e})", "residual"))
    return problems


def _tag_points(view: CaseView, tag: str) -> np.ndarray:
    return view.domain.geometry.tag_points(tag)


@check("boundary_data")
def boundary_data(view: CaseView, s: Settings) -> list[Problem]:
    if view.solution is None:
        return []
    fam, sol = view.family, view.solution
    main = sol[fam.unknowns[0].name]
    problems = []
    for kind in DATA_BC_KINDS:
        for i, entry in enumerate(view.spec["bc"].get(kind, [])):
            tag = entry["tag"]
            if tag not in view.domain.tags():
                continue  # reported by the structural checks
            carriers = view.domain.geometry.carriers(tag)
            expected: list[tuple[str, Any]] = []
            if kind == "dirichlet":
                expected.append(("value", main))
                if "laplacian" in entry:
                    expected.append(("laplacian", support.through(lambda u: lap(u, view.dim), main)))
            elif len(carriers) == 1 and fam.flux is not None:
                flux = support.through(fam.flux, sol, view.params, carriers[0].normal_expr(), view.dim)
                if kind == "robin":
                    flux = flux + sp.Rational(repr(float(entry["alpha"]))) * main
                expected.append(("value", flux))
            else:
                continue
            pts = _tag_points(view, tag)
            for key, exp in expected:
                stated = view.expr(entry[key])
                if len(_components(stated)) != len(_components(exp)):
                    problems.append(view.problem(f"/bc/{kind}/{i}/{key}", f"{kind} data on {tag!r} "
                                                 f"have the wrong number of components", "boundary_data"))
                    continue
                worst = max(_rel(_values(stated, pts, t, view.dim), _values(exp, pts, t, view.dim),
                                     view.value_floor)
                            for t in _times(view))
                if worst > s.data_tol:
                    problems.append(view.problem(
                        f"/bc/{kind}/{i}/{key}", f"{kind} {key} on {tag!r} disagree with the "
                        f"manufactured solution on that boundary part (relative error {worst:.2e})",
                        "boundary_data"))
    return problems


@check("initial_data")
def initial_data(view: CaseView, s: Settings) -> list[Problem]:
    if view.solution is None or not view.transient:
        return []
    u = view.solution[view.family.unknowns[0].name]
    expected = {"u": u.subs(T, view.t0)}
    if view.family.time_order == 2:
        expected["v"] = sp.diff(u, T).subs(T, view.t0)
    problems = []
    pts = view.sample_points(200)
    for name, exp in expected.items():
        if name not in view.spec.get("ic", {}):
            problems.append(view.problem(f"/ic/{name}", f"initial data {name!r} are missing", "initial_data"))
            continue
        worst = _rel(_values(view.expr(view.spec["ic"][name]), pts, view.t0, view.dim),
                     _values(exp, pts, view.t0, view.dim), view.value_floor)
        if worst > s.data_tol:
            problems.append(view.problem(f"/ic/{name}", f"initial data {name!r} disagree with the "
                                         f"manufactured solution at t0 (relative error {worst:.2e})",
                                         "initial_data"))
    return problems


@check("leak")
def leak_check(view: CaseView, s: Settings) -> list[Problem]:
    if view.solution is None:
        return []
    out = view.output
    sol = view.solution[out.of]
    problems = []
    pts = view.interior_points
    for pointer, value, params in visible_values(view.spec, view.family):
        if params:  # reaction terms are functions of u, not fields
            continue
        expr = view.expr(value)
        gap = leak.min_gap(leak.gaps(expr, sol, out.kind, pts, view.t_end, view.dim))
        if gap >= s.gap_min:
            continue
        what = _describe(pointer, view.spec)
        if gap < leak.IDENTICAL_GAP and leak.symbolically_equal(expr, sol):
            problems.append(view.problem(pointer, f"{what} is the hidden solution itself: evaluating "
                                         "it everywhere reproduces the reference", "leak.symbolic",
                                         "data restricted to the boundary (casekit derives them)"))
        else:
            problems.append(view.problem(pointer, f"{what} is within {gap:.3f} (relative L2) of the "
                                         f"hidden solution inside the domain", "leak.numeric",
                                         f"a relative gap of at least {s.gap_min}"))
    return problems


#: a ratio this constant (relative spread) makes a visible value a multiple of the solution
MULTIPLE_SPREAD = 1e-9


@check("leak.multiple")
def multiple_leak(view: CaseView, s: Settings) -> list[Problem]:
    """No agent-visible value is a constant multiple of a hidden component: the forcing of an
    eigenfunction (f = 2 pi^2 u for u = sin(pi x) sin(pi y)) hands over the answer as f / c,
    whatever its distance from the solution (the leak check compares values unscaled)."""
    if view.solution is None:
        return []
    pts = view.sample_points(200)
    times = sorted({view.t0, view.t_end})
    hidden = [h for value in view.solution.values() for h in _components(value)]
    problems = []
    for pointer, value, params in visible_values(view.spec, view.family):
        if params:  # reaction terms are functions of u
            continue
        for comp in _components(view.expr(value)):
            factor = next((c for h in hidden
                           if (c := _constant_ratio(comp, h, pts, times, view.dim)) is not None), None)
            if factor is not None:
                problems.append(view.problem(pointer, f"{_describe(pointer, view.spec)} is {factor:.6g} times the "
                                             "hidden solution: dividing it by a constant reproduces the answer",
                                             "leak.multiple", "a manufactured solution that is no eigenfunction of "
                                             "the operator (add a term that changes the ratio)"))
                break
    return problems


def _hidden_on_grid(view: CaseView) -> tuple[dict[str, np.ndarray], np.ndarray]:
    assert view.solution is not None
    names = output_names(view.spec)
    mask = view.grid.mask(view.domain.inside)
    return inversion.exact_arrays(view.spec, view.solution[view.output.of], view.output.kind, names, view.t_end,
                                  view.grid.points(), mask, view.dim), mask


@check("leak.span")
def span_leak(view: CaseView, s: Settings) -> list[Problem]:
    """The hidden output stays far from every combination of each small span of visible fields
    (``casekit.validate.span``); the residual is kept on the view for the report."""
    if view.solution is None:
        return []
    ref, mask = _hidden_on_grid(view)
    vector = inversion.magnitude_components(view.solution[view.output.of], view.output.kind, view.t_end,
                                            view.grid.points(), mask, view.dim)
    found = span.of_arrays(view.spec, ref, mask, vector)
    view.measures["span"] = found.to_dict()
    if found.residual >= s.span_gap_min:
        return []
    return [view.problem("/", f"the hidden output at t_end is within {found.describe()}: a short combination of "
                         "what the agent sees reproduces the answer", "leak.span",
                         f"a span residual of at least {s.span_gap_min} (a solution with modes of different shapes "
                         "and rates, none an eigenfunction or a printed factor)")]


@check("leak.taylor")
def taylor_leak(view: CaseView, s: Settings) -> list[Problem]:
    """The time-Taylor expansion from t0 (``casekit.validate.taylor``: its coefficients follow from
    the initial data and the forcing by applying the PDE, no solve) misses the hidden output at
    t_end by at least ``span_gap_min`` at every order up to ``taylor.TAYLOR_ORDER``."""
    found = taylor.of_view(view)
    if found is None:
        return []
    view.measures["taylor"] = found
    close = [(n, e) for n, e in enumerate(found) if n >= 1 and e < s.span_gap_min]
    if not close:
        return []
    n, e = min(close, key=lambda c: c[1])
    return [view.problem("/manufactured_solution", f"the time-Taylor expansion of order {n} from t0 (its "
                         "coefficients read off the initial data and the forcing by applying the PDE, no solve) "
                         f"is within {e:.3g} (relative L2) of the hidden output at t_end", "leak.taylor",
                         f"every expansion up to order {taylor.TAYLOR_ORDER} at least {s.span_gap_min} away (time "
                         "modes that change over the window: no low-degree polynomial in t, rate x window of "
                         "order one or more)")]


@check("leak.inversion")
def inversion_leak(view: CaseView, s: Settings) -> list[Problem]:
    """No inverter of the battery (``casekit.solvers.baselines``) comes within ``span_gap_min``
    of the manufactured answer using only the agent view."""
    if view.solution is None:
        return []
    ref, mask = _hidden_on_grid(view)
    try:
        scored = inversion.score(view.spec, ref, mask)
    except inversion.InverterError as exc:
        return [view.problem("/", str(exc), "leak.inversion")]
    close = {kind: e for kind, (_, e) in scored.items() if e is not None and e < s.span_gap_min}
    view.measures["inversion"] = {kind: e for kind, (_, e) in scored.items()}
    return [view.problem("/", f"the inverter {kind!r} reproduces the answer from the agent view alone (relative "
                         f"L2 error {e:.2e})", "leak.inversion",
                         f"every inverter at least {s.span_gap_min} away") for kind, e in sorted(close.items())]


def _constant_ratio(v: Any, h: Any, pts: np.ndarray, times: list[float], dim: int) -> float | None:
    """The constant c with v = c h at every point and time, if there is one (h not constant)."""
    ratios = []
    for t in times:
        with np.errstate(all="ignore"):
            hv = np.asarray(leak.evaluate(h, pts, t, dim), dtype=float)
            vv = np.asarray(leak.evaluate(v, pts, t, dim), dtype=float)
        if hv.shape != vv.shape or not (np.isfinite(hv).all() and np.isfinite(vv).all()):
            return None
        scale = float(np.max(np.abs(hv)))
        if scale == 0 or float(np.ptp(hv)) <= MULTIPLE_SPREAD * scale:
            return None
        big = np.abs(hv) > 1e-3 * scale
        ratios.append(vv[big] / hv[big])
    r = np.concatenate(ratios)
    mid = float(np.median(r))
    if mid == 0 or float(np.ptp(r)) > MULTIPLE_SPREAD * abs(mid):
        return None
    return mid


def _describe(pointer: str, spec: dict[str, Any]) -> str:
    parts = pointer.strip("/").split("/")
    if parts[0] == "bc":
        tag = spec["bc"][parts[1]][int(parts[2])]["tag"]
        return f"the {parts[1]} {parts[3]} on {tag!r}"
    if parts[0] == "ic":
        return f"the initial data {parts[1]!r} (compared at t_end)"
    if parts[1] == "forcing":
        return "the forcing"
    return f"the coefficient {parts[-1]!r}"


@check("coefficients")
def coefficients(view: CaseView, s: Settings) -> list[Problem]:
    problems = []
    pts = view.interior_points
    for p in view.family.params:
        if not p.positive or p.name not in view.params:
            continue
        low = min(float(np.min(_values(view.params[p.name], pts, t, view.dim))) for t in _times(view))
        if not low > 0:
            problems.append(view.problem(f"/pde/params/{p.name}", f"{p.name} must be positive on the "
                                         f"domain but reaches {low:.3g}", "range", "a positive field"))
    return problems


@check("periodicity")
def periodicity(view: CaseView, s: Settings) -> list[Problem]:
    if view.solution is None or "periodic" not in view.spec["bc"]:
        return []
    problems = []
    for i, pair in enumerate(view.spec["bc"]["periodic"]):
        src, _ = pair["tags"]
        shift = np.asarray(pair["translation"], dtype=float)
        pts = _tag_points(view, src)
        for name, u in view.solution.items():
            for t in _times(view):
                a = _values(u, pts, t, view.dim)
                b = _values(u, pts + shift, t, view.dim)
                worst = _rel(a, b, view.value_floor)
                grads = [sp.diff(c, x) for c in _components(u) for x in COORDS[: view.dim]]
                worst = max(worst, *(_rel(_values(g, pts, t, view.dim), _values(g, pts + shift, t, view.dim),
                                          view.value_floor) for g in grads))
                if worst > s.data_tol:
                    problems.append(view.problem(
                        f"/bc/periodic/{i}", f"the manufactured {name!r} is not periodic across "
                        f"{pair['tags'][0]!r}/{pair['tags'][1]!r} (relative mismatch {worst:.2e})",
                        "periodicity"))
                    break
    return problems


def structure(view: CaseView) -> list[Problem]:
    """Structural consistency of a case_spec with its family and domain; the semantic checks
    run only on a structurally sound case."""
    spec, dom, fam = view.spec, view.domain, view.family
    problems: list[Problem] = []
    if spec["pde"]["type"] != fam.name:
        problems.append(view.problem("/pde/type", f"pde type {spec['pde']['type']!r} differs from the "
                                     f"family {fam.name!r}", "family", fam.name))
    if view.dim not in fam.dims:
        problems.append(view.problem("/domain/type", f"family {fam.name!r} has no {view.dim}-D cases",
                                     "family"))
    if spec["domain"]["dim"] != view.dim:
        problems.append(view.problem("/domain/dim", f"dim {spec['domain']['dim']} differs from the "
                                     f"{view.dim}-D domain {dom.name!r}", "domain", str(view.dim)))
    if sorted(spec["domain"]["boundary_tags"]) != sorted(dom.tags()):
        problems.append(view.problem("/domain/boundary_tags", "boundary tags differ from the domain's",
                                     "boundary", ", ".join(dom.tags())))
    bounds = [float(v) for v in spec["domain"]["bounds"]]
    tol = BOUNDARY_TOL * view.domain.geometry.diameter()
    if len(bounds) != len(dom.bbox()) or not np.allclose(bounds, dom.bbox(), atol=tol):
        problems.append(view.problem("/domain/bounds", "bounds differ from the domain's bounding box",
                                     "domain", ", ".join(f"{v:g}" for v in dom.bbox())))
    seen: dict[str, str] = {}
    for kind in DATA_BC_KINDS:
        if kind in spec["bc"] and kind not in fam.bc_kinds:
            problems.append(view.problem(f"/bc/{kind}", f"family {fam.name!r} does not support {kind} "
                                         "conditions", "boundary", ", ".join(fam.bc_kinds)))
        for i, entry in enumerate(spec["bc"].get(kind, [])):
            _claim(view, seen, entry["tag"], f"/bc/{kind}/{i}/tag", problems)
    for i, entry in enumerate(spec["bc"].get("periodic", [])):
        pairs = {(p.source, p.target): p for p in dom.geometry.periodic}
        pair = pairs.get(tuple(entry["tags"]))
        if pair is None:
            problems.append(view.problem(f"/bc/periodic/{i}/tags", "not a periodic pair of the domain",
                                         "boundary", "; ".join(f"{a}/{b}" for a, b in pairs) or "(none)"))
        elif not np.allclose(entry["translation"], pair.translation):
            problems.append(view.problem(f"/bc/periodic/{i}/translation", "wrong translation", "boundary",
                                         str(list(pair.translation))))
        for t in entry["tags"]:
            _claim(view, seen, t, f"/bc/periodic/{i}/tags", problems)
    for tag in dom.tags():
        if tag not in seen:
            problems.append(view.problem("/bc", f"boundary part {tag!r} has no condition", "boundary"))
    problems.extend(_grid_covers(view))
    problems.extend(parse_all(view))
    return problems


def _claim(view: CaseView, seen: dict[str, str], tag: str, pointer: str, problems: list[Problem]) -> None:
    if tag not in view.domain.tags():
        problems.append(view.problem(pointer, f"domain {view.domain.name!r} has no boundary tag {tag!r}",
                                     "boundary", ", ".join(view.domain.tags())))
    elif tag in seen:
        problems.append(view.problem(pointer, f"boundary part {tag!r} has two conditions "
                                     f"(also at {seen[tag]})", "boundary"))
    else:
        seen[tag] = pointer


def _grid_covers(view: CaseView) -> list[Problem]:
    from casekit.grid import MAX_POINTS_TEXT, too_many_points

    g = view.spec["eval_grid"]
    refused = too_many_points(g["nx"], g["ny"], g.get("nz"))
    if refused is not None:  # before any point is made
        return [view.problem("/eval_grid", refused, "grid", MAX_POINTS_TEXT)]
    if ("nz" in g) != (view.dim == 3):
        return [view.problem("/eval_grid/nz", "nz is required for 3-D domains and not allowed for "
                             "2-D ones", "grid")]
    bbox = g["bbox"]
    if len(bbox) != 2 * view.dim:
        return [view.problem("/eval_grid/bbox", f"bbox needs {2 * view.dim} numbers", "grid")]
    for i in range(view.dim):
        if not bbox[2 * i] < bbox[2 * i + 1]:
            return [view.problem(f"/eval_grid/bbox/{2 * i + 1}", f"{'xyz'[i]}max must exceed "
                                 f"{'xyz'[i]}min", "grid")]
    dom = view.domain.bbox()
    tol = BOUNDARY_TOL * view.domain.geometry.diameter()
    for i in range(view.dim):
        if bbox[2 * i] > dom[2 * i] + tol or bbox[2 * i + 1] < dom[2 * i + 1] - tol:
            return [view.problem("/eval_grid/bbox", "the evaluation grid does not cover the domain",
                                 "grid", f"a box containing [{', '.join(f'{v:g}' for v in dom)}]")]
    if not view.domain.inside(view.grid.points()).any():
        return [view.problem("/eval_grid", "no grid point lies inside the domain", "grid")]
    return []


def run_all(view: CaseView, settings: Settings | None = None) -> list[Problem]:
    """Structure first; the semantic checks only when the structure is sound."""
    problems = structure(view)
    if problems:
        return problems
    settings = settings or Settings()
    for _, fn in CHECKS.items():
        problems.extend(fn(view, settings))
    return problems
