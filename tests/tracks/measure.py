"""Errors measured the way the evaluator measures them: relative L2 on the evaluation grid
against the manufactured solution, at the in-domain points."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from casekit import leak


def measured_error(d: Any, solution: Path) -> float:
    spec = d.case_spec()
    sol = np.load(solution)
    pts = d.grid.points()
    inside = d.domain.inside(pts)
    ref = leak.output_values(leak.evaluate(d.solution[d.output.of], pts[inside], d.t_out, d.dim), d.output.kind)
    comps = spec["output"].get("components")
    got = np.column_stack([sol[c].ravel()[inside] for c in comps]) if comps else sol["u"].ravel()[inside]
    return leak.relative_gap(got, ref)


def assert_observed_order(family: str, domain: str, levels: dict[str, Any], degree: int, cells: tuple[int, int],
                          order: int, solve: Any, *, stabilization: bool = False) -> None:
    """Solve the seeded case at two resolutions with ``solve(d, settings, n) -> solution.npz``
    (the time step refined with the mesh) and check the observed order is within 0.3 of ``order``;
    the design's stabilization is kept only when ``stabilization``."""
    import math

    from casekit.derive import derive
    from casekit.model.source import CaseSource
    from tests.helpers import build_source

    src = build_source(family, domain, levels, seed=1)
    if "manufactured_solution" not in src:  # a numerical-reference case (a transient polynomial reaction)
        from casekit.authoring.builder import build_source as draw

        src = draw(family, domain, levels, 1, manufactured=True)  # the order needs the exact solution
    src["eval_grid"] = {"nx": 41, "ny": 41}
    base = dict(src["calibration"], degree=degree)
    if not stabilization:
        base.pop("stabilization", None)
    d = derive(CaseSource.from_dict(src))
    errors = []
    for n in cells:
        settings = {**base, "cells_across": n}
        if "dt" in base:
            t = src["pde"]["time"]
            settings["dt"] = (t["t_end"] - t["t0"]) / (2 * n)
        errors.append(measured_error(d, solve(d, settings, n)))
    observed = math.log(errors[0] / errors[1]) / math.log(cells[1] / cells[0])
    assert observed > order - 0.3, f"{family} on {domain}: errors {errors}, observed order {observed:.2f}"
