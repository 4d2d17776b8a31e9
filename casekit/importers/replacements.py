"""The replace file: records (and drawn siblings) a dataset build cannot release as they are.

``casekit dataset answerable --write FILE`` writes it, ``casekit import --repair --replace FILE``
reads it.  A JSON object keyed by the input's record ids; each value is either

* a string -- the record's own data were found answerable (its numerical reference lies in the
  span of what the agent sees, an inverter passes), or, for a record without a manufactured
  solution, the build could not certify its numerical reference (casekit.build.pipeline.uncertified):
  the import releases a sibling instead; or
* an object ``{"record": why (optional), "draws": {"<k>": why, ...}}`` -- the record is released as
  a sibling and the build found sibling draw ``k`` answerable (a drawn solution the validator
  passed but whose solve lies near a span of the visible data at the case's own threshold): the
  import skips those draws and releases the next clean one.

What a file lists stays listed when a build adds to it: a record replaced once stays replaced, a
draw rejected once is never drawn again -- so a sibling already in a release is never re-derived
into another.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casekit.errors import UsageError

#: an example of the file, for error messages
EXAMPLE = ('{"heat_oscillatory_source_no_exact": "the reference is within 2e-5 of the forcing span", '
           '"reaction_diffusion_cubic_manufactured": {"draws": {"0": "the reference is within 0.32 of the forcing '
           'span"}}}')


@dataclass
class Replacements:
    """What a replace file says: {record id: why} and {record id: {draw: why}}."""

    records: dict[str, str] = field(default_factory=dict)
    draws: dict[str, dict[int, str]] = field(default_factory=dict)

    def ids(self) -> set[str]:
        return set(self.records) | set(self.draws)

    def rejected_draws(self, record_id: str) -> dict[int, str]:
        return dict(self.draws.get(record_id, {}))

    def add(self, other: Replacements) -> Replacements:
        """This list with ``other``'s entries added; what this one says already stays."""
        records = {**other.records, **self.records}
        draws = {rid: {**other.draws.get(rid, {}), **self.draws.get(rid, {})}
                 for rid in set(self.draws) | set(other.draws)}
        return Replacements(records, draws)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for rid in sorted(self.ids()):
            if rid not in self.draws:
                out[rid] = self.records[rid]
                continue
            value: dict[str, Any] = {}
            if rid in self.records:
                value["record"] = self.records[rid]
            value["draws"] = {str(k): why for k, why in sorted(self.draws[rid].items())}
            out[rid] = value
        return out


def parse(data: Any, where: str) -> Replacements:
    """The replacements of a replace file's JSON ``data``; a :class:`UsageError` naming the entry
    and what would be valid otherwise."""
    if not isinstance(data, Mapping):
        raise UsageError(f"{where}: not a JSON object of record ids to reasons", valid=EXAMPLE)
    out = Replacements()
    for rid, value in data.items():
        if isinstance(value, str) and value.strip():
            out.records[rid] = value
            continue
        if not isinstance(value, Mapping) or set(value) - {"record", "draws"} or "draws" not in value:
            raise UsageError(f"{where}: entry {rid!r} is neither a reason nor {{'record': why, 'draws': "
                             "{draw: why}}", valid=EXAMPLE)
        record = value.get("record")
        if record is not None:
            if not (isinstance(record, str) and record.strip()):
                raise UsageError(f"{where}: entry {rid!r}: 'record' must be a non-empty reason", valid=EXAMPLE)
            out.records[rid] = record
        draws = value["draws"]
        if not isinstance(draws, Mapping) or not draws:
            raise UsageError(f"{where}: entry {rid!r}: 'draws' must map draw numbers to reasons", valid=EXAMPLE)
        parsed: dict[int, str] = {}
        for k, why in draws.items():
            if not (isinstance(k, str) and k.isdigit() and isinstance(why, str) and why.strip()):
                raise UsageError(f"{where}: entry {rid!r}: draw {k!r}: a draw is a number (\"0\", \"7\") with a "
                                 "non-empty reason", valid=EXAMPLE)
            parsed[int(k)] = why
        out.draws[rid] = parsed
    return out


def read(path: Path) -> Replacements:
    """The replace file at ``path``."""
    from casekit.jsonio import read_json

    try:
        data = read_json(path)
    except (OSError, ValueError) as exc:
        raise UsageError(f"--replace {path}: cannot read it: {exc}") from None
    return parse(data, str(path))


def merge_into(path: Path, found: Replacements) -> Replacements:
    """``path`` (created if missing) with ``found`` added, written atomically; what it lists stays."""
    from casekit.jsonio import write_json

    merged = (read(path) if path.exists() else Replacements()).add(found)
    write_json(path, merged.to_json())
    return merged
