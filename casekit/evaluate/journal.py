"""The verdicts of an evaluation directory: appended as they are produced, read back to resume.

``verdicts.jsonl`` is a journal: each verdict is one line, written with a single ``write`` and
flushed to disk, so a killed evaluation keeps every verdict it finished; a torn last line (the
process died mid-write) is dropped when the journal is opened again.  A verdict is keyed by
(track, system, case, attempt); the submission's sha256 rides along, so resuming never reuses a
verdict of different code, and a second system appends beside the first.  A verdict given again
(its case record changed: :func:`casekit.evaluate.run.plan`) is appended after the one it replaces:
the last line of a key is its verdict, for ``casekit report`` too.  Every verdict is
checked before it is written (:func:`casekit.evaluate.verdicts.checked`): one that does not
conform to the schema, or holds NaN or Infinity, is written as that attempt's ``scoring_error``,
so no attempt's data can stop the journal, and with it the evaluation and every resume.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from casekit.errors import UsageError
from casekit.evaluate.verdicts import checked
from casekit.jsonio import dumps

Key = tuple[str, str, str, int]  # track, system, case id, attempt


def key_of(v: dict[str, Any]) -> Key:
    return (str(v["track"]), str(v["system"]), str(v["case_id"]), int(v["attempt"]))


class Journal:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.lock = threading.Lock()
        self.verdicts: dict[Key, dict[str, Any]] = {}
        if self.path.exists():
            self._load()

    def _load(self) -> None:
        data = self.path.read_bytes()
        lines = data.split(b"\n")
        good = 0
        for i, line in enumerate(lines):
            if not line.strip():
                good += len(line) + 1
                continue
            try:
                v = json.loads(line)
                k = key_of(v)
            except (ValueError, KeyError, TypeError):
                if i == len(lines) - 1 or all(not rest.strip() for rest in lines[i + 1:]):
                    break  # a torn last line: the evaluation was killed while writing it
                raise UsageError(f"{self.path} line {i + 1} is not a verdict; it is not a casekit evaluation "
                                 "journal", valid="an --out directory written by casekit evaluate, or a new one"
                                 ) from None
            self.verdicts[k] = v
            good += len(line) + 1
        if good < len(data):
            with open(self.path, "r+b") as fh:
                fh.truncate(min(good, len(data)))

    def done(self, k: Key, sha256: str) -> dict[str, Any] | None:
        """The journal's verdict for ``k`` when it was given to the same code; ``None`` when
        there is none; a usage error when the code differs (never replaced silently)."""
        v = self.verdicts.get(k)
        if v is None:
            return None
        if v.get("submission_sha256", "") != sha256:
            raise UsageError(f"{self.path.parent} already holds a verdict for system {k[1]!r}, case {k[2]}, attempt "
                             f"{k[3]} of different code", valid="another --out directory, another --system name, "
                             "or remove that directory first")
        return v

    def append(self, verdicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Write ``verdicts``, each :func:`checked` first; returns them as written."""
        verdicts = [checked(v) for v in verdicts]
        if not verdicts:
            return verdicts
        text = "".join(dumps(v) + "\n" for v in verdicts).encode()
        with self.lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                view = memoryview(text)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)
            for v in verdicts:
                self.verdicts[key_of(v)] = v
        return verdicts

    def all(self) -> list[dict[str, Any]]:
        with self.lock:
            return sorted(self.verdicts.values(), key=lambda v: (v["system"], v["case_id"], v["attempt"]))
