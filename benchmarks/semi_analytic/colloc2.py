"""Attack A (fast, generic, also nonlinear): leaked-dictionary collocation.

Dictionary = {monomials (space degree <= D, times t^k, k <= Dt)} x {distinct non-polynomial factors of
the expanded forcing / initial / boundary data terms, and 1}.  The stated PDE (casekit family operator
with the case_spec's params) is applied to generic unknown functions U_j once; each equation becomes a
function of derivative atoms d^alpha U_j.  Coefficients are fitted by Gauss-Newton least squares
(one step for linear PDEs) to: PDE rows at random interior space-time points, constraint rows
(div u = 0), Dirichlet rows (+ biharmonic Laplacian rows), Neumann/Robin flux rows, initial rows.
Only the agent view is used.  Cost: a dense least squares with a few hundred unknowns."""

import itertools
import math

import numpy as np
import sympy as sp
from colloc import caseview, factors, interior_samples, params_of, visible_exprs

from casekit.expr import COORDS, T
from casekit.solvers.baselines.view import AgentView

NSYM = sp.symbols("n0 n1 n2")


def _mi_key(d, vars_):
    """Derivative(U(x,y,t), x, x, t) -> alpha tuple."""
    alpha = [0] * len(vars_)
    for v, k in d.variable_count:
        alpha[vars_.index(v)] += k
    return tuple(alpha)


