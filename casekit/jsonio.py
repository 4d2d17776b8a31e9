"""Deterministic JSON, content hashes and atomic writes.

Everything casekit writes goes through :func:`atomic_write_bytes`: the bytes land in a
temporary file in the target directory, are flushed to disk and then renamed over the target,
so an interrupted run never leaves a half-written file.
"""

from __future__ import annotations

import contextlib
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
    """JSON text with the caller's key order, no NaN/Infinity, UTF-8 as is.  Text that is not
    valid Unicode (lone surrogates, e.g. from a file name or meta.json a submission wrote) is
    escaped, so whatever reached a record can always be written."""
    def render(o: Any) -> str:
        if indent is None:
            return json.dumps(o, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return json.dumps(o, ensure_ascii=False, indent=indent, allow_nan=False) + "\n"

    text = render(obj)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = render(unicode_safe(obj))
    return text


def safe_text(text: str) -> str:
    """``text`` made encodable as UTF-8: a lone surrogate becomes the six characters ``\\udXXX``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def unicode_safe(obj: Any) -> Any:
    """``obj`` with every string (keys included) made encodable as UTF-8."""
    if isinstance(obj, str):
        return safe_text(obj)
    if isinstance(obj, dict):
        return {unicode_safe(k): unicode_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [unicode_safe(v) for v in obj]
    return obj


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


def _umask() -> int:
    mask = os.umask(0o022)  # read once, at import (os.umask has no read-only form)
    os.umask(mask)
    return mask


#: the permissions a plain open() would give a new file (mkstemp's 0600 would make reports,
#: records and datasets unreadable to anyone else)
FILE_MODE = 0o666 & ~_umask()


def atomic_write_bytes(path: Path, data: bytes, mode: int = FILE_MODE) -> None:
    """Write ``path`` all or nothing (a temporary file beside it, then a rename), with ``mode``
    (default: what open() would give; pass 0o600 for private files)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
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


#: bounds on JSON read from files others wrote (records, imports)
MAX_LINE_BYTES = 16 << 20
MAX_INT_DIGITS = 30


def iter_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, object) for each non-empty line; a bad line (not JSON, longer than
    MAX_LINE_BYTES, nested too deeply, non-finite or oversized numbers) is a CasekitError."""
    if not Path(path).is_file():
        raise CasekitError("file not found", file=str(path))
    with open(path, encoding="utf-8", errors="strict") as fh:
        lineno = 0
        while True:
            try:
                line = fh.readline(MAX_LINE_BYTES + 1)
            except UnicodeDecodeError:
                raise CasekitError(f"line {lineno + 1} is not UTF-8 text", file=str(path)) from None
            if not line:
                return
            lineno += 1
            if len(line) > MAX_LINE_BYTES:
                raise CasekitError(f"line {lineno} is longer than {MAX_LINE_BYTES} bytes", file=str(path))
            if not line.strip():
                continue
            try:
                obj = json.loads(line, parse_constant=_reject_constant, parse_float=_finite)
            except (json.JSONDecodeError, ValueError) as exc:
                raise CasekitError(f"line {lineno} is not valid JSON: {exc}", file=str(path)) from None
            except RecursionError:
                raise CasekitError(f"line {lineno} is nested too deeply", file=str(path)) from None
            check_numbers(obj, file=f"{path}:{lineno}")
            yield lineno, obj


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is not a finite number")
    return value


def check_numbers(data: Any, *, file: str | None = None) -> None:
    """Every float finite and every integer of at most MAX_INT_DIGITS digits (iteratively)."""
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        obj, where = stack.pop()
        if isinstance(obj, bool):
            continue
        if isinstance(obj, float) and not math.isfinite(obj):
            raise CasekitError(f"{obj!r} is not a finite number", pointer=where or "/", file=file,
                               valid="a finite number")
        if isinstance(obj, int) and len(str(abs(obj))) > MAX_INT_DIGITS:
            raise CasekitError(f"an integer of more than {MAX_INT_DIGITS} digits", pointer=where or "/", file=file)
        if isinstance(obj, dict):
            stack.extend((v, f"{where}/{k}") for k, v in obj.items())
        elif isinstance(obj, list):
            stack.extend((v, f"{where}/{i}") for i, v in enumerate(obj))


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not allowed in casekit JSON")


def finite_float(value: float) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)

