"""A dataset build whose progress lives in the repository (README: Datasets).

A dataset's **committed build area** (``datasets/<name>/build/``) holds, per track and case, the
outcome of building that case::

    <area>/<track>/<family>/<id>.json              the entry: its key, status, reason, the record
    <area>/<track>/<family>/<id>.calibration.npz   the calibration on the grid (built cases)
    <area>/<track>/<family>/<id>.reference.npz     the numerical reference (cases without a
                                                   manufactured solution; a manufactured one is
                                                   sampled again from the source)

The entry's ``key`` is :func:`casekit.build.pipeline.record_key` of the inputs the build used (the
case source and its derivation, the track's library versions and solver code): a later run, on
any machine, treats a case whose committed key matches as done -- built, or rejected with its
reason -- and builds the others.  No mesh, cache or timing bulk is committed; the arrays are
compressed, written with fixed zip metadata (the same arrays give the same bytes) and checked
against the sha256 their entry holds.

A **shard** is a deterministic selection of case sources: a family (``heat``), a slice of a family
(``poisson.2of3``: every third of its sorted ids, starting at the second), of every case
(``all``, ``all.3of10``) or of a track's stratified sample (``sample``, ``sample.1of2``:
:mod:`casekit.build.sample`; a sample track is complete, and released, when its sample is done).
:func:`build_shard` builds a shard's cases that are not done into a
machine build directory and commits each case's entry as it finishes (a killed run keeps what
finished); :func:`materialise` writes the committed records as a build directory that
``casekit package`` reads.  Entries live under their family whatever shard built them, so
overlapping shard specs never give a case two entries.
"""

from __future__ import annotations

import io
import math
import shutil
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from casekit import __version__
from casekit.build.cache import key
from casekit.build.pipeline import REJECTION_RULES, BuildOptions, CaseOutcome, record_key, source_key
from casekit.errors import CasekitError, UsageError
from casekit.jsonio import atomic_write_bytes, dumps, read_json, sha256_bytes, sha256_file, write_json
from casekit.model.source import CaseSource, load_source_dict

#: the entry format (an entry of another format is an error, never read as done)
FORMAT = 1
#: what one shard may take: a family projected past it is listed as slices, each planned at
#: SHARD_PLANNED of it (projections are means; the slowest cases take several times the mean)
SHARD_BUDGET_SECONDS = 3600.0
SHARD_PLANNED = 0.75
#: the projection's cost of a case before any case of the track is committed (machine seconds)
DEFAULT_CASE_SECONDS = 30.0
#: the calibration repeats of a dataset build: under the paired gate (README: Runtime gate)
#: ``t_base`` is metadata, so one timed run is enough; the key does not hold the repeats
DATASET_REPEATS = 1
#: statuses committed as done (an internal error -- a casekit bug -- is never committed)
DONE = ("built", "rejected", "failed")


# -- case sources and shards ------------------------------------------------------------------


@dataclass
class Source:
    """A case source of the dataset: its id, family and tracks as written, and (derived on
    demand) its :func:`~casekit.build.pipeline.source_key`."""

    path: Path
    data: dict[str, Any]
    #: the path shown in entries (relative to the sources' directory)
    shown: str

    @property
    def id(self) -> str:
        return str(self.data.get("id") or self.path.stem)

    @property
    def family(self) -> str:
        return str(self.data.get("family") or self.path.parent.name)

    @property
    def tracks(self) -> tuple[str, ...]:
        tracks = self.data.get("tracks")
        return tuple(str(t) for t in tracks) if isinstance(tracks, list) else ()

    @cached_property
    def _derived(self) -> tuple[str, Any]:
        """(source key, the derived case or None).  A source that does not derive is keyed by
        its content: the build rejects it with the reason, and that rejection is committed."""
        from casekit.derive import derive

        try:
            source = CaseSource.from_dict(self.data)
            source.path = self.path
            d = derive(source)
            return source_key(d.source, d.case_spec()), d
        except Exception:  # any failure is the build's to report, with its reason
            return key("underivable", self.data, __version__), None

    @cached_property
    def source_key(self) -> str:
        """The source's key: from this machine's derivation cache when this file was derived
        under this casekit code before (casekit.build.derivation_cache), else derived."""
        from casekit.build import derivation_cache

        cached = derivation_cache.get(self.path)
        if cached is not None:
            return cached
        k = self._derived[0]
        derivation_cache.put(self.path, k)
        return k

    @property
    def derived(self) -> Any:
        return self._derived[1]


