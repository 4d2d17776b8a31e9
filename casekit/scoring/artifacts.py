"""Checking and loading the canonical artifacts of a run (paper Appendix J).

``solution.npz`` must hold the grid axes and the output arrays named by the case (``u`` for a
scalar output, else one array per ``output.components`` name), each of the grid's shape
(ny, nx) or (nz, ny, nx) and a float dtype; values at in-domain grid points must be finite (an
in-domain NaN or Inf is an artifact failure, never a point dropped from the norm); values
outside the domain are ignored.  ``meta.json`` must conform to ``schemas/meta.schema.json``.
"""

from __future__ import annotations

import json
import math
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from casekit import schema
from casekit.grid import Grid

#: largest solution.npz read (a submission cannot make the evaluator load gigabytes)
MAX_NPZ_BYTES = 512 * 1024 * 1024


@dataclass(eq=False)  # hashable by identity, as exceptions are (see casekit.errors.CasekitError)
class ArtifactError(Exception):
    category: str  # missing_artifact | invalid_artifact | non_finite
    message: str

    def __str__(self) -> str:
        return self.message


def output_names(case_spec: dict[str, Any]) -> list[str]:
    return list(case_spec["output"].get("components") or ["u"])


def load_solution(out_dir: Path, case_spec: dict[str, Any], mask: np.ndarray) -> dict[str, np.ndarray]:
    """The output arrays of a run, checked; raises :class:`ArtifactError` (never anything else
    for a hostile file: only the expected members are read, each checked against the grid
    before a byte of its data is loaded)."""
    path = out_dir / "solution.npz"
    if not path.is_file() or path.is_symlink():
        raise ArtifactError("missing_artifact", "solution.npz was not written")
    if path.stat().st_size > MAX_NPZ_BYTES:
        raise ArtifactError("invalid_artifact", f"solution.npz is larger than {MAX_NPZ_BYTES} bytes")
    grid = Grid.from_spec(case_spec["eval_grid"])
    axes = grid.axes()
    expected = {**{a: v.shape for a, v in axes.items()}, **{n: grid.shape for n in output_names(case_spec)}}
    limit = max_solution_bytes(case_spec)
    if path.stat().st_size > limit:
        raise ArtifactError("invalid_artifact", f"solution.npz has {path.stat().st_size} bytes; the grid's arrays "
                            f"need at most {limit}")
    _check_directory(path)
    try:
        with zipfile.ZipFile(path) as zf:
            members = {info.filename: info for info in zf.infolist()}
            arrays = {name: _member(zf, members, name, shape) for name, shape in expected.items()}
    except ArtifactError:
        raise
    except Exception as exc:  # hostile bytes may raise anything in zipfile or numpy's header parser
        raise ArtifactError("invalid_artifact", f"solution.npz cannot be read as an .npz archive: "
                            f"{type(exc).__name__}: {str(exc)[:200]}") from None
    for axis, values in axes.items():
        _check_axis(axis, arrays[axis], values)
    out = {}
    for name in output_names(case_spec):
        a = arrays[name]
        inside = a[mask]
        bad = ~np.isfinite(inside)
        if bad.any():
            raise ArtifactError("non_finite", f"array {name!r} has {int(bad.sum())} NaN/Inf values at "
                                f"in-domain grid points")
        out[name] = a.astype(float)
    return out


#: how far a float64 axis may be from the grid's, relative to the grid's extent
AXIS_TOLERANCE = 1e-9


def _check_axis(axis: str, a: np.ndarray, values: np.ndarray) -> None:
    """An axis matches the grid's to the precision of its dtype: a float32 axis holds the grid's
    points rounded to float32.  A dtype too coarse to tell neighbouring grid points apart is
    refused (float16 on a fine grid)."""
    scale = 1 + float(np.abs(values).max())
    rounding = float(np.finfo(a.dtype).eps) * scale  # twice what rounding to the axis's dtype moves a point
    if len(values) > 1 and rounding >= float(np.diff(values).min()) / 2:
        raise ArtifactError("invalid_artifact", f"axis {axis!r} has dtype {a.dtype}, too coarse for the "
                            f"evaluation grid's spacing (float32 or float64 axes are accepted)")
    if not np.allclose(a.astype(float), values, rtol=0, atol=max(AXIS_TOLERANCE * scale, rounding)):
        raise ArtifactError("invalid_artifact", f"axis {axis!r} does not match the evaluation grid "
                            f"(expected {len(values)} points from {values[0]:g} to {values[-1]:g})")


def max_solution_bytes(case_spec: dict[str, Any]) -> int:
    """The largest solution.npz accepted: the grid's arrays as uncompressed doubles, twice, plus
    1 MiB for headers (a bigger file carries something else)."""
    grid = Grid.from_spec(case_spec["eval_grid"])
    values = int(np.prod(grid.shape)) * len(output_names(case_spec)) + sum(grid.shape)
    return min(MAX_NPZ_BYTES, 2 * 16 * values + (1 << 20))


