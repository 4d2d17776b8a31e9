"""The inversion battery (``casekit.solvers.baselines``) as submission files.

The build scores the inverters in-process (they are casekit's own code and need no FEM library);
``casekit baselines`` writes them as self-contained submissions for ``casekit evaluate``.
"""

from __future__ import annotations

from casekit.solvers.baselines import applicable, arrays, kinds
from casekit.solvers.bundle import solver_source

#: every registered inverter, by name
KINDS = kinds()

__all__ = ["KINDS", "applicable", "arrays", "cheater"]


def cheater(kind: str) -> dict[str, bytes]:
    if kind not in KINDS:
        raise ValueError(f"unknown cheater {kind!r} (valid: {', '.join(KINDS)})")
    body = ("def solve(case_spec):\n"
            "    _casekit_runtime()\n"
            "    from casekit.solvers.baselines import solve as _solve\n\n"
            f"    _solve(case_spec, {kind!r})\n")
    return {"solver.py": solver_source(f"casekit trivial baseline submission: {kind}.", body).encode()}
