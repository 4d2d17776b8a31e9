"""Siblings of a case: the same problem with a new manufactured solution.

A record whose manufactured solution can be read from what the agent sees (a multiple of the
forcing, a separable transient, a peak read off the forcing, ...) is not released as it is.  Its
sibling keeps everything that defines the problem -- family, domain and its parameters, PDE
parameters, boundary kinds per part (Robin coefficients included), time window and step, grid,
output, solve settings -- and draws a new manufactured solution with the builder (a part that
vanishes on the boundary, several time modes of different shapes and rates), with a seed derived
from the record's id, of the record's own character where the family draws that character
(smooth, polynomial, peak, front or layer, oscillatory).  Forcing, boundary and initial data are
then derived from it like those of any manufactured case.  A record of a transient polynomial
reaction gets a numerical sibling instead (every manufactured one is answered from its forcing:
``casekit.authoring.builder.NUMERICAL_REACTION_DEGREE``): its problem with a drawn source and a
numerical reference.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Mapping
from typing import Any

import sympy as sp

from casekit.authoring.builder import (
    REFERENCE_SCHEME,
    BuildContext,
    draw_solution,
    merge,
    numerical_data,
    numerical_levels,
    numerical_reference_needed,
)
from casekit.domains import resolve
from casekit.errors import CasekitError
from casekit.expr import COORDS, parse
from casekit.families import FAMILIES, Family
from casekit.ids import salted_seed
from casekit.thresholds import DEFAULTS
from casekit.validate.span import SPAN_GAP_MIN, SPAN_MARGIN

#: the draws of the first recipe (the family's defaults and the record's character): siblings
#: released from them stay what they are, so these draws never change
PLAIN_ATTEMPTS = 6

#: adapted draws, after the plain ones: the recipe overlaid with one of these, in turn (draw
#: ``PLAIN_ATTEMPTS + k`` takes ``ADAPTED[k % len(ADAPTED)]``), each answering a way the plain
#: recipe failed on the PDEAgent-Bench records (``casekit.authoring.builder`` documents the keys):
#:
#: * every periodic pair the record declares is periodic in the solution (the plain recipe makes
#:   the domain's first pair periodic only: a record periodic in y got a solution that is not, and
#:   on a fully periodic square the bubble was a constant the initial data and 1 spanned);
#: * an unmodulated bubble three times as large: on outlines of many carriers (multi-hole, star,
#:   gear, dumbbell) the bubble was a small share of the answer, and a fit of the forcing's terms or
#:   its atom pairs to the boundary data came within a few per cent;
#: * a bubble in every stream function (2-D polygon holes, L-shape, T-junction) and vector potential
#:   (3-D): Stokes velocities without one were recovered by the forcing's terms;
#: * an unmodulated bubble on a level set of degree 6 or 4 (``level_degree``: curved carriers first,
#:   so the circles of holes and gears): Burgers' convective term, the biharmonic boundary
#:   Laplacians and the cubic reactions of a degree-10 bubble on holed and toothed outlines were too
#:   large to print (a wave-modulated bubble, with a variable diffusivity, on the unit square too);
#: * more and faster spatial modes (three time modes, 2-3 or 3-4 half-waves across the box): with
#:   little diffusion over a short window each mode's time coefficient in the forcing is nearly its
#:   shape, and the modes spanned the answer (a linear reaction); diffusion of faster modes is seen.
ADAPTED: tuple[dict[str, Any], ...] = (
    {"bubble": "constant", "bubble_scale": 3.0, "stream_bubble": True},
    {"bubble": "constant", "bubble_scale": 3.0, "stream_bubble": True, "level_degree": 6},
    {"bubble": "constant", "bubble_scale": 2.0, "stream_bubble": True, "modes": 3, "faster": (2, 3)},
    {"bubble_scale": 4.0, "stream_bubble": True},
    {"bubble": "constant", "bubble_scale": 3.0, "stream_bubble": True, "level_degree": 4},
    {"bubble": "constant", "stream_bubble": True, "modes": 3, "faster": (3, 4)},
)

#: the draws of the plain and adapted recipes: siblings released from them stay what they are, so
#: these draws never change either
ADAPTED_ATTEMPTS = PLAIN_ATTEMPTS + 2 * len(ADAPTED)

#: late draws, after the adapted ones: draw ``ADAPTED_ATTEMPTS + k`` takes ``LATE[k]`` (once each).
#: Each answers a way every earlier draw failed on the PDEAgent-Bench records left without a
#: sibling (``casekit.authoring.builder`` documents the keys).  Append only: an entry changed or
#: moved would change the siblings released from it.
#:
#: * a bubble on *every* carrier (``level_degree: all``), unmodulated: on outlines above the level
#:   set's degree cap (a gear, a star, four or five holes) the capped bubble does not vanish on
#:   every part, and with its monomials among the forcing's terms a fit to the boundary data read
#:   it back ('forcing_terms' within 1e-2 to 1e-15 in every earlier draw); a linear family's
#:   forcing of the full product stays printable;
#: * the whole solution a tenth as large (bubble and shapes alike, so the bubble's share is kept):
#:   a logistic reaction's square of a bubble on many parallel lines (T-junction, dumbbell bridge),
#:   multiplied out, cancels to some 1e-7 of the forcing in double precision in every earlier draw;
#:   the square's share of the forcing falls with the amplitude, and with it the cancellation
#:   (u about 0.1 to 0.3: the reaction's quadratic term is still a tenth or more of its linear one);
#: * a bubble in every time mode (``mode_bubbles``): a wave's skewed sine modes are nearly
#:   eigenfunctions of the Laplacian, so the forcing's coefficient of each mode's time function
#:   printed its shape, and with the initial data and velocity they spanned the answer (the
#:   'time_coefficients' span within 1e-2 in every earlier draw); a bubble makes every mode's
#:   coefficient differ from its shape;
#: * an oscillatory shape (``shape``: five or six half-waves across the box, whatever the record's
#:   character) and a bubble three times as large: a dumbbell's lobe data are the solution composed
#:   with a map that is the identity on the circle, so near a lobe the nearest part's datum is
#:   nearly the solution ('dirichlet_nearest' within 2-4 per cent in every earlier draw of the
#:   biharmonic dumbbells); a faster shape differs more between a point and its image;
#: * two modes, the bubble's constant in time (``steady_bubble``) and the other a quadratic
#:   polynomial (``shape``): the cubic reaction of a bubble on an annulus' two circles printed 4000
#:   to 5100 tokens, each term of the bubble's cube carrying its mode's exponential (9 of its 19
#:   tokens) and each of the cross terms the two atoms of a sine shape; without them it prints
#:   (the third mode's cross terms gone too); then once more with a cubic shape (a second draw of
#:   that recipe: the first came within 0.043 of the forcing's span on one eccentric annulus, and
#:   cancelled to 2.6e-8 on another);
#: * paced draws (``paced``: :func:`paced` lowers the time rate until the calibration's time error at
#:   the record's own step and scheme is at most :data:`TIME_ERROR`; a first-order family's modes a
#:   rotating pair, two of them): every earlier draw stretches the family's rate x horizon to the
#:   record's window, and a reaction-diffusion record calibrated with backward Euler (first order)
#:   in 30 to 60 steps then makes a time error (a t)^2 / (2 n) of 2-4 % on its fastest mode (a = 1.35):
#:   e_base 0.008-0.042, tau_acc ten times that, and the span margin (5 tau_acc) out of reach of the
#:   initial data's and the time coefficients' residuals (0.05-0.34) -- eight siblings rejected, their
#:   refinement over REFINE_SECONDS.  The trade-off: the solution's departure from the span of its
#:   initial data grows like a (residual about s a, s the share of the modes that changes), the time
#:   error like a^2 / (2 n); the build asks residual >= 50 e_base, validation residual >= 0.05, and the
#:   best of the two ratios is at e_base = 0.05 / 50 = 1e-3 whatever n and s (:data:`TIME_ERROR`).
#:   There a = sqrt(2 n 1e-3): 0.24-0.35 for 30-60 steps.  Decaying modes (s about 0.15) then leave
#:   0.03 of the initial span; a rotating pair, whose sine mode starts at zero (s about 0.5), leaves
#:   0.13-0.2 on the eight records (a build margin of about 2.5).  A linear reaction's trigonometric
#:   shape is nearly an eigenfunction (its cosine coefficient minus a multiple of the initial data is
#:   the sine mode: 0.004-0.04), so every other paced draw carries a bubble in every mode (0.07-0.13),
#:   and one has faster shapes.  Three to four half-waves cost a P1 calibration of 170 cells across a
#:   spatial error of 5.6e-3 (a logistic record, rejected at 2.5 tau_acc), and a bubble in every mode
#:   makes a logistic forcing too long to print: then two to three half-waves, and a shape with its
#:   non-separable extra mode (no eigenfunction either: 0.08-0.2 on the logistic records);
#: * a bubble on every carrier again, its factors that differ by a constant only (a centrally
#:   symmetric outline's opposite edges, a gear's opposite flanks and its two circles) multiplied in
#:   pairs (``level_degree: paired``, :func:`casekit.authoring.builder.paired_level_set`): the one
#:   outline of a star or a gear carries Dirichlet data that are the solution composed with a warp
#:   whose level set prints in 800 to 1400 characters once per coordinate the solution spells, and the
#:   full product's 24 to 44 coordinates printed past the length limit (a capped bubble, printable,
#:   was read back by 'forcing_terms' from the boundary data of the parts it does not vanish on);
#: * the two-mode steady-bubble recipe with a quadratic shape, the whole solution three tenths as
#:   large: a cubic reaction's forcing of it on an annulus printed, but cancelled to 2.4-2.6e-8 in
#:   double precision; the cube's share of the forcing falls with the square of the amplitude.
#: * stepped draws (``stepped``: :func:`stepped`): a paced draw is slow by construction -- its rate x
#:   horizon 0.25-0.5 -- and an order-2 time-Taylor expansion from its initial data then answers it
#:   within 0.002-0.04 (``leak.taylor``, :mod:`casekit.validate.taylor`; the eight paced reaction-
#:   diffusion siblings).  A stepped draw turns its rotating pair :data:`STEPPED_TURN` radians over the
#:   window instead and makes the calibration, not the solution, pay for it: a second-order scheme
#:   (BDF2 for a first-order family) at the record's step divided by the smallest of
#:   :data:`STEP_DIVISORS` that keeps the time error within :data:`TIME_ERROR`.  The record's step
#:   stays the case's suggested one (the prompt says so, and states the accuracy the case asks for).
#: * ball-supported draws (``support: ball``, :func:`casekit.authoring.builder.ball_factor`): the part
#:   that vanishes on the boundary is a power of ``max(0, g)``, g positive on a ball inside the domain,
#:   instead of a product of the outline's level sets -- whose fourth-order and nonlinear forcings on
#:   outlines of 12 to 48 carriers print in 20 000 to 650 000 characters (the biharmonic gears and
#:   stars, a Helmholtz and a convection-diffusion gear, a Stokes flow on a ten-teeth gear: every
#:   earlier draw too large); the ball's forcing prints the same on any outline, and the boundary
#:   data are the rest of the solution as it is (``casekit.derive_support``).  Twice unmodulated (a
#:   drawn shape, then a quadratic one), then with a bubble in every time mode.
LATE: tuple[dict[str, Any], ...] = (
    {"bubble": "constant", "bubble_scale": 2.0, "stream_bubble": True, "level_degree": "all"},
    {"bubble": "constant", "bubble_scale": 0.1, "shape_scale": 0.1},
    {"bubble": "constant", "mode_bubbles": True},
    {"bubble": "constant", "bubble_scale": 3.0, "shape": {"kind": "trig", "options": {"freq": (5, 6)}}},
    {"bubble": "constant", "modes": 2, "steady_bubble": True, "shape": {"kind": "poly", "options": {"degree": 2}}},
    {"bubble": "constant", "modes": 2, "steady_bubble": True, "shape": {"kind": "poly", "options": {"degree": 3}}},
    {"paced": "oscillate", "modes": 2},
    {"paced": "oscillate", "modes": 2, "mode_bubbles": True},
    {"paced": "oscillate", "modes": 2},
    {"paced": "oscillate", "modes": 2, "faster": (3, 4)},
    {"paced": "oscillate", "modes": 2, "mode_bubbles": True},
    {"paced": "oscillate", "modes": 2, "faster": (2, 3)},
    {"paced": "oscillate", "modes": 2, "shape": {"kind": "trig", "options": {"extra": True}}},
    {"bubble": "constant", "bubble_scale": 2.0, "stream_bubble": True, "level_degree": "paired"},
    {"bubble": "constant", "modes": 2, "steady_bubble": True, "bubble_scale": 0.3, "shape_scale": 0.3,
     "shape": {"kind": "poly", "options": {"degree": 2}}},
    {"stepped": "oscillate", "modes": 2},
    {"stepped": "oscillate", "modes": 2, "mode_bubbles": True},
    {"stepped": "oscillate", "modes": 2, "faster": (2, 3)},
    {"stepped": "oscillate", "modes": 2, "shape": {"kind": "trig", "options": {"extra": True}}},
    {"support": "ball", "bubble": "constant", "bubble_scale": 2.0, "stream_bubble": True},
    {"support": "ball", "bubble": "constant", "bubble_scale": 2.0, "stream_bubble": True,
     "shape": {"kind": "poly", "options": {"degree": 2}}},
    {"support": "ball", "bubble": "constant", "stream_bubble": True, "mode_bubbles": True},
)

#: a stepped draw's rate x (t_end - t0): its rotating pair turns two radians over the window, where
#: the order-2 time-Taylor polynomials of cos and sin miss by 0.58 and 1.09 of the mode
#: (leak.taylor asks 0.05 of the whole solution)
STEPPED_TURN = 2.0
#: the divisors of the record's step that a stepped draw's calibration tries, smallest first
STEP_DIVISORS = (1, 2, 3, 4, 6, 8)
#: a sibling recipe's key of the calibration settings it lays over the record's (the builder's own
#: ``calibration`` key is an authored recipe's, not a sibling's)
CALIBRATION_KEY = "sibling_calibration"
#: the calibration scheme of a stepped draw of a family first order in time (second order: the
#: family's own, Newmark)
STEPPED_SCHEME = "bdf2"

#: the largest relative time error a paced draw's calibration makes (see LATE): where the build's
#: span margin (residual >= SPAN_MARGIN x alpha_acc x e_base) and validation's floor (residual >=
#: SPAN_GAP_MIN) are met by the same residual -- the best balance, whatever the record's step count
TIME_ERROR = SPAN_GAP_MIN / (SPAN_MARGIN * DEFAULTS["alpha_acc"])

#: draws of a sibling before a record is given up: the plain ones, each adapted recipe twice, then
#: each late recipe once
ATTEMPTS = ADAPTED_ATTEMPTS + len(LATE)

#: the key of sibling seeds: public (anyone can redo a sibling from the record's id)
SIBLING_KEY = b"casekit-sibling"

#: a sibling's author notes, which say which draw it is (:func:`drawn` reads it back)
SIBLING_NOTES = ("sibling of the imported record {anchor!r}: its problem, a new manufactured solution "
                 "(draw {attempt})")
_DRAW = re.compile(r"\(draw (\d+)\)$")


def drawn(source: Mapping[str, Any]) -> int | None:
    """The draw of a sibling source (from its notes, :data:`SIBLING_NOTES`), None if it is not one."""
    if (source.get("provenance") or {}).get("status") != "replaced":
        return None
    m = _DRAW.search(str(source.get("notes", "")).strip())
    return int(m.group(1)) if m else None

#: a solution's character -> the names of the ``solution`` axis levels that draw it
CHARACTERS: dict[str, tuple[str, ...]] = {
    "peak": ("peak",),
    "front": ("front", "layer"),
    "polynomial": ("polynomial",),
    "oscillatory": ("oscillatory",),
    "smooth": ("smooth",),
}

#: angular frequency (per unit length) from which a trigonometric solution counts as oscillatory
OSCILLATORY_FREQUENCY = 3 * math.pi


def character(solution: Mapping[str, Any]) -> str:
    """The character of a manufactured solution (every component read): ``peak`` (an ``exp`` of a
    quadratic in the coordinates), ``front`` (``tanh``, ``erf``), ``polynomial`` (no function of
    the coordinates), ``oscillatory`` (a trigonometric frequency of at least
    :data:`OSCILLATORY_FREQUENCY`), else ``smooth``."""
    exprs = []
    for value in solution.values():
        for text in value if isinstance(value, list) else [value]:
            exprs.append(parse(str(text)))
    coords = set(COORDS)
    funcs = [f for e in exprs for f in e.atoms(sp.Function) if f.free_symbols & coords]
    if any(_is_peak(f) for f in funcs):
        return "peak"
    if any(isinstance(f, (sp.tanh, sp.erf)) for f in funcs):
        return "front"
    if not funcs and all(e.is_polynomial(*coords) for e in exprs):
        return "polynomial"
    trig = [f for f in funcs if isinstance(f, (sp.sin, sp.cos))]
    if any(_frequency(f.args[0]) >= OSCILLATORY_FREQUENCY for f in trig):
        return "oscillatory"
    return "smooth"


def _is_peak(f: sp.Expr) -> bool:
    """``exp`` of a polynomial of degree two or more in the coordinates (a Gaussian)."""
    if not isinstance(f, sp.exp):
        return False
    arg = f.args[0]
    coords = sorted(set(COORDS) & arg.free_symbols, key=str)
    return bool(coords) and arg.is_polynomial(*coords) and sp.Poly(arg, *coords).total_degree() >= 2


def _frequency(arg: sp.Expr) -> float:
    """The largest coefficient of a coordinate in a (linear) trigonometric argument."""
    out = 0.0
    for c in set(COORDS) & arg.free_symbols:
        slope = sp.diff(arg, c)
        if slope.free_symbols:
            continue
        out = max(out, abs(float(slope)))
    return out


def recipe(family: Family, char: str, window: tuple[float, float] | None) -> dict[str, Any]:
    """The builder's recipe for a sibling: the family's defaults, the ``solution`` level of the
    character (when the family has one), and for a transient window the time level whose horizon
    is nearest (on a log scale) with its rate scaled so that rate x horizon is the level's."""
    parts: list[Mapping[str, Any]] = [family.authoring]
    for axis in family.axes:
        for name in CHARACTERS.get(char, ()):
            level = axis.levels.get(name)
            if level is not None and "solution" in level:
                parts.append({"solution": level["solution"]})
                break
        else:
            continue
        break
    out = merge(*parts)
    if window is not None:
        span = window[1] - window[0]
        timed = [level["time"] for axis in family.axes for level in axis.levels.values() if "time" in level]
        level_time = min(timed, key=lambda t: abs(math.log(float(t.get("t_end", 1.0)) / span)),
                         default=out.get("time", {}))
        horizon = float(level_time.get("t_end", 1.0))
        out["time"] = {"t_end": window[1], "factor": level_time.get("factor", "decay"),
                       "rate": float(level_time.get("rate", 1.0)) * horizon / span}
    return out


