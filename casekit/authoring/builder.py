"""Turning a design point into a complete, valid case source.

A family's ``authoring`` defaults and the settings of each chosen axis level are merged into one
*recipe* (later levels override earlier ones; a value may be a function of the
:class:`BuildContext`, e.g. epsilon from a Peclet number and the domain size).  Recipe keys:

``params``        family parameter values
``solution``      ``{"kind": <catalogue entry>, "options": {...}}`` for the leading unknown;
                  ``pressure`` likewise for velocity/pressure families
``time``          ``{"t_end": ..., "factor": "decay"|"oscillate"|"grow"|"standing", "rate": ...}``:
                  a transient solution is a sum of modes, each its own spatial shape times its
                  own time function (``catalogue.time_modes``); families that may be steady
                  are transient only when ``time`` is given
``bc``            ``dirichlet`` | ``mixed`` (Neumann/traction on some parts) | ``robin``
``grid``          points across the longest side of the evaluation grid
``calibration``   private settings of the calibration solve
``output``        output field (default: the family's first)
``modes``         how many of the time modes a transient solution uses (default all three; at
                  least two: the drawn shape and the bubble)
``bubble``        modulation of the part that vanishes on the boundary (``catalogue.bubble``):
                  ``wave`` (default; ``linear`` for vector unknowns), ``linear`` or ``constant``

Keys only siblings' adapted and late draws set (``casekit.authoring.sibling.ADAPTED``, ``LATE``; absent,
nothing changes):

``periodic``      ``boundary``: every periodic pair the given boundary declares is periodic in the
                  solution (authored cases use the domain's first pair only); where no part is left
                  for a bubble to vanish on, its mode gets a periodic skewed product instead
``bubble_scale``  factor on the bubble (a larger share of the answer no boundary fit recovers)
``level_degree``  the largest total degree of the bubble's level set (its curved carriers first;
                  ``all``: every carrier, whatever the degree):
                  lower than ``casekit.domains.level_set.MAX_DEGREE`` keeps the nonlinear and
                  fourth-order forcings of many-sided outlines printable
``shape_scale``   factor on the parts that do not vanish on the boundary (the drawn shape and the
                  other time modes, a stream function's shape); with ``bubble_scale`` the same
                  factor, the whole solution is scaled and the bubble keeps its share
``mode_bubbles``  every time mode's shape, not only the bubble's mode, carries a bubble of its own
                  (no mode's shape is then nearly an eigenfunction of the Laplacian)
``steady_bubble`` the bubble's time mode is constant in time (no exponential in each term of a
                  nonlinear forcing's powers of it)
``support``       ``ball``: the part that vanishes on the boundary is a power of ``max(0, g)``, g positive
                  on a ball inside the domain (:func:`ball_factor`), instead of the outline's level set
``stream_bubble`` velocity/pressure families in 2-D: the stream function carries a bubble on every
                  outline (authored cases only up to ``catalogue.STREAM_BUBBLE_DEGREE``: the convective
                  term of Navier-Stokes); a linear family's forcing stays printable
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp

from casekit.authoring import catalogue as cat
from casekit.domains import Domain, resolve
from casekit.domains.level_set import FLAT, ZERO, EndCondition, boundary_level_set, box_level_set
from casekit.errors import CasekitError, UnknownName
from casekit.expr import COORDS, T, exact, parse, to_text
from casekit.families import FAMILIES, Family
from casekit.families.calculus import curl
from casekit.families.inflow import traction_inflow
from casekit.ids import public_id, salted_seed
from casekit.thresholds import DEFAULTS
from casekit.tracks import TRACKS


@dataclass
class BuildContext:
    family: Family
    domain: Domain
    rng: np.random.Generator
    params: dict[str, Any]

    @property
    def dim(self) -> int:
        return self.domain.dim

    @property
    def size(self) -> float:
        """The longest side of the domain's bounding box."""
        b = self.domain.bbox()
        return max(b[2 * i + 1] - b[2 * i] for i in range(self.dim))

    def unit(self, i: int) -> sp.Expr:
        """Coordinate i scaled to [0, 1] over the bounding box."""
        return cat.Context(self.dim, self.domain.bbox()).unit(i)

    def cells_across(self, two_d: int, three_d: int) -> int:
        return two_d if self.dim == 2 else three_d


def merge(*settings: Mapping[str, Any]) -> dict[str, Any]:
    """Deep merge: nested mappings merge, everything else is replaced by later values."""
    out: dict[str, Any] = {}
    for s in settings:
        for k, v in s.items():
            if isinstance(v, Mapping) and isinstance(out.get(k), dict):
                out[k] = merge(out[k], v)
            else:
                out[k] = copy.deepcopy(v) if not callable(v) else v
    return out


def _value(v: Any, ctx: BuildContext) -> Any:
    return v(ctx) if callable(v) else v


