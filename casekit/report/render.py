"""The report: one data model (:func:`report_data`) printed as terminal tables, written as JSON,
and rendered as an HTML page from ``templates/report/`` with its figures.

Systems are side by side (rows: overall, tracks, families, math types, domains; columns:
systems), every cell with its n and the Wilson 95 % interval; failure categories; pass@k over
attempts; sensitivity of the pass rate to both alphas with the calibrated alpha marked; the
casekit versions, datasets and dates the verdicts came from.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

from casekit.report import aggregate as agg
from casekit.report import plots

GROUPS = (("overall", None), ("track", "track"), ("family", "family"), ("math type", "math_type"),
          ("domain", "domain"))


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def report_data(verdicts: list[dict[str, Any]], sources: list[str]) -> dict[str, Any]:
    from casekit import __version__

    first = agg.first_attempts(verdicts)
    by_system = agg.systems(first)
    names = sorted(by_system)
    sections = []
    for title, key in GROUPS:
        systems, rows = agg.side_by_side(first, key)
        sections.append({"title": f"Pass rate by {title}" if key else "Pass rate (first attempts)", "key": key,
                         "systems": systems,
                         "rows": [{"group": g, "cells": [c.to_dict() | {"text": c.text()} for c in cells]}
                                  for g, cells in rows]})
    stages = {s: agg.rates(vs).stages for s, vs in by_system.items()}
    sensitivity = {s: {k: {str(a): r for a, r in curve.items()} for k, curve in agg.sensitivity(vs).items()}
                   for s, vs in by_system.items()}
    calibrated = {which: sorted({v["calibration"][which] for v in first}) for which in ("alpha_acc", "alpha_time")}
    kmax = max((v["attempt"] for v in verdicts), default=1)
    pass_k = {s: {str(k): r for k, r in agg.pass_at_k(vs).items()} for s, vs in agg.systems(verdicts).items()} \
        if kmax > 1 else {}
    return {
        "generated_at": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "casekit_version": __version__,
        "verdicts_from": sources,
        "n_verdicts": len(verdicts),
        "systems": names,
        "prompt_variants": agg.prompt_variants(verdicts),
        "evaluated_with": sorted({v.get("casekit_version", "unknown") for v in verdicts}),
        "evaluated_between": _span(v.get("evaluated_at") for v in verdicts),
        "tracks": sorted({v["track"] for v in verdicts}),
        "sections": sections,
        "stages": stages,
        "failure_categories": agg.failure_categories(by_system),
        "sensitivity": sensitivity,
        "calibrated_alpha": calibrated,
        "pass_at_k": pass_k,
        "errors": {"overall": agg.error_summary(first, None), "family": agg.error_summary(first, "family")},
        "targets": agg.target_summary(first),
    }


def _geo(cell: dict[str, Any] | None) -> str:
    return "-" if not cell or cell["nrmse_geomean"] is None else f"{cell['nrmse_geomean']:.2e} ({cell['n']})"


def _order(cell: dict[str, Any] | None) -> str:
    return "-" if not cell or cell["order_median"] is None else f"{cell['order_median']:.2f} ({cell['n_order']})"


def _target(cell: dict[str, Any] | None) -> str:
    if not cell:
        return "-"
    median = "-" if cell["error_median"] is None else f"{cell['error_median']:.2e}"
    return f"{cell['passed']}/{cell['n']}, {median}"


def _span(stamps: Any) -> list[str]:
    s = sorted(x for x in stamps if x)
    return [s[0], s[-1]] if s else []


def tables(data: dict[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, rows) of every table, for the terminal."""
    names = data["systems"]
    out = [("Prompt variant the submissions were written from", ["", *names],
            [["prompt", *(", ".join(data["prompt_variants"].get(s, [])) or "-" for s in names)]])]
    for sec in data["sections"]:
        out.append((sec["title"] + " -- pass% [95% CI] (k/n)", [sec["key"] or "", *sec["systems"]],
                    [[r["group"], *(c["text"] for c in r["cells"])] for r in sec["rows"]]))
    out.append(("Stages (first attempts)", ["stage", *names],
                [[st, *(str(data["stages"][s][st]) for s in names)] for st in ("F-Exec", "F-Acc", "F-Time", "Pass")]))
    if data["failure_categories"]:
        out.append(("Failure categories (first attempts)", ["category", *names],
                    [[c, *(str(n[s]) for s in names)] for c, n in data["failure_categories"].items()]))
    for which in ("alpha_acc", "alpha_time"):
        alphas = list(next(iter(data["sensitivity"].values()))[which]) if data["sensitivity"] else []
        marked = ", ".join(f"{a:g}" for a in data["calibrated_alpha"][which])
        out.append((f"Sensitivity to {which} (calibrated: {marked})", [which, *names],
                    [[a, *(pct(data["sensitivity"][s][which][a]) for s in names)] for a in alphas]))
    for which, summary in data["errors"].items():
        header = [which if which != "overall" else "", *names]
        out.append((f"nRMSE, geometric mean over cases with a result (n) -- {which}", header,
                    [[g, *(_geo(cells.get(s)) for s in names)] for g, cells in summary.items()]))
    orders = {g: cells for g, cells in data["errors"]["family"].items()
              if any(c["n_order"] for c in cells.values())}
    if orders:
        out.append(("Observed order of self-convergence, median (n)", ["family", *names],
                    [[g, *(_order(cells.get(s)) for s in names)] for g, cells in orders.items()]))
    if data.get("targets"):
        out.append(("Target values (first attempts) -- passed/asked, median relative error", ["kind", *names],
                    [[kind, *(_target(cells.get(s)) for s in names)] for kind, cells in data["targets"].items()]))
    if data["pass_at_k"]:
        # every k any system reached (systems made different numbers of attempts); "-": none that many
        ks = sorted({int(k) for per in data["pass_at_k"].values() for k in per})
        out.append(("pass@k over attempts (-: fewer attempts)", ["k", *names],
                    [[str(k), *(pct(data["pass_at_k"].get(s, {}).get(str(k))) for s in names)] for k in ks]))
    return out