def adapted(rec: Mapping[str, Any], attempt: int) -> dict[str, Any]:
    """The recipe of draw ``attempt``: ``rec`` itself for the plain draws, else overlaid with its
    entry of :data:`ADAPTED` or :data:`LATE` (always with the record's own periodic pairs).
    ``faster``: a trigonometric shape with that many half-waves across the box (the record's own
    character otherwise); ``shape``: that solution spec, whatever the record's character."""
    if attempt < PLAIN_ATTEMPTS:
        return dict(rec)
    if attempt < ADAPTED_ATTEMPTS:
        overlay = dict(ADAPTED[(attempt - PLAIN_ATTEMPTS) % len(ADAPTED)])
    elif attempt < ATTEMPTS:
        overlay = dict(LATE[attempt - ADAPTED_ATTEMPTS])
    else:
        raise ValueError(f"a sibling has draws 0 to {ATTEMPTS - 1}, not {attempt}")
    faster = overlay.pop("faster", None)
    shape = overlay.pop("shape", None)
    out = merge(rec, {"periodic": "boundary"}, overlay)
    if shape is not None:  # the leading unknown's shape, in place of the record's character
        out["solution"] = merge(shape)
    if faster and out.get("solution", {}).get("kind", "trig") == "trig":
        out["solution"] = merge(out.get("solution", {"kind": "trig"}), {"kind": "trig", "options": {"freq": faster}})
    return out


