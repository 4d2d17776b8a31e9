"""``casekit package``: a built case set as a dataset directory.

Layout: ``cases.jsonl`` (evaluator records of the primary track; other tracks in
``tracks/<track>.jsonl``), ``agent.jsonl`` (agent views), the same under ``<set>/`` for a further
set of cases (:mod:`casekit.package.subsets`: the authored sample), ``prompts/<library>/<public id>.md``,
``case_specs/<public id>.json`` (each case's case_spec as JSON text, for Croissant),
``references/<id>.npz`` (only for cases without a manufactured solution: a manufactured case's
reference is its hidden solution, in its record, sampled on the grid at evaluation -- its
``reference_path`` says so), ``calibration/<track>/<id>.npz``, ``schemas/``, ``README.md`` (dataset
card), ``croissant.json`` and ``manifest.json`` (sha256 and size of every other file).  Array
files are deflate-compressed.  The same build gives byte-identical output; the directory is
written aside and swapped in whole.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from casekit.errors import CasekitError, UsageError
from casekit.evaluate.references import MANUFACTURED_REFERENCE, read_arrays, write_compressed
from casekit.jsonio import atomic_write_text, dumps, iter_jsonl, read_json, sha256_file, write_json
from casekit.model.record import CaseRecord
from casekit.package import provenance
from casekit.package.card import card
from casekit.package.croissant import croissant, file_sets
from casekit.package.numbers import MACHINE_FILE
from casekit.package.subsets import Packaged, Subset, check_name, clashes
from casekit.prompts import libraries, render
from casekit.resources import schemas_dir

MANIFEST = "manifest.json"


def _records(build_dir: Path, track: str) -> list[dict[str, Any]]:
    path = build_dir / track / "records.jsonl"
    if not path.is_file():
        raise UsageError(f"no built records for track {track!r}", file=str(path), valid="casekit build --track ...")
    return [rec for _, rec in iter_jsonl(path)]


def rejected(build_dir: Path, track: str) -> dict[str, str]:
    """The cases the build of ``build_dir`` rejected (or that failed) on ``track``, with the
    build's reason: its ``build-report.json`` (``casekit dataset materialise`` lists every case it
    materialises; ``casekit build`` its run's cases); none without one."""
    from casekit.build.run import BUILD_REPORT

    path = build_dir / track / BUILD_REPORT
    if not path.is_file():
        return {}
    return {e["case_id"]: e.get("reason") or e["status"] for e in read_json(path)
            if e.get("status") in ("rejected", "failed")}


def manufactured(record: dict[str, Any]) -> bool:
    """Whether the case's reference is its manufactured solution (sampled at evaluation, not shipped)."""
    meta = record["evaluation_metadata"]
    return meta.get("construction_method") == "manufactured" and bool(meta.get("manufactured_solution"))


def _relocate(record: dict[str, Any], track: str) -> dict[str, Any]:
    meta = record["evaluation_metadata"]
    meta["reference_path"] = MANUFACTURED_REFERENCE if manufactured(record) else f"references/{record['id']}.npz"
    meta["calibration_path"] = f"calibration/{track}/{record['id']}.npz"
    return CaseRecord.from_dict(record).sealed().to_dict()


def package(build_dir: Path, tracks: list[str], out: Path, *, name: str, version: str,
            license_id: str = "cc-by-4.0", url: str | None = None, date: str | None = None,
            about: str = "", previous: Path | None = None, allow_removal: frozenset[str] = frozenset(),
            import_report: list[dict[str, Any]] | None = None,
            subsets: dict[str, Path] | None = None, notice: str = "") -> dict[str, Any]:
    """Write the dataset directory ``out``; ``about`` (markdown) is the card's provenance section,
    ``notice`` (markdown) the card's first words, under its title (a private campaign's),
    ``import_report`` (``casekit import --repair``'s) adds the anchor-vs-release tables to it.
    ``subsets`` (name -> build directory) adds further sets of cases as their own configurations
    (:mod:`casekit.package.subsets`), each on the tracks of ``tracks`` its build directory holds
    (the primary one among them); a case id or public id in two sets is refused.
    With the ``previous`` release, a case it holds (on any of its tracks packaged here) that is
    not packaged is refused unless ``allow_removal`` names it."""
    if not tracks:
        raise UsageError("name at least one track")
    if out.exists() and any(out.iterdir()) and not (out / MANIFEST).exists():
        raise UsageError(f"{out} exists and is not a casekit dataset; choose an empty or new directory")
    sets = [(Subset("", tuple(tracks)), Path(build_dir))]
    for sname, sdir in (subsets or {}).items():
        check_name(sname)
        held = tuple(t for t in tracks if (Path(sdir) / t / "records.jsonl").is_file())
        if tracks[0] not in held:
            raise UsageError(f"the set {sname!r} has no built records of the primary track {tracks[0]} "
                             f"in {sdir}", file=str(Path(sdir) / tracks[0] / "records.jsonl"),
                             valid="casekit dataset materialise ... --out DIR for it")
        sets.append((Subset(sname, held), Path(sdir)))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        manifest = _write(sets, tmp, name, version, license_id, url, date, about, previous, allow_removal,
                          import_report, notice)
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return manifest