def derive_key(path: Path) -> str:
    """The key of the case source at ``path`` (module level: run in worker processes)."""
    return Source(path, load_source_dict(path), path.name)._derived[0]


def prime_keys(sources: Iterable[Source], jobs: int | None = None,
               progress: Callable[[int, int], None] | None = None) -> None:
    """Derive the keys of ``sources`` that this machine's derivation cache does not hold, in
    ``jobs`` processes (default: every core): a dataset's hundreds of sources in parallel;
    ``progress(done, total)`` as :func:`casekit.build.derivation_cache.prime` reports it."""
    import os

    from casekit.build import derivation_cache

    derivation_cache.prime([s.path for s in sources], derive_key, jobs or os.cpu_count() or 1, progress)


def read_sources(paths: Iterable[Path]) -> list[Source]:
    """The case sources under ``paths``, sorted by id (duplicate ids are an error)."""
    from casekit.build.run import case_files

    paths = [Path(p) for p in paths]
    out: dict[str, Source] = {}
    for root in paths:
        for f in case_files([root]):
            s = Source(f, load_source_dict(f), str(f.relative_to(root) if root.is_dir() else f.name))
            if s.id in out:
                raise UsageError(f"two case sources declare the id {s.id!r}: {out[s.id].path} and {f}")
            out[s.id] = s
    if not out:
        raise UsageError(f"no case sources under {', '.join(map(str, paths))}", valid="*.yaml case sources")
    return [out[i] for i in sorted(out)]


@dataclass(frozen=True)
class ShardSpec:
    """``family``, ``family.KofN``, ``all``, ``all.KofN``, ``sample`` or ``sample.KofN`` (README:
    Datasets)."""

    family: str | None  # None: every family
    k: int = 1
    n: int = 1
    #: the track's stratified sample (casekit.build.sample) instead of a family or all
    sample: bool = False

    @classmethod
    def parse(cls, text: str, families: Iterable[str]) -> ShardSpec:
        known = sorted(set(families))
        name, _, part = text.strip().partition(".")
        valid = (f"all, sample, a family ({', '.join(known)}), or any of them followed by .KofN (e.g. "
                 f"{known[0]}.1of2)" if known else "all or sample")
        if name not in ("all", "sample") and name not in known:
            raise UsageError(f"unknown shard {text!r}", valid=valid)
        k = n = 1
        if part:
            a, sep, b = part.partition("of")
            if not (sep and a.isdigit() and b.isdigit() and 1 <= int(a) <= int(b)):
                raise UsageError(f"shard {text!r}: the slice must read KofN with 1 <= K <= N", valid=valid)
            k, n = int(a), int(b)
        return cls(None if name in ("all", "sample") else name, k, n, sample=name == "sample")

    @property
    def name(self) -> str:
        base = "sample" if self.sample else self.family or "all"
        return base if self.n == 1 else f"{base}.{self.k}of{self.n}"

    def select(self, sources: list[Source], track: str | None = None) -> list[Source]:
        """The shard's sources: the family's (or all, or the sample of ``track``), sorted by id,
        every n-th from the k-th (a slice interleaves ids, so neighbouring cases of one domain are
        spread over slices)."""
        if self.sample:
            if track is None:
                raise UsageError(f"shard {self.name!r} is a track's sample: name the track")
            from casekit.build import sample

            sources = sample.select(sources, track)
        chosen = sorted((s for s in sources if self.family is None or s.family == self.family), key=lambda s: s.id)
        return chosen[self.k - 1::self.n]


