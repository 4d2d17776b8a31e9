"""The visible fields: every field an agent can compute from the case_spec without solving.

These are the small spans of the span leak check (``casekit.validate.span``: the hidden output
must stay far from every linear combination of the fields of each span) and the dictionaries of
the linear inverters (which pick the combination from the boundary data, as an agent would).
They hold, each a function of points only:

* the initial data (``ic``: u, and v for second-order problems);
* the forcing at t0, halfway and t_end, and every boundary datum (Dirichlet, Neumann, Robin
  values and biharmonic Laplacians) *extended as given* (the expression evaluated everywhere) at
  t_end;
* the **time coefficients** of every visible expression: ``e(x, t) = sum_k c_k(x) phi_k(t)``
  (after expanding products, powers of exp and trigonometric sums) gives each ``c_k`` -- with
  ``sin(w t)`` in the solution, the coefficient of ``cos(w t)`` in the forcing is the spatial
  factor itself;
* the **function atoms** of the forcing and the initial data (each ``exp(...)``, ``tanh(...)``,
  ``sin(...)``, ... evaluated at t_end): a Gaussian's ``exp`` factor is the Gaussian;
* a linear background (1, x, y, z).

Sizes are bounded: expressions too large to expand (``casekit.expr.size``) are used as given only, and at most
:data:`MAX_FIELDS` fields are formed (the cheapest kinds first).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from casekit.solvers.baselines.view import AgentView

#: most fields of one kind in a span
MAX_FIELDS = 24
#: an expression with more operations than this is not expanded (time coefficients, atoms)
MAX_OPS = 400
#: most additive terms after expansion
MAX_TERMS = 300
#: kinds of boundary data that are fields of the unknown's scale
DATA_KINDS = ("dirichlet", "neumann", "robin")


@dataclass(frozen=True)
class Field:
    name: str
    values: Callable[[np.ndarray], np.ndarray]  # points (N, dim) -> (N,)


def visible_expressions(view: AgentView) -> list[tuple[str, Any]]:
    """(name, value) of every visible expression that is a field (not a coefficient of the
    operator): initial data, forcing, boundary data."""
    out: list[tuple[str, Any]] = []
    for name, value in (view.spec.get("ic") or {}).items():
        out.append((f"ic.{name}", value))
    for name, value in (view.spec["pde"].get("forcing") or {}).items():
        out.append((f"forcing.{name}", value))
    for kind, entry in view.data_entries(DATA_KINDS):
        out.append((f"{kind}[{entry['tag']}]", entry["value"]))
        if "laplacian" in entry:
            out.append((f"{kind}[{entry['tag']}].laplacian", entry["laplacian"]))
    return out


def _components(name: str, value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, list):
        return [(f"{name}[{i}]", v) for i, v in enumerate(value)]
    return [(name, value)]


def spans(view: AgentView) -> dict[str, list[Field]]:
    """The small spans, one per way of reading an answer off the agent view (each the
    dictionary of one linear inverter).  Kept apart on purpose: one dictionary of every datum at
    every time approximates any smooth field by sheer size, which says nothing about leaks."""
    dim = view.dim
    background = [Field("1", _ones)] + [Field("xyz"[i], _coordinate(i)) for i in range(dim)]
    expressions = [c for name, value in visible_expressions(view) for c in _components(name, value)]
    initial = [Field(name, _at(view, value, view.t0)) for name, value in expressions if name.startswith("ic.")]
    forcing = [(name, value) for name, value in expressions if name.startswith("forcing.")]
    data = [(name, value) for name, value in expressions if not name.startswith(("ic.", "forcing."))]
    out: dict[str, list[Field]] = {}
    if initial:
        out["initial"] = initial + background[:1]
    out["forcing"] = [Field(f"{name}@t={t:g}", _at(view, value, t)) for name, value in forcing
                      for t in view.times(1)] + background
    if view.transient:
        coefficients = [Field(f"{name}.coefficient({key})", c) for name, value in forcing
                        for key, c in time_coefficients(value, dim)]
        out["time_coefficients"] = coefficients + initial + background[:1]
    printed = [v for _, v in forcing] + [v for n, v in expressions if n.startswith("ic.")]
    out["atoms"] = [Field(f"atom {text}", _at_time(atom, view.t_end))
                    for text, atom in atoms(printed, dim)][:MAX_FIELDS] + background
    out["boundary_data"] = [Field(f"{name}@t={view.t_end:g}", _at(view, value, view.t_end))
                            for name, value in data][:MAX_FIELDS] + background[:1]
    return out


def _at_time(f: Callable[[np.ndarray, float], np.ndarray], t: float) -> Callable[[np.ndarray], np.ndarray]:
    return lambda p: f(p, t)


def _ones(p: np.ndarray) -> np.ndarray:
    return np.ones(len(p))


def _coordinate(i: int) -> Callable[[np.ndarray], np.ndarray]:
    return lambda p: np.asarray(p[:, i], dtype=float)


def _at(view: AgentView, value: Any, t: float) -> Callable[[np.ndarray], np.ndarray]:
    return lambda p: view.evaluate(value, p, t)


# --------------------------------------------------------------------------- symbolic parts
def _parse(value: Any, dim: int) -> Any:
    """The sympy form of a visible scalar expression, or None when it is too large to take
    apart."""
    import sympy as sp

    from casekit.expr import ExpressionError, as_expr

    if not isinstance(value, (str, int, float)):
        return None
    try:
        e = as_expr(value, variables=[*("x", "y", "z")[:dim], "t"])
    except ExpressionError:  # beyond the parser's size limits: used as given only
        return None
    return e if sp.count_ops(e) <= MAX_OPS else None


def _lambdify(e: Any, dim: int) -> Callable[[np.ndarray, float], np.ndarray]:
    from casekit.expr import to_numpy

    f = to_numpy(e, dim)

    def values(p: np.ndarray, t: float = 0.0) -> np.ndarray:
        with np.errstate(all="ignore"):
            return f(p, t)

    return values


def separate(value: Any, dim: int) -> list[tuple[Any, Any]] | None:
    """``value`` as ``[(phi_k(t), c_k(x)), ...]`` with distinct time factors, or None when it is
    too large or not separable (a term that mixes t and x in one factor, as a travelling
    profile ``exp(-(x - t)**2)`` does)."""

    from casekit.expr import T
    from casekit.expr.size import estimate

    e = _parse(value, dim)
    if e is None or T not in e.free_symbols or estimate(e).too_large:
        return None
    groups = time_groups(e)
    return None if groups is None else list(groups.items())


def time_groups(e: Any, max_terms: int = MAX_TERMS) -> dict[Any, Any] | None:
    """A sympy expression of x and t (its expansion already bounded: ``casekit.expr.size``) as
    {time factor: spatial coefficient}, after expanding products, powers of exp and trigonometric
    sums; None when it has more than ``max_terms`` terms or a factor mixes t and x."""
    import sympy as sp

    from casekit.expr import T

    e = sp.expand(e.replace(lambda a: isinstance(a, sp.exp), lambda a: sp.exp(sp.expand(a.args[0]))),
                  power_exp=True, log=False)
    e = e.replace(lambda a: isinstance(a, (sp.sin, sp.cos)) and T in a.free_symbols and len(a.free_symbols) > 1,
                  lambda a: sp.expand_trig(a))
    e = sp.expand(e, power_exp=True, log=False)
    terms = sp.Add.make_args(e)
    if len(terms) > max_terms:
        return None
    groups: dict[Any, Any] = {}
    for term in terms:
        time, space = sp.Integer(1), sp.Integer(1)
        for factor in sp.Mul.make_args(term):
            free = factor.free_symbols
            if T in free and len(free) > 1:
                return None
            if T in free:
                time *= factor
            else:
                space *= factor
        groups[time] = groups.get(time, sp.Integer(0)) + space
    return groups


def time_coefficients(value: Any, dim: int) -> list[tuple[str, Callable[[np.ndarray], np.ndarray]]]:
    """(time factor as text, its spatial coefficient as a field) of a separable expression."""
    from casekit.expr import to_text

    parts = separate(value, dim)
    if not parts:
        return []
    return [(to_text(phi), _at_time(_lambdify(c, dim), 0.0)) for phi, c in parts if not c.is_number]


def atoms(values: list[Any], dim: int) -> list[tuple[str, Callable[[np.ndarray, float], np.ndarray]]]:
    """Every function application in the visible expressions (distinct, by text), as a
    function of points and time."""
    import sympy as sp

    from casekit.expr import T, to_text

    found: dict[str, Any] = {}
    for value in values:
        e = _parse(value, dim)
        if e is None:
            continue
        for a in e.atoms(sp.Function):
            if a.free_symbols - {T}:
                found.setdefault(to_text(a), a)
    return [(text, _lambdify(a, dim)) for text, a in sorted(found.items())]


def printed(view: AgentView) -> list[Any]:
    """The scalar expressions an agent reads solution shapes from: the forcing's and the initial
    data's (each component of a vector)."""
    return [v for name, value in visible_expressions(view) if name.startswith(("forcing.", "ic."))
            for _, v in _components(name, value)]


def terms(values: list[Any], dim: int) -> list[tuple[str, Callable[[np.ndarray, float], np.ndarray]]]:
    """The additive terms of the visible expressions expanded, numeric coefficients dropped
    (distinct, by text; at most :data:`MAX_TERMS` of each expression): the manufactured solution's
    own terms reappear in its forcing (``-Laplacian(sin(2x) * x) = 4 x sin(2x) - 4 cos(2x)``)."""
    return [(text, _lambdify(a, dim)) for text, a in term_exprs(values, dim)]


def term_exprs(values: list[Any], dim: int) -> list[tuple[str, Any]]:
    """:func:`terms` as sympy expressions (for inverters that differentiate them)."""
    import sympy as sp

    from casekit.expr import to_text
    from casekit.expr.size import TooLarge, expand

    found: dict[str, Any] = {}
    for value in values:
        e = _parse(value, dim)
        if e is None:
            continue
        try:
            expanded = expand(e)
        except TooLarge:  # used as given only
            continue
        for term in sp.Add.make_args(expanded)[:MAX_TERMS]:
            _, rest = term.as_coeff_Mul()
            if not rest.is_number:
                found.setdefault(to_text(rest), rest)
    return sorted(found.items())