def _write(sets: list[tuple[Subset, Path]], root: Path, name: str, version: str, license_id: str,
           url: str | None, date: str | None, about: str, previous: Path | None, allow_removal: frozenset[str],
           import_report: list[dict[str, Any]] | None = None, notice: str = "") -> dict[str, Any]:
    tracks = list(sets[0][0].tracks)
    primary = tracks[0]
    packaged: list[Packaged] = []
    for s, build_dir in sets:
        by_track = {t: sorted((_relocate(r, t) for r in _records(build_dir, t)), key=lambda r: r["id"])
                    for t in s.tracks}
        ids = {r["id"] for r in by_track[primary]}
        machine = read_json(build_dir / MACHINE_FILE) if (build_dir / MACHINE_FILE).is_file() else None
        packaged.append(Packaged(s, {t: [r for r in rs if r["id"] in ids] for t, rs in by_track.items()}, 0,
                                 {t: m for t, m in machine.items() if t in s.tracks} if machine else None))
    _refuse_clashes(packaged)
    if previous is not None:
        _refuse_removals(previous, {p.subset.label(t): {r["id"] for r in rs} for p in packaged
                                    for t, rs in p.by_track.items()}, allow_removal)
    for p, (s, build_dir) in zip(packaged, sets, strict=True):
        for t in s.tracks:
            _jsonl(root / s.records_file(t), p.by_track[t])
            for r in p.by_track[t]:
                _compress(build_dir / t / r["id"] / "calibration.npz", root / "calibration" / t / f"{r['id']}.npz")
        agent = []
        for r in p.records:
            if not manufactured(r):
                _compress(build_dir / primary / r["id"] / "reference.npz",
                          root / r["evaluation_metadata"]["reference_path"])
            atomic_write_text(root / s.case_specs_dir / f"{r['public_id']}.json", case_spec_text(r["case_spec"]))
            for lib in sorted(set(r["supported_libraries"]) & set(s.tracks)):
                agent.append({"id": r["public_id"], "case_spec": r["case_spec"], "target_library": lib})
                if lib in libraries():  # agent-side files are named by the opaque public id
                    atomic_write_text(root / "prompts" / lib / f"{r['public_id']}.md", render(r["case_spec"], lib))
        _jsonl(root / s.agent_file, agent)
        p.agent_rows = len(agent)
    for schema in sorted(schemas_dir().glob("*.schema.json")):
        _copy(schema, root / "schemas" / schema.name)
    records = packaged[0].records
    every = [r for p in packaged for r in p.records]
    data = [f for p in packaged for f in p.subset.files]
    if import_report is not None:
        section = provenance.section(import_report, records, rejected(sets[0][1], primary))
        about = f"{about.rstrip()}\n\n{section}\n"
    atomic_write_text(root / "README.md", card(name, version, records, tracks, license_id, packaged[0].by_track,
                                               about, references=[(p.subset, reference_sizes(root, p.records))
                                                                  for p in packaged],
                                               agent_rows=packaged[0].agent_rows,
                                               digests={f: sha256_file(root / f) for f in data},
                                               machine=packaged[0].machine, others=packaged[1:], notice=notice))
    counts = {p.subset.label(t): family_counts(rs) for p in packaged for t, rs in p.by_track.items()}
    jsonl = {path: sha256_file(root / path) for p in packaged
             for path in (p.subset.records_file(p.subset.tracks[0]), p.subset.agent_file)}
    present = tuple(fid for fid, glob, _, _ in file_sets([p.subset for p in packaged]) if any(root.glob(glob)))
    write_json(root / "croissant.json", croissant(
        name, version, f"{name}: finite-element solver tasks for AI agents, built with casekit.", jsonl,
        {"families": family_counts(every)}, f"https://spdx.org/licenses/{license_id.upper()}.html", url, date,
        present, subsets=[p.subset for p in packaged]))
    extra = {p.subset.name: list(p.subset.tracks) for p in packaged[1:]}
    return {**write_manifest(root, name, version, tracks, extra), "counts": counts}