# -- the committed area -----------------------------------------------------------------------


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """An ``.npz`` (zip-deflated) of ``arrays`` in their order, with fixed zip metadata: the
    same arrays always give the same bytes (``np.savez`` stamps the current time)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, a in arrays.items():
            member = io.BytesIO()
            np.lib.format.write_array(member, np.asarray(a), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, member.getvalue())
    return buf.getvalue()


def _load_all(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as z:
        return {k: np.asarray(z[k]) for k in z.files}


def fingerprint(arrays: dict[str, np.ndarray]) -> dict[str, dict[str, float]]:
    """Per output array: finite values, their sum and L2 norm (a re-sampled manufactured
    reference is compared with the built one through these, to round-off)."""
    out = {}
    for name, a in arrays.items():
        v = np.asarray(a, dtype=float)
        finite = np.isfinite(v)
        out[name] = {"finite": int(finite.sum()), "sum": float(v[finite].sum()),
                     "l2": float(np.sqrt(np.square(v[finite]).sum()))}
    return out


def _same_fingerprint(a: dict[str, dict[str, float]], b: dict[str, dict[str, float]], rtol: float = 1e-10) -> bool:
    if set(a) != set(b):
        return False
    for name, x in a.items():
        y = b[name]
        scale = rtol * (x["l2"] * math.sqrt(max(x["finite"], 1)) + 1e-300)
        if x["finite"] != y["finite"] or abs(x["sum"] - y["sum"]) > scale or abs(x["l2"] - y["l2"]) > rtol * x["l2"]:
            return False
    return True


class Area:
    """The committed build area of a dataset: ``root`` is ``datasets/<name>/build``."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def entry_path(self, track: str, family: str, case_id: str) -> Path:
        return self.root / track / family / f"{case_id}.json"

    def read(self, track: str, source: Source) -> dict[str, Any] | None:
        """The committed entry of ``source`` on ``track`` whose files are intact, or None."""
        path = self.entry_path(track, source.family, source.id)
        if not path.is_file():
            return None
        entry = read_json(path)
        if entry.get("format") != FORMAT:
            raise CasekitError(f"a committed entry of format {entry.get('format')!r}, not {FORMAT}", file=str(path),
                               valid="an entry written by this casekit (rebuild the case)")
        for f in entry.get("files", {}).values():
            p = path.parent / f["path"]
            if not p.is_file() or sha256_file(p) != f["sha256"]:
                return None  # an interrupted rewrite or a damaged file: the case is built again
        return dict(entry)

    def remove(self, track: str, case_id: str) -> list[Path]:
        """Delete the committed entry ``case_id`` of ``track`` and its files (``<id>.json`` and
        ``<id>.*`` beside it); the paths removed, for the caller to commit."""
        gone = []
        for family in sorted(p for p in (self.root / track).iterdir() if p.is_dir()):
            entry = family / f"{case_id}.json"
            if entry.is_file():
                for f in [entry, *sorted(family.glob(f"{case_id}.*.npz"))]:
                    f.unlink()
                    gone.append(f)
        return gone

    def entries(self, track: str) -> dict[str, dict[str, Any]]:
        """Every entry of ``track`` by id (intact or not), for listings."""
        out = {}
        for p in sorted((self.root / track).glob("*/*.json")):
            entry = read_json(p)
            out[str(entry.get("id", p.stem))] = entry
        return out

    def commit(self, source: Source, outcome: CaseOutcome, build_dir: Path, parts: dict[str, Any],
               jobs: int) -> Path:
        """Write the entry of a finished case under the key of ``parts`` (:func:`record_key`'s
        arguments: the inputs it was built from): its arrays first, then the entry (each file
        written aside and renamed), then remove files of an earlier entry it no longer names."""
        track = parts["track"]
        path = self.entry_path(track, source.family, source.id)
        case_dir = build_dir / track / outcome.case_id
        entry: dict[str, Any] = {
            "format": FORMAT, "id": source.id, "family": source.family, "track": track, "source": source.shown,
            "key": record_key(**parts), "source_key": parts["source_key"], "code": parts["code"],
            "versions": dict(sorted(parts["versions"].items())),
            "status": outcome.status, "reason": outcome.reason, "notes": outcome.notes, "record": None,
            "rules": REJECTION_RULES, "files": {},
            # what building it took here (with its calibration from this machine's stage cache: next to
            # nothing, so projections count such a case at the mean of the others)
            "build": {"seconds": round(sum(outcome.stage_seconds.values()), 3), "jobs": jobs,
                      "reused_cache": "calibration" in outcome.cached, "casekit": __version__},
        }
        if outcome.status == "built":
            record = read_json(case_dir / "record.json")
            entry["record"] = record
            files = {"calibration": _load_all(case_dir / "calibration.npz")}
            reference = _load_all(case_dir / "reference.npz")
            if record["evaluation_metadata"]["construction_method"] == "manufactured":
                entry["reference"] = {"sampled": "manufactured solution",
                                      "fingerprint": fingerprint(_outputs(reference))}
            else:
                files["reference"] = reference
            for name, arrays in files.items():
                data = npz_bytes(arrays)
                atomic_write_bytes(path.parent / f"{source.id}.{name}.npz", data)
                entry["files"][name] = {"path": f"{source.id}.{name}.npz", "sha256": sha256_bytes(data)}
        atomic_write_bytes(path, dumps(entry, indent=2).encode())
        named = {f["path"] for f in entry["files"].values()}
        for stale in path.parent.glob(f"{source.id}.*.npz"):
            if stale.name not in named:
                stale.unlink()
        return path

    def materialise_case(self, track: str, source: Source, entry: dict[str, Any], out: Path) -> None:
        """A built entry as a build directory's case: ``out/<track>/<id>/`` with record.json,
        calibration.npz and reference.npz (the manufactured one sampled from the source)."""
        here = self.entry_path(track, source.family, source.id).parent
        case_dir = out / track / source.id
        case_dir.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(here / entry["files"]["calibration"]["path"], case_dir / "calibration.npz")
        if "reference" in entry["files"]:
            shutil.copyfile(here / entry["files"]["reference"]["path"], case_dir / "reference.npz")
        else:  # sampled from the record's hidden solution, as the evaluator samples it (no derivation)
            from casekit.evaluate.references import sample_manufactured
            from casekit.grid import Grid

            record = entry["record"]
            solution = record["evaluation_metadata"].get("manufactured_solution")
            if not solution:
                raise CasekitError("a built case with neither a numerical reference nor a manufactured solution",
                                   case_id=source.id, valid="rebuild the case (casekit dataset build --shard ...)")
            arrays = sample_manufactured(record["pde_classification"]["equation_family"], solution,
                                         record["case_spec"])
            if not _same_fingerprint(entry["reference"]["fingerprint"], fingerprint(arrays)):
                raise CasekitError("the manufactured solution sampled here is not the one the case was built with "
                                   "(beyond round-off)", case_id=source.id, file=str(source.path),
                                   valid="rebuild the case (casekit dataset build --shard ...)")
            axes = Grid.from_spec(record["case_spec"]["eval_grid"]).axes()
            atomic_write_bytes(case_dir / "reference.npz", npz_bytes({**axes, **arrays}))
        atomic_write_bytes(case_dir / "record.json", dumps(entry["record"], indent=2).encode())


