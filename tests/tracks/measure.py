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
