"""deal.II calibration solvers: a C++ program (``*.cc`` here) and the inputs casekit writes for it.

The program is compiled once per (source, deal.II version) into casekit's cache and reused by
every calibration and reference solve.  Each run gets ``case_spec.json`` (the agent view),
``settings.json`` (private settings, every expression pre-printed for muParser, boundary ids)
and the mesh of the case's domain from the domain registry
(:func:`casekit.domains.msh22.mesh_text`), so deal.II
solves on exactly the geometry and tags every other track uses.

Families are registered in :data:`FORMS`: each maps a case_spec to the program's ``solver`` and
its coefficients (one module-level function per family, no if-chains).  Target values: the
program computes them (``targets.cc``) from settings.json entries written by ``targets.py``.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sympy as sp

from casekit.domains.msh22 import boundary_ids, charts
from casekit.errors import CasekitError
from casekit.expr import T, as_expr, exact, param_symbol
from casekit.families.base import DATA_BC_KINDS
from casekit.registry import Registry
from casekit.solvers.settings import SolveSettings
from casekit.tracks.dealii.solvers.chain import to_chain
from casekit.tracks.dealii.solvers.targets import settings as target_settings

SOURCE_DIR = Path(__file__).resolve().parent
SOURCES = ("CMakeLists.txt", "common.h", "common.cc", "targets.cc", "main.cc", "scalar.cc", "elasticity.cc",
           "flow.cc")
PROGRAM = "casekit_dealii"
#: the mesh file name a run finds in its working directory
MESH = "mesh.msh"
#: FE_SimplexP in deal.II 9.4 exists for degrees 1 and 2
MAX_SIMPLEX_DEGREE = 2


def source_hash(extra: str = "") -> str:
    h = hashlib.sha256(extra.encode())
    for name in SOURCES:
        h.update(name.encode() + b"\0" + (SOURCE_DIR / name).read_bytes())
    return h.hexdigest()[:16]


def cache_root() -> Path:
    return Path(os.environ.get("CASEKIT_DEALII_CACHE", str(Path.home() / ".cache" / "casekit" / "dealii")))


def program(version: str) -> Path:
    """The compiled calibration program for this deal.II ``version`` (built on first use, under a
    lock so parallel builds compile it once)."""
    target = cache_root() / source_hash(version) / PROGRAM
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.exists():
            return target
        with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
            src, build = Path(tmp) / "src", Path(tmp) / "build"
            src.mkdir()
            for name in SOURCES:
                shutil.copy2(SOURCE_DIR / name, src / name)
            log = target.parent / "build.log"
            with open(log, "w") as fh:
                for cmd in (["cmake", "-S", str(src), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release"],
                            ["cmake", "--build", str(build), "-j", str(max(1, min(2, os.cpu_count() or 1)))]):
                    r = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT)
                    if r.returncode != 0:
                        raise CasekitError(f"building casekit's deal.II program failed ({' '.join(cmd[:2])})",
                                           file=str(log), valid="a working deal.II 9.4 (casekit env install dealii)")
            os.replace(build / PROGRAM, target)
    return target


def single_source(settings: dict[str, Any], mesh: str) -> str:
    """casekit's program as one ``solver.cpp`` with the private settings and the mesh embedded:
    the calibration as a submission any deal.II harness compiles and runs like an agent's."""
    delimiter = "casekit_embedded"
    for text in (mesh, json.dumps(settings)):
        if f"){delimiter}\"" in text:
            raise CasekitError("the embedded data contain the raw-string delimiter")
    parts = [
        "// casekit's deal.II calibration program as one file (generated; the settings are private)",
        f"static const char *const casekit_settings = "
        f"R\"{delimiter}({json.dumps(settings, sort_keys=True)}){delimiter}\";",
        f"static const char *const casekit_mesh = R\"{delimiter}({mesh}){delimiter}\";",
        "#define CASEKIT_EMBEDDED_SETTINGS casekit_settings",
        "#define CASEKIT_EMBEDDED_MESH casekit_mesh",
    ]
    for name in ("common.h", "common.cc", "targets.cc", "scalar.cc", "elasticity.cc", "flow.cc", "main.cc"):
        text = (SOURCE_DIR / name).read_text()
        text = text.replace("#pragma once\n", "").replace('#include "common.h"\n', "")
        parts.append(f"// ---- {name}\n{text}")
    return "\n".join(parts)


# -- inputs ---------------------------------------------------------------------------------