def calibration_time_error(source: Mapping[str, Any], rec: Mapping[str, Any]) -> float:
    """The relative time error (:mod:`casekit.authoring.time_error`) that ``source``'s calibration
    (its step and scheme) makes on the time modes that the recipe ``rec`` draws; 0 for a steady
    case."""
    from casekit.authoring.catalogue import MODES, time_modes
    from casekit.authoring.time_error import relative_error
    from casekit.solvers.settings import SolveSettings

    time = source.get("pde", {}).get("time")
    if not time or "time" not in rec:
        return 0.0
    settings = SolveSettings.from_dict({**(source.get("calibration") or {}), **rec.get(CALIBRATION_KEY, {})})
    dt = settings.dt if settings.dt is not None else time.get("dt")
    if dt is None:
        return 0.0
    modes = time_modes(rec["time"]["factor"], float(rec["time"]["rate"]))[: rec.get("modes", MODES)]
    return relative_error(modes, float(time["t0"]), float(time["t_end"]), float(dt), settings.scheme,
                          FAMILIES.get(source["family"]).time_order)


def paced(source: Mapping[str, Any], rec: Mapping[str, Any], bound: float | None = None) -> dict[str, Any]:
    """``rec`` with its time rate lowered (to two significant digits, never raised) until the
    calibration's time error on its modes is at most ``bound`` (:func:`calibration_time_error`)."""
    bound = TIME_ERROR if bound is None else bound
    out = dict(rec)
    if calibration_time_error(source, out) <= bound:
        return out
    rate = float(out["time"]["rate"])
    lo, hi = 0.0, rate  # the error grows with the rate: bisect for the largest rate within the bound
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if calibration_time_error(source, {**out, "time": {**out["time"], "rate": mid}}) <= bound:
            lo = mid
        else:
            hi = mid
    digits = 10 ** (math.floor(math.log10(lo)) - 1) if lo > 0 else 0.0
    slow = math.floor(lo / digits) * digits if digits else 0.0
    while slow > 0 and calibration_time_error(source, {**out, "time": {**out["time"], "rate": slow}}) > bound:
        slow -= digits  # the catalogue's rounding of the rates may have raised the error
    if not slow > 0:
        raise CasekitError(f"no time rate keeps the calibration's time error within {bound:g} at its step")
    out["time"] = {**out["time"], "rate": float(f"{slow:.2g}")}
    return out


