"""Prompts for agents, rendered with Jinja from ``templates/`` -- from the agent view only.

Tiers: ``single`` (the paper's six parts), ``feedback`` (attempts 2 and 3, from a verdict),
``scaffold`` (a runnable skeleton for the library, numerics left to the model), ``plan``
(a FEABench-style modelling plan) and ``modelspecs`` (FEABench's ModelSpecs: a structured,
software-agnostic specification -- geometry, physics, materials, boundary conditions, mesh
hint, requested outputs -- beside the natural-language tiers).  Rendering is deterministic: the
same case_spec and library give byte-identical text.  Nothing of the evaluator side is an input:
no manufactured solution, reference or calibration settings, e_base, t_base or thresholds -- except
in the thresholds variant, which states tau_acc and the runtime rule when asked to
(:mod:`casekit.prompts.variants`; off by default).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from typing import Any

import jinja2

from casekit.domains import resolve
from casekit.errors import CasekitError, UnknownName, UsageError
from casekit.families import FAMILIES
from casekit.families.base import DATA_BC_KINDS
from casekit.jsonio import sha256_bytes
from casekit.prompts.variants import StatedThresholds
from casekit.resources import templates_dir
from casekit.solvers.targets import TARGETS_FILE
from casekit.targets import describe as describe_target

TIERS = ("single", "feedback", "scaffold", "plan", "modelspecs")
FEEDBACK_CODE_LIMIT = 2000


def libraries() -> list[str]:
    """The target libraries prompts can be written for: every registered track."""
    from casekit.tracks import TRACKS

    return TRACKS.names()


@cache
def _env() -> jinja2.Environment:
    """Templates from ``templates/``; a track's own files (guide, scaffold) as ``<track>/<file>``."""
    from casekit.tracks import TRACKS

    tracks = jinja2.PrefixLoader({name: jinja2.FileSystemLoader(str(t.directory())) for name, t in TRACKS.items()})
    return jinja2.Environment(loader=jinja2.ChoiceLoader([jinja2.FileSystemLoader(str(templates_dir())), tracks]),
                              undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)


def _library(name: str) -> Any:
    from casekit.tracks import TRACKS

    if name not in TRACKS:
        raise UnknownName(f"unknown target library {name!r}", valid=", ".join(TRACKS.names()))
    return TRACKS.get(name)


def _unscored_text(grid: dict[str, Any]) -> str:
    """The prompt's words for ``eval_grid.unscored`` (empty when there is none)."""
    points = grid.get("unscored") or []
    if not points:
        return ""
    listed = (", ".join("(" + ", ".join(f"{c:g}" for c in p) + ")" for p in points) if len(points) <= LIST_UNSCORED
              else f"{len(points)}")
    return (f"the grid point{'s' if len(points) > 1 else ''} {listed} (`eval_grid.unscored`), where two Dirichlet "
            "parts meet with different values: the solution has no value there, and the value reported there is "
            "not scored (it must still be finite)")


#: the most unscored points a prompt lists by their coordinates (more: their number; the case_spec lists them)
LIST_UNSCORED = 8


