"""Report tables as rows (for the terminal and for HTML)."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from casekit.report import aggregate as agg
from casekit.report import plots


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def rate_rows(by_key: dict[str, list[dict[str, Any]]]) -> list[list[str]]:
    rows = []
    for key, vs in by_key.items():
        r = agg.rates(vs)
        rows.append([key, str(r.n), pct(r.exec_rate), pct(r.acc_rate), pct(r.time_rate), pct(r.pass_rate)])
    return rows


RATE_HEADER = ["", "cases", "exec", "accuracy | exec", "runtime | accurate", "pass"]


def tables(verdicts: list[dict[str, Any]]) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, rows) of every table of the report."""
    first = agg.first_attempts(verdicts)
    by_system = agg.systems(first)
    out = [("Overall (first attempts)", ["system", *RATE_HEADER[1:]], rate_rows(by_system))]
    for key in ("track", "family", "math_type", "domain"):
        for system, vs in by_system.items():
            title = f"{system}: by {key.replace('_', ' ')}"
            out.append((title, [key, *RATE_HEADER[1:]], rate_rows(agg.group(vs, key))))
    out.append(("Failure stages (first attempts)", ["system", "F-Exec", "F-Acc", "F-Time", "Pass"],
                [[s, *(str(agg.rates(vs).stages[k]) for k in ("F-Exec", "F-Acc", "F-Time", "Pass"))]
                 for s, vs in by_system.items()]))
    out.append(("Sensitivity to alpha_acc (alpha_time as calibrated)",
                ["system", *(f"{a:g}" for a in agg.ALPHA_ACC)],
                [[s, *(pct(v) for v in agg.sensitivity(vs)["alpha_acc"].values())] for s, vs in by_system.items()]))
    out.append(("Sensitivity to alpha_time (alpha_acc as calibrated)",
                ["system", *(f"{a:g}" for a in agg.ALPHA_TIME)],
                [[s, *(pct(v) for v in agg.sensitivity(vs)["alpha_time"].values())] for s, vs in by_system.items()]))
    all_systems = agg.systems(verdicts)
    kmax = max((v["attempt"] for v in verdicts), default=1)
    if kmax > 1:
        out.append(("pass@k over attempts (the last column is best-of-attempts)",
                    ["system", *(f"pass@{k}" for k in range(1, kmax + 1))],
                    [[s, *(pct(v) for v in agg.pass_at_k(vs).values())] for s, vs in all_systems.items()]))
    return out


def figures(verdicts: list[dict[str, Any]], out: Path) -> list[Path]:
    by_system = agg.systems(agg.first_attempts(verdicts))
    return [plots.pass_by_family(by_system, out / "pass_rate_by_family.png"),
            plots.failure_stages(by_system, out / "failure_stages.png"),
            plots.sensitivity(by_system, "alpha_acc", out / "sensitivity_alpha_acc.png"),
            plots.sensitivity(by_system, "alpha_time", out / "sensitivity_alpha_time.png")]


def html_page(verdicts: list[dict[str, Any]], out: Path, sources: list[str]) -> Path:
    from casekit.jsonio import atomic_write_text

    figs = figures(verdicts, out)
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>casekit report</title><style>",
             "body{font-family:system-ui,sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse;"
             "margin:0.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right;font-size:0.9em}"
             "td:first-child,th:first-child{text-align:left}img{max-width:49%;margin:0.5%}</style></head><body>",
             "<h1>casekit report</h1>", f"<p>{len(verdicts)} verdicts from {html.escape(', '.join(sources))}</p>"]
    parts += [f"<img src='{f.name}' alt='{f.stem}'>" for f in figs]
    for title, header, rows in tables(verdicts):
        parts.append(f"<h2>{html.escape(title)}</h2><table><tr>"
                     + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>")
        parts += ["<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows]
        parts.append("</table>")
    parts.append("</body></html>")
    path = out / "index.html"
    atomic_write_text(path, "\n".join(parts))
    return path