def _dim(case_spec: dict[str, Any]) -> int:
    return int(case_spec["domain"]["dim"])


def _sym(value: Any, params: tuple[str, ...] = ()) -> sp.Expr:
    return exact(as_expr(value, variables=("x", "y", "z", "t"), params=params))


def mu(value: Any) -> str:
    """A case_spec number or expression as muParser text (a chain of definitions when it is too
    long for one muParser expression: :mod:`.chain`)."""
    return to_chain(_sym(value))


def mu_list(value: Any) -> list[str]:
    return [mu(v) for v in value] if isinstance(value, list) else [mu(value)]


#: at most this many time functions in a forcing split into modes (:func:`time_modes`)
MAX_TIME_MODES = 12


def time_modes(value: Any) -> dict[str, Any] | None:
    """A transient forcing f(x, t) split as sum_k h_k(t) g_k(x) + rest(x, t), in muParser text:
    the program evaluates each g_k once per quadrature point and then, every step, only the h_k --
    muParser evaluating a manufactured forcing at every quadrature point of every step was 85 % of
    a 3-D heat calibration.  Terms whose factors mix x and t stay in ``rest`` (evaluated per point
    and step as before).  None when f is free of t, has no separable term, or splits into more than
    :data:`MAX_TIME_MODES` time functions."""
    e = _sym(value)
    if T not in e.free_symbols:
        return None
    modes: dict[sp.Expr, sp.Expr] = {}
    rest: list[sp.Expr] = []
    for term in sp.Add.make_args(sp.expand(e, power_base=False, log=False, multinomial=False)):
        time_part, space_part = [], []
        for factor in sp.Mul.make_args(term):
            symbols = factor.free_symbols
            if T in symbols and symbols - {T}:
                rest.append(term)
                break
            (time_part if T in symbols else space_part).append(factor)
        else:
            h = sp.Mul(*time_part)
            modes[h] = modes.get(h, sp.Integer(0)) + sp.Mul(*space_part)
    if not modes or len(modes) > MAX_TIME_MODES:
        return None
    return {"modes": [{"time": to_chain(h), "space": to_chain(g)} for h, g in modes.items()],
            "rest": to_chain(sp.Add(*rest))}


Form = Callable[[dict[str, Any]], dict[str, Any]]
FORMS: Registry[Form] = Registry("deal.II family form")


def _scalar(*, kappa: Any = 1, beta: Any = None, c: Any = 0, reaction: Any = None, f: Any, dim: int,
            convective: bool = False, supg: bool = False, burgers: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"kappa": mu(kappa), "c": mu(c), "f": mu(f), "convective": convective, "supg": supg,
                           "burgers": burgers,
                           "beta": mu_list(beta) if beta is not None else ["0"] * dim}
    split = time_modes(f)
    if split is not None:
        out["f_modes"] = split
    c_sym = _sym(c)
    # symmetric positive definite (diffusion, a non-negative constant reaction, no transport): the
    # program solves a 3-D system of it by preconditioned CG instead of factorising it
    out["spd"] = bool(not convective and not supg and not burgers and reaction is None and c_sym.is_number
                      and float(c_sym) >= 0)
    if reaction is not None:
        r = _sym(reaction, ("u",))
        if T in r.free_symbols:
            raise CasekitError("the deal.II solver needs a reaction term without t", pointer="/pde/params/reaction")
        u = param_symbol("u")
        # the program evaluates R with u in place of time (see parsed_in_u in common.h)
        out["reaction"] = to_chain(r)
        out["dreaction"] = to_chain(sp.diff(r, u))
    return out


def _params(spec: dict[str, Any]) -> dict[str, Any]:
    return spec["pde"].get("params", {})


FORMS.register("poisson", lambda s: {"solver": "scalar", "scalar": _scalar(
    kappa=_params(s).get("kappa", 1), f=s["pde"]["forcing"]["f"], dim=_dim(s))})
FORMS.register("heat", lambda s: {"solver": "scalar", "scalar": _scalar(
    kappa=_params(s).get("kappa", 1), f=s["pde"]["forcing"]["f"], dim=_dim(s))})
FORMS.register("helmholtz", lambda s: {"solver": "scalar", "scalar": _scalar(
    c=f"-({_params(s)['k']})**2", f=s["pde"]["forcing"]["f"], dim=_dim(s))})