def context(case_spec: dict[str, Any], library: str, thresholds: StatedThresholds | None = None) -> dict[str, Any]:
    """Everything the templates use, derived from the agent view alone -- and, in the thresholds
    variant (:mod:`casekit.prompts.variants`), the evaluator's numbers it states."""
    lib = _library(library)
    family = FAMILIES.get(case_spec["pde"]["type"])
    dom = case_spec["domain"]
    domain = resolve(dom["type"], dom["geometry_params"])
    dim = dom["dim"]
    time = case_spec["pde"].get("time")
    out = case_spec["output"]
    comps = out.get("components")
    grid = case_spec["eval_grid"]
    shape = f"({grid['nz']}, {grid['ny']}, {grid['nx']})" if dim == 3 else f"({grid['ny']}, {grid['nx']})"
    main = family.unknowns[0].name
    output = family.output(out["field"])
    npz = (f"one array per component named {', '.join(f'`{c}`' for c in comps)}" if comps
           else f"the array `u` ({output.doc})")
    bc_lines = _bc_lines(case_spec, family)
    guide_path = lib.resource(lib.guide)
    axes = [("x", grid["nx"]), ("y", grid["ny"])] + ([("z", grid["nz"])] if dim == 3 else [])
    targets = case_spec.get("targets") or []
    return {
        "targets": [{"name": e["name"], "text": describe_target(e, case_spec)} for e in targets],
        "targets_file": TARGETS_FILE,
        "ic_keys": sorted(case_spec.get("ic") or {}),
        "grid_text": f"{grid['nx']} x {grid['ny']}" + (f" x {grid['nz']}" if dim == 3 else ""),
        "unscored_text": _unscored_text(grid),
        "grid": grid,
        "family": family, "main": main, "flux_text": family.flux_text, "dim": dim,
        "domain_text": domain.describe(), "boundary_tags": dom["boundary_tags"],
        "library_title": lib.title, "language": lib.language,
        "periodic": "periodic" in case_spec["bc"],
        "case_spec_json": json.dumps(case_spec, indent=2, ensure_ascii=False),
        "summary": _summary(case_spec, family, domain.describe(), lib.title, bc_lines),
        "params_text": _params_text(case_spec, family), "bc_lines": bc_lines,
        "time_text": (f"March from t0 = {time['t0']:g} to t_end = {time['t_end']:g} from the initial data `ic`"
                      + (f" (a suggested step is dt = {time['dt']:g})" if time.get("dt") else "")
                      + "; report the solution at t_end." if time else ""),
        "output_text": f"the field `{out['field']}` ({output.doc}) on the evaluation grid, as {npz}.",
        "npz_text": npz, "shape_text": shape, "components": comps,
        "axes_text": ", ".join(f"`{a}` of shape ({n},)" for a, n in axes),
        "packages_text": lib.packages_text(),
        "guide": guide_body(guide_path.read_text()) if guide_path.exists() else f"(no guide for {lib.title} yet)",
        "thresholds": thresholds.context() if thresholds is not None else None,
    }


#: the heading level of a guide's sections inside a prompt (under its "## <library> API guide")
GUIDE_SECTION_LEVEL = 3


def guide_body(text: str) -> str:
    """A track's guide as the prompt shows it, under the prompt's own "## <library> API guide"
    heading: without the guide's title (it would repeat that heading) and with its sections one
    level below it.  Lines in fenced code blocks are code, never headings."""
    lines = text.splitlines()
    while lines and not lines[0].strip():
        lines.pop(0)
    if lines and lines[0].startswith("#"):
        lines.pop(0)
        while lines and not lines[0].strip():
            lines.pop(0)
    fenced = False
    heads = []
    for i, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            heads.append(i)
    if heads:
        shift = GUIDE_SECTION_LEVEL - min(len(lines[i]) - len(lines[i].lstrip("#")) for i in heads)
        for i in heads:
            level = len(lines[i]) - len(lines[i].lstrip("#"))
            lines[i] = "#" * (level + shift) + lines[i][level:]
    return "\n".join(lines) + ("\n" if text.endswith("\n") else "")


def _summary(spec: dict[str, Any], family: Any, domain_text: str, library: str, bc_lines: list[str]) -> str:
    time = spec["pde"].get("time")
    parts = [f"Problem: {family.title} on {domain_text}"
             + (f", from t = {time['t0']:g} to t = {time['t_end']:g}" if time else "") + ".",
             f"Write a {library} program that solves it."]
    parts.append("Coefficients: " + _params_text(spec, family))
    parts.append("Boundary conditions: " + "; ".join(bc_lines) + ".")
    g = spec["eval_grid"]
    size = f"{g['nx']} x {g['ny']}" + (f" x {g['nz']}" if "nz" in g else "")
    parts.append(f"Report the field `{spec['output']['field']}` on a {size} grid"
                 + (f" and {len(spec['targets'])} target value(s)." if spec.get("targets") else "."))
    return "\n".join(parts)


def _params_text(spec: dict[str, Any], family: Any) -> str:
    values = spec["pde"]["params"]
    if not values:
        return "none (the equation has no parameters)."
    items = []
    for p in family.params:
        v = values.get(p.name)
        doc = p.doc.split(" (")[0]
        if isinstance(v, str):
            items.append(f"{p.name} ({doc}) varies: `{v}`")
        elif isinstance(v, list):
            items.append(f"{p.name} ({doc}) = {v}")
        elif v is not None:
            items.append(f"{p.name} ({doc}) = {v:g}")
    return "; ".join(items) + "."


