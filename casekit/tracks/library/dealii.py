"""The dealii track."""

from casekit.tracks.base import TRACKS, Track

TRACKS.register("dealii", Track("dealii", "cpp", "deal.II 9.4 from Debian"))