FORMS.register("reaction_diffusion", lambda s: {"solver": "scalar", "scalar": _scalar(
    kappa=_params(s)["epsilon"], reaction=_params(s)["reaction"], f=s["pde"]["forcing"]["f"], dim=_dim(s))})
FORMS.register("biharmonic", lambda s: {"solver": "biharmonic", "scalar": _scalar(
    f=s["pde"]["forcing"]["f"], dim=_dim(s))})
FORMS.register("burgers", lambda s: {"solver": "scalar", "scalar": _scalar(
    kappa=_params(s)["nu"], beta=_params(s)["b"], f=s["pde"]["forcing"]["f"], dim=_dim(s), burgers=True)})
FORMS.register("wave", lambda s: {"solver": "wave", "scalar": _scalar(
    kappa=f"({_params(s)['c']})**2", f=s["pde"]["forcing"]["f"], dim=_dim(s))})
FORMS.register("stokes", lambda s: {"solver": "flow", "flow": {
    "nu": float(_params(s)["nu"]), "convective": False, "f": mu_list(s["pde"]["forcing"]["f"])}})
FORMS.register("navier_stokes", lambda s: {"solver": "flow", "flow": {
    "nu": float(_params(s)["nu"]), "convective": True, "f": mu_list(s["pde"]["forcing"]["f"])}})
FORMS.register("linear_elasticity", lambda s: {"solver": "elasticity", "elasticity": {
    "E": float(_params(s)["E"]), "nu": float(_params(s)["nu"]), "f": mu_list(s["pde"]["forcing"]["f"])}})


def _convection_diffusion(s: dict[str, Any], settings: SolveSettings) -> dict[str, Any]:
    p = _params(s)
    return {"solver": "scalar", "scalar": _scalar(kappa=p["epsilon"], beta=p["beta"], f=s["pde"]["forcing"]["f"],
                                                  dim=_dim(s), convective=True,
                                                  supg=settings.stabilization == "supg")}


#: families whose form also depends on the solve settings
SETTINGS_FORMS = {"convection_diffusion": _convection_diffusion}


def families() -> tuple[str, ...]:
    return tuple(sorted({*(name for name, _ in FORMS.items()), *SETTINGS_FORMS}))


def settings_json(case_spec: dict[str, Any], settings: dict[str, Any], mesh: str = MESH) -> dict[str, Any]:
    """The private settings file of one calibration solve."""
    family = case_spec["pde"]["type"]
    st = SolveSettings.from_dict(settings)
    if st.cell == "simplex" and st.degree > MAX_SIMPLEX_DEGREE:
        raise CasekitError(f"deal.II 9.4 has simplex Lagrange elements of degree 1 and 2 only; the calibration "
                           f"asks for degree {st.degree}", pointer="/calibration/degree",
                           valid=f"degree <= {MAX_SIMPLEX_DEGREE}, or cell: quad")
    if family in SETTINGS_FORMS:
        form = SETTINGS_FORMS[family](case_spec, st)
    else:
        form = FORMS.get(family)(case_spec)
    ids = boundary_ids(case_spec)
    bc = []
    for kind in DATA_BC_KINDS:
        for e in case_spec["bc"].get(kind, []):
            entry = {"kind": kind, "id": ids[e["tag"]], "value": mu_list(e["value"]),
                     "alpha": float(e.get("alpha", 0.0))}
            if "laplacian" in e:
                entry["laplacian"] = mu(e["laplacian"])
            bc.append(entry)
    periodic = []
    for pair in case_spec["bc"].get("periodic", []):
        periodic.append({"source": ids[pair["tags"][0]], "target": ids[pair["tags"][1]],
                         "translation": [float(c) for c in pair["translation"]]})
    time = case_spec["pde"].get("time")
    out: dict[str, Any] = {**form, "mesh": mesh, "degree": st.degree, "simplex": st.cell == "simplex",
                           "geometry_order": st.geometry, "charts": charts(case_spec),
                           "transient": time is not None, "scheme": st.scheme, "newton_rtol": st.newton_rtol,
                           "newton_max": st.max_newton_iterations, "bc": bc, "periodic": periodic,
                           **target_settings(case_spec)}
    if time is not None:
        out["steps"] = st.steps(float(time["t0"]), float(time["t_end"]))[0]
        out["ic"] = mu(case_spec["ic"]["u"])
        if "v" in case_spec["ic"]:  # second order in time
            out["ic_v"] = mu(case_spec["ic"]["v"])
    return out