def design_levels(family: Family, given: Mapping[str, str]) -> dict[str, str]:
    """Complete design levels (first level of each axis by default), checking names."""
    axes = {a.name: a for a in family.axes}
    for name, level in given.items():
        if name not in axes:
            raise UnknownName(f"family {family.name!r} has no design axis {name!r}",
                              valid=", ".join(axes) or "(none)")
        if level not in axes[name].levels:
            raise UnknownName(f"axis {name!r} of family {family.name!r} has no level {level!r}",
                              valid=", ".join(axes[name].levels))
    return {a.name: given.get(a.name, next(iter(a.levels))) for a in family.axes}


def build_source(family_name: str, domain_name: str, levels: Mapping[str, str], seed: int,
                 case_id: str | None = None, salt: bytes | None = None,
                 targets: Sequence[str] = (), manufactured: bool = False) -> dict[str, Any]:
    """A complete case source dict (not yet validated) for one design point.  With a secret
    ``salt`` (``casekit.ids``) the random draws and the public id are keyed by it; ``targets``
    (kinds of ``casekit.targets``) adds one target value of each kind, and the case then lists
    only the tracks that compute them.  ``manufactured``: a manufactured solution even where a case
    gets a numerical reference (:func:`numerical_reference_needed`) -- for a solver's convergence
    study, which needs the exact solution; validation refuses such a source as a case."""
    family = FAMILIES.get(family_name)
    levels = design_levels(family, levels)
    domain = resolve(domain_name)
    if domain.dim not in family.dims:
        raise CasekitError(f"family {family.name!r} has no {domain.dim}-D cases; domain "
                           f"{domain_name!r} is {domain.dim}-D")
    recipe = merge(family.authoring, *(a.levels[levels[a.name]] for a in family.axes))
    rng = np.random.default_rng(salted_seed(salt, family.name, domain_name, sorted(levels.items()), seed))
    ctx = BuildContext(family, domain, rng, {})
    params = _params(family, recipe, ctx)
    ctx.params = params
    transient = family.transient and (not family.steady_allowed or "time" in recipe)
    time = _time(recipe, ctx) if transient else None
    mode = _value(recipe.get("bc", "dirichlet"), ctx)
    numerical = not manufactured and numerical_reference_needed(family, params, time is not None)
    if numerical:  # no manufactured solution: its forcing would print the answer (NUMERICAL_REACTION_DEGREE)
        boundary = assign_boundary(family, domain, mode, rng)
        solution = None
    elif family.traction_inflow_limit is None:
        # the boundary first: where values are given the bubble vanishes, where fluxes are, its slope too
        boundary = assign_boundary(family, domain, mode, rng)
        solution = _solution(family, recipe, ctx, time, boundary)
    else:  # which parts may carry a traction depends on the drawn flow: the bubble vanishes everywhere
        solution = _solution(family, recipe, ctx, time, None)
        lead = solution.get(family.unknowns[0].name)
        entering = {i.tag for i in traction_inflow(family.traction_inflow_limit, params,
                                                   lead if time is None else None, domain.geometry, domain.tags())}
        boundary = assign_boundary(family, domain, mode, rng, entering)
    output = recipe.get("output", family.outputs[0].name)
    grid = _grid(domain, _value(recipe.get("grid", 64 if domain.dim == 2 else 24), ctx))
    source: dict[str, Any] = {
        "id": case_id or make_id(family, domain_name, levels, seed, targets=bool(targets)),
        "family": family.name,
        "design": dict(levels),
        "domain": {"template": domain_name},
        "pde": {"params": params},
        "manufactured_solution": solution,
        "boundary": boundary,
        "eval_grid": grid,
        "output": {"field": output},
        "evaluation": dict(DEFAULTS),
        "calibration": _calibration(recipe, ctx, time),
        "tags": [f"domain:{domain_name}", *(f"{k}:{v}" for k, v in levels.items())],
        "tracks": [t for t, track in TRACKS.items() if track.supports(family.name, domain_name)],
    }
    if numerical:
        assert time is not None
        drawn = numerical_data(ctx, boundary, time)
        del source["manufactured_solution"]
        source["pde"]["forcing"] = drawn["forcing"]
        source["initial"] = drawn["initial"]
        source["boundary"] = drawn["boundary"]
        source["calibration"]["scheme"] = REFERENCE_SCHEME
        source["reference"] = numerical_levels(source["calibration"])
    if targets:
        source["targets"] = draw_targets(source, domain, targets, rng)
        kinds = set(targets)
        source["tracks"] = [t for t in source["tracks"] if kinds <= set(TRACKS.get(t).target_kinds)]
    if salt:
        source["public_id"] = public_id(source["id"], salt)
    if time is not None:
        source["pde"]["time"] = {"t0": time["t0"], "t_end": time["t_end"]}
    if not source["tracks"]:
        raise CasekitError(f"no registered track supports {family.name} on {domain_name}")
    return source


