"""``mean``: the average of the output field (or a component) over the domain."""

from __future__ import annotations

from typing import Any

import numpy as np

from casekit.model.source import TargetSource
from casekit.targets import Context, Exact, TargetKind, register
from casekit.targets.quadrature import domain_integral


@register
class Mean(TargetKind):
    name = "mean"
    optional = ("of",)
    doc = "the mean of the output field (or a component) over the domain: its integral over the domain's measure"

    def exact(self, t: TargetSource, ctx: Context) -> Exact:
        f = ctx.field(t.of if t.of is not None else ctx.default_of())
        measure = ctx.domain.geometry.measure()
        value = domain_integral(ctx.domain, f) / measure
        scale = domain_integral(ctx.domain, lambda p: np.abs(f(p)), rtol=1e-3) / measure
        return Exact(value, scale)

    def describe(self, entry: dict[str, Any], case_spec: dict[str, Any]) -> str:
        size = "volume" if case_spec["domain"]["dim"] == 3 else "area"
        return (f"the mean of `{entry['of']}` over the domain{self.when(case_spec)}: the integral of "
                f"`{entry['of']}` over the domain divided by the domain's {size}")
