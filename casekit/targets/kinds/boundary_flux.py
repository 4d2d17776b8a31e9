"""``boundary_flux``: the integral over a Dirichlet boundary part of the family's normal flux
``c grad(u) . n`` (e.g. kappa du/dn; n the outward normal) -- a reaction, what the Dirichlet
data do not say (on a Neumann part the data would give it away)."""

from __future__ import annotations

from typing import Any

import numpy as np
import sympy as sp

from casekit.domains import Domain
from casekit.errors import CasekitError
from casekit.expr import exact, to_text
from casekit.families import Family
from casekit.families.calculus import grad
from casekit.model.source import TargetSource
from casekit.targets import Context, Exact, Issue, TargetKind, register
from casekit.targets.quadrature import boundary_integral


@register
class BoundaryFlux(TargetKind):
    name = "boundary_flux"
    required = ("boundary",)
    doc = ("the integral over a Dirichlet boundary part of the outward normal flux c grad(u) . n of a scalar "
           "family (c: kappa, epsilon, ...), in 2-D (along the part's curves) and 3-D (over a box's face)")

    def unavailable(self, family: Family, dim: int) -> list[Issue]:
        issues = []
        if family.flux_coefficient is None:
            from casekit.families import FAMILIES

            ok = [n for n, f in FAMILIES.items() if f.flux_coefficient is not None]
            issues.append(Issue("kind", f"family {family.name!r} has no scalar normal flux c grad(u) . n",
                                f"families {', '.join(ok)} (or kinds mean, point, max)"))
        return issues

    def check(self, t: TargetSource, ctx: Context) -> list[Issue]:
        issues = super().check(t, ctx)
        if t.boundary is not None:
            dirichlet = [tag for tag, b in ctx.d.source.boundary.items() if b.kind == "dirichlet"]
            if t.boundary not in ctx.domain.tags():
                issues.append(Issue("boundary", f"domain {ctx.domain.name!r} has no boundary part {t.boundary!r}",
                                    ", ".join(dirichlet) or "(no dirichlet part)"))
            elif t.boundary not in dirichlet:
                issues.append(Issue("boundary", f"the flux through {t.boundary!r} is not an output: that part is not "
                                    "dirichlet, so its data give the flux away", ", ".join(dirichlet)
                                    or "(no dirichlet part)"))
        return issues

    def coefficient(self, ctx: Context) -> Any:
        assert ctx.d.family.flux_coefficient is not None
        return exact(sp.sympify(ctx.d.family.flux_coefficient(ctx.d.params)))

    def entry(self, t: TargetSource, ctx: Context) -> dict[str, Any]:
        c = self.coefficient(ctx)
        return {**super().entry(t, ctx), "boundary": t.boundary, "flux": ctx.d.family.flux_text,
                "coefficient": (float(c) if c.is_Number else to_text(c))}

    def exact(self, t: TargetSource, ctx: Context) -> Exact:
        from casekit import leak

        assert ctx.d.solution is not None and t.boundary is not None
        u = ctx.d.solution[ctx.d.family.unknowns[0].name]
        c = self.coefficient(ctx)
        parts = [c * g for g in grad(u, ctx.dim)]

        def flux(pts: np.ndarray, n: np.ndarray) -> np.ndarray:
            g = leak.evaluate(tuple(parts), pts, ctx.t, ctx.dim)
            return np.asarray(np.sum(g * n, axis=1), dtype=float)

        value = boundary_integral(ctx.domain, t.boundary, flux)
        scale = boundary_integral(ctx.domain, t.boundary, lambda p, n: np.abs(flux(p, n)), rtol=1e-3)
        return Exact(value, scale)

    def draw(self, source: dict[str, Any], domain: Domain, rng: np.random.Generator) -> dict[str, Any]:
        """The flux through a random Dirichlet part of the source."""
        kinds = {t: b if isinstance(b, str) else b["kind"] for t, b in source["boundary"].items()}
        dirichlet = [t for t, k in kinds.items() if k == "dirichlet"]
        if not dirichlet:
            raise CasekitError("a boundary_flux target needs a dirichlet boundary part; this case has none",
                               valid="--axis bc=dirichlet or mixed")
        tag = dirichlet[int(rng.integers(len(dirichlet)))]
        return {"name": f"flux_{tag}", "kind": self.name, "boundary": tag}

    def describe(self, entry: dict[str, Any], case_spec: dict[str, Any]) -> str:
        c = entry["coefficient"]
        return (f"the flux `{entry['flux']}` integrated over the boundary part `{entry['boundary']}` (n the outward "
                f"unit normal; here the coefficient is `{c}`){self.when(case_spec)}")