def stepped(source: Mapping[str, Any], rec: Mapping[str, Any]) -> dict[str, Any]:
    """``rec`` with its rate turning :data:`STEPPED_TURN` radians over the record's window and the
    calibration (``rec[CALIBRATION_KEY]``, laid over the source's) that steps it within
    :data:`TIME_ERROR`: :data:`STEPPED_SCHEME` for a first-order family, at the record's step
    divided by the first of :data:`STEP_DIVISORS` that is within the bound; past the last, the rate
    paced (:func:`paced`) at that step -- validation then says whether it is still fast enough."""
    time = source["pde"]["time"]
    span = float(time["t_end"]) - float(time["t0"])
    step = (source.get("calibration") or {}).get("dt") or time.get("dt")
    if step is None:
        raise CasekitError("a stepped draw needs a time step: the case gives neither pde.time.dt nor calibration.dt")
    out = dict(rec)
    out["time"] = {**out["time"], "rate": float(f"{STEPPED_TURN / span:.3g}")}
    scheme = {"scheme": STEPPED_SCHEME} if FAMILIES.get(source["family"]).time_order == 1 else {}
    for m in STEP_DIVISORS:
        out[CALIBRATION_KEY] = {**scheme, "dt": float(f"{float(step) / m:.6g}")}
        if calibration_time_error(source, out) <= TIME_ERROR:
            return out
    return paced(source, out)