#: the time scheme of a parabolic case's reference levels (a family first order in time: heat,
#: convection-diffusion, Burgers, reaction-diffusion -- the paper gives reaction-diffusion a math
#: type of its own, but its time operator is parabolic: its no-exact references stepped with backward
#: Euler at a quarter of the record's step and took over 600 s per level) and of its calibration when
#: the anchor's oracle steps with backward Euler: second order and damping (Crank-Nicolson keeps the rough,
#: high-frequency part of initial data alive step after step -- heat_no_exact_high_freq_initial's
#: Crank-Nicolson reference gave e_base 1.4 -- and backward Euler at the record's step misses a
#: decaying mode by tens of percent: heat_no_exact's oracle, dt 0.02, e_base 0.37)
REFERENCE_SCHEME = "bdf2"

#: the calibration refinements a transient numerical reference leaves room for in time: a build
#: refines a calibration too coarse for the case's gates (casekit.build.pipeline.refine halves the
#: step) only while its reference level L1 stays finer, so L1 steps at most the calibration's step
#: over 2^(ROOM + 1).  With L1 at half the step no refinement was possible: heat_no_exact, BDF2 at the
#: record's step 0.02, has e_base 0.10 against a limit of 0.05 (time error: one halving takes it to
#: about 0.025), and four no-exact heat records fell 1.2-3.5 x short of the span margin.  Two
#: halvings cost the reference four times the steps of one (2-D heat: seconds; reaction-diffusion:
#: about 4 minutes a level); the space has room already (a P2 reference level against a P1
#: calibration is finer at the same cells across).  Parabolic families only: a wave's levels keep L1 at
#: half the step (its Newmark calibration was not short of room, and at room 2 one annulus reference
#: level, wave_annulus_source_sin's L2, ran past 9 CPU minutes)
TIME_ROOM = 2

#: the lowest degree of a polynomial reaction whose transient manufactured cases are answered without
#: solving: the forcing's group of a mode's time factor to the n-th power is c_n times the mode's shape
#: to the n-th power, and its n-th root is the shape at every point (the reaction_powers inverter read
#: 20 PDEAgent-Bench reaction-diffusion siblings within 1e-4).  Any finite sum of modes has such a
#: group -- the top power of its time factors -- so these cases are drawn with a numerical reference
NUMERICAL_REACTION_DEGREE = 2


def numerical_reference_needed(family: Family, params: Mapping[str, Any], transient: bool) -> bool:
    """Whether a case of ``family`` with these parameters is drawn with a numerical reference
    (:data:`NUMERICAL_REACTION_DEGREE`): transient, with a polynomial reaction of degree two or more."""
    from casekit.expr import param_symbol

    reaction = next((p for p in family.params if p.kind == "reaction"), None)
    if not transient or reaction is None or params.get(reaction.name) is None:
        return False
    u = param_symbol(family.unknowns[0].name)
    r = parse(str(params[reaction.name]), params=tuple(x.name for x in family.unknowns))
    try:
        return sp.Poly(r, u).degree() >= NUMERICAL_REACTION_DEGREE
    except sp.PolynomialError:
        return True  # a reaction that is no polynomial in u is nonlinear too


def numerical_data(ctx: BuildContext, boundary: Mapping[str, Any], time: Mapping[str, Any]) -> dict[str, Any]:
    """Forcing, initial data and boundary values of a case with a numerical reference: a source of two
    Gaussian bumps inside the domain pulsing in time, initial data a bump on a ball inside the domain
    (:func:`ball_factor`, zero near every part), and zero boundary data -- nothing of the answer is
    printed, only a solve gives it."""
    c = cat.Context(ctx.dim, ctx.domain.bbox(), (), ctx.rng,
                    depth=lambda p: np.where(ctx.domain.inside(p), ctx.domain.geometry.distance(p), -1.0))
    span = float(time["t_end"]) - float(time["t0"])
    bumps = []
    for _ in range(2):
        centre = c.interior_point(ctx.rng)
        width = cat.num(ctx.rng.uniform(0.08, 0.16) * ctx.size, 2)
        r2 = sp.Add(*((x - sp.Rational(repr(v))) ** 2 for x, v in zip(COORDS, centre, strict=False)))
        bumps.append(cat.num(ctx.rng.uniform(2.0, 5.0), 2) * sp.exp(-r2 / width**2))
    rate = cat.num(ctx.rng.uniform(1.5, 3.0) * math.pi / span, 3)
    pulse = 1 + cat.num(ctx.rng.uniform(0.3, 0.6), 2) * sp.sin(rate * T)
    initial = cat.num(ctx.rng.uniform(0.3, 0.8), 2) * ball_factor(ctx)
    values: dict[str, Any] = {}
    for tag, b in boundary.items():
        kind = _kind(b)
        values[tag] = b if kind == "periodic" else {**({} if isinstance(b, str) else b), "kind": kind, "value": "0"}
    lead = ctx.family.unknowns[0].name
    return {"forcing": {"f": to_text(pulse * sp.Add(*bumps))}, "initial": {lead: to_text(initial)},
            "boundary": values}


