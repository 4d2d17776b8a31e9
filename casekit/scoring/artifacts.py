"""Checking and loading the canonical artifacts of a run (paper Appendix J).

``solution.npz`` must hold the grid axes and the output arrays named by the case (``u`` for a
scalar output, else one array per ``output.components`` name), each of the grid's shape
(ny, nx) or (nz, ny, nx) and a float dtype; values at in-domain grid points must be finite (an
in-domain NaN or Inf is an artifact failure, never a point dropped from the norm); values
outside the domain are ignored.  ``meta.json`` must conform to ``schemas/meta.schema.json``.
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from casekit import schema
from casekit.grid import Grid

#: largest solution.npz read (a submission cannot make the evaluator load gigabytes)
MAX_NPZ_BYTES = 512 * 1024 * 1024


@dataclass
class ArtifactError(Exception):
    category: str  # missing_artifact | invalid_artifact | non_finite
    message: str

    def __str__(self) -> str:
        return self.message


def output_names(case_spec: dict[str, Any]) -> list[str]:
    return list(case_spec["output"].get("components") or ["u"])


def load_solution(out_dir: Path, case_spec: dict[str, Any], mask: np.ndarray) -> dict[str, np.ndarray]:
    """The output arrays of a run, checked; raises :class:`ArtifactError`."""
    path = out_dir / "solution.npz"
    if not path.is_file() or path.is_symlink():
        raise ArtifactError("missing_artifact", "solution.npz was not written")
    if path.stat().st_size > MAX_NPZ_BYTES:
        raise ArtifactError("invalid_artifact", f"solution.npz is larger than {MAX_NPZ_BYTES} bytes")
    grid = Grid.from_spec(case_spec["eval_grid"])
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: np.asarray(data[k]) for k in data.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise ArtifactError("invalid_artifact", f"solution.npz cannot be read: {exc}") from None
    for axis, values in grid.axes().items():
        if axis not in arrays:
            raise ArtifactError("invalid_artifact", f"solution.npz lacks the axis {axis!r}")
        a = arrays[axis]
        tol = 1e-9 * (1 + np.abs(values).max())
        if a.shape != values.shape or not np.allclose(a.astype(float), values, rtol=0, atol=tol):
            raise ArtifactError("invalid_artifact", f"axis {axis!r} does not match the evaluation grid "
                                f"(expected {len(values)} points from {values[0]:g} to {values[-1]:g})")
    out = {}
    for name in output_names(case_spec):
        if name not in arrays:
            raise ArtifactError("invalid_artifact", f"solution.npz lacks the array {name!r} "
                                f"(it has {', '.join(sorted(arrays)) or 'nothing'})")
        a = arrays[name]
        if a.shape != grid.shape:
            raise ArtifactError("invalid_artifact", f"array {name!r} has shape {a.shape}, the grid needs "
                                f"{grid.shape}")
        if not np.issubdtype(a.dtype, np.floating):
            raise ArtifactError("invalid_artifact", f"array {name!r} has dtype {a.dtype}, a float dtype is needed")
        inside = a[mask]
        bad = ~np.isfinite(inside)
        if bad.any():
            raise ArtifactError("non_finite", f"array {name!r} has {int(bad.sum())} NaN/Inf values at "
                                f"in-domain grid points")
        out[name] = a.astype(float)
    return out


def load_meta(out_dir: Path) -> dict[str, Any]:
    path = out_dir / "meta.json"
    if not path.is_file() or path.is_symlink():
        raise ArtifactError("missing_artifact", "meta.json was not written")
    try:
        meta = json.loads(path.read_text()[:1_000_000])
    except (UnicodeDecodeError, json.JSONDecodeError, ValueError) as exc:
        raise ArtifactError("invalid_artifact", f"meta.json is not valid JSON: {exc}") from None
    problems = schema.validate(meta, "meta")
    if problems:
        p = problems[0]
        raise ArtifactError("invalid_artifact", f"meta.json{p.pointer}: {p.message}")
    return meta


def save_reference(path: Path, case_spec: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    """A reference in the same layout as a solution (axes + output arrays, NaN outside)."""
    import io

    from casekit.jsonio import atomic_write_bytes

    grid = Grid.from_spec(case_spec["eval_grid"])
    buf = io.BytesIO()
    np.savez(buf, **{**grid.axes(), **arrays})  # type: ignore[arg-type]  # numpy's stub matches **arrays to allow_pickle
    atomic_write_bytes(path, buf.getvalue())


def load_reference(path: Path, case_spec: dict[str, Any]) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as data:
        return {k: np.asarray(data[k]) for k in output_names(case_spec)}
