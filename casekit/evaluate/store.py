"""Where built cases come from: a build directory or a packaged dataset.

Both give evaluator records (with thresholds) and the path of each case's reference arrays.
A build directory holds ``<track>/records.jsonl`` and ``<track>/<id>/reference.npz``; a dataset
(``casekit package`` output) holds ``cases.jsonl`` and ``references/<id>.npz``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casekit.errors import CasekitError, UsageError
from casekit.jsonio import iter_jsonl


@dataclass
class CaseStore:
    root: Path
    records: dict[str, dict[str, Any]]
    kind: str  # "build" or "dataset"

    def public_ids(self) -> dict[str, str]:
        """Public (agent-visible) id -> descriptive id."""
        return {str(r.get("public_id") or cid): cid for cid, r in self.records.items()}

    def resolve(self, name: str) -> str | None:
        """The descriptive id of a case named by its public or descriptive id (None if unknown)."""
        if name in self.records:
            return name
        return self.public_ids().get(name)

    def reference(self, case_id: str) -> Path:
        rec = self.records[case_id]
        rel = rec["evaluation_metadata"]["reference_path"]
        base = self.root if self.kind == "dataset" else self.root / rec["evaluation_metadata"]["track"]
        path = base / rel
        if not path.is_file():
            raise CasekitError(f"the reference of {case_id} is missing", file=str(path), case_id=case_id)
        return path


def open_store(path: Path, track: str) -> CaseStore:
    path = Path(path)
    if (path / "cases.jsonl").is_file():
        records_file, kind = path / "cases.jsonl", "dataset"
    elif (path / track / "records.jsonl").is_file():
        records_file, kind = path / track / "records.jsonl", "build"
    elif path.is_file() and path.suffix == ".jsonl":
        records_file, kind = path, "build"
        path = path.parent.parent
    else:
        raise UsageError(f"{path} holds no built cases", valid=f"a build directory with {track}/records.jsonl "
                         "or a dataset directory with cases.jsonl")
    records = {}
    for _, rec in iter_jsonl(records_file):
        records[rec["id"]] = rec
    return CaseStore(path.resolve(), records, kind)
