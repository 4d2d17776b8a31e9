"""Building many cases: a pool of case pipelines, a progress display, the final table."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from casekit.build.cache import StageCache
from casekit.build.pipeline import BuildOptions, CaseBuild, CaseOutcome, collect_records
from casekit.jsonio import write_json, write_jsonl
from casekit.validate import SOURCE_SUFFIXES


def case_files(paths: list[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            out.extend(sorted(q for q in p.rglob("*") if q.suffix in SOURCE_SUFFIXES))
        else:
            out.append(p)
    return out


def build(paths: list[Path], opts: BuildOptions, jobs: int = 1,
          progress: Callable[[str, str], None] = lambda case, stage: None,
          done: Callable[[CaseOutcome], None] = lambda o: None) -> list[CaseOutcome]:
    """Build every case source under ``paths`` for one track; writes
    ``<build>/<track>/records.jsonl`` (all built records) and ``build-report.json``."""
    files = case_files(paths)
    StageCache(opts.build_dir).sweep()
    lock = threading.Lock()
    outcomes: list[CaseOutcome] = []
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(CaseBuild(f, opts, lock, progress).run) for f in files]
        for fut in as_completed(futures):
            o = fut.result()
            outcomes.append(o)
            done(o)
    outcomes.sort(key=lambda o: o.case_id)
    track_dir = opts.build_dir / opts.track
    ids = {o.case_id for o in outcomes if o.status == "built"}
    records = [r for r in collect_records(opts.build_dir, opts.track) if r["id"] in ids]
    write_jsonl(track_dir / "records.jsonl", records)
    write_json(track_dir / "build-report.json", [
        {"case_id": o.case_id, "source": str(o.path), "status": o.status, "reason": o.reason,
         "family": o.family, "domain": o.domain, "e_base": o.e_base, "t_base": o.t_base,
         "cached": o.cached, "stage_seconds": o.stage_seconds, "solve_seconds": o.solve_seconds}
        for o in outcomes])
    return outcomes