def numerical_levels(calibration: Mapping[str, Any]) -> dict[str, Any]:
    """The two refinement levels of a drawn case's numerical reference, both stepping with
    REFERENCE_SCHEME, L1 at the calibration's step over 2^(TIME_ROOM + 1) and L2 at half that.  In
    space a P1 calibration's L1 is P2 on its own cells and L2 P2 on a quarter more (the degree does the
    refining: the star records' calibrations run 297 cells across, and P2 at twice that is 1.4 million
    unknowns a step); a P2 calibration's levels are P2 on half as many cells again and on twice."""
    from casekit.solvers.settings import SolveSettings

    n = int(calibration.get("cells_across") or SolveSettings().cells_across)
    degree = int(calibration.get("degree") or 1)
    cells = (n, math.ceil(1.25 * n)) if degree == 1 else (math.ceil(1.5 * n), 2 * n)
    dt = float(calibration["dt"]) / 2 ** (TIME_ROOM + 1)
    return {"levels": [{"cells_across": c, "degree": max(2, degree), "dt": float(f"{step:.6g}"),
                        "scheme": REFERENCE_SCHEME} for c, step in zip(cells, (dt, dt / 2), strict=True)]}


def draw_targets(source: dict[str, Any], domain: Domain, kinds: Sequence[str], rng: np.random.Generator
                 ) -> list[dict[str, Any]]:
    from casekit.targets import TARGET_KINDS

    if len(set(kinds)) != len(kinds):
        raise CasekitError(f"target kinds are repeated: {', '.join(kinds)}", valid=", ".join(TARGET_KINDS.names()))
    return [TARGET_KINDS.get(k).draw(source, domain, rng) for k in kinds]


def _calibration(recipe: dict[str, Any], ctx: BuildContext, time: dict[str, Any] | None) -> dict[str, Any]:
    """Private solve settings; ``steps`` becomes ``dt`` for transient cases."""
    out = {k: _value(v, ctx) for k, v in recipe.get("calibration", {}).items()}
    steps = out.pop("steps", None)
    if time is None:
        out.pop("scheme", None)
    elif steps:
        out["dt"] = float(f"{(time['t_end'] - time['t0']) / steps:.6g}")
    return out


def make_id(family: Family, domain: str, levels: Mapping[str, str], seed: int, targets: bool = False) -> str:
    """<family>_<domain>_<levels>[_targets]_s<seed>."""
    parts = [family.name, domain, *(v for v in levels.values()), *(["targets"] if targets else []), f"s{seed}"]
    return "_".join(p.replace("-", "_") for p in parts)[:120]


def _params(family: Family, recipe: dict[str, Any], ctx: BuildContext) -> dict[str, Any]:
    given = recipe.get("params", {})
    out: dict[str, Any] = {}
    for p in family.params:
        v = _value(given.get(p.name, p.default), ctx)
        if p.kind == "vector":
            v = [float(c) for c in (list(v) + [0.0] * 3)[: ctx.dim]]
        elif isinstance(v, sp.Basic):
            v = to_text(v)
        out[p.name] = v
    return out


def _time(recipe: dict[str, Any], ctx: BuildContext) -> dict[str, Any]:
    t = recipe.get("time", {})
    return {"t0": 0.0, "t_end": float(_value(t.get("t_end", 1.0), ctx)),
            "factor": t.get("factor", "decay"), "rate": float(_value(t.get("rate", 1.0), ctx))}


def _periodic_pairs(domain: Domain, family: Family) -> list:
    """The periodic pairs authored cases use: the domain's first pair only, so the other sides
    keep a condition that makes steady problems well posed."""
    if "periodic" not in family.bc_kinds:
        return []
    return list(domain.geometry.periodic[:1])


def _periodic_axes(domain: Domain, family: Family) -> tuple[int, ...]:
    return tuple(int(np.argmax(np.abs(p.translation))) for p in _periodic_pairs(domain, family))


def _dirichlet_tags(boundary: Mapping[str, Any]) -> set[str]:
    return {t for t, b in boundary.items() if _kind(b) == "dirichlet"}


def _kind(b: Any) -> str:
    return b if isinstance(b, str) else b["kind"]


def _sympy_params(family: Family, params: Mapping[str, Any]) -> dict[str, Any]:
    """The builder's parameter values as the families' formulas take them (exact numbers)."""
    out: dict[str, Any] = {}
    for p in family.params:
        v = params.get(p.name)
        if isinstance(v, str):  # a coefficient in x, y, z, t or a reaction term in the unknowns
            out[p.name] = parse(v, params=tuple(u.name for u in family.unknowns))
        elif isinstance(v, list):
            out[p.name] = tuple(exact(sp.Float(c)) for c in v)
        elif v is not None:
            out[p.name] = exact(sp.Float(v)) if isinstance(v, float) else sp.Integer(v)
    return out


