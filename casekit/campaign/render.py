"""``casekit campaign report`` as terminal tables and as one web page (``templates/report/campaign.html.j2``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _p(test: dict[str, Any] | None, which: str) -> str:
    return "-" if not test else f"{test[which]:.3g} ({test['method']})"


def _diff(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:+.1f} pts"


def _num(x: float | None, fmt: str) -> str:
    return "-" if x is None else format(x, fmt)


def tables(data: dict[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, rows) of every table of the report."""
    r, c, alpha = data["release"], data["campaign"], data["alpha"]
    out = [(f"Release {r['name']} {r['version']} ({r['cases']} cases) beside the private campaign {c['path']} "
            f"({c['cases']} cases) -- first attempts, pass% [Wilson 95% CI] (k/n)",
            ["system", "release", "campaign", "release - campaign", "p (public > fresh)", "flag"],
            [[s["system"], s["overall"]["release"]["text"], s["overall"]["campaign"]["text"],
              _diff(s["overall"]["difference"]), _p(s["overall"]["test"], "p_greater"), _flag(s, alpha)]
             for s in data["systems"]])]
    out.append(("Per family -- pass% [Wilson 95% CI] (k/n); p of public > fresh",
                ["system / family", "release", "campaign", "release - campaign", "p (public > fresh)"],
                [[f"{s['system']} / {row['group']}", row["release"]["text"], row["campaign"]["text"],
                  _diff(row["difference"]), _p(row["test"], "p_greater")]
                 for s in data["systems"] for row in s["families"]]))
    baselines = [s for s in data["systems"] if s["baseline"]]
    if baselines:
        out.append((f"Difficulty parity: the baselines pass alike on both (two-sided, alpha {alpha:g})",
                    ["baseline", "release", "campaign", "p (two-sided)", "parity"],
                    [[s["system"], s["overall"]["release"]["text"], s["overall"]["campaign"]["text"],
                      _p(s["overall"]["test"], "p_two_sided"),
                      "-" if s["parity"] is None else "agree" if s["parity"] else "DIFFER"] for s in baselines]))
    rows = []
    for d in data["distributions"]:
        for key, fmt in (("e_base", ".2e"), ("t_base", ".3g")):
            cell = d[key]
            rows.append([f"{d['family']} {key}", f"{cell['n_release']}", f"{cell['n_campaign']}",
                         _num(cell["median_release"], fmt), _num(cell["median_campaign"], fmt),
                         _p(cell["test"], "p_two_sided"),
                         "-" if not cell["test"] else "DIFFER" if cell["differ"] else "agree"])
    out.append(("Difficulty parity: calibration error and time per family, release vs campaign (Mann-Whitney U; "
                "t_base is timed on each build's machine)",
                ["family", "n release", "n campaign", "median release", "median campaign", "p (two-sided)", "parity"],
                rows))
    return out


def _flag(s: dict[str, Any], alpha: float) -> str:
    if s["possibly_contaminated"]:
        return f"POSSIBLY CONTAMINATED (p < {alpha:g})"
    return "-" if s["overall"]["test"] is None else "no evidence"


def html_page(data: dict[str, Any], out: Path) -> Path:
    """The report as one self-contained web page, written atomically."""
    import jinja2

    from casekit.errors import UsageError
    from casekit.jsonio import atomic_write_text
    from casekit.resources import templates_dir

    if out.is_dir() or out.suffix.lower() != ".html":
        raise UsageError(f"--html {out}: the campaign report is one page", valid="a file name ending in .html")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates_dir())), undefined=jinja2.StrictUndefined,
                             autoescape=True, keep_trailing_newline=True)
    page = env.get_template("report/campaign.html.j2").render(data=data, tables=tables(data))
    atomic_write_text(out, page)
    return out