def figures(verdicts: list[dict[str, Any]], out: Path) -> list[Path]:
    by_system = agg.systems(agg.first_attempts(verdicts))
    return [plots.pass_by_family(by_system, out / "pass_rate_by_family.png"),
            plots.failure_stages(by_system, out / "failure_stages.png"),
            plots.sensitivity(by_system, "alpha_acc", out / "sensitivity_alpha_acc.png"),
            plots.sensitivity(by_system, "alpha_time", out / "sensitivity_alpha_time.png")]


def html_page(verdicts: list[dict[str, Any]], out: Path, sources: list[str]) -> Path:
    """The report as a web page: ``out`` ending in ``.html`` is the page itself, one file with its
    figures inlined; any other ``out`` is a directory that gets ``index.html`` and the figures as
    PNG files beside it.  An existing page is replaced atomically."""
    import base64
    import tempfile

    import jinja2

    from casekit.jsonio import atomic_write_text
    from casekit.resources import templates_dir

    data = report_data(verdicts, sources)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates_dir())), undefined=jinja2.StrictUndefined,
                             autoescape=True, keep_trailing_newline=True)
    template = env.get_template("report/index.html.j2")
    if out.suffix.lower() != ".html":
        figs = figures(verdicts, out)
        page = template.render(data=data, tables=tables(data),
                               figures=[{"file": f.name, "title": f.stem.replace("_", " ")} for f in figs])
        path = out / "index.html"
        atomic_write_text(path, page)
        return path
    if out.is_dir():
        from casekit.errors import UsageError

        raise UsageError(f"{out} is a directory, and a path ending in .html names the page file",
                         valid=f"another file name, or {out} without .html for a directory with index.html")
    with tempfile.TemporaryDirectory(prefix="casekit-report-") as scratch:
        inlined = [{"file": "data:image/png;base64," + base64.b64encode(f.read_bytes()).decode("ascii"),
                    "title": f.stem.replace("_", " ")} for f in figures(verdicts, Path(scratch))]
    atomic_write_text(out, template.render(data=data, tables=tables(data), figures=inlined))
    return out