def _outputs(arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {k: v for k, v in arrays.items() if k not in ("x", "y", "z")}


# -- plans ------------------------------------------------------------------------------------


@dataclass
class TrackIdentity:
    """What a track's keys are made of here: its name, library versions and solver code."""

    name: str
    versions: dict[str, str]
    code: str

    @classmethod
    def of(cls, name: str) -> TrackIdentity:
        from casekit.tracks import TRACKS

        t = TRACKS.get(name)
        return cls(name, t.versions(), t.code_hash())

    def parts(self, source: Source) -> dict[str, Any]:
        """:func:`record_key`'s arguments for ``source`` on this track."""
        return {"source_key": source.source_key, "track": self.name, "versions": self.versions, "code": self.code}

    def key(self, source: Source) -> str:
        return record_key(**self.parts(source))


@dataclass
class Plan:
    """One shard on one track: its cases that list the track, which are done in the area
    (key matches), and which are to build."""

    shard: str
    track: str
    cases: list[Source]
    done: list[Source] = field(default_factory=list)
    todo: list[Source] = field(default_factory=list)
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)

    def summary(self) -> str:
        return f"{len(self.done)} done in the repository, {len(self.todo)} to build"


def plan(area: Area, sources: list[Source], spec: ShardSpec, track: TrackIdentity,
         retry_failed: bool = False, keyed: bool = True) -> Plan:
    """The shard's cases, done (a committed entry of the case's current key) or to build.
    ``keyed=False`` counts a committed entry of the current solver code and library versions as
    done without deriving its source's key: an estimate, for projections only (deriving every
    source of a dataset takes minutes)."""
    return _plan(area, spec.name, spec.select(sources, track.name), track, retry_failed, keyed)


