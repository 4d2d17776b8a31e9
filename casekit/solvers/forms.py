"""What each family's weak form is made of: one declarative description every track consumes.

A track maps a *kind of form* to its library's weak form once (a scalar second-order equation,
linear elasticity, incompressible flow, the biharmonic split, the wave equation) and reads which
case_spec parameter plays which role from here -- it never switches on family names.  A new
family of an existing kind is a new entry here and in ``casekit/families``; a test checks that
both agree.  This module is part of the sandbox runtime (data only).

Scalar families: ``m u_t - div(kappa grad u) + beta . grad u + c u + R(u) [+ u (b . grad u)] = f``
with ``m`` = 1 for first-order-in-time families; Neumann data are the flux ``kappa du/dn`` and
Robin data ``kappa du/dn + alpha u``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Scalar:
    #: parameter holding kappa (None: 1)
    diffusion: str | None = None
    #: vector parameter holding beta
    convection: str | None = None
    #: parameter holding R(u), an expression in the unknown ``u``
    reaction: str | None = None
    #: parameter whose square, negated, is c (Helmholtz: c = -k^2)
    wavenumber: str | None = None
    #: vector parameter holding b of the Burgers transport u (b . grad u)
    burgers: str | None = None


@dataclass(frozen=True)
class Elasticity:
    """-div sigma(u) = f, sigma = lambda tr(eps) I + 2 mu eps (plane strain in 2-D); Neumann data
    are tractions sigma n."""

    young: str = "E"
    poisson_ratio: str = "nu"


@dataclass(frozen=True)
class Flow:
    """-nu Laplace(u) [+ (u . grad) u] + grad p = f, div u = 0; Neumann data nu (grad u) n - p n."""

    viscosity: str = "nu"
    convective: bool = False


@dataclass(frozen=True)
class Biharmonic:
    """Laplace^2 u = f with u and Laplace(u) given on the boundary: two Poisson solves."""


@dataclass(frozen=True)
class Wave:
    """u_tt - c^2 Laplace(u) = f with u and u_t at t0; Neumann data c^2 du/dn."""

    speed: str = "c"


Form = Scalar | Elasticity | Flow | Biharmonic | Wave

FORMS: dict[str, Form] = {
    "poisson": Scalar(diffusion="kappa"),
    "heat": Scalar(diffusion="kappa"),
    "helmholtz": Scalar(wavenumber="k"),
    "convection_diffusion": Scalar(diffusion="epsilon", convection="beta"),
    "reaction_diffusion": Scalar(diffusion="epsilon", reaction="reaction"),
    "burgers": Scalar(diffusion="nu", burgers="b"),
    "linear_elasticity": Elasticity(),
    "stokes": Flow(convective=False),
    "navier_stokes": Flow(convective=True),
    "biharmonic": Biharmonic(),
    "wave": Wave(),
}


def form_of(family: str) -> Form:
    try:
        return FORMS[family]
    except KeyError:
        raise KeyError(f"no form is described for the family {family!r} (casekit/solvers/forms.py)") from None