def _box_bubble_level_set(family: Family, ctx: BuildContext, boundary: Mapping[str, Any]) -> sp.Expr | None:
    """On a box, for a scalar unknown and an unmodulated bubble: the per-axis level set
    (``casekit.domains.level_set.box_level_set``), zero where values are given, of zero slope where
    Neumann fluxes are, of zero Robin combination where Robin data are (constant flux coefficient),
    confirmed invisible in every datum through the family's own flux; None where that does not
    apply or is not confirmed."""
    lead = family.unknowns[0]
    if lead.vector or len(family.unknowns) > 1 or family.flux is None:
        return None
    params = _sympy_params(family, ctx.params)
    kappa = sp.sympify(family.flux_coefficient(params)) if family.flux_coefficient is not None else None
    conditions: dict[str, list[tuple[EndCondition, ...]]] = {}
    for tag, b in boundary.items():
        kind = _kind(b)
        if kind == "dirichlet":
            conditions[tag] = [(ZERO,)]
        elif kind == "neumann":
            conditions[tag] = [(FLAT,), (ZERO, FLAT)]
        elif kind == "robin":
            conditions[tag] = [(ZERO, FLAT)]
            if kappa is not None and not kappa.free_symbols:
                conditions[tag].append((EndCondition(exact(sp.Float(b["alpha"])), kappa),))
    phi = box_level_set(ctx.domain, conditions)
    if phi is None:
        return None
    for tag, b in boundary.items():
        kind = _kind(b)
        if kind == "periodic":
            continue
        carrier = ctx.domain.geometry.carriers(tag)[0]
        datum = phi if kind == "dirichlet" else family.flux({lead.name: phi}, params, carrier.normal_expr(), ctx.dim)
        if kind == "robin":
            datum = datum + exact(sp.Float(b["alpha"])) * phi
        if sp.expand(sp.sympify(datum).subs(carrier.projection(), simultaneous=True)) != 0:
            return None
    return phi


def draw_solution(family: Family, domain: Domain, recipe: dict[str, Any], rng: np.random.Generator,
                  params: dict[str, Any], time: dict[str, Any] | None, boundary: Mapping[str, Any] | None
                  ) -> dict[str, Any]:
    """A manufactured solution for a problem that is already set (parameters, time window with
    the recipe's ``factor`` and ``rate``, boundary kinds per part): what a new case draws after
    its parameters and boundary, and what a sibling of an existing case draws instead of its
    solution (``casekit.authoring.sibling``)."""
    return _solution(family, recipe, BuildContext(family, domain, rng, params), time, boundary)


