"""Authoring commands: ``family``, ``sample``, ``new``, ``show``."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table
from rich.text import Text

from casekit.cli.app import Output, app, command_group, console, console_err, json_option, print_json
from casekit.errors import CasekitError, UsageError

family_app = command_group("The PDE families: unknowns, parameters, BC kinds, design axes.")
app.add_typer(family_app, name="family")


def _pairs(values: list[str], what: str) -> dict[str, str]:
    out = {}
    for v in values:
        if "=" not in v:
            raise UsageError(f"{what} {v!r} must look like name=level")
        k, _, lv = v.partition("=")
        out[k.strip()] = lv.strip()
    return out


@family_app.command("list")
def family_list(as_json: bool = json_option("the listing")) -> None:
    """List the registered families."""
    from casekit.families import FAMILIES

    if as_json:
        print_json([_family_dict(f) for _, f in FAMILIES.items()])
        return
    table = Table(show_edge=False)
    for col in ("family", "math type", "unknowns", "BC kinds", "time", "design axes"):
        table.add_column(col)
    for name, f in FAMILIES.items():
        time = {0: "steady", 1: "1st order", 2: "2nd order"}[f.time_order]
        if f.steady_allowed:
            time = "steady or 1st order"
        table.add_row(name, ", ".join(f.math_type), ", ".join(u.name + ("[vec]" if u.vector else "")
                                                            for u in f.unknowns),
                      ", ".join(f.bc_kinds), time, ", ".join(a.name for a in f.axes))
    console.print(table)


def _family_dict(f: object) -> dict:
    return {"name": f.name, "title": f.title, "equation": f.equation, "math_type": list(f.math_type),  # type: ignore[attr-defined]
            "unknowns": [{"name": u.name, "vector": u.vector} for u in f.unknowns],  # type: ignore[attr-defined]
            "bc_kinds": list(f.bc_kinds), "time_order": f.time_order,  # type: ignore[attr-defined]
            "params": [{"name": p.name, "kind": p.kind, "doc": p.doc, "range": p.range_text(), "default": p.default}
                       for p in f.params],  # type: ignore[attr-defined]
            "outputs": [{"name": o.name, "doc": o.doc} for o in f.outputs],  # type: ignore[attr-defined]
            "axes": [{"name": a.name, "doc": a.doc, "levels": list(a.levels)} for a in f.axes]}  # type: ignore[attr-defined]


@family_app.command("show")
def family_show(name: str = typer.Argument(..., help="Family name."),
                as_json: bool = json_option("the listing")) -> None:
    """Show a family: equation, parameters, outputs and design axes with their levels."""
    from casekit.families import FAMILIES

    f = FAMILIES.get(name)
    if as_json:
        print_json(_family_dict(f))
        return
    console.print(Text.assemble((f.title, "bold"), f" ({f.name}): {f.equation}"))
    console.print(f"math type: {', '.join(f.math_type)}; BC kinds: {', '.join(f.bc_kinds)}; "
                  f"flux for Neumann/Robin data: {f.flux_text or '-'}")
    for p in f.params:
        console.print(f"  param {p.name} ({p.kind}): {p.doc}; {p.range_text()}; default {p.default!r}")
    for o in f.outputs:
        console.print(f"  output {o.name}: {o.doc}")
    for a in f.axes:
        console.print(f"  axis {a.name}: {a.doc}; levels: {', '.join(a.levels)}")


@app.command()
def sample(
    family: str = typer.Option(..., "--family", "-f", help="Family to sample."),
    n: int = typer.Option(8, "-n", help="Number of design points."),
    seed: int = typer.Option(0, "--seed", help="Random seed (same seed, same points)."),
    domain: list[str] = typer.Option([], "--domain", help="Restrict to these domain templates."),
    axis: list[str] = typer.Option([], "--axis", help="Pin an axis: name=level (repeatable)."),
    write: bool = typer.Option(False, "--write", help="Also write each point as a case source."),
    out: Path = typer.Option(Path("cases"), "--out", help="Where --write puts case sources."),
    salt_file: Path = typer.Option(None, "--salt-file", help="A secret salt (default: $CASEKIT_SALT_FILE) that keys "
                                   "the random draws and the public id, so a private split cannot be regenerated "
                                   "from casekit's code; without one, cases are public by construction."),
    as_json: bool = json_option("the design points and coverage"),
) -> None:
    """Draw seeded design points that cover the family's axis levels; report the coverage."""
    from casekit.authoring.design import coverage
    from casekit.authoring.design import sample as draw
    from casekit.authoring.new import feasible, make_case, write_case
    from casekit.domains import DOMAINS
    from casekit.families import FAMILIES

    if n < 1:
        raise UsageError("-n must be at least 1")
    fam = FAMILIES.get(family)
    for d in domain:
        DOMAINS.get(d)
    fixed = _pairs(axis, "--axis")
    from casekit.authoring.builder import design_levels

    design_levels(fam, fixed)
    points = draw(fam, n, seed, fixed=fixed, domains=domain or None, feasible=feasible(family))
    if as_json and not write:
        cov = coverage(fam, points, domains=domain or None, fixed=fixed)
        print_json({"family": family, "seed": seed, "points": [{"domain": p.domain, **p.as_dict()} for p in points],
                    "coverage": {"per_level": cov.per_level, "pairs_covered": cov.pairs_covered,
                                 "pairs_total": cov.pairs_total, "levels_missing": list(cov.levels_missing)}})
        return
    table = Table(title=f"{len(points)} design points for {family} (seed {seed})", show_edge=False)
    table.add_column("#", justify="right")
    table.add_column("domain")
    for a in fam.axes:
        table.add_column(a.name)
    for i, p in enumerate(points):
        table.add_row(str(i), p.domain, *(v for _, v in p.levels))
    console.print(table)
    cov = coverage(fam, points, domains=domain or None, fixed=fixed)
    for axis_name, counts in cov.per_level.items():
        console.print(f"  {axis_name}: " + ", ".join(f"{lv} {c}" for lv, c in counts.items()))
    console.print(f"level pairs covered: {cov.pairs_covered}/{cov.pairs_total} "
                  f"({100 * cov.pairs_covered / max(cov.pairs_total, 1):.0f}%); levels never drawn: "
                  f"{', '.join(cov.levels_missing) or 'none'}")
    if write:
        from casekit.ids import read_salt

        salt = read_salt(salt_file)
        failed = 0
        for i, p in enumerate(points):
            try:
                path = write_case(make_case(family, p.domain, p.as_dict(), seed * 1000 + i, salt), out)
            except CasekitError as exc:
                failed += 1
                console.print(Text.assemble(("not written", "red"), f" ({p.domain}, {p.as_dict()}): {exc}"))
                continue
            console.print(f"wrote {path}")
        if failed:
            raise typer.Exit(1)


