"""The verdicts a report is made from: ``verdicts.jsonl`` files or evaluation directories.

Each verdict is counted once.  The same file named twice (``eval eval``, ``eval
eval/verdicts.jsonl``, a link to it) is refused.  Within a file, the last line of a key (track,
system, case, attempt) is its verdict, as for the journal that wrote it (a verdict scored again
is appended after the one it replaces).  A system evaluated on the same track in two files is
two evaluations -- two systems whose submissions directories share a name, or one system run
twice -- and they are kept apart: each is named ``system (path)`` by the shortest end of its
file's path that tells the files apart.  A system whose files hold different tracks is one
system evaluated track by track, and stays one.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from casekit import schema
from casekit.errors import UsageError
from casekit.jsonio import iter_jsonl

VERDICTS = "verdicts.jsonl"


def verdict_files(paths: Sequence[Path]) -> list[Path]:
    """The verdicts file of each path (a directory holds ``verdicts.jsonl``); refuses a missing
    one and a file named twice."""
    files: list[Path] = []
    seen: dict[tuple[int, int], Path] = {}
    for given in paths:
        path = Path(given) / VERDICTS if Path(given).is_dir() else Path(given)
        if not path.is_file():
            raise UsageError(f"{path} does not exist", valid="a verdicts.jsonl or the --out directory of casekit "
                             "evaluate")
        st = os.stat(path)
        first = seen.get((st.st_dev, st.st_ino))
        if first is not None:
            raise UsageError(f"{first} and {path} are the same verdicts file ({path.resolve()}): its verdicts "
                             "would count twice", valid="each evaluation once")
        seen[(st.st_dev, st.st_ino)] = path
        files.append(path)
    return files


def labels(files: Sequence[Path]) -> list[str]:
    """The shortest ends of the files' paths (their evaluation directories, for a
    ``verdicts.jsonl``) that tell them apart."""
    parts = [p.parent.parts if p.name == VERDICTS else p.parts for p in (f.resolve() for f in files)]
    for k in range(1, max((len(p) for p in parts), default=0) + 1):
        ends = ["/".join(p[-k:]) for p in parts]
        if len(set(ends)) == len(ends):
            return ends
    return [str(f.resolve()) for f in files]


def read_verdicts(files: Sequence[Path]) -> tuple[list[dict[str, Any]], list[str]]:
    """Every verdict of ``files``, each once, with systems of different evaluations kept apart;
    and a note for each system renamed so."""
    per_file: list[list[dict[str, Any]]] = []
    for path in files:
        by_key: dict[tuple[Any, ...], dict[str, Any]] = {}
        for lineno, v in iter_jsonl(path):
            problems = schema.validate(v, "verdict")
            if problems:
                raise UsageError(f"{path}:{lineno} is not a verdict record: {problems[0].render()}")
            key = (v["track"], v["system"], v["case_id"], v["attempt"])
            by_key.pop(key, None)
            by_key[key] = v  # the last line of a key is its verdict (a re-scored one replaces it)
        per_file.append(list(by_key.values()))
    holders: dict[tuple[str, str], set[int]] = defaultdict(set)  # (system, track) -> files
    for i, vs in enumerate(per_file):
        for v in vs:
            holders[(v["system"], v["track"])].add(i)
    apart: dict[str, set[int]] = defaultdict(set)  # system -> the files whose evaluations of it clash
    for (system, _), where in holders.items():
        if len(where) > 1:
            apart[system] |= where
    rename: dict[tuple[int, str], str] = {}
    notes = []
    for system, where in sorted(apart.items()):
        order = sorted(where)
        names = [f"{system} ({end})" for end in labels([files[i] for i in order])]
        rename.update({(i, system): name for i, name in zip(order, names, strict=True)})
        notes.append(f"system {system!r} was evaluated on the same track in {len(order)} files; reported apart as "
                     + ", ".join(repr(n) for n in names))
    rows = [{**v, "system": rename.get((i, v["system"]), v["system"])} for i, vs in enumerate(per_file) for v in vs]
    return rows, notes