#: an .npz holds a few arrays: its central directory is small
MAX_MEMBERS = 64
MAX_DIRECTORY_BYTES = 64 * 1024


def _check_directory(path: Path) -> None:
    """Count the archive's members from its end records before anything parses the directory (a
    directory of millions of entries would cost the evaluator minutes and gigabytes)."""
    import struct

    size = path.stat().st_size
    with open(path, "rb") as fh:
        fh.seek(max(0, size - (22 + 65535 + 20)))
        tail = fh.read()
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < 22:
        raise ArtifactError("invalid_artifact", "solution.npz is not a zip archive (.npz) or is truncated")
    _, _, _, _, members, directory, _, _ = struct.unpack("<4s4H2LH", tail[at:at + 22])
    loc = tail.rfind(b"PK\x06\x07", 0, at)
    if loc >= 0 and at - loc == 20:  # zip64: the real counts are in the zip64 end record
        (_, _, offset, _) = struct.unpack("<4sLQL", tail[loc:loc + 20])
        with open(path, "rb") as fh:
            fh.seek(offset)
            rec = fh.read(56)
        if len(rec) < 56 or rec[:4] != b"PK\x06\x06":
            raise ArtifactError("invalid_artifact", "solution.npz has a broken zip64 end record")
        members, directory = struct.unpack("<QQ", rec[24:40])
    if members > MAX_MEMBERS or directory > MAX_DIRECTORY_BYTES:
        raise ArtifactError("invalid_artifact", f"solution.npz declares {members} members and a directory of "
                            f"{directory} bytes; at most {MAX_MEMBERS} members are accepted")


def _member(zf: zipfile.ZipFile, members: dict[str, zipfile.ZipInfo], name: str, shape: tuple[int, ...]
            ) -> np.ndarray:
    """One array of an .npz, read only after its header matches the expected shape and a float
    dtype and its declared size is exactly what that needs (a zip bomb is never inflated)."""
    info = members.get(f"{name}.npy")
    if info is None:
        have = sorted(m.removesuffix(".npy") for m in members)[:12]
        what = "axis" if name in ("x", "y", "z") else "array"
        raise ArtifactError("invalid_artifact", f"solution.npz lacks the {what} {name!r} "
                            f"(it has {', '.join(have) or 'nothing'})")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise ArtifactError("invalid_artifact", f"array {name!r} is compressed with method {info.compress_type}; "
                            "stored or deflated members are accepted (numpy.savez / savez_compressed)")
    most = MAX_NPY_HEADER + 16 + int(np.prod(shape)) * 16  # the header, then the data at 16 bytes a value
    if info.file_size > most:
        raise ArtifactError("invalid_artifact", f"array {name!r} declares {info.file_size} bytes, more than a "
                            f"{'x'.join(map(str, shape))} float array needs")
    with zf.open(info) as fh:
        got_shape, fortran, dtype = _npy_header(fh, name)
        if not isinstance(dtype, np.dtype) or dtype.kind != "f" or dtype.itemsize > 16 or dtype.hasobject:
            raise ArtifactError("invalid_artifact", f"array {name!r} has dtype {dtype}, a float dtype is needed")
        if tuple(got_shape) != tuple(shape):
            raise ArtifactError("invalid_artifact", f"array {name!r} has shape {tuple(got_shape)}, the grid needs "
                                f"{tuple(shape)}")
        data_bytes = int(np.prod(shape)) * dtype.itemsize
        if info.file_size != fh.tell() + data_bytes:
            raise ArtifactError("invalid_artifact", f"array {name!r} declares {info.file_size} bytes, its header "
                                f"and shape need {fh.tell() + data_bytes}")
        raw = fh.read(data_bytes)
    if len(raw) != data_bytes:
        raise ArtifactError("invalid_artifact", f"array {name!r} is truncated")
    arr = np.frombuffer(raw, dtype=dtype)
    return arr.reshape(shape, order="F" if fortran else "C")


#: the longest .npy header read (numpy's own limit for untrusted files is 10 000)
MAX_NPY_HEADER = 10_000