def _bc_lines(spec: dict[str, Any], family: Any) -> list[str]:
    lines = []
    for kind in DATA_BC_KINDS:
        tags = [e["tag"] for e in spec["bc"].get(kind, [])]
        if tags:
            what = {"dirichlet": "given values", "neumann": f"given flux {family.flux_text}",
                    "robin": f"Robin, {family.flux_text} + alpha {family.unknowns[0].name} given"}[kind]
            lines.append(f"{kind} ({what}) on {', '.join(tags)}")
    for p in spec["bc"].get("periodic", []):
        lines.append(f"periodic between {p['tags'][0]} and {p['tags'][1]}")
    return lines


def render(case_spec: dict[str, Any], library: str, tier: str = "single", *, verdict: dict[str, Any] | None = None,
           previous_code: str | None = None, attempts: int = 3, thresholds: StatedThresholds | None = None) -> str:
    """The prompt of ``tier``; with ``thresholds`` the thresholds variant (the evaluator's numbers
    stated), else the standard one."""
    if tier not in TIERS:
        raise UnknownName(f"unknown prompt tier {tier!r}", valid=", ".join(TIERS))
    ctx = context(case_spec, library, thresholds)
    if tier == "single":
        return _env().get_template("prompts/single.md.j2").render(ctx)
    if tier == "plan":
        return _env().get_template("prompts/plan.md.j2").render(ctx)
    if tier == "modelspecs":
        return _env().get_template("prompts/modelspecs.md.j2").render(ctx)
    if tier == "scaffold":
        return scaffold(case_spec, library)
    if verdict is None or previous_code is None:
        raise UsageError("the feedback tier needs the previous attempt's verdict and code",
                           valid="--verdict VERDICTS.jsonl and --code FILE")
    return feedback(case_spec, library, verdict, previous_code, attempts, thresholds)


def previous_verdict(verdicts: Iterable[dict[str, Any]], case_id: str, track: str, system: str | None = None,
                     source: str = "the verdicts") -> dict[str, Any]:
    """The verdict a feedback prompt answers: the last attempt of ``system`` at ``case_id`` on
    ``track`` (a verdict given again -- appended later in the journal -- replaces the earlier
    one).  A file holding several systems for the case needs ``system``: refused otherwise, with
    the systems it holds."""
    mine = [v for v in verdicts if v.get("case_id") == case_id]
    if not mine:
        raise UsageError(f"{source} has no verdict for {case_id}")
    on_track = [v for v in mine if v.get("track") == track]
    if not on_track:
        raise UsageError(f"{source} has no verdict for {case_id} on the {track} track",
                         valid="--library " + ", ".join(sorted({str(v.get('track')) for v in mine})))
    present = sorted({str(v.get("system")) for v in on_track})
    if system:
        on_track = [v for v in on_track if v.get("system") == system]
        if not on_track:
            raise UsageError(f"{source} has no verdict of system {system!r} for {case_id}",
                             valid="--system " + ", ".join(present))
    elif len(present) > 1:
        raise UsageError(f"{source} holds verdicts of {len(present)} systems for {case_id}; name the one whose "
                         "attempt the prompt answers", valid="--system " + ", ".join(present))
    last = on_track[0]
    for v in on_track:
        if v["attempt"] >= last["attempt"]:
            last = v
    return last


def feedback(case_spec: dict[str, Any], library: str, verdict: dict[str, Any], previous_code: str,
             attempts: int = 3, thresholds: StatedThresholds | None = None, *, in_chat: bool = False) -> str:
    """The prompt of the next attempt: only the previous error value or runtime, the failure
    category, message and error output -- never thresholds, e_base, t_base or references (in the
    standard variant; the thresholds variant states the thresholds, and the runtime ratio).  It
    stands alone (the previous code and the original task follow the verdict), or, ``in_chat``,
    is the next turn of a conversation that holds both already: the verdict alone."""
    if verdict["stage"] == "Pass":
        raise CasekitError("the previous attempt passed: there is nothing to feed back")
    ctx = context(case_spec, library, thresholds)
    ratio = (verdict.get("timing") or {}).get("ratio")
    failure = verdict.get("failure") or {}
    stderr = (verdict.get("stderr_tail") or "")[-1500:]
    return _env().get_template("prompts/feedback.md.j2").render(
        attempt=verdict["attempt"] + 1, attempts=attempts, stage=verdict["stage"],
        previous_code=previous_code[:FEEDBACK_CODE_LIMIT], truncated=len(previous_code) > FEEDBACK_CODE_LIMIT,
        limit=FEEDBACK_CODE_LIMIT, code_language="cpp" if ctx["language"] == "cpp" else "python",
        category=failure.get("category", ""), message=_scrub(failure.get("message", "")), stderr=stderr,
        error=f"{verdict['error']:.3e}" if verdict.get("error") is not None else "n/a",
        runtime=f"{(verdict['runtime'].get('max') or verdict['runtime']['median']):.3f}"
        if verdict.get("runtime") else "n/a",
        where=_where(verdict.get("error_profile") or {}), thresholds=ctx["thresholds"],
        targets=_target_errors(verdict, ctx["thresholds"]), field_passed=failure.get("category") == "target_accuracy",
        ratio=f"{ratio:.2f}" if isinstance(ratio, (int, float)) else "", in_chat=in_chat,
        original="" if in_chat else _without_title(render(case_spec, library, "single", thresholds=thresholds)))


