"""Self-convergence, a diagnostic that never gates (CodePDE's check of a solver without trusting
one answer): the attempt runs again at two resolutions given in the case_spec as ``resolution``
(cells across the domain; submissions may honour it), each run is scored against the reference,
and the observed order is ``log(e_coarse / e_fine) / log(n_fine / n_coarse)``.  A solver that
ignores the hint shows order ~0; one whose error does not shrink shows it too."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

#: the resolutions (cells across) of the diagnostic runs unless ``--convergence`` says otherwise
DEFAULT_RESOLUTIONS = (16, 32)


def parse_resolutions(text: str) -> tuple[int, ...]:
    """``"16,32"`` -> (16, 32): at least two increasing integers in [2, 4096]."""
    try:
        values = tuple(int(p) for p in text.split(",") if p.strip())
    except ValueError:
        raise ValueError(f"resolutions must be integers separated by commas, got {text!r}") from None
    if len(values) < 2 or any(not 2 <= v <= 4096 for v in values) or list(values) != sorted(set(values)):
        raise ValueError(f"resolutions must be at least two increasing integers in [2, 4096], got {text!r}")
    return values


def observed_order(resolutions: Sequence[int], errors: Sequence[float | None]) -> float | None:
    """The order between the two finest resolutions with a positive finite error (None when
    there are not two); a difference of logarithms, so errors far apart never overflow it."""
    pairs = [(n, e) for n, e in zip(resolutions, errors, strict=True)
             if e is not None and math.isfinite(e) and e > 0]
    if len(pairs) < 2:
        return None
    (n1, e1), (n2, e2) = pairs[-2], pairs[-1]
    order = (math.log(e1) - math.log(e2)) / math.log(n2 / n1)
    return order if math.isfinite(order) else None


def self_convergence(resolutions: Sequence[int], run: Callable[[dict[str, Any], Path], tuple[float | None, str]],
                     case_spec: dict[str, Any], work: Path) -> dict[str, Any]:
    """Run at each resolution (``run(spec, dest) -> (error or None, failure message)``) and
    summarise: resolutions, errors (None for a failed run, with its message), observed order."""
    errors: list[float | None] = []
    failures: dict[str, str] = {}
    for n in resolutions:
        error, message = run({**case_spec, "resolution": int(n)}, work / f"resolution-{n}")
        errors.append(error)
        if error is None:
            failures[str(n)] = message[:300]
    out: dict[str, Any] = {"resolutions": [int(n) for n in resolutions], "errors": errors,
                           "observed_order": observed_order(resolutions, errors)}
    if failures:
        out["failures"] = failures
    return out