def _plan(area: Area, name: str, cases: list[Source], track: TrackIdentity, retry_failed: bool = False,
          keyed: bool = True) -> Plan:
    p = Plan(name, track.name, [s for s in cases if track.name in s.tracks])
    if keyed:
        prime_keys(p.cases)
    for s in p.cases:
        entry = area.read(track.name, s)
        if entry is not None:
            p.entries[s.id] = entry
        # unkeyed (an estimate): the source is taken as unchanged, but the solver code and library
        # versions are compared -- after a solver edit nothing of the old code counts as done
        current = (entry["key"] == track.key(s) if keyed else
                   entry.get("code") == track.code and entry.get("versions") == track.versions) if entry else False
        done = (entry is not None and current and entry["status"] in DONE
                and not (retry_failed and entry["status"] == "failed")
                and not (entry["status"] == "rejected" and entry.get("rules", 1) != REJECTION_RULES))
        (p.done if done else p.todo).append(s)
    return p


def machine_seconds(entry: dict[str, Any]) -> float:
    """The machine seconds a committed case took where it was built: its own wall time over the
    jobs that ran beside it (two cases of 28 s side by side on two cores took 28 s of the machine)."""
    b = entry.get("build") or {}
    return float(b.get("seconds") or 0.0) / max(int(b.get("jobs", 1) or 1), 1)


def _cost(entry: dict[str, Any]) -> float | None:
    """A committed case's machine seconds (:func:`machine_seconds`); None when it was not built
    from scratch."""
    b = entry.get("build") or {}
    if b.get("reused_cache") or not b.get("seconds"):
        return None
    return machine_seconds(entry)


def case_seconds(entries: Iterable[dict[str, Any]]) -> float | None:
    """The mean machine seconds of the committed cases built from scratch, or None."""
    costs = [c for c in map(_cost, entries) if c is not None]
    return sum(costs) / len(costs) if costs else None


@dataclass
class ShardRow:
    """A family's line in the status listing, per track: (done, to build) -- of its cases in the
    track's sample, for a sample track."""

    family: str
    cases: int
    counts: dict[str, tuple[int, int]]
    #: the shards to run for what remains on the primary track (slices when it exceeds the budget;
    #: the slices of the sample that hold the family's cases to build, for a sample track)
    shards: list[str]


