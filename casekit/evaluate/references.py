"""Reference fields at evaluation time.

A packaged dataset (``casekit package``, a release) ships the reference arrays only of cases that
have no manufactured solution (numerical references, compressed, each listed with its sha256 in
the manifest).  The reference of a manufactured case is its hidden solution -- the record's
``evaluation_metadata.manufactured_solution``, covered by the record's content hash -- sampled on
the case's evaluation grid when the case is evaluated, exactly as the build sampled it
(:func:`casekit.build.references.manufactured`): the same parser, the same vectorised printer,
NaN outside the exact domain.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from casekit.errors import CasekitError
from casekit.scoring.artifacts import output_names

#: ``reference_path`` of a packaged case whose reference is its manufactured solution, sampled on
#: the grid at evaluation (a JSON pointer into the record itself: no file is shipped)
MANUFACTURED_REFERENCE = "#/evaluation_metadata/manufactured_solution"
#: the date written into the zip entries of a packaged reference (so packaging stays byte-identical)
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def sample_manufactured(family: str, solution: dict[str, Any], case_spec: dict[str, Any]) -> dict[str, np.ndarray]:
    """The output field(s) of the manufactured ``solution`` (the record's hidden solution text,
    by unknown) on the case's evaluation grid, NaN outside the exact domain."""
    from casekit import leak
    from casekit.domains import resolve
    from casekit.expr import as_expr, exact
    from casekit.families import FAMILIES
    from casekit.grid import Grid

    dom = case_spec["domain"]
    domain = resolve(dom["type"], dom["geometry_params"])
    dim = domain.dim
    time = case_spec["pde"].get("time")
    variables = ["x", "y", "z"][:dim] + (["t"] if time else [])
    output = FAMILIES.get(family).output(case_spec["output"]["field"])
    if output.of not in solution:
        raise CasekitError(f"the manufactured solution has no {output.of!r} (the output field's unknown)",
                           "/evaluation_metadata/manufactured_solution")
    given = solution[output.of]
    value: Any = tuple(exact(as_expr(v, variables=variables)) for v in given) if isinstance(given, list) else \
        exact(as_expr(given, variables=variables))
    grid = Grid.from_spec(case_spec["eval_grid"])
    pts = grid.points()
    mask = grid.mask(domain.inside).ravel()
    values = leak.evaluate(value, pts[mask], float(time["t_end"]) if time else 0.0, dim)
    names = output_names(case_spec)
    if output.kind == "components":
        return {n: _fill(values[:, i], mask, grid.shape) for i, n in enumerate(names)}
    return {names[0]: _fill(leak.output_values(values, output.kind), mask, grid.shape)}


def _fill(values: np.ndarray, mask: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    full = np.full(mask.size, np.nan)
    full[mask] = values
    return full.reshape(shape)


@dataclass(frozen=True)
class Reference:
    """Where one case's reference field comes from (picklable: it travels to Dask workers with
    its case batch): an ``.npz`` file, checked against ``sha256`` when one is given (a packaged
    dataset's manifest), or the manufactured ``solution`` sampled on the grid."""

    case_id: str
    path: Path | None = None
    sha256: str | None = None
    family: str = ""
    solution: dict[str, Any] | None = None

    @property
    def manufactured(self) -> bool:
        return self.solution is not None

    def load(self, case_spec: dict[str, Any]) -> dict[str, np.ndarray]:
        """The reference arrays by output name; a file whose bytes do not match its sha256, or that
        lacks an output array, is a :class:`CasekitError` naming the case."""
        if self.solution is not None:
            return sample_manufactured(self.family, self.solution, case_spec)
        assert self.path is not None
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            raise CasekitError(f"the reference cannot be read: {exc.strerror}", case_id=self.case_id,
                               file=str(self.path)) from None
        if self.sha256 is not None and hashlib.sha256(data).hexdigest() != self.sha256:
            raise CasekitError("the reference does not match its sha256 in the manifest (tampered or corrupt); "
                               "no verdict is given against it", case_id=self.case_id, file=str(self.path))
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as z:
                return {k: np.asarray(z[k]) for k in output_names(case_spec)}
        except (KeyError, ValueError, OSError, zipfile.BadZipFile) as exc:
            raise CasekitError(f"the reference is not an array archive with the case's output arrays: {exc}",
                               case_id=self.case_id, file=str(self.path)) from None


def write_compressed(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """``arrays`` as a deflate-compressed ``.npz`` (what ``np.savez_compressed`` writes, read by
    ``np.load``) whose bytes depend on the arrays only: entries in name order, each dated 1980-01-01."""
    from casekit.jsonio import atomic_write_bytes

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(arrays):
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            with zf.open(info, "w", force_zip64=True) as fh:
                np.lib.format.write_array(fh, np.ascontiguousarray(arrays[name]), allow_pickle=False)
    atomic_write_bytes(path, buf.getvalue())


def read_arrays(path: Path) -> dict[str, np.ndarray]:
    """Every array of an ``.npz`` file (the grid axes included)."""
    with np.load(path, allow_pickle=False) as z:
        return {k: np.asarray(z[k]) for k in z.files}