def sibling_seed(anchor: str, attempt: int, key: bytes = SIBLING_KEY) -> int:
    """The seed of a sibling's ``attempt``-th draw, derived from the anchor record's id and
    ``key`` (public by default; a private campaign's key is derived from its secret,
    :mod:`casekit.campaign.secret`)."""
    return salted_seed(key, "sibling", anchor, attempt)


def draw_recipe(source: Mapping[str, Any], attempt: int) -> dict[str, Any]:
    """The builder's recipe of draw ``attempt`` of ``source``'s sibling (:func:`adapted` of its
    :func:`recipe`); a paced draw's (:data:`LATE`) time rate lowered by :func:`paced`, a stepped
    draw's rate and calibration those of :func:`stepped`, and a first-order family's time
    behaviour the one ``paced`` or ``stepped`` names."""
    family = FAMILIES.get(source["family"])
    time = source.get("pde", {}).get("time")
    window = (float(time["t0"]), float(time["t_end"])) if time else None
    char = character(source["manufactured_solution"]) if source.get("manufactured_solution") else "smooth"
    rec = adapted(recipe(family, char, window), attempt)
    pace, step = rec.pop("paced", None), rec.pop("stepped", None)
    if (pace or step) is not None and window is not None:
        if family.time_order == 1:  # a second-order family's sine mode would be its initial velocity
            rec["time"] = {**rec["time"], "factor": pace or step}
        rec = paced(source, rec) if pace is not None else stepped(source, rec)
    return rec