@dataclass
class Status:
    rows: list[ShardRow]
    #: per track: committed machine seconds, projected seconds for the rest, cases done, to build,
    #: the mean seconds per case and whether it is measured, the failed solves among the done
    machine: dict[str, dict[str, Any]]
    #: per track: committed entries whose case is not among the sources
    orphans: dict[str, list[str]]
    #: per sample track (casekit.build.sample): its sample's cases, the strata they cover and the
    #: shards to run for what remains of it
    samples: dict[str, dict[str, Any]] = field(default_factory=dict)

    def complete(self, track: str) -> bool:
        """Every case of ``track`` is done -- every case of its sample, for a sample track."""
        return all(r.counts.get(track, (0, 0))[1] == 0 for r in self.rows) and track in self.machine


def status(area: Area, sources: list[Source], tracks: list[TrackIdentity],
           budget: float = SHARD_BUDGET_SECONDS, keyed: bool = True) -> Status:
    """Every family of the sources with its done / to-build counts per track (a sample track's
    over its sample), the shards to run (on the first track) and the machine time: committed, and
    projected for the rest at the mean cost of the committed cases of the family (else of the
    track, else :data:`DEFAULT_CASE_SECONDS`)."""
    from casekit.build import sample

    families = sorted({s.family for s in sources})
    rows = []
    machine: dict[str, dict[str, Any]] = {}
    orphans = {}
    samples: dict[str, dict[str, Any]] = {}
    scope = {t.name: sample.select(sources, t.name) if sample.sampled(t.name) else sources for t in tracks}
    if keyed:
        prime_keys({s.id: s for t in tracks for s in scope[t.name]}.values())
    plans = {t.name: {f: _plan(area, f, [s for s in scope[t.name] if s.family == f], t, keyed=keyed)
                      for f in families} for t in tracks}
    means: dict[str, float] = {}
    for t in tracks:
        all_entries = area.entries(t.name)
        ids = {s.id for s in sources}
        orphans[t.name] = sorted(i for i in all_entries if i not in ids)
        measured = case_seconds(e for e in all_entries.values() if e["id"] in ids)
        track_mean = means[t.name] = measured or DEFAULT_CASE_SECONDS
        done_seconds = projected = 0.0
        n_done = n_todo = 0
        failed: list[str] = []
        for f in families:
            p = plans[t.name][f]
            done_entries = [p.entries[s.id] for s in p.done]
            failed += [e["id"] for e in done_entries if e["status"] == "failed"]
            mean = case_seconds(p.entries.values()) or track_mean
            done_seconds += sum(c if (c := _cost(e)) is not None else mean for e in done_entries)
            projected += len(p.todo) * mean
            n_done, n_todo = n_done + len(p.done), n_todo + len(p.todo)
        machine[t.name] = {"committed_seconds": done_seconds, "projected_seconds": projected,
                           "done": n_done, "to_build": n_todo, "seconds_per_case": track_mean,
                           "measured": measured is not None, "failed": failed}
        if sample.sampled(t.name):
            parts = [plans[t.name][f] for f in families]
            whole = Plan("sample", t.name, [s for p in parts for s in p.cases], [s for p in parts for s in p.done],
                         [s for p in parts for s in p.todo], {i: e for p in parts for i, e in p.entries.items()})
            mean = case_seconds(whole.entries.values()) or track_mean
            samples[t.name] = {"cases": len(whole.cases), "strata": len(sample.strata(sources, t.name)),
                               "shards": _to_run(ShardSpec(None, sample=True), whole, sources, mean, budget)}
    first = tracks[0].name if tracks else ""
    # a sample primary track: each family lists the sample's slices that hold its cases to build
    slices = {name: {s.id for s in ShardSpec.parse(name, families).select(sources, first)}
              for name in samples[first]["shards"]} if first in samples else {}
    for f in families:
        counts = {t.name: (len(plans[t.name][f].done), len(plans[t.name][f].todo)) for t in tracks}
        shards: list[str] = []
        if tracks and plans[first][f].todo:
            p = plans[first][f]
            if first in samples:
                shards = [name for name, ids in slices.items() if any(s.id in ids for s in p.todo)]
            else:
                mean = case_seconds(p.entries.values()) or means[first]
                shards = _to_run(ShardSpec(f), p, sources, mean, budget)
        rows.append(ShardRow(f, sum(1 for s in sources if s.family == f), counts, shards))
    return Status(rows, machine, orphans, samples)


