"""``point``: the value of the output field (or a component) at a given interior point."""

from __future__ import annotations

from typing import Any

import numpy as np

from casekit.domains import Domain
from casekit.model.source import TargetSource
from casekit.targets import MIN_DEPTH, Context, Exact, Issue, TargetKind, default_of, register


@register
class Point(TargetKind):
    name = "point"
    required = ("at",)
    optional = ("of",)
    doc = "the value of the output field (or a component) at a point inside the domain"

    def check(self, t: TargetSource, ctx: Context) -> list[Issue]:
        issues = super().check(t, ctx)
        if t.at is None:
            return issues
        if len(t.at) != ctx.dim:
            return [*issues, Issue("at", f"the point needs {ctx.dim} coordinates", self.field_help("at", ctx))]
        p = np.asarray([t.at], dtype=float)
        depth = float(ctx.domain.geometry.distance(p)[0])
        least = MIN_DEPTH * ctx.domain.geometry.diameter()
        if not ctx.domain.inside(p)[0] or depth < least:
            issues.append(Issue("at", f"the point {t.at} is not inside the domain at least {least:.3g} (5% of its "
                                "diameter) from the boundary, where boundary data would give its value away",
                                f"a point inside {ctx.domain.name} at least {least:.3g} from its boundary"))
        return issues

    def entry(self, t: TargetSource, ctx: Context) -> dict[str, Any]:
        return {**super().entry(t, ctx), "at": [float(c) for c in t.at or []]}

    def exact(self, t: TargetSource, ctx: Context) -> Exact:
        f = ctx.field(t.of if t.of is not None else ctx.default_of())
        value = float(f(np.asarray([t.at], dtype=float))[0])
        grid = ctx.d.interior_points
        return Exact(value, float(np.max(np.abs(f(grid)))) if len(grid) else abs(value))

    def draw(self, source: dict[str, Any], domain: Domain, rng: np.random.Generator) -> dict[str, Any]:
        """A point well inside: a random one among the deepest quarter of a sample, rounded."""
        b = domain.bbox()
        axes = [np.linspace(b[2 * i], b[2 * i + 1], 41) for i in range(domain.dim)]
        pts = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, domain.dim)
        pts = pts[domain.inside(pts)]
        depth = domain.geometry.distance(pts)
        deep = pts[depth >= np.quantile(depth, 0.75)]
        at = [round(float(c), 3) for c in deep[int(rng.integers(len(deep)))]]
        return {**super().draw(source, domain, rng), "name": f"point_{default_of(source, domain)}", "at": at}

    def describe(self, entry: dict[str, Any], case_spec: dict[str, Any]) -> str:
        where = ", ".join(f"{c:g}" for c in entry["at"])
        return f"the value of `{entry['of']}` at the point ({where}){self.when(case_spec)}"