def _refuse_clashes(packaged: list[Packaged]) -> None:
    """Refuse a case id or public id in two sets (they share references, calibration and prompts)."""
    for key in ("id", "public_id"):
        found = clashes({p.subset.name: [r[key] for rs in p.by_track.values() for r in rs] for p in packaged})
        if found:
            names = [f"{x} ({', '.join(ns)})" for x, ns in list(found.items())[:10]]
            raise UsageError(f"{len(found)} case {key.replace('_', ' ')}(s) are in more than one set of cases: "
                             + ", ".join(names), valid="ids unique across the dataset: rename the cases of one set")


def reference_sizes(root: Path, records: list[dict[str, Any]]) -> dict[str, int]:
    """What the dataset holds of its references: ``sampled`` (manufactured cases: none shipped),
    ``shipped`` (numerical references), their compressed ``bytes`` and their ``raw_bytes``."""
    shipped = [root / r["evaluation_metadata"]["reference_path"] for r in records if not manufactured(r)]
    return {"sampled": len(records) - len(shipped), "shipped": len(shipped),
            "bytes": sum(p.stat().st_size for p in shipped),
            "raw_bytes": sum(a.nbytes for p in shipped for a in read_arrays(p).values())}


def family_counts(records: list[dict[str, Any]]) -> dict[str, int]:
    """Cases per equation family, by family name."""
    out: dict[str, int] = {}
    for r in records:
        f = r["pde_classification"]["equation_family"]
        out[f] = out.get(f, 0) + 1
    return dict(sorted(out.items()))


def _refuse_removals(previous: Path, packaged: dict[str, set[str]], allowed: frozenset[str]) -> None:
    """Refuse to package fewer cases than the ``previous`` release holds, track by track (a track
    left out leaves out all its cases), unless ``allowed`` names each case left out."""
    from casekit.package.semver import released_ids

    missing = sorted((cid, t) for t, ids in released_ids(previous).items()
                     for cid in ids - packaged.get(t, set()) if cid not in allowed)
    if missing:
        names = [f"{cid} ({t})" for cid, t in missing[:10]]
        names += [f"{len(missing) - 10} more"] if len(missing) > 10 else []
        raise UsageError(f"{len(missing)} case(s) of the previous release {previous} would be left out: "
                         + ", ".join(names),
                         valid="rebuild them into the build directory (and --track each of their tracks), or "
                         "name them: --allow-removal " + ",".join(sorted({cid for cid, _ in missing})))


def write_manifest(root: Path, name: str, version: str, tracks: list[str],
                   subsets: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """``manifest.json``: every file's sha256 and size, and for an array archive (``.npz``, whose
    bytes carry the time it was written) the digest of its arrays, which releases compare; the
    main set's ``tracks`` and the further sets' (``subsets``, left out when there are none)."""
    files = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.name != MANIFEST):
        entry: dict[str, Any] = {"path": path.relative_to(root).as_posix(), "sha256": sha256_file(path),
                                 "bytes": path.stat().st_size}
        if path.suffix == ".npz":
            entry["arrays_sha256"] = arrays_digest(path)
        files.append(entry)
    manifest: dict[str, Any] = {"name": name, "version": version, "tracks": tracks}
    if subsets:
        manifest["subsets"] = subsets
    manifest["files"] = files
    write_json(root / MANIFEST, manifest)
    return manifest


def arrays_digest(path: Path) -> str | None:
    """The sha256 of an ``.npz`` file's arrays (names, dtypes, shapes, values); None if it is not one."""
    import hashlib
    import zipfile

    import numpy as np

    h = hashlib.sha256()
    try:
        with np.load(path, allow_pickle=False) as z:
            for k in sorted(z.files):
                a = np.ascontiguousarray(z[k])
                h.update(f"{k}\0{a.dtype.str}\0{a.shape}\0".encode())
                h.update(a.tobytes())
    except (OSError, ValueError, zipfile.BadZipFile):
        return None
    return h.hexdigest()


def case_spec_text(case_spec: dict[str, Any]) -> str:
    """A case's ``case_specs/<public id>.json``: its case_spec as the prompts print it."""
    return dumps(case_spec, indent=2)


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    atomic_write_text(path, "".join(dumps(r) + "\n" for r in rows))


def _compress(src: Path, dest: Path) -> None:
    """The arrays of the built ``.npz`` file ``src`` as a compressed, byte-reproducible ``dest``."""
    if not src.is_file():
        raise CasekitError("a built file is missing; rebuild the case", file=str(src))
    dest.parent.mkdir(parents=True, exist_ok=True)
    write_compressed(dest, read_arrays(src))


def _copy(src: Path, dest: Path) -> None:
    if not src.is_file():
        raise CasekitError("a built file is missing; rebuild the case", file=str(src))
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)