def _to_run(spec: ShardSpec, p: Plan, sources: list[Source], mean: float, budget: float) -> list[str]:
    """The shards to run for what remains of ``spec`` (its plan ``p``): itself, or when its cases
    are projected past SHARD_PLANNED of the budget at ``mean`` seconds each, its slices that hold a
    case to build."""
    if not p.todo:
        return []
    planned = budget * SHARD_PLANNED
    n = max(1, math.ceil(len(p.cases) * mean / planned)) if len(p.todo) * mean > planned else 1
    if n == 1:
        return [spec.name]
    todo = {s.id for s in p.todo}
    slices = (replace(spec, k=k, n=n) for k in range(1, n + 1))
    return [part.name for part in slices if any(s.id in todo for s in part.select(sources, p.track))]


# -- building a shard -------------------------------------------------------------------------


@dataclass
class ShardResult:
    plan: Plan
    outcomes: list[CaseOutcome]
    #: wall seconds of the build of the cases to build
    seconds: float
    committed: list[Path]
    #: (case id, why it was not committed)
    uncommitted: list[tuple[str, str]]
    #: cases committed under other inputs than the plan's (the solver code changed during the run)
    moved: list[str] = field(default_factory=list)

    @property
    def built(self) -> int:
        return len(self.outcomes)


def build_shard(area: Area, sources: list[Source], spec: ShardSpec, opts: BuildOptions, jobs: int = 1,
                executor: Any = None, retry_failed: bool = False,
                announce: Callable[[Plan], None] = lambda p: None,
                progress: Callable[[str, str], None] = lambda case, stage: None,
                done: Callable[[CaseOutcome], None] = lambda o: None,
                track: TrackIdentity | None = None) -> ShardResult:
    """Build the cases of shard ``spec`` on ``opts.track`` that are not done in ``area`` into
    ``opts.build_dir`` and commit each one's entry as it finishes (an interrupted run keeps what
    finished; KeyboardInterrupt is raised on).  ``announce`` gets the plan before the build.
    Before it, the other tracks' committed records of those cases are put in the build directory
    (where it has none from the same source), so cross-track agreement is checked against them."""
    from casekit.build.run import build

    track = track or TrackIdentity.of(opts.track)
    p = plan(area, sources, spec, track, retry_failed)
    announce(p)
    result = ShardResult(p, [], 0.0, [], [])
    by_path = {s.path.resolve(): s for s in p.todo}
    if not p.todo:
        return result
    _put_other_tracks(area, p.todo, opts.build_dir, track.name)

    def finished(o: CaseOutcome) -> None:
        s = by_path[Path(o.path).resolve()]
        if o.status == "failed" and o.reason.startswith("internal error"):
            result.uncommitted.append((s.id, f"not committed: {o.reason}"))
        elif o.status not in DONE:
            result.uncommitted.append((s.id, f"not committed: {o.status} ({o.reason})"))
        else:
            # the key of what the build used (a case rejected before it knew them: the plan's inputs);
            # solver code edited during a long run gives the cases built since another key
            parts = o.key_parts or track.parts(s)
            if record_key(**parts) != track.key(s):
                result.moved.append(s.id)
            result.committed.append(area.commit(s, o, opts.build_dir, parts, jobs))
        done(o)

    t0 = time.perf_counter()
    result.outcomes = build([s.path for s in p.todo], opts, jobs, progress=progress, done=finished,
                            executor=executor)
    result.seconds = time.perf_counter() - t0
    return result


