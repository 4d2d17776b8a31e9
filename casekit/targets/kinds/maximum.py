"""``max``: the maximum of the output field (or a component) over the closed domain."""

from __future__ import annotations

from typing import Any

import numpy as np

from casekit.model.source import TargetSource
from casekit.targets import MIN_DEPTH, Context, Exact, TargetKind, register
from casekit.targets.quadrature import maximum


@register
class Maximum(TargetKind):
    name = "max"
    optional = ("of",)
    doc = ("the maximum of the output field (or a component) over the domain; it must be attained inside, "
           "away from the boundary")

    def exact(self, t: TargetSource, ctx: Context) -> Exact:
        f = ctx.field(t.of if t.of is not None else ctx.default_of())
        m = maximum(ctx.domain, f)
        grid = ctx.d.interior_points
        scale = float(np.max(np.abs(f(grid)))) if len(grid) else abs(m.value)
        return Exact(m.value, scale, m.point, m.depth)

    @staticmethod
    def least_depth(ctx: Context) -> float:
        return MIN_DEPTH * ctx.domain.geometry.diameter()

    def describe(self, entry: dict[str, Any], case_spec: dict[str, Any]) -> str:
        return f"the maximum of `{entry['of']}` over the domain{self.when(case_spec)}"
