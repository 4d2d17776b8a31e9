"""Where built cases come from: a build directory, a packaged dataset or a release.

Each gives evaluator records (with thresholds) and each case's reference
(:class:`casekit.evaluate.references.Reference`).  A build directory holds
``<track>/records.jsonl`` and ``<track>/<id>/reference.npz``.  A dataset (``casekit package``
output, and a release, which is one with its version stamped in) holds the primary track's records
in ``cases.jsonl``, every further track's in ``tracks/<track>.jsonl``, and ``references/<id>.npz``
for the cases without a manufactured solution only (compressed; each file is checked against its
sha256 in ``manifest.json`` when it is loaded); a manufactured case's reference is its hidden
solution sampled on the grid at evaluation.  :func:`open_release` verifies the whole release
first, so nothing is scored against a tampered one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casekit.errors import CasekitError, UsageError
from casekit.evaluate.references import MANUFACTURED_REFERENCE, Reference
from casekit.ids import no_such_case, resolve
from casekit.jsonio import iter_jsonl


@dataclass
class CaseStore:
    root: Path
    records: dict[str, dict[str, Any]]
    kind: str  # "build" or "dataset"
    #: a dataset's manifest: path -> sha256 of every file (empty for a build directory)
    digests: dict[str, str] = field(default_factory=dict)
    #: a dataset's manifest (name, version, tracks, files); None for a build directory
    manifest: dict[str, Any] | None = None

    def public_ids(self) -> dict[str, str]:
        """Public (agent-visible) id -> descriptive id."""
        return {str(r.get("public_id") or cid): cid for cid, r in self.records.items()}

    def resolve(self, name: str) -> str | None:
        """The descriptive id of a case named by its public or descriptive id (None if unknown)."""
        return resolve(name, self.records)

    def reference(self, case_id: str) -> Reference:
        """Where the case's reference comes from: its file (in a dataset, with the sha256 the
        manifest lists, checked on load), or its manufactured solution, sampled on load."""
        rec = self.records[case_id]
        meta = rec["evaluation_metadata"]
        rel = meta["reference_path"]
        if rel == MANUFACTURED_REFERENCE:
            if not meta.get("manufactured_solution"):
                raise CasekitError("the record names its manufactured solution as its reference and has none",
                                   "/evaluation_metadata/reference_path", case_id)
            return Reference(case_id, family=rec["pde_classification"]["equation_family"],
                             solution=meta["manufactured_solution"])
        base = self.root if self.kind == "dataset" else self.root / meta["track"]
        path = base / rel
        if not path.is_file():
            raise CasekitError(f"the reference of {case_id} is missing", file=str(path), case_id=case_id)
        if self.kind != "dataset":
            return Reference(case_id, path)
        sha = self.digests.get(rel)
        if sha is None:
            raise CasekitError("the reference is not listed in the dataset's manifest", file=str(path),
                               case_id=case_id, valid=f"casekit verify {self.root}")
        return Reference(case_id, path, sha)

    def shipped_references(self) -> tuple[int, int, int]:
        """(manufactured references sampled at evaluation, numerical references shipped, their bytes
        on disk) over this store's cases."""
        sampled = shipped = size = 0
        for rec in self.records.values():
            rel = rec["evaluation_metadata"]["reference_path"]
            if rel == MANUFACTURED_REFERENCE:
                sampled += 1
                continue
            shipped += 1
            base = self.root if self.kind == "dataset" else self.root / rec["evaluation_metadata"]["track"]
            path = base / rel
            size += path.stat().st_size if path.is_file() else 0
        return sampled, shipped, size


def _manifest(path: Path) -> dict[str, Any]:
    try:
        data = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path / 'manifest.json'} cannot be read: {exc}",
                         valid="a directory written by casekit package / casekit release") from None
    if not isinstance(data, dict) or not isinstance(data.get("tracks"), list) or not data["tracks"] \
            or not isinstance(data.get("files"), list):
        raise UsageError(f"{path / 'manifest.json'} is not a casekit manifest")
    return data


def _no_track(path: Path, manifest: dict[str, Any], track: str) -> UsageError:
    what = f"{manifest.get('name', '')} {manifest.get('version', '')}".strip()
    return UsageError(f"{path}{f' ({what})' if what else ''} carries no {track} track",
                      valid=", ".join(str(t) for t in manifest["tracks"]))


