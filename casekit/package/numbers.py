"""The dataset's numbers beside the paper's: per family and track, the cases and their calibration
(e_base median, 95th percentile and max, t_base median) next to PDEAgent-Bench's Appendix F, and
the build's machine time per track (README: Datasets; the dataset card; ``casekit dataset numbers``).

The calibration figures come from records (a packaged dataset's, or a committed build area's
built entries); the machine time from a committed build area's entries (``build.seconds``: what
building each case took, rejected ones included).  ``casekit dataset materialise`` writes the
machine time of what it materialises as :data:`MACHINE_FILE` in the build directory, and
``casekit package`` puts it in the card.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

#: the machine time of a materialised build directory (``casekit dataset materialise`` writes it)
MACHINE_FILE = "machine-time.json"


@dataclass(frozen=True)
class PaperFamily:
    """One row of the paper's per-family table."""

    cases: int
    #: cases per track; None where the paper has no such track for the family ("--")
    tracks: dict[str, int | None]
    e_median: float
    e_p95: float
    e_max: float


def _row(cases: int, dolfinx: int, firedrake: int | None, dealii: int | None, median: float, p95: float,
         top: float) -> PaperFamily:
    return PaperFamily(cases, {"dolfinx": dolfinx, "firedrake": firedrake, "dealii": dealii}, median, p95, top)


#: PDEAgent-Bench (arXiv 2605.09636), Appendix F: per family, the cases (all; on DOLFINx, Firedrake,
#: deal.II) and the calibration error e_base (median, 95th percentile, max).  The paper gives no
#: t_base per family (nor any per-family machine time), so those columns have no paper figure.
PAPER: dict[str, PaperFamily] = {
    "poisson": _row(91, 91, 91, 60, 8.0e-5, 3.5e-4, 1.2e-3),
    "helmholtz": _row(62, 62, 62, 29, 2.5e-4, 9.0e-4, 1.8e-2),
    "biharmonic": _row(57, 57, 46, 15, 3.0e-4, 1.2e-3, 2.5e-2),
    "linear_elasticity": _row(63, 63, 61, 30, 2.0e-4, 8.0e-4, 8.0e-3),
    "heat": _row(50, 50, 50, 50, 1.5e-4, 5.0e-4, 2.0e-3),
    "convection_diffusion": _row(84, 84, 84, 52, 3.0e-4, 4.5e-4, 3.5e-2),
    "reaction_diffusion": _row(64, 64, 64, 22, 2.8e-4, 7.2e-4, 2.2e-2),
    "stokes": _row(61, 61, 52, 27, 3.5e-4, 2.0e-3, 4.0e-2),
    "navier_stokes": _row(28, 28, None, 28, 5.0e-4, 5.0e-3, 4.9e-2),
    "burgers": _row(43, 43, None, None, 3.0e-4, 1.8e-3, 2.8e-2),
    "wave": _row(42, 42, None, None, 2.0e-4, 8.0e-4, 1.0e-2),
}
PAPER_SOURCE = "PDEAgent-Bench (arXiv 2605.09636), Appendix F"


def quantile(values: list[float], q: float) -> float:
    """The ``q`` quantile of sorted ``values`` (nearest rank)."""
    return values[min(len(values), max(1, math.ceil(q * len(values)))) - 1]


@dataclass(frozen=True)
class Row:
    """A family on a track: its cases and their calibration."""

    family: str
    track: str
    cases: int
    e_median: float
    e_p95: float
    e_max: float
    t_median: float

    @property
    def paper(self) -> PaperFamily | None:
        return PAPER.get(self.family)

    @property
    def paper_cases(self) -> int | None:
        return self.paper.tracks.get(self.track) if self.paper else None

    def to_dict(self) -> dict[str, Any]:
        p = self.paper
        return {"family": self.family, "track": self.track, "cases": self.cases, "e_base_median": self.e_median,
                "e_base_p95": self.e_p95, "e_base_max": self.e_max, "t_base_median": self.t_median,
                "paper": None if p is None else {"cases": self.paper_cases, "e_base_median": p.e_median,
                                                 "e_base_p95": p.e_p95, "e_base_max": p.e_max}}


