"""Content-addressed stage outputs under ``build/cache/<stage>/<key>/``.

A stage's output is a directory written under a temporary name and renamed into place when
complete, so a build killed at any moment leaves either a complete entry or none; a rebuild
finds complete entries and skips their work.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from casekit.jsonio import content_hash


def key(*parts: object) -> str:
    return content_hash(list(parts))


class StageCache:
    def __init__(self, root: Path) -> None:
        self.root = Path(root) / "cache"

    def path(self, stage: str, k: str) -> Path:
        return self.root / stage / k

    def get(self, stage: str, k: str) -> Path | None:
        p = self.path(stage, k)
        return p if (p / ".complete").exists() else None

    def put(self, stage: str, k: str, write: Callable[[Path], None]) -> Path:
        """Run ``write(tmpdir)`` and publish its directory atomically as the entry."""
        final = self.path(stage, k)
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{k[:12]}-", dir=final.parent))
        try:
            write(tmp)
            (tmp / ".complete").touch()
            if final.exists():  # an incomplete leftover of a killed build
                shutil.rmtree(final)
            tmp.rename(final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return final

    def get_or_put(self, stage: str, k: str, write: Callable[[Path], None]) -> tuple[Path, bool]:
        """(entry, cached?)"""
        hit = self.get(stage, k)
        if hit is not None:
            return hit, True
        return self.put(stage, k, write), False

    def sweep(self) -> None:
        """Remove temporary directories left by killed builds."""
        if self.root.exists():
            for tmp in self.root.glob("*/.*-*"):
                shutil.rmtree(tmp, ignore_errors=True)
