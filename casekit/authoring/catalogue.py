"""A catalogue of manufactured solutions by character.

Every entry is a function ``(ctx, rng, **options) -> sympy expression`` registered in
:data:`SOLUTIONS`; vector and velocity/pressure solutions are composed from scalar ones by the
helpers at the bottom (divergence-free fields from stream functions or vector potentials).
Coordinates are shifted and scaled to the domain's bounding box so a solution has the same
character on every template; numbers are rounded to short decimals so expressions stay readable.
Periodic directions get whole periods of the domain's width.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from casekit.domains import level_set
from casekit.expr import COORDS, T
from casekit.families.calculus import curl
from casekit.registry import Registry


@dataclass(frozen=True)
class Context:
    dim: int
    bbox: tuple[float, ...]
    #: axes (0 = x, 1 = y, 2 = z) along which the solution must be periodic with the box width
    periodic: tuple[int, ...] = ()
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0), compare=False)
    #: distance of points to the domain's boundary, negative outside (default: the box)
    depth: Callable[[np.ndarray], np.ndarray] | None = field(default=None, compare=False)
    #: a closed form vanishing on the boundary's non-periodic parts, at most 1 inside
    #: (``casekit.domains.level_set``; default: the box's sides)
    level_set: sp.Expr | None = field(default=None, compare=False)

    def interior_point(self, rng: np.random.Generator) -> list[float]:
        """A point well inside the domain (among the deeper half of random candidates), rounded."""
        pts = np.column_stack([self.lo(i) + self.width(i) * rng.random(400) for i in range(self.dim)])
        depth = self.depth(pts) if self.depth is not None else np.min(
            [np.minimum(pts[:, i] - self.lo(i), self.lo(i) + self.width(i) - pts[:, i]) for i in range(self.dim)],
            axis=0)
        deep = np.flatnonzero(depth >= 0.5 * depth.max())
        p = pts[deep[int(rng.integers(len(deep)))]]
        return [float(num(v)) for v in p]

    def lo(self, i: int) -> float:
        return self.bbox[2 * i]

    def width(self, i: int) -> float:
        return self.bbox[2 * i + 1] - self.bbox[2 * i]

    def center(self, i: int) -> float:
        return 0.5 * (self.bbox[2 * i] + self.bbox[2 * i + 1])

    def size(self) -> float:
        return max(self.width(i) for i in range(self.dim))

    def unit(self, i: int) -> sp.Expr:
        """The coordinate scaled to [0, 1] over the box: (x - lo) / width."""
        c = COORDS[i]
        lo, w = num(self.lo(i)), num(self.width(i))
        return (c - lo) / w if (lo, w) != (0, 1) else c


def num(v: float, digits: int = 3) -> sp.Expr:
    """A short exact decimal (3 significant digits by default)."""
    if v == 0:
        return sp.Integer(0)
    r = float(f"{v:.{digits}g}")
    return sp.Integer(int(r)) if r.is_integer() else sp.Rational(repr(r))


Solution = Callable[..., sp.Expr]
SOLUTIONS: Registry[Solution] = Registry("manufactured solution")


def solution(name: str) -> Callable[[Solution], Solution]:
    def deco(fn: Solution) -> Solution:
        return SOLUTIONS.register(name, fn)

    return deco


def _choice(rng: np.random.Generator, values: list) -> object:
    return values[int(rng.integers(len(values)))]


@solution("trig")
def trig(ctx: Context, rng: np.random.Generator, freq: tuple[int, int] = (1, 2), skew: bool = True,
         extra: bool = True) -> sp.Expr:
    """Two products of sines/cosines, with 1-2 half-waves across the box and one more (whole
    waves when periodic), plus a gentle non-separable mode.  One product alone is an
    eigenfunction of the Laplacian: its forcing would be the solution times a number.
    ``extra=False``: the skewed product alone, for solutions that carry a bubble (it keeps them from
    being eigenfunctions, and without the extra mode nonlinear forcings stay printable)."""
    out = skewed_product(ctx, rng, freq, skew)
    return out + num(0.5 + rng.random()) * _smooth_extra(ctx, rng) if extra else out


def skewed_product(ctx: Context, rng: np.random.Generator, freq: tuple[int, int] = (1, 2), skew: bool = True
                   ) -> sp.Expr:
    """A product of sines with 1-2 half-waves across the box (whole waves when periodic), each
    factor's argument after the first leaning on the previous coordinate: a product of sines in x and
    in y alone is an eigenfunction of the Laplacian (its forcing is the solution times a number,
    its time coefficients the shape itself), a skewed one is not.  A lean on a periodic coordinate
    is a periodic function of it, so periodic directions stay periodic.  ``skew=False``: the plain
    product."""
    out = sp.Integer(1)
    for i in range(ctx.dim):
        k = int(rng.integers(freq[0], freq[1] + 1))
        j = i - 1  # the first factor stands straight: leaning both on each other (about 1:1) made
        # the product a function of x + y alone, and an eigenfunction again
        lean = num(rng.uniform(0.5, 0.9), 1) * (
            sp.sin(2 * sp.pi * ctx.unit(j)) / 2 if j in ctx.periodic else ctx.unit(j)) if skew and j >= 0 else 0
        if i in ctx.periodic:
            out *= (sp.sin if rng.random() < 0.5 else sp.cos)(2 * k * sp.pi * ctx.unit(i) + sp.pi * lean)
            continue
        phase = _choice(rng, [0, sp.Rational(1, 4), sp.Rational(1, 2)])
        out *= sp.sin(k * sp.pi * (ctx.unit(i) + lean) + phase * sp.pi)
    return out


def _smooth_extra(ctx: Context, rng: np.random.Generator) -> sp.Expr:
    """A gentle second mode so no solution is a pure eigenfunction (nor separable)."""
    i, j = (0, 1)
    si, sj = ctx.unit(i), ctx.unit(j)
    if i in ctx.periodic:
        return sp.cos(2 * sp.pi * si) * sj if j not in ctx.periodic else sp.cos(2 * sp.pi * (si + sj))
    return sp.cos(sp.pi * si * sj) if j not in ctx.periodic else si * (1 - si) * sp.cos(2 * sp.pi * sj)


@solution("poly")
def poly(ctx: Context, rng: np.random.Generator, degree: int = 3) -> sp.Expr:
    """A polynomial of the given degree (periodic directions: a trigonometric factor instead)."""
    vs = [ctx.unit(i) for i in range(ctx.dim)]
    terms = [sp.Integer(1)]
    for i, v in enumerate(vs):
        if i in ctx.periodic:
            continue
        terms.append(num(rng.uniform(0.5, 1.5)) * v ** degree)
        terms.append(num(rng.uniform(-1, 1)) * v ** 2)
    if len(vs) > 1 and not ctx.periodic:
        terms.append(num(rng.uniform(0.5, 1.5)) * vs[0] * vs[1] ** (degree - 1))
    out = sp.Add(*terms)
    for i in ctx.periodic:
        out *= 1 + sp.sin(2 * sp.pi * vs[i]) / 2
    return out


#: boundary level sets of a higher degree get a linear modulation, not a wave: the forcing of a
#: wave times a degree-6 product (biharmonic, square with a hole) did not fit the expression limits
WAVE_DEGREE = 4


#: stream functions get a bubble (the level set squared) only on outlines of at most this degree:
#: beyond, the convective term of Navier-Stokes did not fit the expression limits
STREAM_BUBBLE_DEGREE = 4


#: how a bubble is modulated: a gentle wave, a linear ramp, or not at all (smallest forcing)
MODULATIONS = ("wave", "linear", "constant")


def bubble(ctx: Context, rng: np.random.Generator, modulation: str = "wave") -> sp.Expr:
    """A part every manufactured solution carries that vanishes on the whole (non-periodic)
    boundary: the boundary level set times a gentle modulation.  Boundary data say nothing about it,
    so no fit of visible fields (the forcing's terms, products of its function atoms, polynomials)
    to the boundary data recovers a solution: only the PDE determines this part.  ``modulation``
    (:data:`MODULATIONS`; a recipe's ``bubble`` key): vector unknowns and nonlinear families use
    ``linear``, stream functions ``constant`` (their products in the forcing grew past the
    expression limits with a wave)."""
    phi = ctx.level_set if ctx.level_set is not None else _box_level_set(ctx)
    if modulation not in MODULATIONS:
        raise ValueError(f"unknown bubble modulation {modulation!r} (valid: {', '.join(MODULATIONS)})")
    amplitude = num(rng.uniform(1.0, 2.0), 2)
    if modulation == "constant":
        return amplitude * phi
    # a support factor (casekit.derive_support) is no polynomial: its power is what the forcing prints
    if modulation == "linear" or (not phi.has(sp.Max) and level_set.degree(phi, ctx.dim) > WAVE_DEGREE):
        return amplitude * phi * (1 + num(rng.uniform(0.5, 1.0), 2) * ctx.unit(0))
    arg = sp.Add(*((2 * sp.pi if i in ctx.periodic else num(rng.uniform(0.7, 1.5), 2) * sp.pi) * ctx.unit(i)
                   for i in range(ctx.dim)))
    return amplitude * phi * (1 + num(rng.uniform(0.3, 0.6), 2) * sp.cos(arg + num(rng.uniform(0.2, 1.2), 2)))


def _box_level_set(ctx: Context) -> sp.Expr:
    """The bounding box's non-periodic sides' product, 1 at the centre."""
    out = sp.Integer(1)
    for i in range(ctx.dim):
        if i not in ctx.periodic:
            out *= 4 * ctx.unit(i) * (1 - ctx.unit(i))
    return out


@solution("gauss")
def gauss(ctx: Context, rng: np.random.Generator, width: float = 0.2) -> sp.Expr:
    """A Gaussian bump (width relative to the box) inside the domain, modulated by a wave that
    turns about once across it, on a gentle linear background.  Unmodulated, the bump is the
    ``exp`` factor its forcing prints, and the solution that factor plus a background fitted to
    the boundary data."""
    r2 = sp.Integer(0)
    phase = sp.Integer(0)
    centre = ctx.interior_point(rng)
    w = num(width * ctx.size())
    theta = rng.uniform(0, 2 * math.pi)
    direction = [math.cos(theta), math.sin(theta), 0.6][: ctx.dim]
    for i in range(ctx.dim):
        c = num(centre[i])
        if i in ctx.periodic:
            r2 += (sp.sin(sp.pi * ctx.unit(i) - sp.pi * (c - num(ctx.lo(i))) / num(ctx.width(i)))
                   * num(ctx.width(i)) / sp.pi) ** 2
            phase += 2 * sp.pi * ctx.unit(i)
        else:
            r2 += (COORDS[i] - c) ** 2
            phase += num(1.3 * direction[i] / float(w)) * (COORDS[i] - c)
    background = 1 + ctx.unit(1 if 0 in ctx.periodic else 0) / 2
    modulation = 1 + num(rng.uniform(0.5, 0.8)) * sp.sin(phase + num(rng.uniform(0.5, 1.0)))
    return 2 * sp.exp(-r2 / (2 * w**2)) * modulation + background


@solution("layer")
def layer(ctx: Context, rng: np.random.Generator, delta: float = 0.05, axis: int = 0) -> sp.Expr:
    """A boundary layer of width ``delta`` (relative) at the high end of ``axis`` on a smooth
    profile: the classic outflow layer of convection-dominated transport."""
    if axis in ctx.periodic:
        axis = next(i for i in range(ctx.dim) if i not in ctx.periodic)
    s = ctx.unit(axis)
    d = num(delta)
    profile = sp.Integer(1)
    for i in range(ctx.dim):
        if i != axis:
            profile *= sp.sin(sp.pi * ctx.unit(i)) if i not in ctx.periodic else \
                1 + sp.sin(2 * sp.pi * ctx.unit(i)) / 2
    return (s - (sp.exp((s - 1) / d) - sp.exp(-1 / d)) / (1 - sp.exp(-1 / d))) * profile + s


@solution("front")
def front(ctx: Context, rng: np.random.Generator, delta: float = 0.05) -> sp.Expr:
    """An internal layer: a tanh front of width ``delta`` (relative) across the box (a wavy
    front across the periodic direction when there is one)."""
    if ctx.periodic:
        p, q = ctx.periodic[0], next(i for i in range(ctx.dim) if i not in ctx.periodic)
        wave = sp.sin(2 * sp.pi * ctx.unit(p)) / 10
        return sp.tanh((ctx.unit(q) - sp.Rational(1, 2) - wave) / num(delta)) + 1
    theta = rng.uniform(0.15, 0.35) * math.pi
    c, s = math.cos(theta), math.sin(theta)
    arg = num(c) * ctx.unit(0) + num(s) * ctx.unit(1)
    # modulated along the front: unmodulated, the front is the tanh factor its forcing prints
    along = num(-s) * ctx.unit(0) + num(c) * ctx.unit(1)
    modulation = 1 + num(rng.uniform(0.3, 0.5)) * sp.sin(sp.pi * along + num(rng.uniform(0.2, 1.0)))
    return (sp.tanh((arg - num(0.5 * (c + s))) / num(delta)) + 1) * modulation


@solution("plane_wave")
def plane_wave(ctx: Context, rng: np.random.Generator, k: float = 10.0) -> sp.Expr:
    """Oscillatory: a plane wave of wavenumber ``k`` modulated by a gentler mode of half that
    wavenumber across it (a mode of the same wavenumber made the sum an eigenfunction of the
    Laplacian, and the forcing a constant multiple of the solution: ``leak.multiple``; a sum of
    the two is a sum of the forcing's function atoms)."""
    theta = rng.uniform(0.1, 0.4) * math.pi
    kx, ky = num(k * math.cos(theta)), num(k * math.sin(theta))
    # the gentler mode multiplies the wave: added, each is a function atom its forcing prints
    return sp.sin(kx * COORDS[0] + ky * COORDS[1]) * (1 + sp.cos((ky * COORDS[0] - kx * COORDS[1]) / 2) / 2)


@solution("exp_trig")
def exp_trig(ctx: Context, rng: np.random.Generator) -> sp.Expr:
    """exp along one direction times a cosine along the other."""
    a = num(rng.uniform(0.5, 1.5))
    k = int(rng.integers(1, 3))
    lead = sp.exp(a * ctx.unit(1 if 0 in ctx.periodic else 0))
    other = 0 if 0 in ctx.periodic else 1
    return lead * sp.cos((2 if other in ctx.periodic else 1) * k * sp.pi * ctx.unit(other)) + 1


def scalar(name: str, ctx: Context, **options: object) -> sp.Expr:
    return SOLUTIONS.get(name)(ctx, ctx.rng, **options)


def vector(name: str, ctx: Context, **options: object) -> tuple[sp.Expr, ...]:
    """A vector field with independent components of the same character."""
    return tuple(scalar(name, ctx, **options) * num(1 + 0.3 * i) for i in range(ctx.dim))


def divergence_free(name: str, ctx: Context, **options: object) -> tuple[sp.Expr, ...]:
    """A divergence-free velocity: the curl of a stream function (2-D) or a vector potential (3-D)."""
    if ctx.dim == 2:
        phi = ctx.level_set if ctx.level_set is not None else _box_level_set(ctx)
        if level_set.degree(phi, 2) <= STREAM_BUBBLE_DEGREE:
            # phi * bubble and its gradient vanish on the boundary: so does its curl.  With it, a
            # smooth stream function needs no gentle extra mode (the bubble keeps it from being an
            # eigenfunction), and without that mode the convective term stays printable
            psi = scalar(name, ctx, **({"extra": False} if name == "trig" else {}), **options
                         ) + phi * bubble(ctx, ctx.rng, "constant")
        else:
            psi = scalar(name, ctx, **options)
        return (sp.diff(psi, COORDS[1]), -sp.diff(psi, COORDS[0]))
    # three skewed potentials make the 3-D convective term too large to print: unskewed (the curl
    # and the nonlinearity mix them anyway)
    a = tuple(scalar(name, ctx, **({"skew": False} if name == "trig" else {}), **options) for _ in range(3))
    return curl(a)


# ---------------------------------------------------------------------------- time behaviour
#: modes of a transient solution: each its own spatial shape and its own time function
MODES = 3


def time_modes(kind: str, rate: float) -> tuple[sp.Expr, ...]:
    """The time functions of a transient solution's :data:`MODES` modes,
    ``u(x, t) = sum_k M_k(x) phi_k(t)`` with different spatial shapes ``M_k``.

    A single mode (``X(x) T(t)``) makes the answer a multiple of the initial data, with the
    ratio read off any boundary datum.  Several modes with different rates keep the answer out
    of the span of what the agent sees, *provided* no mode's shape shows alone in the forcing:
    ``d/dt sin(w t)`` is ``w cos(w t)``, a time function of its own, so a lone oscillating mode
    prints its shape as the coefficient of ``cos(w t)``.  Hence: exponentials (their derivative
    is themselves) and oscillations only as rotating pairs (cos and sin of one frequency on two
    shapes, each derivative mixing both).

    A polynomial in t is reproduced exactly by its time-Taylor expansion from t0, whose
    coefficients follow from the initial data and the forcing (``casekit.validate.taylor``).

    decay: three rates; oscillate: a rotating pair and a decaying mode; grow: a steady mode, a
    growing and a decaying exponential;
    standing (second order in time): three frequencies with phases, so that neither u0 nor v0
    is one shape."""
    r = num(rate)
    if kind == "decay":
        return sp.exp(-r * T), sp.exp(-num(2.7 * rate) * T), sp.exp(-num(0.35 * rate) * T)
    if kind == "oscillate":
        return sp.cos(r * T), sp.sin(r * T), sp.exp(-num(1.7 * rate) * T)
    if kind == "grow":
        return sp.Integer(1), sp.exp(r * T), sp.exp(-num(1.7 * rate) * T)
    if kind == "standing":
        return (sp.cos(r * T + sp.Rational(1, 3)), sp.cos(num(1.6 * rate) * T + sp.Rational(4, 5)),
                sp.cos(num(0.55 * rate) * T + sp.Rational(6, 5)))
    raise ValueError(f"unknown time behaviour {kind!r} (valid: decay, oscillate, grow, standing)")