def sibling(source: Mapping[str, Any], anchor: str, attempt: int = 0, key: bytes = SIBLING_KEY) -> dict[str, Any]:
    """A copy of ``source`` (a case source dict) with a new manufactured solution and every typed
    datum it replaces dropped (forcing, boundary values, initial data, a numerical reference);
    its draws are seeded by ``anchor``, ``attempt`` and ``key`` (:func:`sibling_seed`)."""
    import numpy as np

    family = FAMILIES.get(source["family"])
    domain = resolve(source["domain"]["template"], source["domain"].get("params"))
    time = source.get("pde", {}).get("time")
    window = (float(time["t0"]), float(time["t_end"])) if time else None
    rng = np.random.default_rng(sibling_seed(anchor, attempt, key))
    if numerical_reference_needed(family, source["pde"].get("params") or {}, window is not None):
        return _numerical_sibling(source, family, domain, rng)
    rec = draw_recipe(source, attempt)
    calibration = rec.pop(CALIBRATION_KEY, None)
    drawn_time = None if window is None else {"t0": window[0], "t_end": window[1], **{
        k: rec["time"][k] for k in ("factor", "rate")}}
    out = copy.deepcopy(dict(source))
    boundary = None if family.traction_inflow_limit is not None else out.get("boundary", {})
    out["manufactured_solution"] = draw_solution(family, domain, rec, rng, out["pde"].get("params", {}),
                                                 drawn_time, boundary)
    if calibration:  # a stepped draw's calibration steps finer than the record suggests
        out["calibration"] = {**(out.get("calibration") or {}), **calibration}
    out["pde"].pop("forcing", None)
    out.pop("initial", None)
    out.pop("reference", None)
    for tag, entry in list(out.get("boundary", {}).items()):
        if isinstance(entry, dict) and ("value" in entry or "laplacian" in entry):
            kept = {k: v for k, v in entry.items() if k not in ("value", "laplacian")}
            out["boundary"][tag] = kept if set(kept) != {"kind"} else kept["kind"]
    return out


