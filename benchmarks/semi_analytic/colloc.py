"""Attack A: 'leaked-dictionary collocation'.

From the agent view only: take the forcing's (and initial data's, and boundary data's) expanded
additive terms, split each into polynomial part and non-polynomial factor; the dictionary is
{monomial (space deg <= D, time deg <= Dt)} x {distinct non-polynomial factors incl. 1}.
Apply the stated PDE operator (casekit family operator, params from the case_spec) to every
dictionary element symbolically and fit the coefficients by least squares to
  PDE residual rows at random interior (space-time) points, Dirichlet rows (+ biharmonic
  Laplacian rows), Neumann/Robin flux rows, initial-data rows (u0, v0), and for flows div u = 0.
A few-hundred-unknown dense least squares on coefficients; no mesh, no FEM.
Linear families only (burgers / navier_stokes / nonlinear reaction use Picard in colloc_nl)."""

import itertools

import numpy as np
import sympy as sp

from casekit.domains import resolve
from casekit.expr import COORDS, T
from casekit.families.base import FAMILIES
from casekit.solvers.baselines.view import AgentView
from casekit.validate.view import CaseView

NSYM = sp.symbols("n0 n1 n2")


def caseview(spec, family):
    fam = FAMILIES.get(family)
    dom = resolve(spec["domain"]["type"], spec["domain"]["geometry_params"], validated=True)
    return CaseView("x", fam, dom, spec, None, lambda p: p)


def params_of(cv):
    p = dict(cv.params)
    for q in cv.family.params:
        if q.name not in p and q.default is not None:
            d = q.default
            p[q.name] = (
                tuple(sp.Float(v) for v in d)
                if isinstance(d, (list, tuple))
                else (cv.expr(d, params=("u",) if q.kind == "reaction" else ()) if isinstance(d, str) else sp.Float(d))
            )
    return p


def visible_exprs(cv, spec):
    out = []

    def add(v):
        if v is None:
            return
        e = cv.expr(v)
        out.extend(e if isinstance(e, tuple) else [e])

    for v in (spec["pde"].get("forcing") or {}).values():
        add(v)
    for v in (spec.get("ic") or {}).values():
        add(v)
    for kind in ("dirichlet", "neumann", "robin"):
        for e in spec["bc"].get(kind, []):
            add(e["value"])
            if "laplacian" in e:
                add(e["laplacian"])
    return out


def factors(exprs, dim, max_terms=400):
    """distinct non-polynomial factors (coefficient and polynomial parts dropped)."""
    coords = [*list(COORDS[:dim]), T]
    found = {sp.Integer(1)}
    for e in exprs:
        try:
            ex = sp.expand(e, power_exp=False, log=False)
        except Exception:
            continue
        for term in sp.Add.make_args(ex)[:max_terms]:
            nonpoly = sp.Integer(1)
            for f in sp.Mul.make_args(term):
                if f.is_number:
                    continue
                if f.is_polynomial(*coords):
                    continue
                nonpoly *= f
            found.add(nonpoly)
    return sorted(found, key=sp.default_sort_key)


def monomials(dim, deg, tdeg, transient, bbox):
    lo = [bbox[2 * i] for i in range(dim)]
    out = []
    for pw in itertools.product(range(deg + 1), repeat=dim):
        if sum(pw) > deg:
            continue
        m = sp.Integer(1)
        for i, k in enumerate(pw):
            m *= (COORDS[i] - sp.Float(lo[i])) ** k
        for kt in range(tdeg + 1 if transient else 1):
            out.append(m * T**kt)
    return out


def lamb(exprs, dim):
    args = [*list(COORDS[:dim]), T, *list(NSYM[:dim])]
    f = sp.lambdify(args, list(exprs), "numpy")

    def ev(pts, t, normals=None):
        n = len(pts)
        tt = np.broadcast_to(np.asarray(t, float), (n,))
        nn = [normals[:, i] for i in range(dim)] if normals is not None else [np.zeros(n)] * dim
        with np.errstate(all="ignore"):
            vals = f(*[pts[:, i] for i in range(dim)], tt, *nn)
        return np.column_stack(
            [
                np.broadcast_to(np.asarray(v, dtype=complex if np.iscomplexobj(v) else float), (n,)).real.astype(float)
                for v in vals
            ]
        )

    return ev


