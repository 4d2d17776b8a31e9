"""Design-axis building blocks shared by several families."""

from __future__ import annotations

from casekit.families.base import Axis


def bc_axis(*levels: str) -> Axis:
    docs = {"dirichlet": "the solution given on every boundary part",
            "mixed": "flux/traction data on some boundary parts",
            "robin": "Robin conditions on some boundary parts"}
    return Axis("bc", "boundary-condition type: " + "; ".join(f"{lv}: {docs[lv]}" for lv in levels),
                {lv: {"bc": lv} for lv in levels})


def horizon_axis(short: dict, long: dict) -> Axis:
    """Time horizon: a short and a long interval, each with its time behaviour."""
    return Axis("horizon", "time horizon of the simulation", {"short": {"time": short},
                                                              "long": {"time": long}})


def steady_or_transient(transient: dict) -> Axis:
    return Axis("time", "steady problem or transient one", {"steady": {}, "transient": {"time": transient}})
