"""The scaffolds (the template-guided tier) run as written on a real case_spec of every domain
template their track claims: with the numerics replaced by a linear field (test-side: exact in
every element, straight or curved), ``solve(case_spec)`` samples it on the evaluation grid and
writes artifacts the evaluator's own loader accepts (every in-domain grid point finite) holding
that field; and each scaffold's ``expression`` evaluates every expression casekit prints.

Issue 30: the DOLFINx scaffold evaluated every grid point with its nearest cell (a point far
outside a curved cell raised "Newton method failed to converge for non-affine geometry"); its
``eval`` without builtins raised KeyError '__import__' in NGSolve's functions, and integers
beyond 64 bits had no NumPy loop (and compiled to wrong constants in UFL's C code); NGSolve's had
no tanh, sign, sinh, cosh, min or max, left points near a curved boundary NaN and knew no 3-D."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from casekit.domains import resolve
from casekit.evaluate.verdicts import grid_mask
from casekit.grid import Grid
from casekit.prompts import scaffold
from casekit.scoring.artifacts import load_solution
from casekit.tracks import TRACKS
from tests.prompts.guides import (
    EVALUATE,
    T_VALUE,
    U_VALUE,
    expected_values,
    expression_prelude,
    linear,
    linear_code,
    printed_expressions,
    run_jobs,
    spec_expressions,
    template_case,
    templates,
)

#: cells across the domain's diameter (coarse: where the DOLFINx scaffold's sampling failed)
CELLS_ACROSS = 5
BEGIN, END = "# --- numerics: begin ---", "# --- numerics: end ---"

def _z(spec: dict[str, Any], z: str = "x[2]") -> str:
    return z if spec["domain"]["dim"] == 3 else "0.0"


#: per track: the numerics that leave the case's linear field where the scaffold samples it
NUMERICS: dict[str, Any] = {
    "dolfinx": lambda spec: ("V = fem.functionspace(mesh, ('Lagrange', 2))\nuh = fem.Function(V)\n"
                             f"uh.interpolate(lambda p: {linear_code(spec, 'p[0]', 'p[1]', 'p[2]')})\n"),
    "firedrake": lambda spec: ("V = fd.FunctionSpace(mesh, 'CG', 2)\n"
                               f"uh = fd.Function(V).interpolate({linear_code(spec, 'x[0]', 'x[1]', _z(spec))})\n"),
    "ngsolve": lambda spec: ("from casekit.tracks.ngsolve.solvers.geometry import mesh as _case_mesh\n"
                             f"mesh = _case_mesh(case_spec, {CELLS_ACROSS}, 2)\n"
                             "gfu = ng.GridFunction(ng.H1(mesh, order=2))\n"
                             f"gfu.Set({linear_code(spec, 'ng.x', 'ng.y', 'ng.z')})\n"),
    "numpy": lambda spec: ("bounds = case_spec['domain']['bounds']\n"
                           "node_axes = [np.linspace(bounds[2 * i], bounds[2 * i + 1], 17) for i in range(DIM)]\n"
                           "_n = [*np.meshgrid(*node_axes, indexing='ij'), 0.0]\n"
                           f"nodes = {linear_code(spec, '_n[0]', '_n[1]', '_n[2]')} + 0 * _n[0]\n"),
}


def _scalar(spec: dict[str, Any]) -> dict[str, Any]:
    return {**spec, "output": {"format": "npz", "field": "u"}}


def _filled(name: str, spec: dict[str, Any]) -> str:
    """The scaffold of ``spec`` with the test's numerics, on a coarse mesh."""
    code = scaffold(spec, name)
    head, rest = code.split(BEGIN)
    _, tail = rest.split(END)
    indent = re.search(r"\n( *)$", head).group(1)  # type: ignore[union-attr]
    body = "".join(indent + line + "\n" for line in NUMERICS[name](spec).splitlines())
    code = head + BEGIN + "\n" + body + indent + END + tail
    h = resolve(spec["domain"]["type"], spec["domain"]["geometry_params"]).geometry.diameter() / CELLS_ACROSS
    return re.sub(r"create_mesh\(h=[0-9.e+-]+", f"create_mesh(h={h!r}", code)


def _runtime_path(name: str, work: Path) -> str:
    from casekit.solvers.bundle import runtime_zip

    work.mkdir(parents=True, exist_ok=True)
    path = work / "runtime.zip"
    path.write_bytes(runtime_zip(TRACKS.get(name).solver_module))  # type: ignore[attr-defined]
    return str(path)


def _tracks() -> list[str]:
    return [n for n in NUMERICS if n in TRACKS and TRACKS.get(n).scaffold]


@cache
def _solved(name: str, work: Path) -> dict[str, dict[str, Any]]:
    jobs = [{"name": t, "case_spec": _scalar(template_case(t)),
             "blocks": [(f"{name} scaffold for {t}", _filled(name, template_case(t))),  # run as a scalar output
                        ("(test) solve", "solve(case_spec)\n")]}
            for t in templates(TRACKS.get(name))]
    return run_jobs(TRACKS.get(name), jobs, work, _runtime_path(name, work) if name == "ngsolve" else "")


@pytest.mark.parametrize(("name", "template"), [pytest.param(n, t, marks=getattr(pytest.mark, n), id=f"{n}-{t}")
                                                for n in _tracks() for t in templates(TRACKS.get(n))])