def _put_other_tracks(area: Area, todo: list[Source], build_dir: Path, track: str) -> None:
    from casekit.tracks import TRACKS

    codes: dict[str, str] = {}
    for s in todo:
        for other in s.tracks:
            if other == track or other not in TRACKS:
                continue
            entry = area.read(other, s)
            if entry is None or entry["status"] != "built" or entry["source_key"] != s.source_key:
                continue
            code = codes.setdefault(other, TRACKS.get(other).code_hash())
            here = build_dir / other / s.id / "record.json"
            if entry["code"] != code or (here.is_file() and
                                         read_json(here)["evaluation_metadata"].get("source_hash") == s.source_key):
                continue
            area.materialise_case(other, s, entry, build_dir)


# -- materialising for packaging -------------------------------------------------------------


@dataclass
class Materialised:
    track: str
    records: list[str]
    rejected: list[tuple[str, str]]
    missing: list[str]
    stale: list[str]
    #: whether library versions were checked (the track's environment is usable here)
    versions_checked: bool
    #: a sample track: written for the cases of its sample (casekit.build.sample)
    sample: bool = False

    @property
    def complete(self) -> bool:
        return not self.missing and not self.stale


def materialise(area: Area, sources: list[Source], tracks: list[str], out: Path,
                identities: dict[str, TrackIdentity] | None = None) -> list[Materialised]:
    """Write the committed records of ``tracks`` for ``sources`` as a build directory ``out``
    (``<track>/<id>/{record.json, calibration.npz, reference.npz}``, ``<track>/records.jsonl`` and
    ``<track>/build-report.json``, each materialised case's status and the reason of a rejected one:
    what ``casekit package`` reads, the card naming the rejected cases), replacing ``out`` whole.
    An entry counts when its source key and solver code are this checkout's, and its library
    versions too where ``identities`` gives them (a track whose environment is here); the rest is
    reported missing or stale.  A sample track's (casekit.build.sample) are written for its
    sample's cases, as it is released."""
    from casekit.build import sample
    from casekit.build.run import BUILD_REPORT, write_records
    from casekit.tracks import TRACKS

    if out.exists() and any(out.iterdir()) and not (out / ".materialised").exists():
        raise UsageError(f"{out} exists and was not written by casekit dataset materialise",
                         valid="a new or empty directory")
    out.parent.mkdir(parents=True, exist_ok=True)
    prime_keys(sources)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    reports = []
    try:
        (tmp / ".materialised").touch()
        for t in tracks:
            ident = (identities or {}).get(t)
            code = ident.code if ident else TRACKS.get(t).code_hash()
            rep = Materialised(t, [], [], [], [], ident is not None, sample.sampled(t))
            for s in sample.select(sources, t) if rep.sample else sources:
                if t not in s.tracks:
                    continue
                entry = area.read(t, s)
                if entry is None:
                    rep.missing.append(s.id)
                    continue
                current = (entry["key"] == ident.key(s)) if ident else (
                    entry["source_key"] == s.source_key and entry["code"] == code)
                if not current:
                    rep.stale.append(s.id)
                elif entry["status"] == "built":
                    area.materialise_case(t, s, entry, tmp)
                    rep.records.append(s.id)
                else:
                    rep.rejected.append((s.id, entry["reason"]))
            (tmp / t).mkdir(parents=True, exist_ok=True)
            write_records(tmp, t)
            write_json(tmp / t / BUILD_REPORT, [{"case_id": cid, "status": "built", "reason": ""}
                                                for cid in rep.records]
                       + [{"case_id": cid, "status": "rejected", "reason": why} for cid, why in rep.rejected])
            reports.append(rep)
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return reports
