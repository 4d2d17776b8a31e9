"""``casekit domain``: the domain templates, their meshes, pictures and files."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import typer
from rich.table import Table
from rich.text import Text

from casekit.cli.app import app, command_group, console, console_err, json_option, print_json
from casekit.errors import CasekitError, UsageError

domain_app = command_group("The domain templates: parameters, meshes, boundary tags, pictures.")
app.add_typer(domain_app, name="domain")


def parse_params(items: list[str]) -> dict:
    """--param k=v: v as JSON when it parses (numbers, lists, objects), else as a string."""
    out = {}
    for item in items:
        if "=" not in item:
            raise UsageError(f"--param {item!r} must look like name=value")
        k, _, v = item.partition("=")
        try:
            out[k.strip()] = json.loads(v)
        except json.JSONDecodeError:
            out[k.strip()] = v
    return out


def resolve_from_options(name: str, params: dict) -> Any:
    """The template with parameters given as ``--param``: a parameter it refuses is a usage error
    (exit status 2) that names the option, not a case source's pointer."""
    from casekit.domains import resolve

    try:
        return resolve(name, params, pointer="")
    except UsageError:
        raise
    except CasekitError as exc:
        where = exc.pointer.removeprefix("/params").strip("/").replace("/", ".")
        raise UsageError(f"--param {where}: {exc.message}" if where else exc.message, valid=exc.valid) from None


@domain_app.command("list")
def domain_list(as_json: bool = json_option("the listing")) -> None:
    """List the templates with their tags and default parameters."""
    from casekit.domains import DOMAINS, resolve

    if as_json:
        print_json([{"template": name, "dim": t.dim, "summary": t.summary, "boundary_tags": resolve(name).tags(),
                     "defaults": t.defaults()} for name, t in DOMAINS.items()])
        return

    table = Table(show_edge=False)
    for col in ("template", "dim", "summary", "boundary tags", "parameters (defaults)"):
        table.add_column(col)
    for name, t in DOMAINS.items():
        d = resolve(name)
        params = ", ".join(f"{k}={json.dumps(v)}" for k, v in t.defaults().items())
        table.add_row(name, str(t.dim), t.summary, ", ".join(d.tags()), params)
    console.print(table)


@domain_app.command("show")
def domain_show(
    name: str = typer.Argument(..., help="Template name."),
    param: list[str] = typer.Option([], "--param", help="A parameter: name=value (JSON values), repeatable."),
    cells_across: int = typer.Option(24, "--cells-across", help="Target cells across the domain's diameter."),
    cell: str = typer.Option("simplex", "--cell", help="simplex or quad (tetra/hexahedron in 3-D)."),
    order: int = typer.Option(1, "--order", help="Geometry order of the mesh (1 or 2)."),
    refine: bool = typer.Option(True, "--refine/--no-refine", help="Refine near re-entrant corners."),
    png: Path | None = typer.Option(None, "--png", help="Draw the mesh with its tags to this PNG."),
    out: Path | None = typer.Option(None, "--out", help="Write the mesh (.msh, .xdmf, .vtu, ...)."),
    as_json: bool = json_option("the report"),
) -> None:
    """Mesh a template and report its description, sizes, tags and mesh quality."""
    from casekit.domains import DOMAINS
    from casekit.domains.meshing import MeshOptions, generate, quality, write
    from casekit.prompts.boundary_words import boundary_tags

    DOMAINS.get(name)  # an unknown name is refused as itself (resolve places it in a case source)
    domain = resolve_from_options(name, parse_params(param))
    t0 = time.perf_counter()
    mesh = generate(domain, MeshOptions(cells_across=cells_across, order=order, cell=cell, refine=refine))
    elapsed = time.perf_counter() - t0
    q = quality(mesh)
    if as_json:
        print_json({"template": name, "description": domain.describe(), "params": domain.params,
                    "bbox": list(domain.bbox()), "measure": domain.geometry.measure(), "meshed_measure": mesh.measure(),
                    "cells": mesh.num_cells, "cell_type": mesh.cell_type, "nodes": len(mesh.points),
                    "seconds": elapsed, "inverted": q.inverted, "min_angle_deg": q.min_angle_deg,
                    "tags": {tag: {"facets": len(mesh.facets.get(tag, [])), "wording": wording}
                             for tag, wording in boundary_tags(domain).items()}})
    else:
        _report(name, domain, mesh, q, elapsed)
    if png is not None:
        from casekit.authoring.mesh_picture import draw

        draw(domain, mesh, png)
        console_err.print(f"wrote {png}")
    if out is not None:
        write(mesh, str(out))
        console_err.print(f"wrote {out}")


def _report(name: str, domain: Any, mesh: Any, q: Any, elapsed: float) -> None:
    from casekit.prompts.boundary_words import boundary_tags

    console.print(Text.assemble((name, "bold"), f": {domain.describe()}"))
    console.print(f"bounding box: {[round(v, 6) for v in domain.bbox()]}")
    what = "area" if domain.dim == 2 else "volume"
    console.print(f"{what}: exact {domain.geometry.measure():.6g}, meshed {mesh.measure():.6g}")
    console.print(f"mesh: {mesh.num_cells} {mesh.cell_type} cells, {len(mesh.points)} nodes, "
                  f"meshed in {elapsed:.3f} s")
    angle = f"{q.min_angle_deg:.1f} deg" if q.min_angle_deg is not None else "n/a"
    console.print(f"quality: {q.inverted} inverted cells, minimum angle {angle}, smallest relative cell "
                  f"size {q.min_relative_measure:.3f}")
    for tag, wording in boundary_tags(domain).items():
        console.print(f"  tag {tag}: {len(mesh.facets.get(tag, []))} facets; {wording}")
    for pair in domain.geometry.periodic:
        console.print(f"  periodic: {pair.target} = {pair.source} + {list(pair.translation)}")


@domain_app.command("gallery")
def domain_gallery(
    out: Path = typer.Argument(Path("domains"), help="Directory for the pictures and README.md."),
    cells_across: int = typer.Option(24, "--cells-across", help="Target cells across each domain's diameter."),
) -> None:
    """Draw every template at its default parameters, with a README.md table."""
    from casekit.authoring.mesh_picture import draw
    from casekit.domains import DOMAINS, resolve
    from casekit.domains.meshing import MeshOptions, generate
    from casekit.jsonio import atomic_write_text

    rows = ["# Domain templates", "", "Generated by `casekit domain gallery domains/` (default parameters, "
            f"{cells_across} cells across the diameter). Every boundary part carries exactly one tag.", "",
            "| template | picture | description | boundary tags | parameters (defaults) |", "|---|---|---|---|---|"]
    for name, t in DOMAINS.items():
        d = resolve(name)
        mesh = generate(d, MeshOptions(cells_across=cells_across))
        draw(d, mesh, out / f"{name}.png")
        params = "<br>".join(f"`{k}` = `{json.dumps(v)}`: {t.params[k]['description']}"
                             for k, v in t.defaults().items())
        rows.append(f"| `{name}` | ![{name}]({name}.png) | {d.describe()} | {', '.join(d.tags())} | {params} |")
        console.print(f"wrote {out / (name + '.png')}")
    atomic_write_text(out / "README.md", "\n".join(rows) + "\n")
    console.print(f"wrote {out / 'README.md'}")
