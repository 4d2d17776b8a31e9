// Linear elasticity: -div sigma(u) = f, sigma = lambda tr(eps) I + 2 mu eps, with Dirichlet
// displacements and Neumann tractions sigma n = g per boundary id; vector Lagrange elements
// (simplices or hypercubes) and UMFPACK.
#include "common.h"

#include <deal.II/dofs/dof_tools.h>
#include <deal.II/fe/fe_values.h>
#include <deal.II/fe/fe_values_extractors.h>
#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/sparse_direct.h>
#include <deal.II/lac/sparse_matrix.h>
#include <deal.II/lac/sparsity_pattern.h>

namespace casekit
{
  template <int dim>
  void solve_elasticity(const Inputs &in, double start)
  {
    Discretization<dim> disc(in);
    FESystem<dim>       fe(*disc.scalar_fe(in.degree), dim);
    DoFHandler<dim>     dofh(disc.tria);
    dofh.distribute_dofs(fe);
    const Tree &                        s      = in.settings.get_child("elasticity");
    const double                        E      = s.get<double>("E"), nu = s.get<double>("nu");
    const double                        lambda = E * nu / ((1 + nu) * (1 - 2 * nu)), mu = E / (2 * (1 + nu));
    std::vector<std::string>            fs;
    for (const auto &v : s.get_child("f"))
      fs.push_back(v.second.get_value<std::string>());
    auto f = parsed<dim>(fs);

    AffineConstraints<double> constraints;
    make_constraints<dim>(in, *disc.mapping, dofh, constraints, 0.0, ComponentMask(dim, true), "value", false);
    DynamicSparsityPattern dsp(dofh.n_dofs());
    DoFTools::make_sparsity_pattern(dofh, dsp, constraints, false);
    SparsityPattern pattern;
    pattern.copy_from(dsp);
    SparseMatrix<double> matrix(pattern);
    Vector<double>       rhs(dofh.n_dofs()), u(dofh.n_dofs());

    std::map<types::boundary_id, std::unique_ptr<Formula<dim>>> traction;
    for (const auto &b : in.bcs)
      if (b.kind == "neumann")
        traction[b.id] = parsed<dim>(b.value);

    const FEValuesExtractors::Vector disp(0);
    FEValues<dim>     fv(*disc.mapping, fe, *disc.quadrature,
                         update_values | update_gradients | update_quadrature_points | update_JxW_values);
    FEFaceValues<dim> ff(*disc.mapping, fe, *disc.face_quadrature,
                         update_values | update_quadrature_points | update_JxW_values);
    const unsigned int n = fe.n_dofs_per_cell();
    FullMatrix<double> cm(n, n);
    Vector<double>     cr(n), value(dim);
    std::vector<types::global_dof_index> dofs(n);
    for (const auto &cell : dofh.active_cell_iterators())
      {
        fv.reinit(cell);
        cm = 0;
        cr = 0;
        for (unsigned int q = 0; q < fv.n_quadrature_points; ++q)
          {
            f->vector_value(fv.quadrature_point(q), value);
            Tensor<1, dim> fq;
            for (unsigned int d = 0; d < dim; ++d)
              fq[d] = value[d];
            const double dx = fv.JxW(q);
            for (unsigned int i = 0; i < n; ++i)
              {
                const auto ei = fv[disp].symmetric_gradient(i, q);
                const double di = fv[disp].divergence(i, q);
                for (unsigned int j = 0; j < n; ++j)
                  cm(i, j) += (lambda * fv[disp].divergence(j, q) * di +
                               2 * mu * scalar_product(fv[disp].symmetric_gradient(j, q), ei)) * dx;
                cr(i) += fv[disp].value(i, q) * fq * dx;
              }
          }
        if (!traction.empty() && cell->at_boundary())
          for (const auto face : cell->face_indices())
            {
              if (!cell->face(face)->at_boundary())
                continue;
              auto it = traction.find(cell->face(face)->boundary_id());
              if (it == traction.end())
                continue;
              ff.reinit(cell, face);
              for (unsigned int q = 0; q < ff.n_quadrature_points; ++q)
                {
                  it->second->vector_value(ff.quadrature_point(q), value);
                  Tensor<1, dim> g;
                  for (unsigned int d = 0; d < dim; ++d)
                    g[d] = value[d];
                  for (unsigned int i = 0; i < n; ++i)
                    cr(i) += ff[disp].value(i, q) * g * ff.JxW(q);
                }
            }
        cell->get_dof_indices(dofs);
        constraints.distribute_local_to_global(cm, cr, dofs, matrix, rhs);
      }
    SparseDirectUMFPACK direct;
    direct.initialize(matrix);
    u = rhs;
    direct.solve(u);
    constraints.distribute(u);
    std::map<std::string, double> info{{"dofs", double(dofh.n_dofs())},
                                       {"cells", double(disc.tria.n_active_cells())}};
    write_output<dim>(in, *disc.mapping, dofh, u, 0, dim, now() - start, info);
  }

  template void solve_elasticity<2>(const Inputs &, double);
  template void solve_elasticity<3>(const Inputs &, double);
} // namespace casekit
