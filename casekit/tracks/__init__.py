"""Tracks: the FEM libraries cases are solved with (registry, interface, implementations)."""

from casekit.tracks.base import TRACKS, Track

__all__ = ["TRACKS", "Track"]
