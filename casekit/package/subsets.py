"""The sets of cases a packaged dataset holds, each as its own Hugging Face configurations.

The **main** set (the imported benchmark) is configurations ``agent`` (``agent.jsonl``), ``cases``
(``cases.jsonl``, the primary track's records) and ``cases_<track>`` (``tracks/<track>.jsonl``).  A
**named** set -- ``authored``, the authored sample -- is configurations ``<name>_agent``,
``<name>`` and ``<name>_<track>`` in ``<name>/agent.jsonl``, ``<name>/cases.jsonl`` and
``<name>/tracks/<track>.jsonl``, and its cases' specifications in ``case_specs/`` (``<name>/case_specs/``).
Every set shares ``references/``, ``calibration/<track>/`` and
``prompts/<library>/``, so a case id (and public id) is unique across the dataset; a named set's
primary track is the main set's and its tracks are among the main set's.  The manifest holds the
main set's tracks (``tracks``) and the named sets' (``subsets``: name -> tracks).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from casekit.errors import UsageError

#: names a set may not take: the main set's configurations and the dataset's directories
RESERVED = frozenset({"agent", "cases", "tracks", "references", "calibration", "prompts", "schemas", "case_specs"})


@dataclass(frozen=True)
class Subset:
    """A set of cases: ``name`` ("" for the main set) and its tracks (the first is primary)."""

    name: str
    tracks: tuple[str, ...]

    @property
    def prefix(self) -> str:
        return f"{self.name}/" if self.name else ""

    @property
    def agent_file(self) -> str:
        return f"{self.prefix}agent.jsonl"

    @property
    def case_specs_dir(self) -> str:
        """Each case's case_spec as JSON text, ``<dir>/<public id>.json`` (what Croissant's agent
        record sets read: a JSON object inside JSON lines is no text field for mlcroissant)."""
        return f"{self.prefix}case_specs"

    def file_set(self, what: str) -> str:
        """The Croissant id of the set's file set ``what`` (``case_specs``, ``authored_case_specs``)."""
        return f"{self.name}_{what}" if self.name else what

    def records_file(self, track: str) -> str:
        return f"{self.prefix}cases.jsonl" if track == self.tracks[0] else f"{self.prefix}tracks/{track}.jsonl"

    @property
    def agent_config(self) -> str:
        return f"{self.name}_agent" if self.name else "agent"

    def records_config(self, track: str) -> str:
        base = self.name or "cases"
        return base if track == self.tracks[0] else f"{base}_{track}"

    def label(self, track: str) -> str:
        """How a track of this set is named in diffs and changelogs (``dolfinx``, ``authored/dolfinx``)."""
        return f"{self.prefix}{track}"

    @property
    def files(self) -> list[str]:
        """The set's JSONL files: records of each track, then agent views."""
        return [*(self.records_file(t) for t in self.tracks), self.agent_file]


def check_name(name: str) -> str:
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or name in RESERVED:
        raise UsageError(f"{name!r} cannot name a set of cases",
                         valid="lower-case letters, digits and _ (not " + ", ".join(sorted(RESERVED)) + ")")
    return name


def of_manifest(manifest: dict[str, Any]) -> list[Subset]:
    """The main set, then every named set, of a dataset's manifest."""
    return [Subset("", tuple(manifest["tracks"])),
            *(Subset(n, tuple(ts)) for n, ts in (manifest.get("subsets") or {}).items())]


def track_of(label: str) -> str:
    """The track of a :meth:`Subset.label`."""
    return label.rpartition("/")[2]


def clashes(ids: dict[str, list[str]]) -> dict[str, list[str]]:
    """Ids (or public ids) in more than one set: ``ids`` is set name -> its ids; the answer id -> sets."""
    where: dict[str, list[str]] = {}
    for name, xs in ids.items():
        for x in set(xs):
            where.setdefault(x, []).append(name or "main")
    return {x: sorted(ns) for x, ns in sorted(where.items()) if len(ns) > 1}


@dataclass
class Packaged:
    """A set as packaged: its records per track (the primary track's first), the number of its
    agent views and (where the build directory had it) its build's machine time per track."""

    subset: Subset
    by_track: dict[str, list[dict[str, Any]]]
    agent_rows: int
    machine: dict[str, dict[str, Any]] | None = None

    @property
    def records(self) -> list[dict[str, Any]]:
        return self.by_track[self.subset.tracks[0]]