def interior_samples(view, n, rng):
    bb = np.array(view.grid.bbox, float)
    lo, hi = bb[0::2], bb[1::2]
    pts = np.zeros((0, view.dim))
    for _ in range(50):
        c = lo + (hi - lo) * rng.random((4 * n, view.dim))
        c = c[np.asarray(view.domain.inside(c), bool)]
        pts = np.vstack([pts, c])
        if len(pts) >= n:
            break
    return pts[:n]


def equilibrate(a, b):
    nr = np.linalg.norm(a, axis=1)
    nr[~np.isfinite(nr) | (nr == 0)] = 1.0
    return a / nr[:, None], b / nr


def lstsq(a, b):
    a = np.where(np.isfinite(a), a, 0.0)
    b = np.where(np.isfinite(b), b, 0.0)
    s = np.linalg.norm(a, axis=0)
    s[s == 0] = 1
    c, *_ = np.linalg.lstsq(a / s, b, rcond=1e-12)
    return c / s


def build(spec, family, deg=None, tdeg=2, n_int=None, seed=0, max_dict=700):
    """returns values at grid points (N,) or (N,k) of the leading unknown, plus info."""
    rng = np.random.default_rng(seed)
    view = AgentView(spec)
    cv = caseview(spec, family)
    fam = cv.family
    dim = view.dim
    transient = view.transient
    P = params_of(cv)
    vector = fam.unknowns[0].vector
    unknowns = [u.name for u in fam.unknowns]
    if deg is None:
        deg = 4 if dim == 2 else 3
    facs = factors(visible_exprs(cv, spec), dim)
    mons = monomials(dim, deg, tdeg, transient, view.grid.bbox)
    dictionary = [m * q for q in facs for m in mons]
    while len(dictionary) * (dim + 1 if vector else 1) > max_dict and deg > 1:
        deg -= 1
        mons = monomials(dim, deg, tdeg, transient, view.grid.bbox)
        dictionary = [m * q for q in facs for m in mons]
    nd = len(dictionary)
    # unknown blocks
    blocks = []  # (unknown name, component index or None)
    for u in fam.unknowns:
        if u.vector:
            blocks += [(u.name, i) for i in range(dim)]
        else:
            blocks.append((u.name, None))
    nb = len(blocks)
    ncol = nb * nd

    # symbolic operator per block element: operator is linear, so apply to each basis function
    def field_with(bi, d):
        f = {}
        for u in fam.unknowns:
            if u.vector:
                f[u.name] = tuple(d if (u.name, i) == blocks[bi] else sp.Integer(0) for i in range(dim))
            else:
                f[u.name] = d if (u.name, None) == blocks[bi] else sp.Integer(0)
        return f

    forcing_name = next(iter(fam.operator(field_with(0, dictionary[0]), P, dim, transient)))
    ops, cons, fluxes = [], [], []
    for bi in range(nb):
        for d in dictionary:
            fld = field_with(bi, d)
            o = fam.operator(fld, P, dim, transient)[forcing_name]
            ops.append(o if isinstance(o, tuple) else (o,))
            cs = fam.constraints(fld, P, dim)
            cons.append(tuple(cs.values()))
            if fam.flux is not None and (spec["bc"].get("neumann") or spec["bc"].get("robin")):
                fl = fam.flux(fld, P, tuple(NSYM[:dim]), dim)
                fluxes.append(fl if isinstance(fl, tuple) else (fl,))
    neq = len(ops[0])
    rows_a, rows_b = [], []
    n_int = n_int or min(6000, max(3 * ncol, 1500))
    times = (lambda n: view.t0 + (view.t_end - view.t0) * rng.random(n)) if transient else (lambda n: np.zeros(n))
    # PDE rows
    pts = interior_samples(view, n_int, rng)
    tt = times(len(pts))
    fvals = view.evaluate(view.forcing, pts, tt) if view.forcing is not None else np.zeros((len(pts), neq))
    fvals = np.asarray(fvals, float).reshape(len(pts), -1)
    for k in range(neq):
        ev = lamb([o[k] for o in ops], dim)
        a = ev(pts, tt)
        rows_a.append(a)
        rows_b.append(fvals[:, k] if fvals.shape[1] > k else np.zeros(len(pts)))
    # constraints (div u = 0)
    if cons and cons[0]:
        for k in range(len(cons[0])):
            ev = lamb([c[k] for c in cons], dim)
            rows_a.append(ev(pts, tt))
            rows_b.append(np.zeros(len(pts)))
    # value of block bi element j at points: basis values
    basis_ev = lamb(dictionary, dim)

    def value_rows(p, t, comp):
        """matrix (len(p), ncol) giving leading unknown component comp (None scalar)."""
        a = np.zeros((len(p), ncol))
        bi = blocks.index((unknowns[0], comp))
        a[:, bi * nd : (bi + 1) * nd] = basis_ev(p, t)
        return a

    per = 200 if dim == 2 else 30
    geom = view.domain.geometry
    n_t = 6 if transient else 1
    tlist = np.linspace(view.t0, view.t_end, n_t) if transient else [0.0]
    for e in spec["bc"].get("dirichlet", []):
        bp = geom.tag_points(e["tag"], per)
        for t in tlist:
            g = np.asarray(view.evaluate(e["value"], bp, t), float)
            if g.ndim == 2:
                for i in range(g.shape[1]):
                    rows_a.append(value_rows(bp, t, i))
                    rows_b.append(g[:, i])
            else:
                rows_a.append(value_rows(bp, t, None))
                rows_b.append(g)
            if "laplacian" in e:
                lap_ev = lamb([sum(sp.diff(d, c, 2) for c in COORDS[:dim]) for d in dictionary], dim)
                a = np.zeros((len(bp), ncol))
                a[:, :nd] = lap_ev(bp, t)
                rows_a.append(a)
                rows_b.append(np.asarray(view.evaluate(e["laplacian"], bp, t), float))
    if fluxes:
        for kind in ("neumann", "robin"):
            for e in spec["bc"].get(kind, []):
                bp = geom.tag_points(e["tag"], per)
                nrm = geom.tag_normals(e["tag"], per)
                if len(nrm) != len(bp):
                    continue
                alpha = float(e.get("alpha") or 0.0)
                for t in tlist:
                    g = np.asarray(view.evaluate(e["value"], bp, t), float).reshape(len(bp), -1)
                    for k in range(len(fluxes[0])):
                        a = lamb([f[k] for f in fluxes], dim)(bp, t, nrm)
                        if alpha:
                            a = a + alpha * value_rows(bp, t, None if not vector else k)
                        rows_a.append(a)
                        rows_b.append(g[:, k])
    if transient:
        ic = spec.get("ic") or {}
        ip = interior_samples(view, min(2000, 2 * nd * nb + 200), rng)
        if "u" in ic:
            u0 = np.asarray(view.evaluate(ic["u"], ip, view.t0), float)
            rows_a.append(value_rows(ip, view.t0, None))
            rows_b.append(u0)
        if "v" in ic:
            dt_ev = lamb([sp.diff(d, T) for d in dictionary], dim)
            a = np.zeros((len(ip), ncol))
            a[:, :nd] = dt_ev(ip, view.t0)
            rows_a.append(a)
            rows_b.append(np.asarray(view.evaluate(ic["v"], ip, view.t0), float))
    A = np.vstack(rows_a)
    b = np.concatenate(rows_b)
    A, b = equilibrate(A, b)
    c = lstsq(A, b)
    resid = float(np.linalg.norm(np.where(np.isfinite(A), A, 0) @ c - b) / (np.linalg.norm(b) or 1))
    gp = view.points
    out = []
    comps = range(dim) if vector else [None]
    for comp in comps:
        bi = blocks.index((unknowns[0], comp))
        out.append(basis_ev(gp, view.t_end) @ c[bi * nd : (bi + 1) * nd])
    vals = np.column_stack(out) if vector else out[0]
    return vals, dict(ndict=nd, ncol=ncol, nfac=len(facs), deg=deg, rows=len(b), resid=resid)