def open_store(path: Path, track: str, subset: str = "") -> CaseStore:
    """The cases of ``track`` in a build directory, a packaged dataset or a release (a dataset
    that does not carry ``track`` is refused, naming the tracks it does carry); ``subset`` names a
    further set of cases of a dataset (:mod:`casekit.package.subsets`: ``authored``)."""
    from casekit.package.subsets import of_manifest

    path = Path(path)
    manifest: dict[str, Any] | None = None
    digests: dict[str, str] = {}
    if subset and not (path / "manifest.json").is_file():
        raise UsageError(f"{path} is not a packaged dataset, so it has no set {subset!r}",
                         valid="a directory written by casekit package / casekit release")
    if (path / "cases.jsonl").is_file():
        kind = "dataset"
        records_file = path / "cases.jsonl"
        if (path / "manifest.json").is_file():
            manifest = _manifest(path)
            sets = {s.name: s for s in of_manifest(manifest)}
            if subset not in sets:
                raise UsageError(f"{path} has no set of cases {subset!r}",
                                 valid=", ".join(repr(n) for n in sets if n) or "none: it holds the main set only")
            tracks = list(sets[subset].tracks)
            if track not in tracks:
                raise _no_track(path, manifest, track)
            records_file = path / sets[subset].records_file(track)
            digests = {str(f["path"]): str(f["sha256"]) for f in manifest["files"]
                       if isinstance(f, dict) and "path" in f and "sha256" in f}
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
    return CaseStore(path.resolve(), records, kind, digests, manifest)


def tracks_of(path: Path) -> list[tuple[str, str]]:
    """(set of cases, track) of every set of records that a build directory or dataset holds:
    a dataset's sets in its manifest's order, each with its primary track first; a build
    directory's tracks by name (its set is "")."""
    path = Path(path)
    if (path / "manifest.json").is_file():
        from casekit.package.subsets import of_manifest

        return [(s.name, t) for s in of_manifest(_manifest(path)) for t in s.tracks]
    if path.is_dir():
        return [("", d.name) for d in sorted(path.iterdir()) if (d / "records.jsonl").is_file()]
    return []


def find_case(path: Path, name: str, track: str) -> tuple[CaseStore, str]:
    """The store holding the case ``name`` (descriptive or public id, :func:`casekit.ids.resolve`)
    and its descriptive id: ``track``'s records first, then every other set and track that
    ``path`` holds (an agent-visible case_spec is the same on every track).  A name found
    nowhere is refused with the closest ids."""
    held = tracks_of(path)
    order = sorted(held, key=lambda st: (st[1] != track, held.index(st)))
    if not order:  # a dataset without a manifest, a records file: open_store says what it is
        order = [("", track)]
    known: list[str] = []
    for subset, t in order:
        store = open_store(path, t, subset)
        case_id = store.resolve(name)
        if case_id is not None:
            return store, case_id
        known += [*store.records, *store.public_ids()]
    where = f"{path} (" + ", ".join(f"{s + '/' if s else ''}{t}" for s, t in order) + ")"
    raise no_such_case(name, known, where)


def open_release(path: Path, track: str, subset: str = "") -> CaseStore:
    """A release (or any packaged dataset) to evaluate against, with nothing built: refused unless
    every file matches its manifest and every record its schema and content hash
    (:func:`casekit.package.verify.verify`), and unless it carries ``track``."""
    from casekit.package.verify import verify

    path = Path(path)
    if not path.is_dir() or not (path / "manifest.json").is_file() or not (path / "cases.jsonl").is_file():
        raise UsageError(f"{path} is not a casekit release (no manifest.json and cases.jsonl)",
                         valid="releases/<name>/<version>, written by casekit release")
    manifest = _manifest(path)
    if track not in [str(t) for t in manifest["tracks"]]:  # before the checksums: the cheaper refusal first
        raise _no_track(path, manifest, track)
    problems = verify(path)
    if problems:
        more = f" and {len(problems) - 1} more" if len(problems) > 1 else ""
        raise UsageError(f"{path} does not verify, refusing to evaluate against it: {problems[0].render()}{more}",
                         valid=f"casekit verify {path}")
    return open_store(path, track, subset)
