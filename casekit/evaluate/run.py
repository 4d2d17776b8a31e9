"""``casekit evaluate``: run every submission of a directory against the built cases.

The submissions directory holds one solver per case id (``DIR/<case_id>/solver.py`` or
``solver.cpp``), or with attempts ``DIR/<case_id>/attempt_<n>/...``.  Every run is isolated
(sandboxed process, only the agent view and the submission visible, no network, limits); the
case store, the submissions directory and the output directory are hidden from it.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casekit.errors import UsageError
from casekit.evaluate.store import CaseStore
from casekit.evaluate.verdicts import verdict
from casekit.execution import execute
from casekit.jsonio import write_jsonl
from casekit.runner.limits import Limits
from casekit.tracks import TRACKS

SOURCE_FILES = {"python": ("solver.py",), "cpp": ("solver.cpp",)}
MAX_SUBMISSION_BYTES = 2 * 1024 * 1024


@dataclass
class EvalOptions:
    store: CaseStore
    submissions: Path
    out: Path
    track: str = "dolfinx"
    system: str = ""
    repeats: int = 3
    jobs: int = 1
    runner: str = "local"
    memory_mb: int = 4096
    hide: tuple[Path, ...] = field(default_factory=tuple)


def attempts_of(case_dir: Path) -> list[tuple[int, Path]]:
    numbered = sorted((int(m.group(1)), p) for p in case_dir.iterdir()
                      if p.is_dir() and (m := re.fullmatch(r"attempt_(\d+)", p.name)))
    return numbered or [(1, case_dir)]


def read_submission(path: Path, language: str) -> dict[str, bytes]:
    files = {}
    for name in SOURCE_FILES[language]:
        f = path / name
        if f.is_file() and not f.is_symlink():
            data = f.read_bytes()
            if len(data) > MAX_SUBMISSION_BYTES:
                raise UsageError(f"{f} is larger than {MAX_SUBMISSION_BYTES} bytes")
            files[name] = data
    return files


def evaluate(opts: EvalOptions, progress: Any = lambda v: None) -> list[dict[str, Any]]:
    track = TRACKS.get(opts.track)
    if not opts.submissions.is_dir():
        raise UsageError(f"{opts.submissions} is not a directory of submissions")
    system = opts.system or opts.submissions.resolve().name
    jobs: list[tuple[str, int, Path]] = []
    for case_dir in sorted(p for p in opts.submissions.iterdir() if p.is_dir()):
        if case_dir.name not in opts.store.records:
            raise UsageError(f"submission {case_dir.name!r} matches no built case",
                             valid=", ".join(sorted(opts.store.records)[:10]) + ", ...")
        for attempt, path in attempts_of(case_dir):
            jobs.append((case_dir.name, attempt, path))
    hide = (opts.store.root, opts.submissions.resolve(), opts.out.resolve(), Path.cwd().resolve(), *opts.hide)

    def one(job: tuple[str, int, Path]) -> dict[str, Any]:
        case_id, attempt, path = job
        record = opts.store.records[case_id]
        files = read_submission(path, track.language)
        artifacts = opts.out / "artifacts" / system / case_id / f"attempt_{attempt}"
        limits = Limits(timeout_sec=float(record["evaluation_config"]["timeout_sec"]), memory_mb=opts.memory_mb)
        if not files:
            from casekit.execution import Execution

            ex = Execution(failure=("missing_artifact", f"no {' or '.join(SOURCE_FILES[track.language])} "
                                    f"in {path}"))
        else:
            ex = execute(track, files, record["case_spec"], artifacts, repeats=opts.repeats, limits=limits,
                         cache_dir=opts.out / "homes" / system / case_id / f"attempt_{attempt}", hide=hide,
                         runner=opts.runner)
        for name, data in files.items():  # the code next to its artifacts (for feedback prompts)
            (artifacts / "submission").mkdir(parents=True, exist_ok=True)
            (artifacts / "submission" / name).write_bytes(data)
        v = verdict(record, opts.store.reference(case_id), ex, track=opts.track, system=system, attempt=attempt)
        if files:
            v["paths"]["submission"] = str(artifacts / "submission")
        progress(v)
        return v

    with ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        verdicts = list(pool.map(one, jobs))
    verdicts.sort(key=lambda v: (v["case_id"], v["attempt"]))
    write_jsonl(opts.out / "verdicts.jsonl", verdicts)
    return verdicts
