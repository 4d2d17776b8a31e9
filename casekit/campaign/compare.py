"""``casekit campaign report``'s data: the same systems on the public release and on a private
campaign, side by side.

* **Pass rates** (first attempts), overall and per family, each side with its Wilson 95 %
  interval, and the two-proportion test of "public above fresh"
  (:func:`casekit.report.significance.two_proportions`).  A system whose public rate exceeds its
  campaign rate with a one-sided p-value below ``alpha`` is flagged as **possibly contaminated**:
  it does better on the cases it could have seen than on fresh ones of the same distribution.
* **Difficulty parity**: the baselines (the calibration solver and the cheaters of the inversion
  battery) should pass at the same rate on both (a two-sided test); and per family the
  calibration's error e_base and time t_base of the campaign's cases and the release's are
  compared (Mann-Whitney U), so a difference in a model's rates can be read as the model's, not
  the draw's.  t_base is measured on the machine of each build: compare it with care when the
  release was built elsewhere.

Each verdict counts on the side whose records hold its case (by descriptive id, the id verdicts
carry); a verdict of a case of neither is refused, so a mixed-up evaluation cannot pass silently.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from casekit.campaign.new import DATASET, load, release_of
from casekit.errors import UsageError
from casekit.report.aggregate import Cell
from casekit.report.significance import mann_whitney, two_proportions

SIDES = ("release", "campaign")


def _sides(release: Path, campaign: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, dict[str, Any]],
                                                  dict[str, dict[str, Any]]]:
    meta = load(campaign)
    manifest, released = release_of(release)
    f = meta["follows"]
    if (f["name"], str(f["version"])) != (manifest["name"], str(manifest["version"])):
        raise UsageError(f"the campaign {campaign} follows {f['name']} {f['version']}, not {release} "
                         f"({manifest['name']} {manifest['version']})", valid=f"--release {f['path']}")
    _, fresh = release_of(Path(campaign) / DATASET)
    return meta, manifest, released, fresh


def read_sides(files: list[Path], released: dict[str, Any], fresh: dict[str, Any]
               ) -> dict[tuple[str, str], dict[str, list[dict[str, Any]]]]:
    """First-attempt verdicts by (system, track) and side; a case of neither side is refused."""
    from casekit.report.sources import read_verdicts

    out: dict[tuple[str, str], dict[str, list[dict[str, Any]]]] = defaultdict(lambda: {s: [] for s in SIDES})
    seen: dict[tuple[str, str, str], Path] = {}
    for path in files:
        rows, _ = read_verdicts([path])  # one file at a time: a system keeps its name across the two sides
        stray = sorted({v["case_id"] for v in rows if v["case_id"] not in released and v["case_id"] not in fresh})
        if stray:
            raise UsageError(f"{path}: {len(stray)} case(s) in neither the release nor the campaign, e.g. {stray[0]}",
                             valid="evaluations against the release and the campaign's dataset")
        for v in rows:
            if v["attempt"] != 1:
                continue
            key = (v["system"], v["track"], v["case_id"])
            if key in seen:
                raise UsageError(f"{v['system']} on {v['case_id']} ({v['track']}) is in {seen[key]} and in {path}: its "
                                 "verdict would count twice", valid="each evaluation once")
            seen[key] = path
            out[(v["system"], v["track"])]["release" if v["case_id"] in released else "campaign"].append(v)
    return dict(sorted(out.items()))


def _cells(vs: list[dict[str, Any]]) -> Cell:
    return Cell(sum(bool(v["passed"]) for v in vs), len(vs))


def _row(group: str, rel: Cell, camp: Cell, alpha: float) -> dict[str, Any]:
    row: dict[str, Any] = {"group": group, "release": rel.to_dict() | {"text": rel.text()},
                           "campaign": camp.to_dict() | {"text": camp.text()}, "test": None, "difference": None,
                           "public_above_fresh": False, "differ": False}
    if rel.n and camp.n:
        t = two_proportions(rel.k, rel.n, camp.k, camp.n)
        row.update(test=t.to_dict(), difference=rel.k / rel.n - camp.k / camp.n,
                   public_above_fresh=t.p_greater < alpha, differ=t.p_two_sided < alpha)
    return row


def compare(release: Path, campaign: Path, evals: list[Path], alpha: float = 0.05) -> dict[str, Any]:
    from casekit.evaluate.baselines import KINDS
    from casekit.report.sources import verdict_files

    meta, manifest, released, fresh = _sides(release, campaign)
    by_system = read_sides(verdict_files(evals), released, fresh)
    if not by_system:
        raise UsageError("no first-attempt verdicts to report on", valid="the verdicts.jsonl of evaluations")
    tracks = {t for _, t in by_system}
    systems = []
    for (system, track), sides in by_system.items():
        name = system if len(tracks) == 1 else f"{system} [{track}]"
        families = sorted({v["family"] for vs in sides.values() for v in vs if v.get("family")})
        overall = _row("all", _cells(sides["release"]), _cells(sides["campaign"]), alpha)
        rows = [_row(f, _cells([v for v in sides["release"] if v.get("family") == f]),
                     _cells([v for v in sides["campaign"] if v.get("family") == f]), alpha) for f in families]
        baseline = system in KINDS
        systems.append({"system": name, "track": track, "baseline": baseline, "overall": overall, "families": rows,
                        "possibly_contaminated": overall["public_above_fresh"],
                        "parity": (not overall["differ"]) if baseline and overall["test"] else None})
    return {
        "release": {"path": str(release), "name": manifest["name"], "version": manifest["version"],
                    "cases": len(released)},
        "campaign": {"path": str(campaign), "cases": len(fresh), "requested": meta.get("requested"),
                     "left_out": len(meta.get("left_out", []))},
        "alpha": alpha,
        "systems": systems,
        "distributions": distributions(released, fresh, alpha),
    }


def distributions(released: dict[str, dict[str, Any]], fresh: dict[str, dict[str, Any]], alpha: float
                  ) -> list[dict[str, Any]]:
    """Per family of the campaign: e_base and t_base of the release's cases and the campaign's --
    n, medians and the two-sided Mann-Whitney p-value (``differ``: below ``alpha``)."""
    def values(records: dict[str, dict[str, Any]], family: str, key: str) -> list[float]:
        return [float(r["evaluation_metadata"][key]) for r in records.values()
                if r["pde_classification"]["equation_family"] == family
                and isinstance(r["evaluation_metadata"].get(key), (int, float))]

    out = []
    for family in sorted({r["pde_classification"]["equation_family"] for r in fresh.values()}):
        row: dict[str, Any] = {"family": family}
        for key in ("e_base", "t_base"):
            a, b = values(released, family, key), values(fresh, family, key)
            cell: dict[str, Any] = {"n_release": len(a), "n_campaign": len(b),
                                    "median_release": statistics.median(a) if a else None,
                                    "median_campaign": statistics.median(b) if b else None, "test": None,
                                    "differ": False}
            if a and b:
                t = mann_whitney(b, a)
                cell.update(test=t.to_dict(), differ=t.p_two_sided < alpha)
            row[key] = cell
        out.append(row)
    return out
