"""What every DOLFINx calibration solver needs from a case_spec: mesh, tags, expressions, BCs.

The mesh comes from the domain registry through gmsh (the same geometry and boundary tags as
every other track); expressions are parsed by casekit's one expression parser and turned into
UFL inside forms; Dirichlet and initial data are interpolated into the space from numpy
functions of the interpolation points (and Dirichlet data re-interpolated, on the cells of their
boundary part only, when the time changes): data that are only interpolated need no compiled
kernel, and every kernel compiled is seconds of a fresh run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import dolfinx_solver  # noqa: F401  (must come before dolfinx: it orders MPI first)
import numpy as np
import ufl
from dolfinx import fem
from dolfinx.io import gmsh as dgmsh
from dolfinx.mesh import compute_incident_entities
from mpi4py import MPI
from petsc4py import PETSc
from ufl.algorithms import estimate_total_polynomial_degree, expand_derivatives

from casekit.domains import resolve
from casekit.domains.meshing import MeshOptions, gmsh_model
from casekit.expr.syntax import Node, as_tree
from casekit.expr.tree import points_function
from casekit.solvers.settings import SolveSettings
from casekit.solvers.ufl_expr import to_ufl
from casekit.tracks.dolfinx.solvers.structured import structured_mesh


@dataclass
class Dirichlet:
    """A Dirichlet condition whose data can be re-interpolated at a new time."""

    bc: fem.DirichletBC
    g: fem.Function
    values: Callable[[np.ndarray], np.ndarray]
    cells: np.ndarray

    def update(self) -> None:
        self.g.interpolate(self.values, cells0=self.cells)


class Problem:
    def __init__(self, case_spec: dict[str, Any], settings: dict[str, Any]) -> None:
        self.spec = case_spec
        self.settings = SolveSettings.for_case(settings, case_spec)
        dom = case_spec["domain"]
        self.domain = resolve(dom["type"], dom["geometry_params"], validated=True)
        self.dim = self.domain.dim
        # affine cells where every edge is straight (a second-order geometry costs time, not error)
        order = self.settings.geometry if self.domain.geometry.curved() else 1
        options = MeshOptions(cells_across=self.settings.cells_across, order=order, cell=self.settings.cell,
                              corners=self.settings.corner_refinement)
        # rectangles and boxes are gridded by DOLFINx itself (structured.py); the rest by gmsh
        grid = structured_mesh(self.domain, options.h(self.domain), self.settings.cell, MPI.COMM_WORLD)
        if grid is not None:
            self.mesh, self.facet_tags, self.tag_ids = grid
        else:
            with gmsh_model(self.domain, options) as g:
                data = dgmsh.model_to_mesh(g.model, MPI.COMM_WORLD, 0, gdim=self.dim)
            self.mesh = data.mesh
            self.facet_tags = data.facet_tags
            self.tag_ids = {name: int(pg.tag) for name, pg in data.physical_groups.items()
                            if pg.dim == self.dim - 1}
        self.mesh.topology.create_connectivity(self.dim - 1, self.dim)
        self.x = ufl.SpatialCoordinate(self.mesh)
        self.t = fem.Constant(self.mesh, 0.0)
        self.ds = ufl.Measure("ds", domain=self.mesh, subdomain_data=self.facet_tags)
        # bound to the mesh: a term whose data vanish (a zero forcing) folds to zero, and an
        # integral of zero over an unbound measure has no domain
        self.dx = ufl.Measure("dx", domain=self.mesh)
        self.h = ufl.CellDiameter(self.mesh)
        self.n = ufl.FacetNormal(self.mesh)
        time = case_spec["pde"].get("time")
        self.t0 = float(time["t0"]) if time else 0.0
        self.t_end = float(time["t_end"]) if time else 0.0
        self.transient = time is not None
        self.variables = ["x", "y", "z"][: self.dim] + (["t"] if self.transient else [])
        self.t.value = self.t0

    # -- forms ---------------------------------------------------------------------------
    def form(self, form: Any) -> fem.Form:
        return self.forms(form)[0]

    def forms(self, *forms: Any) -> list[fem.Form]:
        """The UFL forms compiled together, into one C module: every compilation in a fresh run
        costs a compiler run and setuptools' start-up (about 0.5 s), whatever its size.

        Each integral's quadrature degree is capped at 2 degree + 2.  UFL counts a smooth
        function of the coordinates (sin, exp) as a polynomial two degrees above its argument, so
        the manufactured data of a 3-D P2 case (a product of three sines times the test function)
        asked for a rule of degree 13: hundreds of points per cell where a degree-6 rule makes a
        quadrature error orders of magnitude below the discretization error (the cap is at least
        the degree of every bilinear form of these solvers with constant coefficients on affine
        cells, which stay exact)."""
        cap = 2 * self.settings.degree + 2
        geometry = self.mesh.ufl_domain().ufl_coordinate_element().embedded_superdegree
        capped = []
        for form in forms:
            integrals = []
            for itg in expand_derivatives(form).integrals():
                if "quadrature_degree" not in itg.metadata():
                    q = estimate_total_polynomial_degree(itg.integrand(), default_degree=geometry)
                    itg = itg.reconstruct(metadata={**itg.metadata(), "quadrature_degree": min(q, cap)})
                integrals.append(itg)
            capped.append(ufl.Form(integrals))
        # dolfinx.fem.form, one by one: FFCx's own JIT (a cffi module built through setuptools per
        # form), as every DOLFINx solver compiles -- the calibration pays for its forms what a
        # submission pays, so the runtime gate stays within reach of a standard solver
        return [fem.form(f, dtype=PETSc.ScalarType) for f in capped]

    # -- expressions ---------------------------------------------------------------------
    def tree(self, value: Any, params: tuple[str, ...] = ()) -> Any:
        """A case_spec value (number, expression, or component list) as a syntax tree (a tuple of
        them for a component list)."""
        if isinstance(value, list):
            return tuple(as_tree(v, variables=self.variables, params=params) for v in value)
        return as_tree(value, variables=self.variables, params=params)

    def ufl(self, value: Any, symbols: dict[str, Any] | None = None, t: Any = None) -> Any:
        """A case_spec value as UFL (a vector for component lists), at time ``t`` (a Constant;
        default: the problem's current time ``self.t``)."""
        params = tuple(symbols or ())
        s = self.tree(value, params)
        t = self.t if t is None else t
        out = (ufl.as_vector([to_ufl(c, self.x, t, symbols) for c in s]) if isinstance(s, tuple)
               else ufl.as_ufl(to_ufl(s, self.x, t, symbols)))
        if isinstance(out, ufl.constantvalue.Zero):
            # a vanishing datum (a linear solution's forcing) as a constant on this mesh: UFL would
            # fold every term it multiplies away, leaving a form without arguments
            return fem.Constant(self.mesh, np.zeros(out.ufl_shape))
        return out

    def param(self, name: str, symbols: dict[str, Any] | None = None, t: Any = None) -> Any:
        return self.ufl(self.spec["pde"]["params"][name], symbols, t)

    def number(self, name: str) -> float:
        return float(self.spec["pde"]["params"][name])

    def vector(self, name: str) -> Any:
        return ufl.as_vector([float(c) for c in self.spec["pde"]["params"][name]])

    def forcing(self, name: str = "f", t: Any = None) -> Any:
        return self.ufl(self.spec["pde"]["forcing"][name], t=t)

    # -- boundary ------------------------------------------------------------------------
    def entries(self, kind: str) -> list[dict[str, Any]]:
        return list(self.spec["bc"].get(kind, []))

    def ds_tag(self, tag: str) -> Any:
        return self.ds(self.tag_ids[tag])

    def facets(self, tag: str) -> np.ndarray:
        return self.facet_tags.find(self.tag_ids[tag])

    def dirichlet(self, space: Any, value: Any, tag: str) -> Dirichlet:
        """u = value on ``tag`` for ``space`` (a space or a sub-space of a mixed/vector space);
        ``value`` is a case_spec value or a syntax tree."""
        collapsed = space.collapse()[0] if space.component() else space
        g = fem.Function(collapsed)
        facets = self.facets(tag)
        cells = compute_incident_entities(self.mesh.topology, facets, self.dim - 1, self.dim)
        values = self.values(value)
        g.interpolate(values, cells0=cells)
        if collapsed is space:
            bc = fem.dirichletbc(g, fem.locate_dofs_topological(space, self.dim - 1, facets))
        else:
            dofs = fem.locate_dofs_topological((space, collapsed), self.dim - 1, facets)
            bc = fem.dirichletbc(g, dofs, space)
        return Dirichlet(bc, g, values, cells)

    def values(self, value: Any) -> Callable[[np.ndarray], np.ndarray]:
        """A case_spec value (or a syntax tree) as a numpy function of interpolation points
        ``x`` (3, N) at the problem's current time ``self.t``: values (N,) or, for a component
        list, (k, N)."""
        s = value if isinstance(value, Node) else self.tree(value)
        parts = s if isinstance(s, tuple) else (s,)
        functions = [points_function(c, self.dim) for c in parts]

        def evaluate(x: np.ndarray) -> np.ndarray:
            points, t = x[: self.dim].T, float(self.t.value)
            out = [f(points, t) for f in functions]
            return np.vstack(out) if isinstance(s, tuple) else out[0]

        return evaluate

    def dirichlets(self, space: Any, key: str = "value") -> list[Dirichlet]:
        return [self.dirichlet(space, e[key], e["tag"]) for e in self.entries("dirichlet")]

    def neumann_terms(self, v: Any, t: Any = None) -> Any:
        """sum over Neumann tags of  g . v ds(tag)  (None when there are none)."""
        terms = [ufl.inner(self.ufl(e["value"], t=t), v) * self.ds_tag(e["tag"]) for e in self.entries("neumann")]
        return add(*terms) if terms else None

    def robin_terms(self, u: Any, v: Any, t: Any = None) -> tuple[Any, Any]:
        """(sum alpha u v ds, sum g v ds) over Robin tags (None when there are none)."""
        a = [float(e["alpha"]) * u * v * self.ds_tag(e["tag"]) for e in self.entries("robin")]
        L = [self.ufl(e["value"], t=t) * v * self.ds_tag(e["tag"]) for e in self.entries("robin")]
        if not a:
            return None, None
        return add(*a), add(*L)

    def robin_nonnegative(self) -> bool:
        """Whether every Robin coefficient is >= 0 (a Robin term then keeps a diffusion operator
        symmetric positive definite)."""
        return all(float(e["alpha"]) >= 0 for e in self.entries("robin"))

    def boundary_load(self, u: Any, v: Any, t: Any = None) -> tuple[Any, Any]:
        """(Robin bilinear part, Neumann + Robin data part), either None when absent."""
        ra, rL = self.robin_terms(u, v, t)
        return ra, add(self.neumann_terms(v, t), rL)

    def periodic_pairs(self) -> list[tuple[str, str, np.ndarray]]:
        return [(p["tags"][0], p["tags"][1], np.asarray(p["translation"], dtype=float))
                for p in self.spec["bc"].get("periodic", [])]

    # -- time ----------------------------------------------------------------------------
    def time_steps(self) -> tuple[int, float]:
        return self.settings.steps(self.t0, self.t_end)


def add(*forms: Any) -> Any:
    """Sum of forms, skipping None (None when nothing is left)."""
    present = [f for f in forms if f is not None]
    if not present:
        return None
    return sum(present[1:], present[0])
