"""The track interface and registry (filled in by the track implementations)."""

from __future__ import annotations

from dataclasses import dataclass

from casekit.registry import Registry


@dataclass(frozen=True)
class Track:
    name: str
    language: str  # "python" or "cpp"
    description: str
    #: families this track has calibration solvers for (empty: none yet)
    families: tuple[str, ...] = ()
    #: domain templates it can mesh (empty: all registered)
    domains: tuple[str, ...] = ()

    def supports(self, family: str, domain: str) -> bool:
        return family in self.families and (not self.domains or domain in self.domains)


TRACKS: Registry[Track] = Registry("track", plugins="casekit.tracks.library")

#: every PDE family of the design (tracks that cover all of them say so with this)
FAMILY_NAMES = ("poisson", "helmholtz", "biharmonic", "linear_elasticity", "heat", "convection_diffusion",
                "reaction_diffusion", "stokes", "navier_stokes", "burgers", "wave")
