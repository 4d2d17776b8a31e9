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
def trig(ctx: Context, rng: np.random.Generator, freq: tuple[int, int] = (1, 2)) -> sp.Expr:
    """A product of sines/cosines with 1-2 half-waves across the box (whole waves when periodic)."""
    out = sp.Integer(1)
    for i in range(ctx.dim):
        k = int(rng.integers(freq[0], freq[1] + 1))
        s = ctx.unit(i)
        if i in ctx.periodic:
            out *= (sp.sin if rng.random() < 0.5 else sp.cos)(2 * k * sp.pi * s)
        else:
            phase = _choice(rng, [0, sp.Rational(1, 4), sp.Rational(1, 2)])
            out *= sp.sin(k * sp.pi * s + phase * sp.pi) if phase else sp.sin(k * sp.pi * s)
    return out + num(0.5 + rng.random()) * _smooth_extra(ctx, rng)


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


@solution("gauss")
def gauss(ctx: Context, rng: np.random.Generator, width: float = 0.2) -> sp.Expr:
    """A Gaussian bump (width relative to the box) inside the domain on a gentle linear background."""
    r2 = sp.Integer(0)
    centre = ctx.interior_point(rng)
    for i in range(ctx.dim):
        c = num(centre[i])
        if i in ctx.periodic:
            r2 += (sp.sin(sp.pi * ctx.unit(i) - sp.pi * (c - num(ctx.lo(i))) / num(ctx.width(i)))
                   * num(ctx.width(i)) / sp.pi) ** 2
        else:
            r2 += (COORDS[i] - c) ** 2
    w = num(width * ctx.size())
    background = 1 + ctx.unit(1 if 0 in ctx.periodic else 0) / 2
    return 2 * sp.exp(-r2 / (2 * w**2)) + background


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
    return sp.tanh((arg - num(0.5 * (c + s))) / num(delta)) + 1


@solution("plane_wave")
def plane_wave(ctx: Context, rng: np.random.Generator, k: float = 10.0) -> sp.Expr:
    """Oscillatory: a plane wave of wavenumber ``k`` plus a gentler mode of half that wavenumber
    (a mode of the same wavenumber made the sum an eigenfunction of the Laplacian, and the
    forcing a constant multiple of the solution: ``leak.multiple``)."""
    theta = rng.uniform(0.1, 0.4) * math.pi
    kx, ky = num(k * math.cos(theta)), num(k * math.sin(theta))
    return sp.sin(kx * COORDS[0] + ky * COORDS[1]) + sp.cos((ky * COORDS[0] - kx * COORDS[1]) / 2) / 2


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
        psi = scalar(name, ctx, **options)
        return (sp.diff(psi, COORDS[1]), -sp.diff(psi, COORDS[0]))
    a = tuple(scalar(name, ctx, **options) for _ in range(3))
    return curl(a)


# ---------------------------------------------------------------------------- time behaviour
def time_factor(kind: str, rate: float) -> sp.Expr:
    """decay: exp(-rate t); oscillate: 1 + sin(rate t)/2; grow: 1 + rate t^2."""
    r = num(rate)
    if kind == "decay":
        return sp.exp(-r * T)
    if kind == "oscillate":
        return 1 + sp.sin(r * T) / 2
    if kind == "grow":
        return 1 + r * T**2
    if kind == "standing":  # a standing wave in time (for the wave equation)
        return sp.cos(r * T) + sp.sin(r * T) / 2
    raise ValueError(f"unknown time behaviour {kind!r}")
