"""The semantic version of a release, by what an agent or a score sees: one rule table
(:func:`classify`) and the diff of two packaged datasets that applies it (:func:`diff`).

Data is what an agent or a score sees -- the agent-visible specification, prompts, references,
accuracy thresholds and gates: a changed or removed case is major, an added case or track minor.
Metadata is what neither reads -- calibration timings under the paired gate, machine, library
patch versions and the content hash they move -- and is patch level, as is the documentation.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casekit.errors import UsageError
from casekit.package.build_dist import MANIFEST, arrays_digest
from casekit.package.subsets import of_manifest, track_of

LEVELS = ("patch", "minor", "major")

#: a change to a record, by the longest pointer prefix that names it: (level, what it is).  Data
#: (major) is what an agent or a score sees; metadata (patch) is what neither reads.  An unknown
#: field is data.
RECORD_RULES: dict[str, tuple[str, str]] = {
    "": ("major", "record"),
    "/id": ("major", "id"),
    "/public_id": ("major", "public id"),
    "/pde_classification": ("major", "classification"),
    "/case_spec": ("major", "specification"),
    "/case_spec/eval_grid": ("major", "grid"),
    "/case_spec/output": ("major", "output contract"),
    "/supported_libraries": ("major", "tracks of the case"),
    "/schema_version": ("major", "schema version"),
    "/evaluation_config": ("major", "gates"),
    "/evaluation_metadata": ("major", "evaluation metadata"),
    "/evaluation_metadata/construction_method": ("major", "reference"),
    "/evaluation_metadata/reference_config": ("major", "reference"),
    "/evaluation_metadata/manufactured_solution": ("major", "reference"),
    "/evaluation_metadata/refinement": ("major", "reference"),
    "/evaluation_metadata/reference_path": ("major", "reference"),
    "/evaluation_metadata/calibration_path": ("major", "calibration"),
    "/evaluation_metadata/thresholds/tau_acc": ("major", "accuracy threshold"),
    "/evaluation_metadata/targets": ("major", "targets"),
    "/evaluation_metadata/e_base": ("major", "calibration error e_base"),
    # the calibration solver is re-run beside every submission: its settings are the runtime gate
    "/evaluation_metadata/calibration_config": ("major", "calibration settings"),
    # the paired gate times the calibration beside the submission and never reads these
    "/evaluation_metadata/calibration_config/repeats": ("patch", "timed runs"),
    "/evaluation_metadata/calibration_config/mesh": ("patch", "calibration mesh report"),
    "/evaluation_metadata/thresholds/tau_time": ("patch", "tau_time"),
    "/evaluation_metadata/t_base": ("patch", "t_base"),
    "/evaluation_metadata/t_base_runs": ("patch", "t_base_runs"),
    "/evaluation_metadata/environment": ("patch", "machine"),
    "/evaluation_metadata/environment/casekit_version": ("patch", "casekit version"),
    "/evaluation_metadata/environment/libraries": ("patch", "library patch version"),
    "/evaluation_metadata/source_hash": ("patch", "source hash"),
    "/evaluation_metadata/design": ("patch", "design labels"),
    "/tags": ("patch", "tags"),
    "/content_hash": ("patch", "content hash"),
}

#: a change to a dataset file that is not a record (records are compared field by field)
FILE_RULES: dict[str, tuple[str, str]] = {
    "": ("patch", "documentation"),
    "references/": ("major", "reference"),
    "prompts/": ("major", "prompt"),
    "schemas/": ("major", "schema"),
    "calibration/": ("patch", "calibration solution"),
}

#: cases and tracks appearing or disappearing
EVENTS: dict[str, tuple[str, str]] = {
    "case added": ("minor", "added"),
    "case removed": ("major", "removed"),
    "track added": ("minor", "new track"),
    "track removed": ("major", "removed track"),
}

#: files whose content is the records (compared record by record, never by digest)
RECORD_FILES = ("cases.jsonl", "agent.jsonl", "tracks/")
#: files that carry the version (compared with the version taken out)
STAMPED = ("README.md", "croissant.json")


def classify(where: str, old: Any = None, new: Any = None) -> tuple[str, str]:
    """``(level, what)`` of one change: ``where`` is a record's JSON pointer
    (``/evaluation_metadata/t_base``), a dataset file (``references/x.npz``) or an event of
    :data:`EVENTS`; ``old`` and ``new`` are the values (a library's versions: a change of the
    patch number alone is metadata, any other is data)."""
    if where in EVENTS:
        return EVENTS[where]
    if where.startswith("/"):
        if where.startswith("/evaluation_metadata/environment/libraries/") and not _patch_only(old, new):
            return "major", "library version"
        key = max((k for k in RECORD_RULES if where == k or where.startswith(k + "/") or not k), key=len)
        return RECORD_RULES[key]
    key = max((k for k in FILE_RULES if where.startswith(k)), key=len)
    return FILE_RULES[key]


def _patch_only(old: Any, new: Any) -> bool:
    def parts(v: Any) -> list[str]:
        return str(v).split(".") if v is not None else []

    a, b = parts(old), parts(new)
    return len(a) >= 3 and len(b) >= 3 and a[:2] == b[:2]


@dataclass
class Change:
    level: str
    what: str
    case: str = ""  # "<id>", or "<id> (<track>)" off the primary track; empty for a dataset-wide change
    file: str = ""


@dataclass
class Diff:
    changes: list[Change] = field(default_factory=list)

    @property
    def level(self) -> str:
        return max((c.level for c in self.changes), key=LEVELS.index, default="patch")

    def _events(self, event: str) -> list[str]:
        return [c.case for c in self.changes if c.what == EVENTS[event][1] and c.case]

    @property
    def added(self) -> list[str]:
        return self._events("case added")

    @property
    def removed(self) -> list[str]:
        return self._events("case removed")

    @property
    def tracks(self) -> list[str]:
        """Tracks added or removed ("new track: x", "removed track: y")."""
        return [c.what for c in self.changes if c.what.startswith(("new track: ", "removed track: "))]

    @property
    def changed(self) -> dict[str, list[str]]:
        """Each case whose data changed, and what changed."""
        events = {v[1] for v in EVENTS.values()}
        return _group(c for c in self.changes if c.level == "major" and c.case and c.what not in events)

    @property
    def metadata(self) -> dict[str, list[str]]:
        """Each case whose metadata changed, and what (its content hash only where its data did not)."""
        changed = self.changed
        return _group(c for c in self.changes if c.level == "patch" and c.case
                      and not (c.what == "content hash" and c.case in changed))

    @property
    def files(self) -> list[Change]:
        """Changed files that belong to no case (documentation, schemas, prompts)."""
        return [c for c in self.changes if c.file and not c.case]


def _group(changes: Iterable[Change]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for c in changes:
        if c.what not in out.setdefault(c.case, []):
            out[c.case].append(c.what)
    return out


def load_dataset(root: Path) -> tuple[dict[str, Any], dict[str, dict[str, dict[str, Any]]], dict[str, str]]:
    """The manifest, every track's records by id (a further set of cases' tracks by their
    :meth:`~casekit.package.subsets.Subset.label`, ``authored/dolfinx``), and the digests of the
    dataset's files."""
    if not (root / MANIFEST).is_file():
        raise UsageError(f"{root} is not a casekit dataset (no manifest.json)")
    manifest = json.loads((root / MANIFEST).read_text())
    files = {s.label(t): root / s.records_file(t) for s in of_manifest(manifest) for t in s.tracks}
    records = {}
    for t, path in files.items():
        rows = [json.loads(ln) for ln in path.read_text().splitlines() if ln] if path.is_file() else []
        records[t] = {r["id"]: r for r in rows}
    digests = {f["path"]: f["sha256"] for f in manifest["files"]}
    return manifest, records, digests