def _numerical_sibling(source: Mapping[str, Any], family: Family, domain: Any, rng: Any) -> dict[str, Any]:
    """The sibling of a record whose every manufactured sibling would be answered without solving
    (``casekit.authoring.builder.NUMERICAL_REACTION_DEGREE``: a transient polynomial reaction): the
    same problem with a drawn source, initial data and zero boundary values
    (:func:`casekit.authoring.builder.numerical_data`), and a numerical reference whose levels refine
    the record's calibration (:func:`casekit.authoring.builder.numerical_levels`), stepping with
    BDF2."""
    out = copy.deepcopy(dict(source))
    time = out["pde"]["time"]
    for name in ("manufactured_solution", "initial", "reference"):
        out.pop(name, None)
    calibration = dict(out.get("calibration") or {})
    step = calibration.get("dt") or time.get("dt")
    if step is None:
        raise CasekitError("a numerical sibling needs a time step: the case gives neither pde.time.dt nor "
                           "calibration.dt")
    calibration.update({"dt": step, "scheme": REFERENCE_SCHEME})
    kinds = {tag: (b if isinstance(b, str) else {k: v for k, v in b.items() if k not in ("value", "laplacian")})
             for tag, b in (out.get("boundary") or {}).items()}
    drawn = numerical_data(BuildContext(family, domain, rng, dict(out["pde"].get("params") or {})), kinds,
                           {"t0": time["t0"], "t_end": time["t_end"]})
    out["pde"]["forcing"] = drawn["forcing"]
    out["initial"] = drawn["initial"]
    out["boundary"] = drawn["boundary"]
    out["calibration"] = calibration
    out["reference"] = numerical_levels(calibration)
    return out


