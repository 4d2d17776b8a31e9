"""Where casekit's data directories are: ``schemas/``, ``templates/``.

In a source checkout (editable install) they are the top-level directories of the repository;
an installed wheel carries them in ``casekit/_data``.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


@cache
def data_dir(name: str) -> Path:
    for candidate in (_PACKAGE.parent / name, _PACKAGE / "_data" / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"casekit data directory {name!r} is missing from this installation")


def schemas_dir() -> Path:
    return data_dir("schemas")


def templates_dir() -> Path:
    return data_dir("templates")


def repo_root() -> Path | None:
    """The repository root when running from a checkout, else None."""
    root = _PACKAGE.parent
    return root if (root / "pyproject.toml").is_file() else None