def released_ids(root: Path) -> dict[str, set[str]]:
    """The case ids a dataset or release holds, by track (:func:`load_dataset`'s labels)."""
    return {t: set(rs) for t, rs in load_dataset(root)[1].items()}


def _leaves(a: Any, b: Any, pointer: str = "") -> list[tuple[str, Any, Any]]:
    """The JSON pointers where ``a`` and ``b`` differ (objects compared key by key)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                out += _leaves(a.get(k), b.get(k), f"{pointer}/{k}")
        return out
    return [] if a == b else [(pointer, a, b)]


def diff(new: Path, old: Path) -> Diff:
    """Every change from the dataset ``old`` to ``new``, each classified by :func:`classify`."""
    new_m, new_r, new_d = load_dataset(new)
    old_m, old_r, old_d = load_dataset(old)
    new_a, old_a = ({f["path"]: f.get("arrays_sha256") for f in m["files"]} for m in (new_m, old_m))
    primary = new_m["tracks"][0]
    d = Diff()

    def add(where: str, case: str = "", old: Any = None, new: Any = None, what: str = "", file: str = "") -> None:
        level, label = classify(where, old, new)
        d.changes.append(Change(level, what or label, case, file))

    def label_of(t: str) -> Callable[[str], str]:
        return (lambda cid: cid) if track_of(t) == primary else (lambda cid: f"{cid} ({track_of(t)})")

    for t in sorted(set(old_r) - set(new_r)):
        add("track removed", what=f"removed track: {t}")
        if t != track_of(t):  # a further set of cases (or its track) gone: its cases are removed
            for cid in sorted(old_r[t]):
                add("case removed", label_of(t)(cid))
    for t in sorted(set(new_r) - set(old_r)):
        add("track added", what=f"new track: {t}")
        if t != track_of(t):  # a further set of cases (or its track) new: its cases are added
            for cid in sorted(new_r[t]):
                add("case added", label_of(t)(cid))
    for t in [t for t in new_r if t in old_r]:
        a, b = new_r[t], old_r[t]
        label = label_of(t)
        for cid in sorted(set(a) - set(b)):
            add("case added", label(cid))
        for cid in sorted(set(b) - set(a)):
            add("case removed", label(cid))
        for cid in sorted(set(a) & set(b)):
            for pointer, x, y in _leaves(b[cid], a[cid]):
                if pointer == "/evaluation_metadata/reference_path" and _sampled_either_way(b[cid], a[cid]):
                    d.changes.append(Change("patch", "reference sampled from its manufactured solution", label(cid)))
                    continue
                add(pointer, label(cid), x, y)
    public = {r["public_id"]: r["id"] for rs in (*old_r.values(), *new_r.values()) for r in rs.values()}
    came_or_went = set(d.added) | set(d.removed)
    record_files = {f for m in (new_m, old_m) for s in of_manifest(m) for f in s.files}
    # each case's case_spec as JSON text: a copy of the records' case_spec, compared there
    derived = tuple({f"{s.case_specs_dir}/" for m in (new_m, old_m) for s in of_manifest(m)})
    new_p, old_p = ({cid: r for label, rs in recs.items() if track_of(label) == primary for cid, r in rs.items()}
                    for recs in (new_r, old_r))
    for path in sorted(set(new_d) | set(old_d)):
        case = _case_of(path, primary, public)
        if path.startswith(RECORD_FILES) or path in record_files or path.startswith(derived) \
                or path == "CHANGELOG.md" or case in came_or_went:
            continue
        if path.startswith("references/") and case in new_p and case in old_p \
                and _sampled_either_way(old_p[case], new_p[case]):
            continue  # the reference is the manufactured solution, compared in the records
        if path in STAMPED:
            if _unstamped(new, path, new_m["version"]) != _unstamped(old, path, old_m["version"]):
                add(path, file=path)
        elif new_d.get(path) != old_d.get(path) and not _same_arrays(new, old, path, new_a, old_a):
            add(path, case, file=path)
    return d


def _sampled_either_way(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """A manufactured case whose reference is its manufactured solution sampled at evaluation in
    one of the two datasets and a shipped file of it in the other (earlier packagings shipped every
    reference): the same reference as long as the solution is the same (compared with the record,
    where any change of it, of the grid or of the output is data)."""
    from casekit.evaluate.references import MANUFACTURED_REFERENCE

    m_old, m_new = old.get("evaluation_metadata") or {}, new.get("evaluation_metadata") or {}
    paths = {m_old.get("reference_path"), m_new.get("reference_path")}
    return MANUFACTURED_REFERENCE in paths and len(paths) == 2 \
        and m_old.get("construction_method") == m_new.get("construction_method") == "manufactured" \
        and bool(m_new.get("manufactured_solution")) \
        and m_old.get("manufactured_solution") == m_new.get("manufactured_solution")


def _case_of(path: str, primary: str, public: dict[str, str]) -> str:
    """The case a reference, calibration or prompt file belongs to (empty for other files)."""
    parts = path.removesuffix(".npz").removesuffix(".md").split("/")
    if parts[0] == "references" and len(parts) == 2:
        return parts[1]
    if parts[0] == "calibration" and len(parts) == 3:
        return parts[2] if parts[1] == primary else f"{parts[2]} ({parts[1]})"
    if parts[0] == "prompts" and len(parts) == 3 and parts[2] in public:
        return public[parts[2]]
    return ""


def _unstamped(root: Path, path: str, version: str) -> str | None:
    """A file that carries the version (:data:`STAMPED`) with the version taken out, as
    :func:`_set_version` puts it in."""
    p = root / path
    if not p.is_file():
        return None
    text = p.read_text(encoding="utf-8")
    if path == "croissant.json":
        data = json.loads(text)
        data["version"] = "<version>"
        data["citeAs"] = str(data.get("citeAs", "")).replace(version, "<version>")
        return json.dumps(data, sort_keys=True)
    return text.replace(f" {version}\n", " <version>\n", 1)


def _same_arrays(new: Path, old: Path, path: str, new_a: dict[str, str | None], old_a: dict[str, str | None]) -> bool:
    """Two ``.npz`` files holding the same arrays (their zip headers carry the time of writing):
    by the manifests' array digests, else by the files where both are at hand."""
    if not path.endswith(".npz"):
        return False
    a, b = new_a.get(path), old_a.get(path)
    if a is None and (new / path).is_file():
        a = arrays_digest(new / path)
    if b is None and (old / path).is_file():
        b = arrays_digest(old / path)
    return a is not None and a == b