def clean_sibling(source: Mapping[str, Any], anchor: str, notes: str = "", attempts: int = ATTEMPTS,
                  rejected: Mapping[int, str] | None = None, key: bytes = SIBLING_KEY
                  ) -> tuple[dict[str, Any] | None, int, list[str]]:
    """The first of ``attempts`` siblings that validates clean (every validity rule: no leak, no
    inversion, a span residual above the margin), its draw, and why each earlier draw failed
    (``"draw k: <its first finding>"``); ``(None, attempts, failures)`` if none does.  ``notes``
    becomes the sibling's author notes.  ``rejected``: {draw: why} that a build rejected
    (casekit.importers.replacements), skipped with that reason; when the calibration's time error
    on one of them was above :data:`TIME_ERROR` (:func:`calibration_time_error`), every draw whose
    error is too is skipped as well -- the plain and adapted draws share the record's rates, so
    only a paced one (:data:`LATE`) is then drawn.  ``key`` seeds the draws (:func:`sibling_seed`)."""
    from casekit.validate import check_source

    failures: list[str] = []
    family = FAMILIES.get(source["family"])
    numerical = numerical_reference_needed(family, source["pde"].get("params") or {},
                                           bool(source["pde"].get("time")))
    # a numerical sibling draws no time modes: the recipes' time errors say nothing about it
    too_fast = [] if numerical else sorted(k for k in (rejected or {}) if k < ATTEMPTS and calibration_time_error(
        source, draw_recipe(source, k)) > TIME_ERROR)
    for attempt in range(attempts):
        if rejected and attempt in rejected:
            failures.append(f"draw {attempt}: " + _short(f"a build rejected it: {rejected[attempt]}"))
            continue
        try:
            e = calibration_time_error(source, draw_recipe(source, attempt)) if too_fast else 0.0
            if e > TIME_ERROR:
                failures.append(f"draw {attempt}: its calibration's time error at the record's step, about {e:.1e}, "
                                f"is above {TIME_ERROR:g} as that of the rejected draw {too_fast[0]} was")
                continue
            candidate = sibling(source, anchor, attempt, key)
        except CasekitError as exc:
            failures.append(f"draw {attempt}: {_short(exc.message)}")
            continue
        if notes:
            candidate["notes"] = notes.format(attempt=attempt)
        problems = check_source(candidate)
        if not problems:
            return candidate, attempt, failures
        first = problems[0]
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        failures.append(f"draw {attempt}: " + _short(f"{first.pointer or '/'}: {first.message}") + more)
    return None, attempts, failures


#: the longest reason of a failed draw kept in ``clean_sibling``'s failures
REASON_CHARS = 200


def _short(text: str) -> str:
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 3] + "..."
