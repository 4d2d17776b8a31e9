"""``casekit demo``: the whole pipeline on a small sample, on this machine, in a few minutes.

Samples cases across several families and domains, builds them with the local DOLFINx track,
packages and verifies a dataset, evaluates the calibration solvers and the cheater submissions
against it, and writes the report.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from casekit.authoring.new import make_case, write_case

#: (family, domain, design levels): several families, domains, BC kinds, 2-D and 3-D, steady and transient
SAMPLE: tuple[tuple[str, str, dict[str, str]], ...] = (
    ("poisson", "l_shape", {"bc": "mixed", "coefficient": "variable"}),
    ("heat", "circle", {"bc": "robin"}),
    ("stokes", "annulus", {}),
    ("convection_diffusion", "t_junction", {"peclet": "medium"}),
    ("helmholtz", "square_with_hole", {"bc": "mixed"}),
    ("reaction_diffusion", "periodic_square", {"reaction": "cubic"}),
    ("poisson", "unit_cube", {"bc": "robin"}),
)


def write_sample(cases: Path) -> list[Path]:
    paths = []
    for i, (family, domain, levels) in enumerate(SAMPLE):
        new = make_case(family, domain, levels, seed=100 + i)
        src = new.source
        src["eval_grid"] = {k: min(v, 40) for k, v in src["eval_grid"].items()}
        coarse = 24 if src["eval_grid"].get("nz") is None else 10
        src["calibration"]["cells_across"] = min(src["calibration"]["cells_across"], coarse)
        new.source = src
        paths.append(write_case(new, cases, force=True))
    return paths


def run(out: Path, jobs: int, say: Callable[[str], None], table: Callable[[Any], None]) -> dict[str, Any]:
    from casekit.build.pipeline import BuildOptions
    from casekit.build.run import build
    from casekit.evaluate.baselines import KINDS, write_baselines
    from casekit.evaluate.run import EvalOptions, evaluate
    from casekit.evaluate.store import open_store
    from casekit.package.build_dist import package
    from casekit.package.verify import verify
    from casekit.report.render import html_page, report_data, tables
    from casekit.report.sources import read_verdicts

    say(f"1/5 sampling {len(SAMPLE)} cases into {out / 'cases'}")
    paths = write_sample(out / "cases")
    say("2/5 building them with the DOLFINx track (references, timed calibration, trial runs)")
    outcomes = build(paths, BuildOptions(out / "build", "dolfinx", repeats=3), jobs,
                     done=lambda o: say(f"    {o.case_id}: {o.status}" + (f" ({o.reason})" if o.reason else "")
                                        + (f", e_base {o.e_base:.2e}, t_base {o.t_base:.2f} s" if o.e_base else "")))
    say(f"3/5 packaging the dataset into {out / 'dist'}")
    package(out / "build", ["dolfinx"], out / "dist", name="casekit-demo", version="0.1.0")
    problems = verify(out / "dist")
    say("    casekit verify: " + ("verified" if not problems else f"{len(problems)} problem(s)"))
    say("4/5 evaluating the calibration solvers and the cheater submissions")
    store = open_store(out / "dist", "dolfinx")
    write_baselines(store, out / "baselines", KINDS, "dolfinx")
    verdict_files = []
    for kind in KINDS:
        subs = out / "baselines" / kind
        if not subs.is_dir() or not any(subs.iterdir()):
            continue
        verdicts = evaluate(EvalOptions(store, subs, out / "evaluation" / kind, system=kind,
                                        repeats=3 if kind == "calibration" else 1, jobs=jobs))
        passed = sum(v["passed"] for v in verdicts)
        say(f"    {kind}: {passed}/{len(verdicts)} passed")
        verdict_files.append(out / "evaluation" / kind / "verdicts.jsonl")
    say(f"5/5 report in {out / 'report' / 'index.html'}")
    rows, _ = read_verdicts(verdict_files)  # each verdict once (a re-scored one replaces its earlier line)
    shown = tables(report_data(rows, [str(f) for f in verdict_files]))
    for t in shown[:1] + [t for t in shown if t[0].startswith("Stages")]:
        table(t)
    html_page(rows, out / "report", [str(f) for f in verdict_files])
    return {"built": sum(o.status == "built" for o in outcomes), "cases": len(outcomes),
            "verified": not problems}
