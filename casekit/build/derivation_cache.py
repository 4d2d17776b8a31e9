"""A machine cache of case sources' keys, so that a dataset's sources are derived once per code.

Deriving a case (sympy: forcing, boundary and initial data, the case_spec text) takes 2-12 s per
imported source on a loaded machine, and a dataset build derives every source of a shard to
plan it, ``dataset status`` every source, ``dataset materialise`` every source again: 645 sources
cost the better part of an hour each time.  The source key (:func:`casekit.build.pipeline.source_key`)
is a function of the source file and of casekit's code alone, so it is cached under the digest of
both: the file's bytes and every file of the casekit package and its data directories.  Any edit
to casekit -- derivation, validation, a template -- changes the digest, so a key is never served
for code that would derive differently; the cache is only a machine's, never committed, and
deleting it costs time only.  Left out is code no derivation runs: what only runs inside the
sandbox -- each track's solver package (``casekit/tracks/<track>/solvers``), less any of its
modules that casekit itself imports (deal.II's table of target kinds) -- and the packages of
:data:`NOT_DERIVATION` (the command line, the Inspect AI task, reports): a solver or CLI edit, which
the build's entries key by the track's code hash or not at all, no longer makes 597 sources
derive again (10-30 minutes).

``CASEKIT_CACHE_DIR`` moves it (default ``~/.cache/casekit``); ``CASEKIT_DERIVATION_CACHE=0``
turns it off.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from functools import cache
from pathlib import Path

from casekit.jsonio import atomic_write_text, dumps, read_json

#: uncached sources from which priming derives in worker processes (below, in place, on demand)
PARALLEL_FROM = 8
#: files of the package (and of its data directories) that the digest covers
_SUFFIXES = (".py", ".json", ".j2", ".yaml", ".yml")
#: casekit's packages that no derivation imports (tests/build/test_derivation_cache.py derives a
#: sample of every family in a fresh process and checks that none of them was imported)
NOT_DERIVATION = ("cli", "inspect", "report")


def cache_dir() -> Path:
    return Path(os.environ.get("CASEKIT_CACHE_DIR", str(Path.home() / ".cache" / "casekit"))) / "derived"


def enabled() -> bool:
    return os.environ.get("CASEKIT_DERIVATION_CACHE", "1") != "0"


@cache
def code_digest() -> str:
    """The digest of casekit's own files (the package and its schemas and templates)."""
    import casekit
    from casekit.resources import data_dir

    digest = hashlib.sha256()
    roots = [Path(casekit.__file__).resolve().parent]
    for name in ("schemas", "templates"):
        try:
            d = data_dir(name).resolve()
        except Exception:  # a data directory this install does not have is not part of the code
            continue
        if not any(d.is_relative_to(r) for r in roots):
            roots.append(d)
    skipped = sandbox_only()
    package = roots[0]
    skipped |= {f.resolve() for name in NOT_DERIVATION for f in (package / name).rglob("*") if f.is_file()}
    for root in roots:
        for f in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in _SUFFIXES
                        and "__pycache__" not in p.parts and p.resolve() not in skipped):
            digest.update(f"{root.name}/{f.relative_to(root)}".encode() + b"\0" + f.read_bytes() + b"\0")
    return digest.hexdigest()


def sandbox_only() -> set[Path]:
    """The files of every registered track's solver package that casekit does not import in its
    own process once every track is registered: the code a calibration or reference solve carries
    into the sandbox, which no derivation runs."""
    from casekit.tracks import TRACKS

    directories = [track.directory() / "solvers" for _, track in TRACKS.items()]
    loaded = {Path(f).resolve() for m in list(sys.modules.values()) if (f := getattr(m, "__file__", None))}
    return {f.resolve() for d in directories if d.is_dir() for f in d.rglob("*") if f.is_file()} - loaded


def _entry(path: Path) -> Path:
    content = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return cache_dir() / code_digest()[:16] / content[:2] / f"{content}.json"


def get(path: Path) -> str | None:
    """The cached key of the source file at ``path`` under this code, or None."""
    if not enabled():
        return None
    entry = _entry(path)
    try:
        data = read_json(entry)
    except Exception:  # missing or damaged: derive again
        return None
    k = data.get("source_key") if isinstance(data, dict) else None
    return k if isinstance(k, str) else None


def put(path: Path, source_key: str) -> None:
    if not enabled():
        return
    entry = _entry(path)
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(entry, dumps({"source_key": source_key}))
    except OSError:  # a read-only or full cache only costs time
        pass


def prime(paths: Iterable[Path], derive_key: Callable[[Path], str], jobs: int,
          progress: Callable[[int, int], None] | None = None) -> None:
    """Derive, in ``jobs`` processes, the keys of the sources at ``paths`` not cached yet, and
    cache them (``derive_key`` must be a picklable module-level function); ``progress(done,
    total)`` is told the count first (done 0) and after each source -- minutes of derivation after
    a code change are otherwise silent."""
    todo = [p for p in paths if get(p) is None]
    if not enabled() or len(todo) < PARALLEL_FROM:
        return  # a few sources are derived where they are needed
    prune()
    if progress is not None:
        progress(0, len(todo))
    if jobs < 2:
        results: Iterable[str] = map(derive_key, todo)
        for i, (path, k) in enumerate(zip(todo, results, strict=True), start=1):
            put(path, k)
            if progress is not None:
                progress(i, len(todo))
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for i, (path, k) in enumerate(zip(todo, pool.map(derive_key, todo, chunksize=1), strict=True), start=1):
            put(path, k)
            if progress is not None:
                progress(i, len(todo))


#: code versions whose keys are kept (the others' are removed when a new set is primed)
KEEP_VERSIONS = 8


def prune() -> None:
    """Remove the keys of all but the :data:`KEEP_VERSIONS` most recently written code versions
    (the cache grows by one directory per casekit code version)."""
    import shutil

    root = cache_dir()
    if not root.is_dir():
        return
    versions = sorted((d for d in root.iterdir() if d.is_dir()), key=lambda d: d.stat().st_mtime, reverse=True)
    for old in versions[KEEP_VERSIONS:]:
        if old.name != code_digest()[:16]:
            shutil.rmtree(old, ignore_errors=True)
