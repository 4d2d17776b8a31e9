"""PDE families: what a family declares and the registry that holds them.

Each family lives in its own module under ``casekit/families/`` and registers one
:class:`Family`: unknowns, parameters, the strong form (as the operator whose value on the
manufactured solution is the forcing), its boundary flux, supported boundary-condition kinds,
time dependence, output fields, prompt wording and design axes.  Adding a family touches one
module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from casekit.registry import Registry

Fields = dict[str, Any]  # unknown name -> sympy scalar or tuple of components
Params = dict[str, Any]  # parameter name -> sympy scalar or tuple

#: boundary-condition kinds; the first three carry data on their boundary part
BC_KINDS = ("dirichlet", "neumann", "robin", "periodic")
DATA_BC_KINDS = BC_KINDS[:3]
MATH_TYPES = ("elliptic", "parabolic", "hyperbolic", "mixed_type", "incompressible_flow",
              "reaction_diffusion")


@dataclass(frozen=True)
class Param:
    """A family parameter.

    ``kind``: ``number`` (a constant), ``field`` (a number or an expression over the coordinates,
    and time for transient cases), ``vector`` (one number per dimension), ``reaction`` (an
    expression in the unknown ``u`` and the coordinates).  ``positive`` fields must be > 0
    everywhere on the domain (checked on the evaluation grid).
    """

    name: str
    doc: str
    kind: str = "number"
    default: Any = None
    minimum: float | None = None
    maximum: float | None = None
    positive: bool = False
    exclusive_minimum: bool = False

    def range_text(self) -> str:
        lo = "" if self.minimum is None else (f"> {self.minimum:g}" if self.exclusive_minimum
                                               else f">= {self.minimum:g}")
        hi = "" if self.maximum is None else f"<= {self.maximum:g}"
        return " and ".join(p for p in (lo, hi) if p) or "any number"


@dataclass(frozen=True)
class Unknown:
    name: str
    vector: bool = False
    doc: str = ""


@dataclass(frozen=True)
class Output:
    """An output field: ``scalar`` (one unknown), ``magnitude`` (Euclidean norm of a vector
    unknown) or ``components`` (a vector unknown's components, named ``<prefix>x``, ...)."""

    name: str
    kind: str
    of: str
    doc: str = ""

    def components(self, dim: int) -> list[str] | None:
        if self.kind != "components":
            return None
        return [f"{self.of}{c}" for c in "xyz"[:dim]]


@dataclass(frozen=True)
class Axis:
    """A design-matrix axis: interpretable levels, each a mapping of settings the family's
    case builder understands."""

    name: str
    doc: str
    levels: Mapping[str, Mapping[str, Any]]


@dataclass(frozen=True)
class Family:
    name: str
    title: str
    math_type: tuple[str, ...]
    unknowns: tuple[Unknown, ...]
    params: tuple[Param, ...]
    #: strong-form operator: L(fields, params, dim, transient) -> {forcing name: expr or tuple}
    operator: Callable[[Fields, Params, int, bool], dict[str, Any]]
    #: constraints that must hold with zero right-hand side (e.g. div u = 0)
    constraints: Callable[[Fields, Params, int], dict[str, sp.Expr]] = lambda f, p, d: {}
    #: boundary flux for Neumann/Robin data: flux(fields, params, normal, dim) -> expr or tuple
    flux: Callable[[Fields, Params, tuple, int], Any] | None = None
    flux_text: str = ""
    #: for scalar families whose flux is ``c * grad(u) . n``: c(params) (boundary-flux targets
    #: use it; None when the flux is not of that form, e.g. a traction)
    flux_coefficient: Callable[[Params], Any] | None = None
    bc_kinds: tuple[str, ...] = ("dirichlet",)
    #: 0 steady, 1 first order in time, 2 second order in time
    time_order: int = 0
    #: transient families whose cases may also be steady (no pde.time)
    steady_allowed: bool = False
    outputs: tuple[Output, ...] = ()
    dims: tuple[int, ...] = (2, 3)
    #: the equation for prompts (LaTeX-ish plain text) and one generic numerical consideration
    equation: str = ""
    consideration: str = ""
    #: data per Dirichlet entry besides ``value`` (biharmonic: ``laplacian``)
    dirichlet_extra: tuple[str, ...] = ()
    #: a steady problem with only these BC kinds is singular (needs a Dirichlet part)
    needs_dirichlet: bool = True
    axes: tuple[Axis, ...] = ()
    #: default recipe for authoring cases (see casekit.authoring.builder for the keys)
    authoring: Mapping[str, Any] = field(default_factory=dict, repr=False)
    #: math type of transient cases when it differs from ``math_type`` (steady)
    transient_math_type: tuple[str, ...] | None = None
    #: flows whose traction parts must not carry inflow above a Reynolds number: (viscosity
    #: parameter, limit); see ``casekit.families.inflow``
    traction_inflow_limit: tuple[str, float] | None = None
    #: the lowest element degree a calibration of the family can run at (a Taylor-Hood pair's
    #: pressure is one degree below its velocity: degree 1 would ask for a P0 continuous space)
    min_degree: int = 1
    #: the highest order of the spatial derivatives of the leading unknown in the PDE (4: biharmonic)
    spatial_order: int = 2

    def math_types(self, transient: bool) -> list[str]:
        if transient and self.transient_math_type:
            return list(self.transient_math_type)
        return list(self.math_type)

    def allowed_math_types(self) -> set[str]:
        return {*self.math_type, *(self.transient_math_type or ()), "mixed_type"} \
            if self.steady_allowed else {*self.math_type, *(self.transient_math_type or ())}

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def output(self, name: str) -> Output:
        for o in self.outputs:
            if o.name == name:
                return o
        raise KeyError(name)

    def unknown(self, name: str) -> Unknown:
        for u in self.unknowns:
            if u.name == name:
                return u
        raise KeyError(name)

    @property
    def transient(self) -> bool:
        return self.time_order > 0


FAMILIES: Registry[Family] = Registry("family", plugins="casekit.families.equations")


def register(family: Family) -> Family:
    """Register a family, checking its declared kinds against the design's vocabularies."""
    from casekit.errors import CasekitError

    for what, given, valid in (("math type", {*family.math_type, *(family.transient_math_type or ())}, MATH_TYPES),
                               ("boundary-condition kind", set(family.bc_kinds), BC_KINDS)):
        unknown = sorted(given - set(valid))
        if unknown:
            raise CasekitError(f"family {family.name!r} declares the unknown {what}(s) {', '.join(unknown)}",
                               valid=", ".join(valid))
    return FAMILIES.register(family.name, family)
