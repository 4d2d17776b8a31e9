"""A case as the checks see it: the agent-visible case_spec plus the hidden solution.

Both a derived case source and a built case record become a :class:`CaseView`, so every
semantic check (residual, boundary data, leaks, ...) runs on exactly the text an agent would see.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from casekit.domains import Domain, resolve
from casekit.errors import CasekitError, Problem
from casekit.expr import ExpressionError, as_expr, exact
from casekit.families import FAMILIES, Family, Output
from casekit.families.base import DATA_BC_KINDS
from casekit.families.calculus import coords
from casekit.grid import Grid

Locate = Callable[[str], str]


#: relative comparisons of data values fall back to absolute below this fraction of the solution scale
VALUE_FLOOR = 1e-3


@dataclass
class CaseView:
    case_id: str
    family: Family
    domain: Domain
    spec: dict[str, Any]
    #: the hidden manufactured solution as text (None for numerical-reference cases)
    solution_text: dict[str, Any] | None
    #: maps a pointer inside case_spec to the pointer the reader should look at in the file
    locate: Locate
    #: what checks measured beyond their findings (e.g. the span residual), for reports
    measures: dict[str, Any] = field(default_factory=dict)

    @property
    def dim(self) -> int:
        return self.domain.dim

    @property
    def transient(self) -> bool:
        return "time" in self.spec["pde"]

    @property
    def t0(self) -> float:
        return float(self.spec["pde"]["time"]["t0"]) if self.transient else 0.0

    @property
    def t_end(self) -> float:
        return float(self.spec["pde"]["time"]["t_end"]) if self.transient else 0.0

    @property
    def variables(self) -> list[str]:
        return [c.name for c in coords(self.dim)] + (["t"] if self.transient else [])

    @cached_property
    def grid(self) -> Grid:
        return Grid.from_spec(self.spec["eval_grid"])

    @cached_property
    def output(self) -> Output:
        return self.family.output(self.spec["output"]["field"])

    @cached_property
    def interior_points(self) -> np.ndarray:
        pts = self.grid.points()
        return pts[self.domain.inside(pts)]

    @cached_property
    def solution_scale(self) -> float:
        """RMS of the output unknown over the interior points at t_end (1 without a solution)."""
        if self.solution is None:
            return 1.0
        from casekit.leak import evaluate

        v = evaluate(self.solution[self.output.of], self.interior_points, self.t_end, self.dim)
        return float(np.sqrt(np.mean(np.square(v)))) or 1.0

    @property
    def value_floor(self) -> float:
        """Absolute floor of relative comparisons of data values: a thousandth of the solution's
        scale (so values near zero are compared absolutely)."""
        return VALUE_FLOOR * self.solution_scale

    def sample_points(self, n: int = 400) -> np.ndarray:
        pts = self.interior_points
        if len(pts) <= n:
            return pts
        return pts[np.linspace(0, len(pts) - 1, n).astype(int)]

    def expr(self, value: Any, params: tuple[str, ...] = ()) -> Any:
        """Parse a case_spec value (scalar or component list) into sympy."""
        if isinstance(value, list):
            return tuple(exact(as_expr(v, variables=self.variables, params=params)) for v in value)
        return exact(as_expr(value, variables=self.variables, params=params))

    @cached_property
    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for p in self.family.params:
            if p.name not in self.spec["pde"]["params"]:
                continue
            v = self.spec["pde"]["params"][p.name]
            out[p.name] = self.expr(v, params=("u",) if p.kind == "reaction" else ())
        return out

    @cached_property
    def solution(self) -> dict[str, Any] | None:
        if self.solution_text is None:
            return None
        return {k: self.expr(v) for k, v in self.solution_text.items()}

    def problem(self, pointer: str, message: str, check: str, valid: str | None = None) -> Problem:
        return Problem(message, self.locate(pointer), self.case_id, valid=valid, check=check)


def view_of_record(record: dict[str, Any]) -> CaseView:
    """A view of a built case record (raises CasekitError when its family or domain is unusable)."""
    spec = record["case_spec"]
    family = FAMILIES.get(record["pde_classification"]["equation_family"])
    domain = resolve(spec["domain"]["type"], spec["domain"]["geometry_params"],
                     case_id=record["id"], pointer="/case_spec/domain")
    solution = record["evaluation_metadata"].get("manufactured_solution")
    return CaseView(record["id"], family, domain, spec, solution, lambda p: "/case_spec" + p)


def parse_all(view: CaseView) -> list[Problem]:
    """Every expression of the case_spec parses over the allowed symbols."""
    problems = []
    for pointer, value, params in visible_values(view.spec, view.family):
        try:
            view.expr(value, params)
        except ExpressionError as exc:
            problems.append(view.problem(pointer, exc.message, "expression", exc.valid))
        except CasekitError as exc:  # pragma: no cover - defensive
            problems.append(view.problem(pointer, exc.message, "expression"))
    return problems


def visible_values(spec: dict[str, Any], family: Family) -> list[tuple[str, Any, tuple[str, ...]]]:
    """(pointer, value, extra parameter names) of every expression the agent sees."""
    out: list[tuple[str, Any, tuple[str, ...]]] = []
    kinds = {p.name: p.kind for p in family.params}
    for name, v in spec["pde"]["params"].items():
        if kinds.get(name) in ("field", "reaction") and isinstance(v, (str, int, float)):
            out.append((f"/pde/params/{name}", v, ("u",) if kinds[name] == "reaction" else ()))
    for name, v in spec["pde"].get("forcing", {}).items():
        out.append((f"/pde/forcing/{name}", v, ()))
    for kind in DATA_BC_KINDS:
        for i, entry in enumerate(spec["bc"].get(kind, [])):
            out.append((f"/bc/{kind}/{i}/value", entry["value"], ()))
            if "laplacian" in entry:
                out.append((f"/bc/{kind}/{i}/laplacian", entry["laplacian"], ()))
    for name, v in spec.get("ic", {}).items():
        out.append((f"/ic/{name}", v, ()))
    return out