def _npy_header(fh: Any, name: str) -> tuple[tuple[int, ...], bool, np.dtype]:
    """Shape, order and dtype of an .npy stream, reading at most ``MAX_NPY_HEADER`` bytes of
    header: the length field is checked before anything is read (numpy's parser reads the
    declared length, up to 4 GiB, before it compares it with its limit)."""
    import io
    import struct

    lead = fh.read(8)
    if len(lead) < 8 or lead[:6] != b"\x93NUMPY":
        raise ArtifactError("invalid_artifact", f"{name!r} is not an .npy array")
    version = (lead[6], lead[7])
    width = {(1, 0): 2, (2, 0): 4, (3, 0): 4}.get(version)
    if width is None:
        raise ArtifactError("invalid_artifact", f"{name!r} has an unsupported .npy version {version}")
    raw_len = fh.read(width)
    if len(raw_len) < width:
        raise ArtifactError("invalid_artifact", f"{name!r} is truncated")
    (length,) = struct.unpack("<H" if width == 2 else "<I", raw_len)
    if length > MAX_NPY_HEADER:
        raise ArtifactError("invalid_artifact", f"{name!r} declares a {length}-byte header; at most "
                            f"{MAX_NPY_HEADER} are read")
    header = fh.read(length)
    if len(header) < length:
        raise ArtifactError("invalid_artifact", f"{name!r} is truncated")
    buf = io.BytesIO(raw_len + header)
    read = np.lib.format.read_array_header_1_0 if width == 2 else np.lib.format.read_array_header_2_0
    shape, fortran, dtype = read(buf, max_header_size=MAX_NPY_HEADER)
    return tuple(shape), bool(fortran), dtype


#: largest meta.json read, and how deeply it may nest
MAX_META_BYTES = 1_000_000
MAX_META_DEPTH = 16


def load_meta(out_dir: Path) -> dict[str, Any]:
    path = out_dir / "meta.json"
    if not path.is_file() or path.is_symlink():
        raise ArtifactError("missing_artifact", "meta.json was not written")
    if path.stat().st_size > MAX_META_BYTES:
        raise ArtifactError("invalid_artifact", f"meta.json is larger than {MAX_META_BYTES} bytes")
    try:
        meta = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ArtifactError("invalid_artifact", f"meta.json is not valid JSON: {str(exc)[:200]}") from None
    if _depth(meta) > MAX_META_DEPTH:
        raise ArtifactError("invalid_artifact", f"meta.json nests deeper than {MAX_META_DEPTH} levels")
    problems = schema.validate(meta, "meta")
    if problems:
        p = problems[0]
        raise ArtifactError("invalid_artifact", f"meta.json{p.pointer}: {p.message[:300]}")
    return meta  # type: ignore[no-any-return]


#: largest targets.json read (a few names and numbers)
MAX_TARGETS_BYTES = 64 * 1024


def load_targets(out_dir: Path, case_spec: dict[str, Any]) -> dict[str, float]:
    """The target values of a run (``targets.json``: an object with exactly the case's target
    names, each a finite number); raises :class:`ArtifactError` for anything else, never another
    exception.  A case without targets needs no file (an empty dict)."""
    from casekit.solvers.targets import TARGETS_FILE

    names = [e["name"] for e in case_spec.get("targets") or []]
    if not names:
        return {}
    path = out_dir / TARGETS_FILE
    if not path.is_file() or path.is_symlink():
        raise ArtifactError("missing_artifact", f"{TARGETS_FILE} was not written (the case asks for the target "
                            f"values {', '.join(names)})")
    if path.stat().st_size > MAX_TARGETS_BYTES:
        raise ArtifactError("invalid_artifact", f"{TARGETS_FILE} is larger than {MAX_TARGETS_BYTES} bytes")
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_TARGETS_BYTES + 1)
        data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ArtifactError("invalid_artifact", f"{TARGETS_FILE} is not valid JSON: {str(exc)[:200]}") from None
    if not isinstance(data, dict):
        raise ArtifactError("invalid_artifact", f"{TARGETS_FILE} must be a JSON object {{name: number}}, not "
                            f"{type(data).__name__}")
    unknown = sorted(k for k in data if k not in names)
    if unknown:
        raise ArtifactError("invalid_artifact", f"{TARGETS_FILE} names unknown targets "
                            f"{', '.join(repr(k[:40]) for k in unknown[:5])} (valid: {', '.join(names)})")
    missing = [n for n in names if n not in data]
    if missing:
        raise ArtifactError("invalid_artifact", f"{TARGETS_FILE} lacks the target values {', '.join(missing)}")
    out = {}
    for n in names:
        v = data[n]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or abs(v) > 1e300 or not math.isfinite(v):
            raise ArtifactError("non_finite" if isinstance(v, float) else "invalid_artifact",
                                f"{TARGETS_FILE}: the value of {n!r} must be a finite number, not {str(v)[:40]}")
        out[n] = float(v)
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _depth(obj: Any) -> int:
    """Nesting depth of parsed JSON, without recursion."""
    deepest, stack = 0, [(obj, 1)]
    while stack:
        o, d = stack.pop()
        deepest = max(deepest, d)
        if d > MAX_META_DEPTH:
            break
        if isinstance(o, dict):
            stack.extend((v, d + 1) for v in o.values())
        elif isinstance(o, list):
            stack.extend((v, d + 1) for v in o)
    return deepest


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
