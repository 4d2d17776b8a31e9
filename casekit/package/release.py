"""``casekit release``: the semantic-version bump from what changed since the previous release.

major: a case removed, or an existing case's agent-visible specification (grid, output contract,
data), reference, or thresholds changed, or a data schema changed; minor: new cases or tracks and
nothing existing changed; patch: documentation only (card, prompts' wording, metadata).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casekit.errors import UsageError
from casekit.jsonio import atomic_write_text, write_json
from casekit.package.build_dist import MANIFEST, write_manifest

LEVELS = ("patch", "minor", "major")
#: files whose changes are data changes (compared case by case); everything else is documentation
DATA = ("cases.jsonl", "agent.jsonl", "references/", "calibration/", "schemas/", "tracks/")


@dataclass
class Diff:
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: dict[str, list[str]] = field(default_factory=dict)  # id -> what changed
    new_tracks: list[str] = field(default_factory=list)
    schemas_changed: list[str] = field(default_factory=list)
    docs_changed: list[str] = field(default_factory=list)

    @property
    def level(self) -> str:
        if self.removed or self.changed or self.schemas_changed:
            return "major"
        if self.added or self.new_tracks:
            return "minor"
        return "patch"


def _load(root: Path) -> tuple[dict[str, Any], dict[str, dict[str, Any]], dict[str, str]]:
    if not (root / MANIFEST).is_file():
        raise UsageError(f"{root} is not a casekit dataset (no manifest.json)")
    manifest = json.loads((root / MANIFEST).read_text())
    records = {json.loads(ln)["id"]: json.loads(ln) for ln in (root / "cases.jsonl").read_text().splitlines() if ln}
    digests = {f["path"]: f["sha256"] for f in manifest["files"]}
    return manifest, records, digests


def diff(new: Path, old: Path) -> Diff:
    new_m, new_r, new_d = _load(new)
    old_m, old_r, old_d = _load(old)
    d = Diff(added=sorted(set(new_r) - set(old_r)), removed=sorted(set(old_r) - set(new_r)),
             new_tracks=sorted(set(new_m["tracks"]) - set(old_m["tracks"])))
    for cid in sorted(set(new_r) & set(old_r)):
        a, b = new_r[cid], old_r[cid]
        what = []
        if a["case_spec"]["eval_grid"] != b["case_spec"]["eval_grid"]:
            what.append("grid")
        if a["case_spec"]["output"] != b["case_spec"]["output"]:
            what.append("output contract")
        if {k: v for k, v in a["case_spec"].items() if k not in ("eval_grid", "output")} != \
                {k: v for k, v in b["case_spec"].items() if k not in ("eval_grid", "output")}:
            what.append("specification")
        ref = f"references/{cid}.npz"
        if new_d.get(ref) != old_d.get(ref):
            what.append("reference")
        if a["evaluation_metadata"]["thresholds"] != b["evaluation_metadata"]["thresholds"] or \
                a["evaluation_config"] != b["evaluation_config"]:
            what.append("thresholds")
        if what:
            d.changed[cid] = what
    d.schemas_changed = sorted(p for p in set(new_d) | set(old_d) if p.startswith("schemas/")
                               and new_d.get(p) != old_d.get(p))
    d.docs_changed = sorted(p for p in set(new_d) | set(old_d) if new_d.get(p) != old_d.get(p)
                            and not p.startswith(DATA))
    return d


def bump(version: str, level: str) -> str:
    major, minor, patch = (int(x) for x in version.split("."))
    bumped = {"major": f"{major + 1}.0.0", "minor": f"{major}.{minor + 1}.0", "patch": f"{major}.{minor}.{patch + 1}"}
    return bumped[level]


def release(new: Path, old: Path, requested: str | None = None) -> tuple[str, Diff]:
    d = diff(new, old)
    previous = _load(old)[0]["version"]
    computed = bump(previous, d.level)
    version = computed
    if requested is not None:
        if _tuple(requested) < _tuple(computed):
            raise UsageError(f"version {requested} contradicts the changes: they need a {d.level} bump from "
                             f"{previous}", valid=f"{computed} or higher")
        version = requested
    manifest = json.loads((new / MANIFEST).read_text())
    _set_version(new, manifest["version"], version)
    entry = _changelog(version, previous, d)
    old_log = (old / "CHANGELOG.md").read_text().split("\n", 2)[2] if (old / "CHANGELOG.md").is_file() else ""
    atomic_write_text(new / "CHANGELOG.md", "# Changelog\n\n" + entry + old_log)
    write_manifest(new, manifest["name"], version, manifest["tracks"])
    return version, d


def first_release(new: Path, requested: str | None = None) -> tuple[str, int]:
    """The first release of a dataset: ``requested`` (default: the packaged version) stamped in,
    and a CHANGELOG that lists what it holds."""
    manifest, records, _ = _load(new)
    version = requested or manifest["version"]
    _tuple(version)
    _set_version(new, manifest["version"], version)
    families: dict[str, int] = {}
    for r in records.values():
        f = r["pde_classification"]["equation_family"]
        families[f] = families.get(f, 0) + 1
    entry = [f"## {version} (first release)", "",
             f"- {len(records)} case(s) on track(s) {', '.join(manifest['tracks'])}: "
             + ", ".join(f"{f} {n}" for f, n in sorted(families.items()))]
    atomic_write_text(new / "CHANGELOG.md", "# Changelog\n\n" + "\n".join(entry) + "\n")
    write_manifest(new, manifest["name"], version, manifest["tracks"])
    return version, len(records)


def _tuple(v: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in v.split("."))
    except ValueError:
        raise UsageError(f"{v!r} is not a semantic version", valid="MAJOR.MINOR.PATCH") from None


def _set_version(root: Path, old: str, new: str) -> None:
    croissant = json.loads((root / "croissant.json").read_text())
    croissant["version"] = new
    croissant["citeAs"] = croissant["citeAs"].replace(old, new)
    write_json(root / "croissant.json", croissant)
    card = (root / "README.md").read_text()
    atomic_write_text(root / "README.md", card.replace(f" {old}\n", f" {new}\n", 1))


def _changelog(version: str, previous: str, d: Diff) -> str:
    lines = [f"## {version} ({d.level} release after {previous})", ""]
    if d.added:
        lines += [f"- added {len(d.added)} case(s): " + ", ".join(d.added)]
    if d.removed:
        lines += [f"- removed {len(d.removed)} case(s): " + ", ".join(d.removed)]
    for cid, what in d.changed.items():
        lines += [f"- changed {cid}: {', '.join(what)}"]
    if d.new_tracks:
        lines += ["- new tracks: " + ", ".join(d.new_tracks)]
    if d.schemas_changed:
        lines += ["- changed schemas: " + ", ".join(d.schemas_changed)]
    if d.docs_changed and not (d.added or d.removed or d.changed):
        lines += ["- documentation: " + ", ".join(d.docs_changed[:20])]
    if len(lines) == 2:
        lines.append("- no changes")
    return "\n".join(lines) + "\n\n"