@app.command()
def new(
    family: str = typer.Option(..., "--family", "-f", help="Family of the new case."),
    domain: str = typer.Option("unit_square", "--domain", "-d", help="Domain template."),
    axis: list[str] = typer.Option([], "--axis", help="Design level: name=level (repeatable); "
                                   "unnamed axes take their first level."),
    seed: int = typer.Option(0, "--seed", help="Seed of the drawn manufactured solution."),
    out: Path = typer.Option(Path("cases"), "--out", help="Directory of case sources."),
    force: bool = typer.Option(False, "--force", help="Replace an existing file of the same id."),
    salt_file: Path = typer.Option(None, "--salt-file", help="A secret salt (default: $CASEKIT_SALT_FILE) that keys "
                                   "the random draws and the public id, so a private split cannot be regenerated "
                                   "from casekit's code; without one, cases are public by construction."),
    targets: str = typer.Option("", "--targets", help="Target values to ask for beside the field, comma-separated "
                                "kinds: mean, boundary_flux, point, max (casekit.targets); the case then lists only "
                                "the tracks that compute them."),
    as_json: bool = json_option("the case written: its path, ids and seed"),
) -> None:
    """Write a complete, valid case source for a design point under cases/<family>/."""
    from casekit.authoring.new import make_case, write_case
    from casekit.ids import public_id, read_salt

    kinds = tuple(k.strip() for k in targets.split(",") if k.strip())
    new_case = make_case(family, domain, _pairs(axis, "--axis"), seed, read_salt(salt_file), targets=kinds)
    path = write_case(new_case, out, force=force)
    shown = Output(as_json)
    shown.say(f"wrote {path} (id {new_case.id}, seed {new_case.seed}"
              + (f", {len(new_case.rejected)} draw(s) rejected by validation" if new_case.rejected else "") + ")")
    shown.say(f"next: casekit validate {path}  |  casekit show {path}  |  casekit build {path}")
    shown.result({"path": str(path), "id": new_case.id, "public_id": new_case.source.get("public_id")
                  or public_id(new_case.id), "family": family, "domain": domain, "seed": new_case.seed,
                  "rejected_draws": [{"seed": s, "problems": [p.to_dict() for p in ps]}
                                     for s, ps in new_case.rejected]})


def find_case(case: str, cases_dir: Path = Path("cases")) -> Path:
    """A case source by path, or by its descriptive or public id (:func:`casekit.ids.resolve`)
    under the cases directory."""
    from casekit.ids import PUBLIC_ID, no_such_case, resolve

    p = Path(case)
    if p.is_file():
        return p
    files = sorted(cases_dir.rglob("*.yaml")) if cases_dir.is_dir() else []
    by_id: dict[str, Path] = {}
    for f in files:  # the file name is the case id (validation checks it)
        by_id.setdefault(f.stem, f)
    declared = {}
    if PUBLIC_ID.fullmatch(case):  # a salted case declares its public id
        import re

        for cid, f in by_id.items():
            m = re.search(r"^public_id:\s*['\"]?(case-[0-9a-f]{16})", f.read_text(errors="replace"), re.M)
            declared[cid] = {"public_id": m.group(1)} if m else {}
    found = resolve(case, declared or {cid: {} for cid in by_id})
    if found is not None:
        return by_id[found]
    raise no_such_case(case, by_id, f"{cases_dir}/ (neither a file nor a case id there)")


@app.command()
def show(
    case: str = typer.Argument(..., help="A case source file or a case id under cases/."),
    as_json: bool = json_option("only the case_spec"),
    png: Path | None = typer.Option(None, "--png", help="Draw the reference field (and the "
                                    "calibration error when built) to this PNG file."),
    build_dir: Path = typer.Option(Path("build"), "--build-dir", help="Where builds are stored."),
) -> None:
    """Print the agent-facing case_spec derived from a case source."""
    from casekit.derive import derive
    from casekit.model.source import load_source

    path = find_case(case)
    source = load_source(path)
    derived = derive(source)
    spec = derived.case_spec()
    if as_json:
        print_json(spec)
    else:
        console.print(Text.assemble((source.id, "bold"), f": {derived.family.title} on {derived.domain.describe()}"))
        console.print_json(json.dumps(spec))
    if png is not None:
        from casekit.authoring.plot import plot_case

        try:
            panels = plot_case(derived, png, build_dir)
        except ValueError as exc:
            raise UsageError(f"{source.id}: {exc}") from None
        console_err.print(f"wrote {png} ({'; '.join(panels)})")