def _target_errors(verdict: dict[str, Any], thresholds: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Each target's relative error in the previous attempt (its worst over the runs) and whether
    it passed -- its threshold only in the thresholds variant, as for the field."""
    taus = {t["name"]: t["tau"] for t in (thresholds or {}).get("targets", [])}
    out = []
    for t in verdict.get("targets") or []:
        error = t.get("error")
        out.append({"name": str(t["name"]), "kind": str(t.get("kind", "")),
                    "error": f"{error:.3e}" if isinstance(error, (int, float)) else "n/a (not scored)",
                    "passed": bool(t.get("passed")), "tau": taus.get(t["name"], "")})
    return out


def _without_title(text: str) -> str:
    """A prompt without its first heading line ("# Task"): the feedback prompt shows it under its own
    "# The original task"."""
    head, _, rest = text.partition("\n")
    return rest.lstrip("\n") if head.startswith("# ") else text


def _where(profile: dict[str, Any]) -> list[str]:
    """Where the error is concentrated, in words (shares only: no thresholds, no reference)."""
    lines = []
    band = profile.get("boundary_band_share")
    if isinstance(band, (int, float)):
        parts = sorted((profile.get("by_boundary_part") or {}).items(), key=lambda kv: -kv[1])
        top = [f"`{t}` ({100 * s:.0f}%)" for t, s in parts[:3] if s >= 0.05]
        if band >= 0.5:
            lines.append(f"{100 * band:.0f}% of the squared error is at grid points within two grid spacings of "
                         "the boundary" + (f", mostly near {', '.join(top)}" if top else "")
                         + ": check the boundary conditions there and the boundary's geometry.")
        else:
            lines.append(f"{100 * (1 - band):.0f}% of the squared error is in the interior (more than two grid "
                         "spacings from the boundary): check the equation, coefficients and forcing, and the "
                         "resolution.")
    comps = sorted((profile.get("by_component") or {}).items(), key=lambda kv: -kv[1])
    if comps and comps[0][1] >= 0.6:
        lines.append(f"component `{comps[0][0]}` carries {100 * comps[0][1]:.0f}% of it.")
    return lines


def _scrub(message: str) -> str:
    """Failure messages never carry thresholds (they are written without them; keep it so)."""
    return message.split(" (threshold")[0]


def scaffold(case_spec: dict[str, Any], library: str) -> str:
    from casekit.domains.codegen import gmsh_python, has_curves

    lib = _library(library)
    ctx = context(case_spec, library)
    dom = case_spec["domain"]
    domain = resolve(dom["type"], dom["geometry_params"])
    time = case_spec["pde"].get("time")
    extra = ", then march in time from t0 to t_end (update t.value and re-interpolate time-dependent data)" \
        if time else ""
    if "periodic" in case_spec["bc"]:
        extra += "; the periodic pairs must be enforced (e.g. with a restriction matrix)"
    if not lib.scaffold:
        raise CasekitError(f"the {lib.name} track has no scaffold", valid="the single or plan tier")
    return _env().get_template(f"{lib.name}/{lib.scaffold}").render(
        ctx, gmsh_code=gmsh_python(domain), h=round(domain.geometry.diameter() / 32, 6),
        geometry_order=2 if has_curves(domain) else 1,
        t0=float(time["t0"]) if time else 0.0, numerics_extra=extra)


def prompt_hash(text: str) -> str:
    return sha256_bytes(text.encode())