def rows(by_track: dict[str, list[dict[str, Any]]]) -> list[Row]:
    """Per family (sorted) and track (in the order given): the records' count and calibration."""
    families = sorted({r["pde_classification"]["equation_family"] for rs in by_track.values() for r in rs})
    out = []
    for f in families:
        for track, recs in by_track.items():
            mine = [r["evaluation_metadata"] for r in recs if r["pde_classification"]["equation_family"] == f]
            if not mine:
                continue
            e = sorted(float(m["e_base"]) for m in mine)
            t = sorted(float(m["t_base"]) for m in mine)
            out.append(Row(f, track, len(mine), statistics.median(e), quantile(e, 0.95), e[-1], statistics.median(t)))
    return out


def machine_time(entries: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The machine time of committed build entries: how many (and how many built), the sum of
    their machine seconds (``casekit.build.shards.machine_seconds``: wall time over the jobs that
    ran beside each) and the seconds per case."""
    from casekit.build.shards import machine_seconds

    done = list(entries)
    seconds = sum(machine_seconds(e) for e in done)
    return {"cases": len(done), "built": sum(1 for e in done if e.get("status") == "built"),
            "seconds": round(seconds, 3), "seconds_per_case": round(seconds / len(done), 3) if done else None}


def _num(x: float | None, fmt: str = ".1e") -> str:
    return "--" if x is None else format(x, fmt)


def table(by_track: dict[str, list[dict[str, Any]]], paper: bool = True) -> str:
    """The markdown table of :func:`rows`; ``paper`` puts the paper's figures beside each."""
    if not paper:
        out = ["| family | track | cases | e_base median | e_base p95 | e_base max | t_base median [s] |",
               "|---|---|---|---|---|---|---|"]
        out += [f"| {r.family} | {r.track} | {r.cases} | {_num(r.e_median)} | {_num(r.e_p95)} | {_num(r.e_max)} | "
                f"{r.t_median:.2f} |" for r in rows(by_track)]
        return "\n".join(out)
    out = ["| family | track | cases | paper cases | e_base median | paper e_base median | e_base p95 | "
           "paper e_base p95 | e_base max | paper e_base max | t_base median [s] |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows(by_track):
        p = r.paper
        pm, pp, px = (p.e_median, p.e_p95, p.e_max) if p else (None, None, None)
        out.append(f"| {r.family} | {r.track} | {r.cases} | {'--' if r.paper_cases is None else r.paper_cases} | "
                   f"{_num(r.e_median)} | {_num(pm)} | {_num(r.e_p95)} | {_num(pp)} | "
                   f"{_num(r.e_max)} | {_num(px)} | {r.t_median:.2f} |")
    return "\n".join(out)


def machine_table(machine: dict[str, dict[str, Any]]) -> str:
    """The markdown table of :func:`machine_time` per track."""
    out = ["| track | cases committed | built | machine time [h] | seconds per case |", "|---|---|---|---|---|"]
    out += [f"| {t} | {m['cases']} | {m['built']} | {m['seconds'] / 3600:.2f} | {_num(m['seconds_per_case'], '.1f')} |"
            for t, m in machine.items()]
    return "\n".join(out)


def notes() -> str:
    """What the tables' paper columns are, and what the paper does not give."""
    return (f"The paper columns are {PAPER_SOURCE} (its cases on the track; e_base over the family); the paper "
            "gives no t_base per family and no machine time, so those have no paper figure. Percentiles are "
            "nearest-rank.")


def markdown(by_track: dict[str, list[dict[str, Any]]], machine: dict[str, dict[str, Any]] | None = None) -> str:
    """The calibration table beside the paper's, its notes and (given) the machine time table."""
    out = [table(by_track), "", notes()]
    if machine:
        out += ["", "Machine time of the build (the sum over committed cases, rejected ones included, of each "
                "case's wall seconds over the jobs that ran beside it):", "", machine_table(machine)]
    return "\n".join(out)
