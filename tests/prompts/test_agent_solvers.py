"""Five solvers written from the prompt text only -- the template-guided tier's scaffold with the
numerics an honest agent writes from the case_spec, the contract and the DOLFINx guide -- meet
the accuracy threshold of five committed cases: Helmholtz on a circle, transient convection-diffusion on
an L-shape (residual-consistent SUPG whose weight vanishes as diffusion dominates: an SUPG term
without the diffusion residual, at full weight, was off by 100 x tau_acc on the bubble's
curvature; periodicity by the guide's restriction matrix), compressible elasticity on an L-shape,
Stokes on the unit square and heat on an annulus."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from casekit.build.pipeline import BuildOptions
from casekit.build.run import build
from casekit.evaluate.run import EvalOptions, evaluate
from casekit.evaluate.store import open_store
from casekit.prompts import scaffold
from casekit.runner.limits import Limits
from tests.conftest import REPO
from tests.helpers import write_submission

pytestmark = [pytest.mark.dolfinx, pytest.mark.slow]

#: what every solver below starts with: a finer mesh than the scaffold's and the usual measures
REMESH = '''
mesh, facet_tags, tags = create_mesh(h=H)
x = ufl.SpatialCoordinate(mesh)
t = fem.Constant(mesh, T0)
ds = ufl.Measure("ds", domain=mesh, subdomain_data=facet_tags)
forcing = expression(case_spec["pde"]["forcing"]["f"], x, t)
lu = {"ksp_type": "preonly", "pc_type": "lu", "pc_factor_mat_solver_type": "mumps"}


def dirichlet(V, entries, t_):
    out = []
    for e in entries:
        g = interpolate(V, e["value"], x, t_)
        out.append((fem.dirichletbc(g, fem.locate_dofs_topological(V, DIM - 1, facet_tags.find(tags[e["tag"]]))),
                    g, e["value"]))
    return out
'''

HELMHOLTZ = '''
k = float(params["k"])
V = fem.functionspace(mesh, ("Lagrange", 2))
u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
a = ufl.inner(ufl.grad(u), ufl.grad(v)) * ufl.dx - k ** 2 * u * v * ufl.dx
L = forcing * v * ufl.dx
for e in bc.get("neumann", []):
    L += expression(e["value"], x, t) * v * ds(tags[e["tag"]])
for e in bc.get("robin", []):
    a += e["alpha"] * u * v * ds(tags[e["tag"]])
    L += expression(e["value"], x, t) * v * ds(tags[e["tag"]])
bcs = [b for b, _, _ in dirichlet(V, bc.get("dirichlet", []), t)]
uh = LinearProblem(a, L, bcs=bcs, petsc_options_prefix="hh_", petsc_options=lu).solve()
'''

CONVECTION_DIFFUSION = '''
from dolfinx.fem import petsc as fpetsc
from petsc4py import PETSc

eps = float(params["epsilon"])
beta = ufl.as_vector([float(b) for b in params["beta"]])
time_ = case_spec["pde"]["time"]
steps = 50
dt = (time_["t_end"] - time_["t0"]) / steps
V = fem.functionspace(mesh, ("Lagrange", 2))
u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
u_n = interpolate(V, case_spec["ic"]["u"], x, t)
t_new = fem.Constant(mesh, T0)
f_new = expression(case_spec["pde"]["forcing"]["f"], x, t_new)
hK = ufl.CellDiameter(mesh)
bnorm = ufl.sqrt(ufl.dot(beta, beta))
pe = bnorm * hK / (2 * eps)                              # cell Peclet number
tau = hK / (2 * bnorm) * (1 / ufl.tanh(pe) - 1 / pe)     # SUPG weight, vanishing as diffusion dominates
w = v + tau * ufl.dot(beta, ufl.grad(v))
op = lambda q: eps * ufl.inner(ufl.grad(q), ufl.grad(v)) * ufl.dx + ufl.dot(beta, ufl.grad(q)) * v * ufl.dx
strong = lambda q: ufl.dot(beta, ufl.grad(q)) - eps * ufl.div(ufl.grad(q))  # residual-consistent
a = u * w / dt * ufl.dx + 0.5 * op(u) + 0.5 * strong(u) * tau * ufl.dot(beta, ufl.grad(v)) * ufl.dx
L = (u_n * w / dt * ufl.dx - 0.5 * op(u_n) - 0.5 * strong(u_n) * tau * ufl.dot(beta, ufl.grad(v)) * ufl.dx
     + 0.5 * (forcing + f_new) * w * ufl.dx)
for e in bc.get("neumann", []):
    gn_old, gn_new = expression(e["value"], x, t), expression(e["value"], x, t_new)
    L += 0.5 * (gn_old + gn_new) * v * ds(tags[e["tag"]])   # the data are epsilon * du/dn
# periodic pairs: dofs of the second tag copy their partners on the first (the guide's restriction)
coords = V.tabulate_dof_coordinates()
n = V.dofmap.index_map.size_local
partner = np.arange(n)
for pair in bc.get("periodic", []):
    shift = np.asarray(pair["translation"], dtype=float)
    source = fem.locate_dofs_topological(V, 1, facet_tags.find(tags[pair["tags"][0]]))
    lookup = {tuple(np.round(coords[d, :2] / 1e-9).astype(np.int64)): d for d in source}
    for d in fem.locate_dofs_topological(V, 1, facet_tags.find(tags[pair["tags"][1]])):
        partner[d] = lookup[tuple(np.round((coords[d, :2] - shift) / 1e-9).astype(np.int64))]
for _ in range(3):
    partner = partner[partner]
kept = np.flatnonzero(partner == np.arange(n))
index = np.full(n, -1)
index[kept] = np.arange(len(kept))
index = index[partner]
P = PETSc.Mat().createAIJ([n, len(kept)], nnz=1)
P.setUp()
for i in range(n):
    P.setValue(i, int(index[i]), 1.0)
P.assemble()
A = fpetsc.assemble_matrix(fem.form(a))
A.assemble()
Ar = A.PtAP(P)
walls = dirichlet(V, bc.get("dirichlet", []), t_new)
rows = np.unique(np.concatenate([index[b.dof_indices()[0]] for b, _, _ in walls])).astype(np.int32)
Ar.zeroRows(rows, 1.0)
ksp = PETSc.KSP().create(mesh.comm)
ksp.setOperators(Ar)
ksp.setType("preonly")
ksp.getPC().setType("lu")
ksp.getPC().setFactorSolverType("mumps")
L_form = fem.form(L)
uh = fem.Function(V)
br, ur = Ar.createVecLeft(), Ar.createVecRight()
for step in range(steps):
    t_new.value = T0 + (step + 1) * dt
    for _, g, value in walls:
        g.interpolate(fem.Expression(expression(value, x, t_new), V.element.interpolation_points))
    b = fpetsc.assemble_vector(L_form)
    P.multTranspose(b, br)
    for b_, g, _ in walls:
        dofs = b_.dof_indices()[0]
        br.array[index[dofs]] = g.x.array[dofs]
    ksp.solve(br, ur)
    P.mult(ur, uh.x.petsc_vec)
    uh.x.scatter_forward()
    u_n.x.array[:] = uh.x.array
    t.value = t_new.value
'''

ELASTICITY = '''
E, nu = float(params["E"]), float(params["nu"])
lam, mu = E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))
V = fem.functionspace(mesh, ("Lagrange", 2, (DIM,)))
u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
eps_ = lambda w: ufl.sym(ufl.grad(w))
sigma = lambda w: lam * ufl.tr(eps_(w)) * ufl.Identity(DIM) + 2 * mu * eps_(w)
a = ufl.inner(sigma(u), eps_(v)) * ufl.dx
L = ufl.dot(forcing, v) * ufl.dx
for e in bc.get("neumann", []):
    L += ufl.dot(expression(e["value"], x, t), v) * ds(tags[e["tag"]])
bcs = [b for b, _, _ in dirichlet(V, bc.get("dirichlet", []), t)]
uh = LinearProblem(a, L, bcs=bcs, petsc_options_prefix="el_", petsc_options=lu).solve()
'''

STOKES = '''
import basix.ufl

nu = float(params["nu"])
P2 = basix.ufl.element("Lagrange", mesh.basix_cell(), 2, shape=(DIM,))
P1 = basix.ufl.element("Lagrange", mesh.basix_cell(), 1)
W = fem.functionspace(mesh, basix.ufl.mixed_element([P2, P1]))
(u, p), (v, q) = ufl.TrialFunctions(W), ufl.TestFunctions(W)
a = (nu * ufl.inner(ufl.grad(u), ufl.grad(v)) - p * ufl.div(v) - q * ufl.div(u)) * ufl.dx
L = ufl.dot(forcing, v) * ufl.dx
for e in bc.get("neumann", []):
    L += ufl.dot(expression(e["value"], x, t), v) * ds(tags[e["tag"]])
W0, _ = W.sub(0).collapse()
bcs = []
for e in bc.get("dirichlet", []):
    g = interpolate(W0, e["value"], x, t)
    dofs = fem.locate_dofs_topological((W.sub(0), W0), DIM - 1, facet_tags.find(tags[e["tag"]]))
    bcs.append(fem.dirichletbc(g, dofs, W.sub(0)))
if not bc.get("neumann"):  # velocity given everywhere: the pressure is fixed at one point
    Q, _ = W.sub(1).collapse()
    corner = fem.locate_dofs_geometrical((W.sub(1), Q), lambda X: np.isclose(X[0], X[0].min()) &
                                         np.isclose(X[1], X[1][np.isclose(X[0], X[0].min())].min()))
    zero = fem.Function(Q)
    bcs.append(fem.dirichletbc(zero, [corner[0][:1], corner[1][:1]], W.sub(1)))
wh = LinearProblem(a, L, bcs=bcs, petsc_options_prefix="st_", petsc_options=lu).solve()
uh = wh.sub(0).collapse()
'''

HEAT = '''
time_ = case_spec["pde"]["time"]
steps = 80
dt = (time_["t_end"] - time_["t0"]) / steps
kappa = expression(params["kappa"], x, t)
V = fem.functionspace(mesh, ("Lagrange", 2))
u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
u_n = interpolate(V, case_spec["ic"]["u"], x, t)
t_new = fem.Constant(mesh, T0)
f_new = expression(case_spec["pde"]["forcing"]["f"], x, t_new)
kappa_new = expression(params["kappa"], x, t_new)
a = u * v * ufl.dx + 0.5 * dt * kappa_new * ufl.inner(ufl.grad(u), ufl.grad(v)) * ufl.dx
L = (u_n * v * ufl.dx - 0.5 * dt * kappa * ufl.inner(ufl.grad(u_n), ufl.grad(v)) * ufl.dx
     + 0.5 * dt * (forcing + f_new) * v * ufl.dx)
for e in bc.get("neumann", []):
    L += 0.5 * dt * (expression(e["value"], x, t) + expression(e["value"], x, t_new)) * v * ds(tags[e["tag"]])
for e in bc.get("robin", []):
    a += 0.5 * dt * e["alpha"] * u * v * ds(tags[e["tag"]])
    L += (0.5 * dt * (expression(e["value"], x, t) + expression(e["value"], x, t_new)) * v
          - 0.5 * dt * e["alpha"] * u_n * v) * ds(tags[e["tag"]])
walls = dirichlet(V, bc.get("dirichlet", []), t_new)
problem = LinearProblem(a, L, bcs=[b for b, _, _ in walls], petsc_options_prefix="ht_", petsc_options=lu)
for step in range(steps):
    t_new.value = T0 + (step + 1) * dt
    for _, g, value in walls:
        g.interpolate(fem.Expression(expression(value, x, t_new), V.element.interpolation_points))
    uh = problem.solve()
    u_n.x.array[:] = uh.x.array
    t.value = t_new.value
'''

# committed case, numerics, mesh size (as a fraction of the bounding box's diagonal)
CASES = [
    ("helmholtz/helmholtz_circle_medium_oscillatory_dirichlet_s1008", HELMHOLTZ, 64),
    ("convection_diffusion/convection_diffusion_l_shape_low_smooth_transient_mixed_s1013",
     CONVECTION_DIFFUSION, 48),
    ("linear_elasticity/linear_elasticity_l_shape_compressible_smooth_dirichlet_s1012", ELASTICITY, 32),
    ("stokes/stokes_unit_square_unit_polynomial_dirichlet_s1007", STOKES, 40),
    ("heat/heat_annulus_constant_short_peak_mixed_s1006", HEAT, 40),
]


def agent_solver(case_spec: dict, numerics: str, cells: int) -> str:
    """The scaffold tier's file with the numerics written in."""
    code = scaffold(case_spec, "dolfinx")
    begin, end = "# --- numerics: begin ---", "# --- numerics: end ---"
    head, rest = code.split(begin)
    _, tail = rest.split(end)
    b = case_spec["domain"]["bounds"]
    diagonal = float(np.hypot(b[1] - b[0], b[3] - b[2]))
    t0 = float((case_spec["pde"].get("time") or {}).get("t0", 0.0))
    body = f"H = {diagonal / cells!r}\nT0 = {t0!r}\n" + REMESH + numerics
    return head + begin + "\n" + textwrap.indent(body, "    ") + "    " + end + tail


