"""Small builders of valid case sources for tests."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from casekit import yamlio

POISSON: dict[str, Any] = {
    "id": "poisson_test",
    "family": "poisson",
    "domain": {"template": "unit_square"},
    "pde": {"params": {"kappa": "1 + x/2"}},
    "manufactured_solution": {"u": "exp(x)*cos(2*pi*y) + x*y"},
    "boundary": {"left": "dirichlet", "right": "neumann", "top": {"kind": "robin", "alpha": 2.0},
                 "bottom": "dirichlet"},
    "eval_grid": {"nx": 33, "ny": 33},
    "output": {"field": "u"},
    "tracks": ["dolfinx"],
}


def poisson(**changes: Any) -> dict[str, Any]:
    """The valid Poisson source with top-level keys replaced (None deletes a key)."""
    src = copy.deepcopy(POISSON)
    for k, v in changes.items():
        if v is None:
            src.pop(k, None)
        else:
            src[k] = v
    return src


def write(tmp: Path, source: dict[str, Any], name: str | None = None) -> Path:
    path = tmp / "cases" / source.get("family", "x") / f"{name or source['id']}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yamlio.dumps(source))
    return path


def record(store, family: str) -> dict:  # type: ignore[no-untyped-def]
    return next(r for r in store.records.values() if r["pde_classification"]["equation_family"] == family)


def write_submission(root: Path, case_id: str, source: str, attempt: int | None = None) -> Path:
    d = root / case_id / (f"attempt_{attempt}" if attempt else "")
    d.mkdir(parents=True, exist_ok=True)
    (d / "solver.py").write_text(source)
    return root


def coarse_case(tmp: Path, src: dict[str, Any], tracks: list[str], cells_across: int) -> Path:
    """``src`` made coarse for a test build (a 25 x 25 grid, ``cells_across``, a 60 s timeout),
    listing ``tracks``, written as tmp/cases/<family>/<id>.yaml."""
    src["eval_grid"] = {"nx": 25, "ny": 25}
    src["calibration"] = {**src["calibration"], "cells_across": cells_across}
    src["evaluation"]["timeout_sec"] = 60.0
    src["tracks"] = tracks
    return write(tmp, src)


def build_source(family: str, domain: str, levels: dict[str, str], seed: int, case_id: str | None = None,
                 salt: bytes | None = None, targets: tuple[str, ...] | list[str] = ()) -> dict[str, Any]:
    """A generated case source that passes validation, the inversion battery included: the
    generator's draw for ``seed`` or the next seeds' (what ``casekit new`` does).  Raw draws
    (``casekit.authoring.builder.build_source``) may be invertible and are refused."""
    from casekit.authoring.new import make_case

    source = make_case(family, domain, dict(levels), seed, salt=salt, targets=tuple(targets)).source
    if case_id:
        source["id"] = case_id
    return source


def hostile_sources() -> dict[str, str]:
    """The three hostile case sources of issue 27 as YAML text, by name: a manufactured solution
    whose forcing expands past any printable size, a 2000 x 2000 evaluation grid, and a 5000-digit
    integer.  Each must be refused with one line, exit status 1, in seconds and bounded memory."""
    import yaml

    def source(name: str, **changes: Any) -> str:
        return yaml.safe_dump(poisson(id=f"poisson_{name}", **changes))

    return {
        "power_9": source("power_9", manufactured_solution={
            "u": "(sin(pi*x) + sin(2*pi*y) + cos(3*pi*x*y) + x**2)**9"}),
        "grid_2000": source("grid_2000", eval_grid={"nx": 2000, "ny": 2000}),
        "integer_5000": source("integer_5000").replace("nx: 33", "nx: " + "9" * 5000),
    }
