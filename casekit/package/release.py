"""``casekit release``: an immutable, append-only release directory from a packaged dataset.

A release is ``releases/<name>/<version>/``: the packaged dataset with its version stamped in, a
CHANGELOG.md that keeps every earlier entry with its date, and a manifest of checksums.  It is
written beside its target and renamed into place; a released directory is never written again,
and a version is never reused or lowered.  The bump is :mod:`casekit.package.semver`'s.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from casekit.errors import UsageError
from casekit.jsonio import atomic_write_text, write_json
from casekit.package.build_dist import MANIFEST, family_counts, write_manifest
from casekit.package.semver import Diff, diff, load_dataset
from casekit.package.subsets import of_manifest


def bump(version: str, level: str) -> str:
    major, minor, patch = _tuple(version)
    bumped = {"major": f"{major + 1}.0.0", "minor": f"{major}.{minor + 1}.0", "patch": f"{major}.{minor}.{patch + 1}"}
    return bumped[level]


@dataclass
class Plan:
    """A release before it is written: where it goes, its version, what changed, its entry."""

    target: Path
    version: str
    previous: str | None
    diff: Diff | None
    entry: str
    n_cases: int


def plan(dist: Path, previous: Path | None = None, requested: str | None = None,
         releases: Path | None = None, date: str | None = None) -> Plan:
    """What ``release`` would write: refuses a version that exists, is not above every release of
    the dataset, contradicts the changes, or a release with nothing changed."""
    manifest, records, _ = load_dataset(dist)
    name = manifest["name"]
    date = date or datetime.date.today().isoformat()
    try:
        datetime.date.fromisoformat(date)
    except ValueError:
        raise UsageError(f"{date!r} is not a date", valid="YYYY-MM-DD") from None
    root = releases if releases is not None else (previous.parent.parent if previous is not None else Path("releases"))
    existing = versions(root / name)
    if previous is None:
        if existing:
            raise UsageError(f"{name} already has releases ({', '.join(existing)}); a release follows the latest",
                             valid=f"--previous {root / name / existing[-1]}")
        version = requested or manifest["version"]
        _tuple(version)
        primary = records[manifest["tracks"][0]]
        families = family_counts(list(primary.values()))
        entry = (f"## {version} (first release, {date})\n\n- {len(primary)} case(s) on track(s) "
                 f"{', '.join(manifest['tracks'])}: " + ", ".join(f"{f} {n}" for f, n in families.items()) + "\n")
        for s in of_manifest(manifest)[1:]:
            mine = records[s.label(s.tracks[0])]
            entry += (f"- the set {s.name}: {len(mine)} case(s) on track(s) {', '.join(s.tracks)}: "
                      + ", ".join(f"{f} {n}" for f, n in family_counts(list(mine.values())).items()) + "\n")
        entry += "\n"
        return Plan(root / name / version, version, None, None, entry, len(primary))
    old = load_dataset(previous)[0]
    if old["name"] != name:
        raise UsageError(f"{previous} is a release of {old['name']!r}, not of {name!r}",
                         valid=f"a release under {root / name}")
    if existing and _tuple(old["version"]) < _tuple(existing[-1]):
        raise UsageError(f"{previous} ({old['version']}) is not the latest release of {name}: a release follows the "
                         f"latest, {existing[-1]}", valid=f"--previous {root / name / existing[-1]}")
    d = diff(dist, previous)
    if not d.changes:
        raise UsageError(f"nothing changed since {old['version']} ({previous}): no release")
    computed = bump(old["version"], d.level)
    version = requested or computed
    if _tuple(version) < _tuple(computed):
        raise UsageError(f"version {version} contradicts the changes: they need a {d.level} bump from "
                         f"{old['version']}", valid=f"{computed} or higher")
    if version in existing:
        raise UsageError(f"release {version} of {name} exists ({root / name / version}); a release is never "
                         "rewritten", valid=f"a version above {existing[-1]}")
    if existing and _tuple(version) <= _tuple(existing[-1]):
        raise UsageError(f"version {version} is not above the latest release {existing[-1]} of {name}",
                         valid=f"--previous {root / name / existing[-1]}")
    return Plan(root / name / version, version, old["version"], d, _entry(version, old["version"], d, date),
                len(records[manifest["tracks"][0]]))


def release(dist: Path, previous: Path | None = None, requested: str | None = None,
            releases: Path | None = None, date: str | None = None) -> Plan:
    """Write the release ``releases/<name>/<version>/`` from the packaged ``dist`` (left as it is):
    a copy with the version stamped in, the changelog (this entry, then every earlier one) and a
    new manifest, written aside and renamed into place."""
    from casekit.package.verify import verify

    p = plan(dist, previous, requested, releases, date)
    manifest = json.loads((dist / MANIFEST).read_text())
    earlier = ""
    if previous is not None and (previous / "CHANGELOG.md").is_file():
        earlier = (previous / "CHANGELOG.md").read_text(encoding="utf-8").removeprefix("# Changelog\n\n")
    p.target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{p.version}-", dir=p.target.parent))
    try:
        shutil.copytree(dist, tmp, dirs_exist_ok=True)
        _set_version(tmp, manifest["version"], p.version)
        atomic_write_text(tmp / "CHANGELOG.md", "# Changelog\n\n" + p.entry + earlier)
        write_manifest(tmp, manifest["name"], p.version, manifest["tracks"], manifest.get("subsets"))
        problems = verify(tmp)
        if problems:
            raise UsageError(f"{dist} does not verify ({problems[0].render()}); no release",
                             valid=f"casekit verify {dist}")
        if p.target.exists():  # another release of this version appeared meanwhile
            raise UsageError(f"release {p.version} exists ({p.target}); a release is never rewritten")
        os.rename(tmp, p.target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return p


def versions(releases: Path) -> list[str]:
    """The versions released in ``releases/<name>``, lowest first."""
    if not releases.is_dir():
        return []
    return sorted((p.name for p in releases.iterdir() if p.is_dir() and _is_version(p.name)), key=_tuple)


def _is_version(v: str) -> bool:
    parts = v.split(".")
    return len(parts) == 3 and all(x.isdigit() for x in parts)


def _tuple(v: str) -> tuple[int, int, int]:
    if not _is_version(v):
        raise UsageError(f"{v!r} is not a semantic version", valid="MAJOR.MINOR.PATCH")
    major, minor, patch = (int(x) for x in v.split("."))
    return major, minor, patch


def _set_version(root: Path, old: str, new: str) -> None:
    croissant = json.loads((root / "croissant.json").read_text())
    croissant["version"] = new
    croissant["citeAs"] = croissant["citeAs"].replace(old, new)
    write_json(root / "croissant.json", croissant)
    card = (root / "README.md").read_text()
    atomic_write_text(root / "README.md", card.replace(f" {old}\n", f" {new}\n", 1))


def _entry(version: str, previous: str, d: Diff, date: str) -> str:
    """The changelog entry: data changes, then metadata, then documentation, each under its heading."""
    data = []
    if d.added:
        data.append(f"- added {len(d.added)} case(s): " + ", ".join(d.added))
    if d.removed:
        data.append(f"- removed {len(d.removed)} case(s): " + ", ".join(d.removed))
    data += [f"- {t}" for t in d.tracks]
    data += [f"- changed {cid}: {', '.join(what)}" for cid, what in d.changed.items()]
    shared = [c for c in d.files if c.level == "major"]
    if shared:
        data.append(f"- changed {len(shared)} file(s) of no single case: " + _names([c.file for c in shared]))
    meta = [f"- {cid}: {', '.join(what)}" for cid, what in d.metadata.items()]
    docs = [c.file for c in d.files if c.level != "major"]
    lines = [f"## {version} ({d.level} release after {previous}, {date})", ""]
    for heading, items in (("### Data", data), ("### Metadata (calibration timings, machine, library patch "
                                                  "versions; patch level)", meta),
                           ("### Documentation", [f"- changed: {_names(docs)}"] if docs else [])):
        if items:
            lines += [heading, "", *items, ""]
    return "\n".join(lines) + "\n"


def _names(paths: list[str], most: int = 20) -> str:
    return ", ".join(paths[:most]) + (f" and {len(paths) - most} more" if len(paths) > most else "")
