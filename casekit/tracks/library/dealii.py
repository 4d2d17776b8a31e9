"""The deal.II track."""

from casekit.tracks.base import TRACKS, Track

TRACKS.register("dealii", Track("dealii", "cpp", "deal.II 9.4 from Debian", families=(
    "poisson", "helmholtz", "biharmonic", "linear_elasticity", "heat", "convection_diffusion",
    "reaction_diffusion", "stokes", "navier_stokes")))