def _solution(family: Family, recipe: dict[str, Any], ctx: BuildContext,
              time: dict[str, Any] | None, boundary: Mapping[str, Any] | None) -> dict[str, Any]:
    """The manufactured solution.  Its bubble vanishes on every non-periodic part, and on the parts
    with flux data (Neumann, Robin) its normal derivative too, so that no fit
    to the values *or the fluxes* given there recovers it (a fit of the forcing's terms to Dirichlet
    values and Neumann fluxes together read 16 of 19 mixed cases whose bubble only vanished).
    ``boundary`` None: the parts are not assigned yet (Navier-Stokes), simple zeros everywhere.
    An unmodulated bubble of a scalar unknown on a box needs less: a zero slope where Neumann
    data are (``_box_bubble_level_set``), which keeps its degree (and the nonlinear families'
    forcing) small enough for 3-D."""
    spec = recipe.get("solution", {"kind": "trig"})
    pairs = _periodic_pairs(ctx.domain, family)
    if recipe.get("periodic") == "boundary" and boundary is not None:  # a sibling's: the pairs it declares
        pairs = [p for p in ctx.domain.geometry.periodic
                 if _kind(boundary.get(p.source, "")) == "periodic" == _kind(boundary.get(p.target, ""))]
    periodic = {t for p in pairs for t in (p.source, p.target)}
    axes = tuple(int(np.argmax(np.abs(p.translation))) for p in pairs)
    lead = family.unknowns[0]
    bubble = recipe.get("bubble", "linear" if lead.vector else "wave")
    phi = ball_factor(ctx) if recipe.get("support") == "ball" else None
    if phi is None and boundary is not None and bubble == "constant":
        phi = _box_bubble_level_set(family, ctx, boundary)
    if phi is None:
        dirichlet = set(ctx.domain.tags()) if boundary is None else _dirichlet_tags(boundary)
        flux = set(ctx.domain.tags()) - dirichlet - periodic
        cap = recipe.get("level_degree")
        if cap == "paired":
            phi = paired_level_set(ctx.domain, periodic, flux)
        else:
            phi = boundary_level_set(ctx.domain, skip=periodic, flat=flux) if cap is None else \
                capped_level_set(ctx.domain, periodic, flux, UNCAPPED if cap == "all" else int(cap))
    c = cat.Context(ctx.dim, ctx.domain.bbox(), axes, ctx.rng,
                    depth=lambda p: np.where(ctx.domain.inside(p), ctx.domain.geometry.distance(p), -1.0),
                    level_set=phi)
    scale = recipe.get("bubble_scale")
    shape_scale = recipe.get("shape_scale")

    def shaped(e: sp.Expr) -> sp.Expr:
        """A part that does not vanish on the boundary, scaled when the recipe says."""
        return e if shape_scale is None else cat.num(float(shape_scale), 2) * e
    unbounded = recipe.get("periodic") == "boundary" and phi == 1  # no part left for a bubble to vanish on

    def part(modulation: str) -> sp.Expr:
        """The bubble (``catalogue.bubble``), scaled when the recipe says; on a domain periodic in
        every direction a periodic skewed product instead (a constant "bubble" is a field the
        initial data and a constant span)."""
        if unbounded:
            return num_weight(ctx.rng, 0.6, 1.2) * cat.skewed_product(c, ctx.rng)
        out = cat.bubble(c, ctx.rng, modulation)
        return out if scale is None else cat.num(float(scale), 2) * out
    options = {k: _value(v, ctx) for k, v in spec.get("options", {}).items()}
    if spec["kind"] == "trig" and not lead.vector:  # the bubble breaks eigen-ness (catalogue.trig)
        options = {"extra": False, **options}
    out: dict[str, Any] = {}
    # every solution carries a part that vanishes on the boundary (catalogue.bubble): no fit to the
    # boundary data recovers it
    if lead.vector and len(family.unknowns) > 1 and recipe.get("stream_bubble"):  # velocity and pressure
        u = _bubbled_divergence_free(spec["kind"], c, part, shaped, **options)
        out[lead.name] = [to_text(ui) for ui in u]
        pspec = recipe.get("pressure", {"kind": "trig"})
        out[family.unknowns[1].name] = to_text(cat.scalar(pspec["kind"], c, **pspec.get("options", {})))
    elif lead.vector and len(family.unknowns) > 1:  # velocity and pressure
        u = cat.divergence_free(spec["kind"], c, **options)
        out[lead.name] = [to_text(ui) for ui in u]
        pspec = recipe.get("pressure", {"kind": "trig"})
        out[family.unknowns[1].name] = to_text(cat.scalar(pspec["kind"], c, **pspec.get("options", {})))
    elif lead.vector:
        out[lead.name] = [to_text(shaped(ui) + part(bubble)) for ui in cat.vector(spec["kind"], c, **options)]
    elif time is not None:  # modes of their own shapes and time functions (catalogue.time_modes)
        # the first mode has the drawn character; the bubble is a mode of its own, on the time
        # function largest at t_end (so that it matters in the answer); the rest skewed sine products
        # (a bubble added to a shape multiplied the nonlinear terms' products past the size limits)
        modes = cat.time_modes(time["factor"], time["rate"])[: recipe.get("modes", cat.MODES)]
        at_end = [abs(float(m.subs(T, time["t_end"]))) for m in modes[1:]]
        carrier = 1 + int(np.argmax(at_end))
        if recipe.get("steady_bubble"):  # the bubble's mode constant in time
            modes = tuple(sp.Integer(1) if k == carrier else m for k, m in enumerate(modes))
        shapes = [shaped(cat.scalar(spec["kind"], c, **options)),
                  *(part(bubble) if k == carrier
                    else shaped(num_weight(ctx.rng, 0.4, 0.9) * cat.skewed_product(c, ctx.rng))
                    for k in range(1, len(modes)))]
        if recipe.get("mode_bubbles"):  # every mode's shape off the Laplacian's eigenfunctions
            shapes = [s if k == carrier else s + part("wave") for k, s in enumerate(shapes)]
        out[lead.name] = to_text(sp.Add(*(m * phi for m, phi in zip(shapes, modes, strict=True))))
    else:
        out[lead.name] = to_text(shaped(cat.scalar(spec["kind"], c, **options)) + part(bubble))
    return out


#: the support ball's radius, a share of its centre's distance to the boundary (less the clearance)
BALL_SHARE = 0.85


def ball_factor(ctx: BuildContext) -> sp.Expr:
    """``max(0, g)**k`` (``casekit.derive_support``): g positive on a ball inside the domain, centred
    at the random candidate nearest the origin among the deepest fifth (rounded to a hundredth of the
    domain's size), its radius :data:`BALL_SHARE` of the centre's distance to the boundary less the
    clearance; k one above the family's spatial order, so that the forcing is continuous where the
    factor starts.  A part that vanishes on the boundary and prints the same on any outline (a
    bubble of the outline's level sets does not on 12 to 48 carriers).  Near the origin, because the
    forcing multiplies the factor's powers out in x, y, z: about a centre c the coefficients grow
    like (|c| / radius)^(2 k), and a dumbbell lobe's ball cancelled to 1e-5 in double precision."""
    from casekit import derive_support as support

    geometry = ctx.domain.geometry
    box = ctx.domain.bbox()
    pts = np.column_stack([box[2 * i] + (box[2 * i + 1] - box[2 * i]) * ctx.rng.random(4000) for i in range(ctx.dim)])
    depth = np.where(ctx.domain.inside(pts), geometry.distance(pts), -1.0)
    deep = np.flatnonzero(depth >= 0.8 * depth.max())
    gap = support.CLEARANCE * geometry.diameter()
    step = 10.0 ** math.floor(math.log10(ctx.size / 20))
    nearest = deep[int(np.argmin(np.linalg.norm(pts[deep], axis=1)))]
    centre = [float(f"{round(v / step) * step:.10g}") + 0.0 for v in pts[nearest]]
    room = float(geometry.distance(np.asarray([centre + [0.0] * (3 - ctx.dim)]))[0]) - gap
    scale = 10.0 ** (math.floor(math.log10(BALL_SHARE * room)) - 1)
    radius = math.floor(BALL_SHARE * room / scale) * scale  # two significant digits, rounded down
    g = 1 - sp.Add(*((x - sp.Rational(repr(c))) ** 2 for x, c in zip(COORDS, centre, strict=False))) \
        / sp.Rational(repr(float(f"{radius:.2g}"))) ** 2
    factor = sp.Max(0, sp.expand(g))
    support.check_inside(factor, ctx.domain)
    return factor ** (ctx.family.spatial_order + 1)