def test_the_scaffold_samples_and_writes_every_template_it_claims(name: str, template: str,
                                                                  tmp_path_factory: pytest.TempPathFactory) -> None:
    work = tmp_path_factory.getbasetemp() / f"scaffold-{name}"
    result = _solved(name, work)[template]
    assert result["ok"], f"{result.get('block')}: {result.get('error')}"
    spec = _scalar(template_case(template))
    mask = grid_mask(spec)
    u = load_solution(work / template, spec, mask)["u"]  # the evaluator's checks
    exact = linear(Grid.from_spec(spec["eval_grid"]).points(), spec).reshape(mask.shape)
    gap = np.abs(u - exact)[mask].max()
    assert gap <= 1e-8 * np.abs(exact[mask]).max(), f"{name} scaffold on {template}: sampled values off by {gap:.3e}"


#: test-side evaluation of UFL expressions: one compiled vector expression on two triangles (with
#: the physical points it is evaluated at), as a solve compiles them
EVALUATE_UFL = {
    "dolfinx": """
import json as _json, traceback as _tb
from dolfinx import mesh as _dmesh
_m = _dmesh.create_unit_square(MPI.COMM_WORLD, 1, 1)
_x = ufl.SpatialCoordinate(_m)
_t = fem.Constant(_m, T_VALUE)
_exprs, _errors = [], {}
for _i, _text in enumerate(EXPRESSIONS):
    try:
        _exprs.append(expression(_text, _x, _t, u=U_VALUE))
    except Exception:
        _errors[_i] = _tb.format_exc(limit=3)[-600:]
_vec = ufl.as_vector([_x[0], _x[1]] + _exprs)
_e = fem.Expression(_vec, np.array([[1 / 3, 1 / 3]]))
_v = _e.eval(_m, np.arange(_m.topology.index_map(2).size_local, dtype=np.int32)).reshape(-1, len(_exprs) + 2)
_json.dump({"points": _v[:, :2].tolist(), "values": _v[:, 2:].T.tolist(), "errors": _errors},
           open("values.json", "w"))
""",
    "firedrake": """
import json as _json, traceback as _tb
_m = fd.UnitSquareMesh(1, 1)
_x = ufl.SpatialCoordinate(_m)
_t = fd.Constant(T_VALUE)
_exprs, _errors = [], {}
for _i, _text in enumerate(EXPRESSIONS):
    try:
        _exprs.append(expression(_text, _x, _t, u=U_VALUE))
    except Exception:
        _errors[_i] = _tb.format_exc(limit=3)[-600:]
_V = fd.VectorFunctionSpace(_m, "DG", 0, dim=len(_exprs) + 2)
_v = fd.Function(_V).interpolate(ufl.as_vector([_x[0], _x[1]] + _exprs)).dat.data_ro.reshape(-1, len(_exprs) + 2)
_json.dump({"points": _v[:, :2].tolist(), "values": _v[:, 2:].T.tolist(), "errors": _errors},
           open("values.json", "w"))
""",
}


def _definitions(name: str, spec: dict[str, Any]) -> str:
    """The scaffold's module code up to ``solve`` (its imports and helpers)."""
    code = scaffold(spec, name)
    return code[:code.index("\ndef solve(")]


def _variables(text: str) -> set[str]:
    from casekit.expr import parse

    return {str(s) for s in parse(text).free_symbols}


@pytest.mark.parametrize("name", [pytest.param(n, marks=getattr(pytest.mark, n)) for n in _tracks()])
def test_the_scaffolds_expression_evaluates_every_expression_casekit_prints(name: str, tmp_path: Path) -> None:
    spec = template_case("unit_square")
    compiled = name in EVALUATE_UFL
    texts = printed_expressions()
    if not compiled:  # evaluated point by point: the cases' own expressions too
        texts += [s for t in sorted(templates(TRACKS.get(name))) for s in spec_expressions(template_case(t))]
    texts = list(dict.fromkeys(texts))
    if compiled:  # a 2-D scaffold has no z
        texts = [s for s in texts if "z" not in _variables(s)]
    dim = 2 if name in ("ngsolve", *EVALUATE_UFL) else 3
    code = [(f"{name} scaffold definitions", _definitions(name, spec)),
            ("(test) the expressions", expression_prelude(texts, dim)),
            ("(test) evaluate", EVALUATE_UFL[name] if compiled else EVALUATE[name])]
    [result] = run_jobs(TRACKS.get(name), [{"name": "expr", "case_spec": spec, "blocks": code}], tmp_path).values()
    assert result["ok"], f"{result.get('block')}: {result.get('error')}"
    got = json.loads((tmp_path / "expr" / "values.json").read_text())
    bad = []
    if compiled:
        from casekit.expr.tree import points_function

        pts = np.array(got["points"])
        good = [i for i in range(len(texts)) if str(i) not in got["errors"]]
        bad += [f"{texts[int(i)][:80]}: {e.strip().splitlines()[-1]}" for i, e in got["errors"].items()]
        for i, values in zip(good, got["values"], strict=True):
            expected = points_function(texts[i], 2, params=("u",))(pts, T_VALUE, u=U_VALUE)
            if not np.allclose(values, expected, rtol=1e-9, atol=1e-12):
                bad.append(f"{texts[i][:80]}: {values} instead of {expected.tolist()}")
    else:
        for text, values, expected in zip(texts, got, expected_values(texts, dim), strict=True):
            if isinstance(values, str):
                bad.append(f"{text[:80]}: {values.strip().splitlines()[-1]}")
            elif not np.allclose(values, expected, rtol=1e-9, atol=1e-12):
                bad.append(f"{text[:80]}: {values} instead of {expected}")
    assert not bad, f"{len(bad)} of {len(texts)} expressions fail:\n" + "\n".join(bad[:20])