class Problem:
    def __init__(self, spec, family, deg=None, tdeg=2, facs_extra=()):
        self.spec, self.view = spec, AgentView(spec)
        self.cv = caseview(spec, family)
        fam = self.fam = self.cv.family
        v = self.view
        self.dim, self.transient = v.dim, v.transient
        self.vars = list(COORDS[: self.dim]) + ([T] if self.transient else [])
        self.P = params_of(self.cv)
        # blocks of unknowns
        self.blocks, fields, self.U = [], {}, []
        for u in fam.unknowns:
            if u.vector:
                comps = []
                for i in range(self.dim):
                    f = sp.Function(f"U{len(self.U)}")(*self.vars)
                    self.U.append(f)
                    comps.append(f)
                    self.blocks.append((u.name, i))
                fields[u.name] = tuple(comps)
            else:
                f = sp.Function(f"U{len(self.U)}")(*self.vars)
                self.U.append(f)
                self.blocks.append((u.name, None))
                fields[u.name] = f
        self.fields = fields
        self.lead = [i for i, b in enumerate(self.blocks) if b[0] == fam.unknowns[0].name]
        # dictionary
        self.facs = factors(visible_exprs(self.cv, spec), self.dim) + list(facs_extra)
        self.deg = deg if deg is not None else (4 if self.dim == 2 else 3)
        self.tdeg = tdeg if self.transient else 0
        self.mons = [pw for pw in itertools.product(range(self.deg + 1), repeat=self.dim) if sum(pw) <= self.deg]
        self.mons = [pw + ((k,) if self.transient else ()) for pw in self.mons for k in range(self.tdeg + 1)]
        self.lo = np.array([v.grid.bbox[2 * i] for i in range(self.dim)] + ([v.t0] if self.transient else []))
        self.nd = len(self.mons) * len(self.facs)
        self._qd = {}

    # --- equations in derivative atoms
    def atomize(self, exprs):
        """exprs (in U functions) -> (lambdified f(coords..., t, normals..., atoms...) for values and
        gradients, atom list [(block, alpha)])."""
        exprs = [sp.sympify(e) for e in exprs]
        atoms = {}
        subs = {}
        for e in exprs:
            for d in e.atoms(sp.Derivative):
                j = self.U.index(d.expr)
                a = _mi_key(d, self.vars)
                atoms.setdefault((j, a), sp.Symbol(f"s_{j}_{'_'.join(map(str, a))}"))
                subs[d] = atoms[(j, a)]
        z = tuple([0] * len(self.vars))
        for j, f in enumerate(self.U):
            atoms.setdefault((j, z), sp.Symbol(f"s_{j}_{'_'.join(map(str, z))}"))
            subs[f] = atoms[(j, z)]
        # replace derivatives first (longest first), then functions
        es = [e.xreplace({d: s for d, s in subs.items() if isinstance(d, sp.Derivative)}) for e in exprs]
        es = [e.xreplace({f: s for f, s in subs.items() if not isinstance(f, sp.Derivative)}) for e in es]
        keys = list(atoms)
        syms = [atoms[k] for k in keys]
        used = [i for i, s in enumerate(syms) if any(s in e.free_symbols for e in es)]
        keys = [keys[i] for i in used]
        syms = [syms[i] for i in used]
        grads = [[sp.diff(e, s) for s in syms] for e in es]
        args = [*list(COORDS[: self.dim]), T, *list(NSYM[: self.dim]), *syms]
        fval = sp.lambdify(args, es, "numpy")
        fgrad = sp.lambdify(args, [g for row in grads for g in row], "numpy")
        return fval, fgrad, keys, len(es)

    def qderiv(self, qi, alpha):
        key = (qi, alpha)
        if key not in self._qd:
            if sum(alpha) == 0:
                e = self.facs[qi]
            else:
                k = next(i for i, a in enumerate(alpha) if a > 0)
                lower = list(alpha)
                lower[k] -= 1
                e = sp.diff(self.qderiv(qi, tuple(lower))[0], self.vars[k])
            self._qd[key] = (e, sp.lambdify([*list(COORDS[: self.dim]), T], e, "numpy"))
        return self._qd[key]

    def basis(self, pts, t, alpha):
        """(npts, nd) values of d^alpha of every dictionary element."""
        n = len(pts)
        X = np.column_stack(
            [pts[:, i] for i in range(self.dim)] + ([np.broadcast_to(t, (n,))] if self.transient else [])
        )
        Xs = X - self.lo
        tt = np.broadcast_to(np.asarray(t, float), (n,))
        out = np.zeros((n, self.nd))
        betas = list(itertools.product(*[range(a + 1) for a in alpha]))
        qcache = {}
        for qi in range(len(self.facs)):
            for beta in betas:
                gamma = tuple(a - b for a, b in zip(alpha, beta, strict=False))
                f = self.qderiv(qi, gamma)[1]
                with np.errstate(all="ignore"):
                    qcache[(qi, gamma)] = np.broadcast_to(
                        np.asarray(f(*[pts[:, i] for i in range(self.dim)], tt), float), (n,)
                    )
        col = 0
        for qi in range(len(self.facs)):
            for pw in self.mons:
                acc = np.zeros(n)
                for beta in betas:
                    coef = 1.0
                    mval = np.ones(n)
                    ok = True
                    for i, (p, b) in enumerate(zip(pw, beta, strict=False)):
                        if b > p:
                            ok = False
                            break
                        coef *= math.comb(alpha[i], b) * math.perm(p, b)
                        if p - b:
                            mval = mval * Xs[:, i] ** (p - b)
                    if not ok:
                        continue
                    gamma = tuple(a - b for a, b in zip(alpha, beta, strict=False))
                    acc += coef * mval * qcache[(qi, gamma)]
                out[:, col] = acc
                col += 1
        return out

    def add_rows(self, exprs, pts, t, data, normals=None):
        self.groups.append(
            (
                self.atomize(exprs),
                pts,
                np.broadcast_to(np.asarray(t, float), (len(pts),)).copy(),
                np.asarray(data, float).reshape(len(pts), -1),
                normals,
            )
        )

    def assemble(self, c):
        nb, nd = len(self.blocks), self.nd
        Js, rs = [], []
        for (fval, fgrad, keys, ne), pts, tt, data, nrm in self.groups:
            n = len(pts)
            B = {}
            for _, a in keys:
                if a not in B:
                    B[a] = self.basis(pts, tt, a)
            S = [B[a] @ c[j * nd : (j + 1) * nd] for (j, a) in keys]
            args = (
                [pts[:, i] for i in range(self.dim)]
                + [tt]
                + ([nrm[:, i] for i in range(self.dim)] if nrm is not None else [np.zeros(n)] * self.dim)
                + S
            )
            with np.errstate(all="ignore"):
                vals = fval(*args)
                grads = fgrad(*args)
            for k in range(ne):
                r = np.broadcast_to(np.asarray(vals[k], float), (n,)) - data[:, k]
                J = np.zeros((n, nb * nd))
                for m, (j, a) in enumerate(keys):
                    g = np.broadcast_to(np.asarray(grads[k * len(keys) + m], float), (n,))
                    if np.any(g):
                        J[:, j * nd : (j + 1) * nd] += g[:, None] * B[a]
                nr = np.linalg.norm(J, axis=1)
                nr[~np.isfinite(nr) | (nr == 0)] = 1.0
                Js.append(J / nr[:, None])
                rs.append(r / nr)
        return np.vstack(Js), np.concatenate(rs)

    def fit(self, n_int=None, seed=0, iters=12):
        rng = np.random.default_rng(seed)
        v, fam, dim, P = self.view, self.fam, self.dim, self.P
        nb, nd = len(self.blocks), self.nd
        ncol = nb * nd
        self.groups = []
        n_int = n_int or min(6000, max(3 * ncol, 1500))
        pts = interior_samples(v, n_int, rng)
        tt = v.t0 + (v.t_end - v.t0) * rng.random(len(pts)) if self.transient else np.zeros(len(pts))
        ops = fam.operator(self.fields, P, dim, self.transient)
        for name, op in ops.items():
            op = op if isinstance(op, tuple) else (op,)
            fv = (self.spec["pde"].get("forcing") or {}).get(name)
            data = (
                np.asarray(v.evaluate(fv, pts, tt), float).reshape(len(pts), -1)
                if fv is not None
                else np.zeros((len(pts), len(op)))
            )
            self.add_rows(list(op), pts, tt, data)
        cons = fam.constraints(self.fields, P, dim)
        if cons:
            self.add_rows(list(cons.values()), pts, tt, np.zeros((len(pts), len(cons))))
        per = 160 if dim == 2 else 30
        geom = v.domain.geometry
        tl = np.linspace(v.t0, v.t_end, 8) if self.transient else [0.0]
        lead = self.fields[fam.unknowns[0].name]
        lead_t = lead if isinstance(lead, tuple) else (lead,)
        for e in self.spec["bc"].get("dirichlet", []):
            bp = geom.tag_points(e["tag"], per)
            bpt = np.vstack([bp] * len(tl))
            btt = np.repeat(tl, len(bp))
            g = np.asarray(v.evaluate(e["value"], bpt, btt), float).reshape(len(bpt), -1)
            self.add_rows(list(lead_t), bpt, btt, g)
            if "laplacian" in e:
                lap = sum(sp.diff(lead, c, 2) for c in COORDS[:dim])
                self.add_rows([lap], bpt, btt, np.asarray(v.evaluate(e["laplacian"], bpt, btt), float))
        if fam.flux is not None:
            for kind in ("neumann", "robin"):
                for e in self.spec["bc"].get(kind, []):
                    bp = geom.tag_points(e["tag"], per)
                    nrm = geom.tag_normals(e["tag"], per)
                    if len(nrm) != len(bp):
                        continue
                    bpt = np.vstack([bp] * len(tl))
                    btt = np.repeat(tl, len(bp))
                    bn = np.vstack([nrm] * len(tl))
                    fl = fam.flux(self.fields, P, tuple(NSYM[:dim]), dim)
                    fl = fl if isinstance(fl, tuple) else (fl,)
                    alpha = float(e.get("alpha") or 0.0)
                    if alpha:
                        fl = tuple(f + alpha * u for f, u in zip(fl, lead_t, strict=False))
                    g = np.asarray(v.evaluate(e["value"], bpt, btt), float).reshape(len(bpt), -1)
                    self.add_rows(list(fl), bpt, btt, g, bn)
        if self.transient:
            ic = self.spec.get("ic") or {}
            ip = interior_samples(v, min(3000, 2 * nd + 300), rng)
            t0 = np.full(len(ip), v.t0)
            if "u" in ic:
                self.add_rows(list(lead_t), ip, t0, np.asarray(v.evaluate(ic["u"], ip, v.t0), float))
            if "v" in ic:
                self.add_rows([sp.diff(u, T) for u in lead_t], ip, t0, np.asarray(v.evaluate(ic["v"], ip, v.t0), float))
        c = np.zeros(ncol)
        hist = []
        for it in range(iters):
            J, r = self.assemble(c)
            J = np.where(np.isfinite(J), J, 0.0)
            r = np.where(np.isfinite(r), r, 0.0)
            s = np.linalg.norm(J, axis=0)
            s[s == 0] = 1
            dc, *_ = np.linalg.lstsq(J / s, -r, rcond=1e-12)
            c = c + dc / s
            hist.append(float(np.linalg.norm(r)))
            if np.linalg.norm(dc / s) <= 1e-10 * (np.linalg.norm(c) or 1) or (it == 0 and self.linear()):
                break
        J, r = self.assemble(c)
        self.c = c
        return dict(
            nd=nd,
            ncol=ncol,
            nfac=len(self.facs),
            deg=self.deg,
            iters=len(hist),
            resid=float(np.linalg.norm(np.where(np.isfinite(r), r, 0))),
        )

    def linear(self):
        return self.fam.name not in ("burgers", "navier_stokes", "reaction_diffusion")

    def values(self):
        v = self.view
        gp = v.points
        t = v.t_end
        B = self.basis(gp, np.full(len(gp), t) if self.transient else np.zeros(len(gp)), tuple([0] * len(self.vars)))
        nd = self.nd
        out = [B @ self.c[j * nd : (j + 1) * nd] for j in self.lead]
        return np.column_stack(out) if len(out) > 1 else out[0]


def attack(spec, family, **kw):
    p = Problem(spec, family, **kw)
    info = p.fit()
    return p.values(), info
