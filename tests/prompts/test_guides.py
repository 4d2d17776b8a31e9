"""The API guides a prompt shows run as written: every code block of a track's guide, in order, in
the track's environment; and the guide's domain-independent idioms -- sampling a field on the
evaluation grid and writing the artifacts -- on a real case_spec of every domain template the track
claims, on a coarse mesh made the way the prompt teaches (curved boundaries: quadratic geometry).
The artifacts they write are read by the evaluator's own loader (every in-domain grid point
finite) and hold the sampled field (a linear one: exact in every element, straight or curved).

Issue 30: the DOLFINx guide's sampling evaluated every grid point with its nearest cell, and the
pull-back of a point far outside a curved cell (the hole of an eccentric annulus) raised "Newton
method failed to converge for non-affine geometry"."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from casekit.domains import resolve
from casekit.domains.template import DOMAINS
from casekit.evaluate.verdicts import grid_mask
from casekit.scoring.artifacts import load_solution
from casekit.tracks import TRACKS
from tests.prompts.guides import blocks, linear, linear_code, run_jobs, sections, template_case, templates

#: cells across the domain's diameter: coarse (the DOLFINx guide's old sampling failed on the
#: eccentric annulus at this size, with its 64 x 64 grid)
CELLS_ACROSS = 5


def _domain(spec: dict[str, Any]) -> Any:
    return resolve(spec["domain"]["type"], spec["domain"]["geometry_params"])


def _dolfinx_mesh(spec: dict[str, Any]) -> str:
    """The case's domain as the scaffold builds it (casekit's gmsh script), order 2 where the
    boundary is curved (the guide's advice), and the linear field in P2."""
    from casekit.domains.codegen import gmsh_python, has_curves

    domain = _domain(spec)
    h = domain.geometry.diameter() / CELLS_ACROSS
    return (f"def build_gmsh_model(h):\n{gmsh_python(domain)}\n\n\n"
            "gmsh.initialize()\n"
            "gmsh.option.setNumber('General.Terminal', 0)\n"
            f"build_gmsh_model({h!r})\n"
            + ("gmsh.model.mesh.setOrder(2)\n" if has_curves(domain) else "")
            + f"data = dgmsh.model_to_mesh(gmsh.model, MPI.COMM_WORLD, 0, gdim={domain.dim})\n"
            "gmsh.finalize()\n"
            "mesh = data.mesh\n"
            "V = fem.functionspace(mesh, ('Lagrange', 2))\n"
            "uh = fem.Function(V)\n"
            f"uh.interpolate(lambda p: (lambda X, Y, Z: {linear_code(spec)})(p[0], p[1], p[2]))\n")


def _ngsolve_mesh(spec: dict[str, Any]) -> str:
    """netgen's mesh of the case's domain (named OCC edges, curved to order 2: casekit's own
    geometry code, what the guide describes) and the linear field in H1 of order 2."""
    return ("from casekit.tracks.ngsolve.solvers.geometry import mesh as _case_mesh\n"
            f"mesh = _case_mesh(case_spec, {CELLS_ACROSS}, 2)\n"
            "fes = ng.H1(mesh, order=2)\n"
            "gfu = ng.GridFunction(fes)\n"
            f"gfu.Set((lambda X, Y, Z: {linear_code(spec)})(ng.x, ng.y, ng.z))\n")


def _numpy_nodes(spec: dict[str, Any]) -> str:
    """A node grid on the case's box (the guide's), holding the linear field."""
    dim = spec["domain"]["dim"]
    b = spec["domain"]["bounds"]
    names = "xs, ys, zs" if dim == 3 else "xs, ys"
    axes = ", ".join(f"np.linspace({b[2 * i]!r}, {b[2 * i + 1]!r}, n + 1)" for i in range(dim))
    return (f"n = 16\n{names} = {axes}\n"
            f"_nodes = np.meshgrid({names}, indexing='ij')\n"
            f"u = (lambda X, Y, Z=0.0: {linear_code(spec)})(*_nodes)\n")


def _firedrake_mesh(spec: dict[str, Any]) -> str:
    """The case's domain as the Firedrake scaffold meshes it (casekit's gmsh script written as a
    gmsh 2.2 file: straight-sided cells) and the linear field in CG2."""
    from casekit.domains.codegen import gmsh_python

    domain = _domain(spec)
    h = domain.geometry.diameter() / CELLS_ACROSS
    model = "\n".join(line for line in gmsh_python(domain).splitlines() if "setPeriodic" not in line)
    z = "_x[2]" if domain.dim == 3 else "0.0"
    return ("import firedrake as fd\nimport gmsh\nimport ufl\n\n\n"
            f"def build_gmsh_model(h):\n{model}\n\n\n"
            "gmsh.initialize()\n"
            "gmsh.option.setNumber('General.Terminal', 0)\n"
            f"build_gmsh_model({h!r})\n"
            "gmsh.option.setNumber('Mesh.MshFileVersion', 2.2)\n"
            "gmsh.write('domain.msh')\n"
            "gmsh.finalize()\n"
            "_mesh = fd.Mesh('domain.msh')\n"
            "_x = ufl.SpatialCoordinate(_mesh)\n"
            "uh = fd.Function(fd.FunctionSpace(_mesh, 'CG', 2))\n"
            f"uh.interpolate({linear_code(spec, '_x[0]', '_x[1]', z)})\n")


#: per track: the guide's sections that hold domain-independent idioms (in order), the section
#: after which the mesh and field are made ("": before the first), how (test-side code: the
#: field to sample), and test-side code after them (artifacts the guide does not write itself)
IDIOMS: dict[str, tuple[tuple[str, ...], str, Any, str]] = {
    "dolfinx": (("Imports", "Values on the evaluation grid", "Writing the artifacts"), "Imports", _dolfinx_mesh, ""),
    "ngsolve": (("Imports", "Expressions of the case_spec as CoefficientFunctions", "Values on the evaluation grid",
                 "Writing the artifacts"), "Expressions of the case_spec as CoefficientFunctions", _ngsolve_mesh, ""),
    "numpy": (("Imports", "Expressions of the case_spec as NumPy", "Values on the evaluation grid",
               "Writing the artifacts"), "Expressions of the case_spec as NumPy", _numpy_nodes, ""),
    "firedrake": (("Values on the evaluation grid",), "", _firedrake_mesh,
                  "np.savez('solution.npz', **axes, u=values)\n"),
}


def _guide(name: str) -> str:
    track = TRACKS.get(name)
    return track.resource(track.guide).read_text()  # type: ignore[no-any-return]


def _runtime_path(name: str, work: Path) -> str:
    """casekit's runtime modules and the track's solvers, importable in its interpreter."""
    from casekit.solvers.bundle import runtime_zip

    work.mkdir(parents=True, exist_ok=True)
    path = work / "runtime.zip"
    path.write_bytes(runtime_zip(TRACKS.get(name).solver_module))  # type: ignore[attr-defined]
    return str(path)


def _marked(name: str, *values: Any) -> Any:
    return pytest.param(name, *values, marks=getattr(pytest.mark, name), id="-".join([name, *map(str, values)]))


def _python_guides() -> list[str]:
    return [n for n in TRACKS.names() if TRACKS.get(n).language == "python" and blocks(_guide(n))]


@pytest.mark.parametrize("name", [_marked(n) for n in _python_guides()])
def test_every_block_of_the_guide_runs_in_order(name: str, tmp_path: Path) -> None:
    """The whole guide, as the prompt shows it, in one session of the track's interpreter, with a
    unit-square case_spec (the case the guide's own examples use)."""
    code = blocks(_guide(name))
    [result] = run_jobs(TRACKS.get(name), [{"name": "guide", "case_spec": template_case("unit_square"),
                                            "blocks": [(f"{name} guide block {i}", c) for i, c in enumerate(code)]}],
                        tmp_path).values()
    assert result["ok"], f"{result.get('block')}: {result.get('error')}"
    if "Writing the artifacts" in sections(_guide(name)):
        assert (tmp_path / "guide" / "solution.npz").is_file() and (tmp_path / "guide" / "meta.json").is_file()


@cache
def _sampled(name: str, work: Path) -> dict[str, dict[str, Any]]:
    """The guide's idioms on every template the track claims, in one interpreter."""
    wanted, after, make, epilogue = IDIOMS[name]
    by_section = sections(_guide(name))
    jobs = []
    for template in templates(TRACKS.get(name)):
        spec = {**template_case(template), "output": {"format": "npz", "field": "u"}}  # sampled: a scalar
        code: list[tuple[str, str]] = []
        if not after:
            code.append((f"(test) the {template} mesh and a linear field", make(spec)))
        for section in wanted:
            assert section in by_section, f"the {name} guide has no section {section!r} with code"
            code += [(f"{name} guide: {section}", c) for c in by_section[section]]
            if section == after:
                code.append((f"(test) the {template} mesh and a linear field", make(spec)))
        if epilogue:
            code.append(("(test) the artifacts", epilogue))
        jobs.append({"name": template, "case_spec": spec, "blocks": code})
    path = _runtime_path(name, work) if name == "ngsolve" else ""
    return run_jobs(TRACKS.get(name), jobs, work, path)


@pytest.mark.parametrize(("name", "template"), [_marked(n, t) for n in IDIOMS if n in TRACKS
                                                for t in templates(TRACKS.get(n))])
def test_the_guides_sampling_works_on_every_template_it_claims(name: str, template: str,
                                                               tmp_path_factory: pytest.TempPathFactory) -> None:
    results = _sampled(name, tmp_path_factory.getbasetemp() / f"guide-idioms-{name}")
    result = results[template]
    assert result["ok"], f"{result.get('block')}: {result.get('error')}"
    spec = {**template_case(template), "output": {"format": "npz", "field": "u"}}
    mask = grid_mask(spec)
    out = tmp_path_factory.getbasetemp() / f"guide-idioms-{name}" / template
    u = load_solution(out, spec, mask)["u"]  # the evaluator's checks: axes, shape, finite inside
    from casekit.grid import Grid

    exact = linear(Grid.from_spec(spec["eval_grid"]).points(), spec).reshape(mask.shape)
    gap = np.abs(u - exact)[mask].max()
    assert gap <= 1e-8 * np.abs(exact[mask]).max(), f"{name} on {template}: sampled values off by {gap:.3e}"


#: per track: the guide's sections that define its expression idiom (``expression(text, ...)``)
EXPRESSION_IDIOMS = {"numpy": ("Imports", "Expressions of the case_spec as NumPy"),
                     "ngsolve": ("Imports", "Expressions of the case_spec as CoefficientFunctions")}


def _corpus() -> list[str]:
    """What an idiom must evaluate: every expression of the template cases, and the printed forms."""
    from tests.prompts.guides import printed_expressions, spec_expressions

    texts = [s for template in sorted(DOMAINS.names()) for s in spec_expressions(template_case(template))]
    return list(dict.fromkeys(printed_expressions() + texts))


@pytest.mark.parametrize("name", [_marked(n) for n in EXPRESSION_IDIOMS if n in TRACKS])
def test_the_guides_expression_idiom_evaluates_every_expression_casekit_prints(name: str, tmp_path: Path) -> None:
    """The idiom's values agree with casekit's own at a few points, for every expression of the
    cases and every printed form (issue 30: ``eval`` without builtins raised KeyError '__import__'
    in NGSolve's functions, and a 21-digit integer has no NumPy loop)."""
    from tests.prompts.guides import EVALUATE, expected_values, expression_prelude

    texts = _corpus()
    dim = 2 if name == "ngsolve" else 3
    by_section = sections(_guide(name))
    code = [(f"{name} guide: {s}", c) for s in EXPRESSION_IDIOMS[name] for c in by_section[s]]
    code += [("(test) the expressions", expression_prelude(texts, dim)), ("(test) evaluate", EVALUATE[name])]
    [result] = run_jobs(TRACKS.get(name), [{"name": "expr", "case_spec": template_case("unit_square"),
                                            "blocks": code}], tmp_path).values()
    assert result["ok"], f"{result.get('block')}: {result.get('error')}"
    got = json.loads((tmp_path / "expr" / "values.json").read_text())
    bad = []
    for text, values, expected in zip(texts, got, expected_values(texts, dim), strict=True):
        if isinstance(values, str):
            bad.append(f"{text[:80]}: {values.strip().splitlines()[-1]}")
        elif not np.allclose(values, expected, rtol=1e-9, atol=1e-12):
            bad.append(f"{text[:80]}: {values} instead of {expected}")
    assert not bad, f"{len(bad)} of {len(texts)} expressions fail:\n" + "\n".join(bad[:20])
