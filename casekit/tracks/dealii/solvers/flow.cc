// Stokes and steady Navier-Stokes on Taylor-Hood elements (P2-P1 on simplices, Q2-Q1 on
// hypercubes):  -nu Laplace(u) [+ (grad u) u] + grad p = f,  div u = 0, with velocity Dirichlet
// data, traction nu (grad u) n - p n = g on Neumann parts, periodic pairs.  Newton's method on
// the discrete residual with UMFPACK; Navier-Stokes continues in the viscosity from
// max(nu, 1) down by factors of 4.  Without traction parts one pressure DoF is pinned (the
// evaluated output is the velocity, which does not depend on the pressure constant).
#include "common.h"

#include <deal.II/dofs/dof_tools.h>
#include <deal.II/fe/fe_values.h>
#include <deal.II/fe/fe_values_extractors.h>
#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/sparse_direct.h>
#include <deal.II/lac/sparse_matrix.h>
#include <deal.II/lac/sparsity_pattern.h>

#include <cmath>

namespace casekit
{
  template <int dim>
  void solve_flow(const Inputs &in, double start)
  {
    Discretization<dim> disc(in);
    FESystem<dim>       fe(*disc.scalar_fe(in.degree), dim, *disc.scalar_fe(in.degree - 1), 1);
    DoFHandler<dim>     dofh(disc.tria);
    dofh.distribute_dofs(fe);
    const Tree &s          = in.settings.get_child("flow");
    const double nu_target = s.get<double>("nu");
    const bool   convective = s.get<bool>("convective");
    std::vector<std::string> fs;
    for (const auto &v : s.get_child("f"))
      fs.push_back(v.second.get_value<std::string>());
    auto f = parsed<dim>(fs);
    std::map<types::boundary_id, std::unique_ptr<Formula<dim>>> traction;
    for (const auto &b : in.bcs)
      if (b.kind == "neumann")
        traction[b.id] = parsed<dim>(b.value);

    ComponentMask velocity(dim + 1, true);
    velocity.set(dim, false);
    AffineConstraints<double> inhomogeneous, homogeneous;
    make_constraints<dim>(in, *disc.mapping, dofh, inhomogeneous, 0.0, velocity, "value", false);
    make_constraints<dim>(in, *disc.mapping, dofh, homogeneous, 0.0, velocity, "value", true);
    if (traction.empty())
      {
        // pin the first unconstrained pressure DoF to zero
        std::vector<types::global_dof_index> dofs(fe.n_dofs_per_cell());
        types::global_dof_index pin = numbers::invalid_dof_index;
        for (const auto &cell : dofh.active_cell_iterators())
          {
            cell->get_dof_indices(dofs);
            for (unsigned int i = 0; i < dofs.size() && pin == numbers::invalid_dof_index; ++i)
              if (fe.system_to_component_index(i).first == dim && !homogeneous.is_constrained(dofs[i]))
                pin = dofs[i];
            if (pin != numbers::invalid_dof_index)
              break;
          }
        for (auto *c : {&inhomogeneous, &homogeneous})
          {
            AffineConstraints<double> pinned;
            pinned.add_line(pin);
            pinned.close();
            c->merge(pinned, AffineConstraints<double>::MergeConflictBehavior::left_object_wins);
          }
      }
    DynamicSparsityPattern dsp(dofh.n_dofs());
    DoFTools::make_sparsity_pattern(dofh, dsp, homogeneous, false);
    SparsityPattern pattern;
    pattern.copy_from(dsp);
    SparseMatrix<double> jacobian(pattern);
    Vector<double>       w(dofh.n_dofs()), residual(dofh.n_dofs()), delta(dofh.n_dofs());
    inhomogeneous.distribute(w);

    const FEValuesExtractors::Vector U(0);
    const FEValuesExtractors::Scalar P(dim);
    FEValues<dim>     fv(*disc.mapping, fe, *disc.quadrature,
                         update_values | update_gradients | update_quadrature_points | update_JxW_values);
    FEFaceValues<dim> ff(*disc.mapping, fe, *disc.face_quadrature,
                         update_values | update_quadrature_points | update_JxW_values);
    const unsigned int n = fe.n_dofs_per_cell(), nq = fv.n_quadrature_points;
    FullMatrix<double> cm(n, n);
    Vector<double>     cr(n), value(dim);
    std::vector<types::global_dof_index> dofs(n);
    std::vector<Tensor<1, dim>> uq(nq);
    std::vector<Tensor<2, dim>> gq(nq);
    std::vector<double>         divq(nq), pq(nq);

    auto assemble = [&](double nu) {
      jacobian = 0;
      residual = 0;
      for (const auto &cell : dofh.active_cell_iterators())
        {
          fv.reinit(cell);
          cm = 0;
          cr = 0;
          fv[U].get_function_values(w, uq);
          fv[U].get_function_gradients(w, gq);
          fv[U].get_function_divergences(w, divq);
          fv[P].get_function_values(w, pq);
          for (unsigned int q = 0; q < nq; ++q)
            {
              f->vector_value(fv.quadrature_point(q), value);
              Tensor<1, dim> fq;
              for (unsigned int d = 0; d < dim; ++d)
                fq[d] = value[d];
              const Tensor<1, dim> conv = convective ? gq[q] * uq[q] : Tensor<1, dim>();
              const double dx = fv.JxW(q);
              for (unsigned int i = 0; i < n; ++i)
                {
                  const Tensor<1, dim> vi = fv[U].value(i, q);
                  const Tensor<2, dim> gvi = fv[U].gradient(i, q);
                  const double dvi = fv[U].divergence(i, q), qi = fv[P].value(i, q);
                  cr(i) += (nu * scalar_product(gq[q], gvi) + conv * vi - pq[q] * dvi - qi * divq[q] - fq * vi) * dx;
                  for (unsigned int j = 0; j < n; ++j)
                    {
                      const Tensor<1, dim> uj = fv[U].value(j, q);
                      const Tensor<2, dim> guj = fv[U].gradient(j, q);
                      double a = nu * scalar_product(guj, gvi) - fv[P].value(j, q) * dvi - qi * fv[U].divergence(j, q);
                      if (convective)
                        a += (guj * uq[q] + gq[q] * uj) * vi;
                      cm(i, j) += a * dx;
                    }
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
                      cr(i) -= ff[U].value(i, q) * g * ff.JxW(q);
                  }
              }
          cell->get_dof_indices(dofs);
          homogeneous.distribute_local_to_global(cm, cr, dofs, jacobian, residual);
        }
    };

    std::vector<double> levels{nu_target};
    if (convective)
      while (levels.front() < 1.0)
        levels.insert(levels.begin(), std::min(1.0, levels.front() * 4));
    std::map<std::string, double> info{{"dofs", double(dofh.n_dofs())},
                                       {"cells", double(disc.tria.n_active_cells())},
                                       {"continuation_levels", double(levels.size())},
                                       {"newton_iterations", 0.0}};
    for (const double nu : levels)
      {
        bool converged = false;
        for (unsigned int it = 0; it < (convective ? in.newton_max : 1u); ++it)
          {
            assemble(nu);
            SparseDirectUMFPACK direct;
            direct.initialize(jacobian);
            delta = residual;
            direct.solve(delta);
            homogeneous.distribute(delta);
            w.add(-1.0, delta);
            info["newton_iterations"] += 1;
            if (!convective || delta.l2_norm() <= in.newton_rtol * std::max(w.l2_norm(), 1e-300))
              {
                converged = true;
                break;
              }
          }
        AssertThrow(converged, ExcMessage("Newton did not converge at nu = " + std::to_string(nu)));
      }
    write_output<dim>(in, *disc.mapping, dofh, w, 0, dim, now() - start, info);
  }

  template void solve_flow<2>(const Inputs &, double);
  template void solve_flow<3>(const Inputs &, double);
} // namespace casekit
