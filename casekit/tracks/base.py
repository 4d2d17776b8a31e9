"""The track interface and registry (filled in by the track implementations)."""

from __future__ import annotations

from dataclasses import dataclass

from casekit.registry import Registry


@dataclass(frozen=True)
class Track:
    name: str
    language: str  # "python" or "cpp"
    description: str


TRACKS: Registry[Track] = Registry("track", plugins="casekit.tracks.library")