def _bubbled_divergence_free(kind: str, c: cat.Context, part: Any, shaped: Any = lambda e: e, **options: Any
                             ) -> tuple[sp.Expr, ...]:
    """A divergence-free velocity whose stream function (2-D) or vector potential (3-D) carries a
    bubble on any outline: ``level_set * bubble`` and its gradient vanish on the boundary, so its
    curl does too (``catalogue.divergence_free`` adds it in 2-D up to ``STREAM_BUBBLE_DEGREE`` only,
    and not in 3-D: without it the forcing's terms, fitted to the boundary data, give the velocity)."""
    phi = c.level_set
    if c.dim == 2:
        psi = shaped(cat.scalar(kind, c, **({"extra": False} if kind == "trig" else {}), **options)) + \
            phi * part("constant")
        return (sp.diff(psi, COORDS[1]), -sp.diff(psi, COORDS[0]))
    a = [shaped(cat.scalar(kind, c, **({"skew": False} if kind == "trig" else {}), **options)) for _ in range(3)]
    a[0] += phi * part("constant")
    return curl(tuple(a))


#: the degree ``level_degree: "all"`` stands for: above any outline's, so every carrier is kept
UNCAPPED = 1 << 16


def _carrier_factors(domain: Domain, skip: set[str], flat: set[str]) -> dict[sp.Expr, tuple[sp.Expr, int]]:
    """Each boundary carrier's level-set factor (outside ``skip``), once up to sign, with its power:
    2 on a ``flat`` (flux) part, else 1 -- what the capped and paired level sets multiply."""
    from casekit.domains import level_set as ls

    factors: dict[sp.Expr, tuple[sp.Expr, int]] = {}
    for tag in domain.geometry.tags():
        if tag in skip:
            continue
        for carrier in domain.geometry.carriers(tag):
            f = ls._clean(ls._rational_line(carrier) or carrier.level_set())
            key = next((k for k in (sp.expand(f), sp.expand(-f)) if k in factors), sp.expand(f))
            power = 2 if tag in flat else 1
            factors[key] = (factors[key][0], max(power, factors[key][1])) if key in factors else (f, power)
    return factors


def capped_level_set(domain: Domain, skip: set[str], flat: set[str], max_degree: int) -> sp.Expr:
    """``casekit.domains.level_set.boundary_level_set`` of at most ``max_degree`` (curved carriers
    first, then lines in boundary order): it vanishes on part of the boundary only when the outline
    has more carriers than that, but its derivatives in a nonlinear or fourth-order forcing stay
    printable."""
    from casekit.domains import level_set as ls

    factors = _carrier_factors(domain, skip, flat)
    kept: list[tuple[sp.Expr, int]] = []
    total = 0
    for f, k in sorted(factors.values(), key=lambda fk: -fk[1] * ls.degree(fk[0], domain.dim)):
        if total + k * ls.degree(f, domain.dim) <= max_degree:
            kept.append((f, k))
            total += k * ls.degree(f, domain.dim)
    if not kept:
        return sp.Integer(1)
    return ls._scaled(domain, sp.Mul(*(f**k for f, k in kept)))


def paired_level_set(domain: Domain, skip: set[str], flat: set[str]) -> sp.Expr:
    """The level set of *every* carrier (``capped_level_set`` uncapped), with the factors that
    differ only by their constant -- parallel lines, concentric circles -- multiplied in pairs as
    ``(g + m)**2 - h**2`` (``(g + c1) (g + c2)``, m their mean, h half their difference): the same
    function, spelled with half the coordinates.  Derived Dirichlet data on a part of many
    carriers (a gear's or a star's one outline) are the solution composed with a warp whose
    level set is the product over the part (800 to 1400 characters), once per coordinate the
    solution spells: the product of a centrally symmetric outline's carriers (an even star, a
    gear's opposite flanks and its two circles) then prints in half the text."""
    from casekit.domains import level_set as ls

    factors = _carrier_factors(domain, skip, flat)
    if not factors:
        return sp.Integer(1)
    groups: dict[tuple, list[tuple[sp.Expr, sp.Expr]]] = {}  # the factor's varying part -> (it, constant)
    kept: list[sp.Expr] = []
    for f, k in factors.values():
        if k != 1:
            kept.append(f**k)
            continue
        g, c = _varying_part(sp.expand(f), domain.dim)
        if g is None:
            kept.append(f)
            continue
        groups.setdefault(_rounded_key(g), []).append((g, c))
    for members in groups.values():
        while len(members) >= 2:
            (g, c1), (_, c2) = members.pop(0), members.pop(0)
            m, h = ls._clean(sp.Float((c1 + c2) / 2)), ls._clean(sp.Float((c1 - c2) / 2))
            kept.append((g + m) ** 2 - h**2)
        kept += [g + c for g, c in members]
    return ls._scaled(domain, sp.Mul(*kept))