@pytest.fixture(scope="module")
def five(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("five")
    outcomes = build([REPO / "cases" / f"{c}.yaml" for c, _, _ in CASES],
                     BuildOptions(root / "build", "dolfinx", repeats=1, limits=Limits(timeout_sec=600)))
    assert all(o.status == "built" for o in outcomes), [(o.case_id, o.reason) for o in outcomes]
    return root


@pytest.mark.parametrize("case, numerics, cells", CASES, ids=[c.split("/")[0] for c, _, _ in CASES])
def test_a_solver_written_from_the_prompt_passes(five: Path, case: str, numerics: str, cells: int) -> None:
    store = open_store(five / "build", "dolfinx")
    case_id = case.split("/")[1]
    record = store.records[case_id]
    subs = five / f"subs-{case_id}"
    write_submission(subs, record["public_id"], agent_solver(record["case_spec"], numerics, cells))
    verdicts = evaluate(EvalOptions(store, subs, five / f"out-{case_id}", repeats=1))
    (v,) = [v for v in verdicts if v["case_id"] == case_id]
    # the claim is correctness from the prompt; the time gate compares wall clocks, which a busy
    # machine moves (its own tests use solvers far off either side of the limit)
    assert v["stage"] in ("Pass", "F-Time"), (v["stage"], v["error"], v["tau_acc"], v["failure"], v["timing"])
    assert v["error"] <= v["tau_acc"], (v["error"], v["tau_acc"])
