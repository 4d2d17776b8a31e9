"""Deterministic JSON, content hashes and atomic writes.

Everything casekit writes goes through :func:`atomic_write_bytes`: the bytes land in a
temporary file in the target directory, are flushed to disk and then renamed over the target,
so an interrupted run never leaves a half-written file.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from casekit.errors import CasekitError


def dumps(obj: Any, *, indent: int | None = None) -> str:
    """JSON text with the caller's key order, no NaN/Infinity, UTF-8 as is."""
    if indent is None:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return json.dumps(obj, ensure_ascii=False, indent=indent, allow_nan=False) + "\n"


def canonical(obj: Any) -> bytes:
    """Key-sorted compact JSON bytes: the input of every content hash."""
    return json.dumps(
        obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
    ).encode()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def content_hash(obj: Any) -> str:
    return sha256_bytes(canonical(obj))


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with _suppress():
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode())


def write_json(path: Path, obj: Any) -> None:
    atomic_write_text(path, dumps(obj, indent=2))


def write_jsonl(path: Path, rows: list[Any]) -> None:
    atomic_write_text(path, "".join(dumps(r) + "\n" for r in rows))


def read_json(path: Path) -> Any:
    try:
        return json.loads(Path(path).read_text(), parse_constant=_reject_constant)
    except FileNotFoundError:
        raise CasekitError("file not found", file=str(path)) from None
    except (json.JSONDecodeError, ValueError) as exc:
        raise CasekitError(f"not valid JSON: {exc}", file=str(path)) from None


def iter_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, object) for each non-empty line; a bad line is a CasekitError."""
    if not Path(path).is_file():
        raise CasekitError("file not found", file=str(path))
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                yield lineno, json.loads(line, parse_constant=_reject_constant)
            except (json.JSONDecodeError, ValueError) as exc:
                raise CasekitError(f"line {lineno} is not valid JSON: {exc}", file=str(path)) from None


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not allowed in casekit JSON")


def finite_float(value: float) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


class _suppress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return True