def _varying_part(f: sp.Expr, dim: int) -> tuple[sp.Expr | None, float]:
    """``f`` as ``g + c`` with g its non-constant part scaled to a leading coefficient of 1 (and c
    scaled alike); (None, 0) when that is not a polynomial with a nonzero leading coefficient."""
    try:
        poly = sp.Poly(f, *COORDS[:dim])
    except sp.PolynomialError:
        return None, 0.0
    lead = float(poly.coeffs()[0])
    if lead == 0.0 or poly.total_degree() < 1:
        return None, 0.0
    const = float(poly.coeff_monomial(1))
    g = sp.expand((f - poly.coeff_monomial(1)) / sp.nsimplify(lead) if abs(lead - round(lead)) < 1e-12
                  else (f - poly.coeff_monomial(1)) / lead)
    return g, const / lead


def _rounded_key(g: sp.Expr) -> tuple:
    """A key equal for varying parts equal up to round-off (opposite flanks of a gear)."""
    poly = sp.Poly(g, *sorted(g.free_symbols, key=str))
    terms = ((m, round(float(c), 9)) for m, c in zip(poly.monoms(), poly.coeffs(), strict=True))
    return (*terms, tuple(sorted(map(str, g.free_symbols))))


def num_weight(rng: np.random.Generator, lo: float, hi: float) -> sp.Expr:
    return cat.num(rng.uniform(lo, hi), 2)


def assign_boundary(family: Family, domain: Domain, mode: str, rng: np.random.Generator,
                    no_traction: set[str] | frozenset[str] = frozenset()) -> dict[str, Any]:
    """Boundary kinds per tag for a bc mode; every tag gets exactly one condition, and none of
    ``no_traction`` (parts where the flow enters too fast, ``casekit.families.inflow``) a flux one."""
    tags = domain.tags()
    out: dict[str, Any] = {}
    periodic = [t for p in _periodic_pairs(domain, family) for t in (p.source, p.target)]
    for t in periodic:
        out[t] = "periodic"
    rest = [t for t in tags if t not in out]
    for t in rest:
        out[t] = "dirichlet"
    if mode == "dirichlet":
        return {t: out[t] for t in tags}
    kind = {"mixed": "neumann", "robin": "robin"}.get(mode)
    if kind is None:
        raise CasekitError(f"unknown boundary mode {mode!r}", valid="dirichlet, mixed, robin")
    if kind not in family.bc_kinds:
        raise CasekitError(f"family {family.name!r} has no {kind} conditions for bc mode {mode!r}",
                           valid=", ".join(family.bc_kinds))
    candidates = [t for t in rest if len(domain.geometry.carriers(t)) == 1
                  and not (kind == "neumann" and t in no_traction)]
    keep_dirichlet = kind == "neumann" or (family.needs_dirichlet and kind != "robin")
    if keep_dirichlet and len(rest) < 2:
        raise CasekitError(f"bc mode {mode!r} needs a domain with at least two non-periodic boundary "
                           f"parts; {domain.name!r} has {len(rest)}")
    if not candidates:
        why = " where the drawn flow leaves (inflow through a traction part is not fair at this Reynolds number)" \
            if no_traction else ""
        raise CasekitError(f"bc mode {mode!r} needs a boundary part with one exact normal{why}; "
                           f"{domain.name!r} has none (try another --seed)")
    n = max(1, len(candidates) // 2)
    if keep_dirichlet and n >= len(rest):
        n = len(rest) - 1
    chosen = sorted(rng.choice(len(candidates), size=n, replace=False).tolist())
    for i in chosen:
        t = candidates[i]
        out[t] = {"kind": "robin", "alpha": float(cat.num(rng.uniform(1.0, 10.0), 2))} \
            if kind == "robin" else "neumann"
    return {t: out[t] for t in tags}


def _grid(domain: Domain, n: int) -> dict[str, Any]:
    b = domain.bbox()
    widths = [b[2 * i + 1] - b[2 * i] for i in range(domain.dim)]
    longest = max(widths)
    counts = [max(8, round(n * w / longest)) for w in widths]
    out = {"nx": counts[0], "ny": counts[1]}
    if domain.dim == 3:
        out["nz"] = counts[2]
    return out

