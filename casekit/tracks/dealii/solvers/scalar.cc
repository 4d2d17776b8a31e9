// Scalar second-order problems, one weak form for five families:
//   m du/dt - div(kappa grad u) + beta . grad u + c u + R(u) = f
// (poisson: kappa; helmholtz: c = -k^2; heat: m = 1; convection_diffusion: kappa = epsilon, beta,
// optional SUPG; reaction_diffusion: kappa = epsilon, R(u) with dR/du), with Dirichlet data per
// boundary id, Neumann flux kappa du/dn = g, Robin kappa du/dn + alpha u = g, periodic pairs.
// Time: backward Euler, Crank-Nicolson or BDF2 (first step Crank-Nicolson).  Every step is a
// Newton solve on the discrete residual (one step for linear problems), with UMFPACK.
#include "common.h"

#include <deal.II/dofs/dof_tools.h>
#include <deal.II/fe/fe_values.h>
#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/precondition.h>
#include <deal.II/lac/solver_cg.h>
#include <deal.II/lac/solver_control.h>
#include <deal.II/lac/sparse_direct.h>
#include <deal.II/lac/sparse_matrix.h>
#include <deal.II/lac/sparsity_pattern.h>
#include <deal.II/numerics/vector_tools.h>

#include <cmath>
#include <iostream>

namespace casekit
{
  namespace
  {
    template <int dim>
    class Scalar
    {
    public:
      Scalar(const Inputs &in)
        : in(in)
        , disc(in)
        , dofh(disc.tria)
      {
        fe = disc.scalar_fe(in.degree);
        dofh.distribute_dofs(*fe);
        const Tree &s = in.settings.get_child("scalar");
        kappa = parsed<dim>({s.get<std::string>("kappa")});
        c = parsed<dim>({s.get<std::string>("c")});
        f = parsed<dim>({s.get<std::string>("f")});
        std::vector<std::string> b;
        for (const auto &v : s.get_child("beta"))
          b.push_back(v.second.get_value<std::string>());
        beta = parsed<dim>(b);
        // f = sum_k h_k(t) g_k(x) + rest(x, t) when the settings split it (solvers/__init__.py
        // time_modes): each g_k is evaluated once per quadrature point, each h_k once per assembly
        if (const auto split = s.get_child_optional("f_modes"))
          {
            for (const auto &m : split->get_child("modes"))
              {
                f_time.push_back(parsed<dim>({m.second.get<std::string>("time")}));
                f_space.push_back(parsed<dim>({m.second.get<std::string>("space")}));
              }
            const std::string rest = split->get<std::string>("rest");
            if (rest != "0")
              f_rest = parsed<dim>({rest});
          }
        // the operator (its matrix) changes in time only through these (Robin alpha is a number)
        coefficients_in_time = depends_on_time(s.get<std::string>("kappa")) || depends_on_time(s.get<std::string>("c"));
        for (const auto &e : b)
          coefficients_in_time = coefficients_in_time || depends_on_time(e);
        convective = s.get<bool>("convective");
        // Burgers: the transport u (b . grad u) with b = beta
        burgers = s.get<bool>("burgers", false);
        const std::string r = s.get<std::string>("reaction", "");
        nonlinear = !r.empty() || burgers;
        if (!r.empty())
          {
            reaction = parsed_in_u<dim>(r);
            dreaction = parsed_in_u<dim>(s.get<std::string>("dreaction"));
          }
        supg = s.get<bool>("supg", false);
        krylov = dim == 3 && s.get<bool>("spd", false) && !nonlinear;
        mass = in.transient ? 1.0 : 0.0;
      }

      std::map<std::string, double> run()
      {
        u.reinit(dofh.n_dofs());
        ComponentMask all(1, true);
        if (!in.transient)
          {
            make_constraints<dim>(in, *disc.mapping, dofh, homogeneous, 0.0, all, dirichlet_key, true);
            setup_matrix();
            make_constraints<dim>(in, *disc.mapping, dofh, inhomogeneous, 0.0, all, dirichlet_key, false);
            inhomogeneous.distribute(u);
            newton(0.0, 0.0, 1.0, Vector<double>(), 1.0, 0.0);
          }
        else
          {
            Vector<double> u_n(dofh.n_dofs()), u_nm1(dofh.n_dofs());
            auto ic = parsed<dim>({in.settings.get<std::string>("ic")}, in.t0);
            VectorTools::interpolate(*disc.mapping, dofh, *ic, u_n);
            u_nm1 = u_n;
            make_constraints<dim>(in, *disc.mapping, dofh, homogeneous, in.t0, all, dirichlet_key, true);
            setup_matrix();
            const std::string scheme = in.scheme;
            for (unsigned int step = 1; step <= in.steps; ++step)
              {
                const double t_old = in.t0 + (step - 1) * in.dt, t_new = in.t0 + step * in.dt;
                const std::string kind = (scheme == "bdf2" && step == 1) ? "crank_nicolson" : scheme;
                // m (a0 w - history) / dt + theta S(w, t_new) + (1 - theta) S(u_n, t_old) = 0
                double a0 = 1.0, theta = 1.0;
                Vector<double> history(u_n);
                if (kind == "crank_nicolson")
                  theta = 0.5;
                else if (kind == "bdf2")
                  {
                    a0 = 1.5;
                    history *= 2.0;
                    history.add(-0.5, u_nm1);
                  }
                else if (kind != "backward_euler")
                  AssertThrow(false, ExcMessage("unknown time scheme " + kind));
                Vector<double> explicit_part(dofh.n_dofs());
                if (theta < 1.0)
                  assemble(u_n, t_old, 0.0, Vector<double>(), 0.0, 1.0 - theta, explicit_part, false);
                u = u_n;
                make_constraints<dim>(in, *disc.mapping, dofh, inhomogeneous, t_new, all, dirichlet_key, false);
                inhomogeneous.distribute(u);
                explicit_step = &explicit_part;
                newton(t_new, a0 / in.dt, 1.0 / in.dt, history, theta, 0.0);
                explicit_step = nullptr;
                u_nm1 = u_n;
                u_n = u;
              }
            info["time_steps"] = in.steps;
          }
        info["dofs"] = dofh.n_dofs();
        info["cells"] = disc.tria.n_active_cells();
        return info;
      }

      /// u_tt + S(u, t) = 0 by Newmark's average acceleration (as the DOLFINx solver): each step
      /// M (u1 - u0 - dt v0) + dt^2/4 (S(u1, t1) + S(u0, t0)) = 0, then v1 = 2 (u1 - u0)/dt - v0.
      std::map<std::string, double> run_wave()
      {
        const auto n = dofh.n_dofs();
        u.reinit(n);
        Vector<double> u0(n), v0(n);
        auto ic = parsed<dim>({in.settings.get<std::string>("ic")}, in.t0);
        auto icv = parsed<dim>({in.settings.get<std::string>("ic_v")}, in.t0);
        VectorTools::interpolate(*disc.mapping, dofh, *ic, u0);
        VectorTools::interpolate(*disc.mapping, dofh, *icv, v0);
        ComponentMask all(1, true);
        make_constraints<dim>(in, *disc.mapping, dofh, homogeneous, in.t0, all, dirichlet_key, true);
        setup_matrix();
        const double k2 = in.dt * in.dt / 4;
        for (unsigned int step = 1; step <= in.steps; ++step)
          {
            const double t_old = in.t0 + (step - 1) * in.dt, t_new = in.t0 + step * in.dt;
            Vector<double> explicit_part(n), history(u0);
            assemble(u0, t_old, 0.0, Vector<double>(), 0.0, k2, explicit_part, false);
            history.add(in.dt, v0);
            u = u0;
            make_constraints<dim>(in, *disc.mapping, dofh, inhomogeneous, t_new, all, dirichlet_key, false);
            inhomogeneous.distribute(u);
            explicit_step = &explicit_part;
            newton(t_new, 1.0, 1.0, history, k2, 0.0);
            explicit_step = nullptr;
            v0 *= -1.0;
            v0.add(2.0 / in.dt, u, -2.0 / in.dt, u0);
            u0 = u;
          }
        info["time_steps"] = in.steps;
        info["dofs"] = n;
        info["cells"] = disc.tria.n_active_cells();
        return info;
      }

      void output(double wall)
      {
        write_output<dim>(in, *disc.mapping, dofh, u, 0, 1, wall, info);
      }

      const Vector<double> &solution() const
      {
        return u;
      }

      /// which Dirichlet data the constraints take ("value", or "laplacian": -(laplacian))
      std::string dirichlet_key = "value";
      /// an FE field on this problem's DoFs added to the forcing (nullptr: none)
      const Vector<double> *source = nullptr;
      /// weight of the parsed forcing f
      double f_weight = 1.0;

    private:
      void setup_matrix()
      {
        DynamicSparsityPattern dsp(dofh.n_dofs());
        DoFTools::make_sparsity_pattern(dofh, dsp, homogeneous, false);
        pattern.copy_from(dsp);
        jacobian.reinit(pattern);
      }

      /// Newton on  m (a0 w - h/ dt) + theta S(w, t) [+ explicit part] = 0  (mass_a0 = m a0 / dt,
      /// mass_h = m / dt); linear problems take one step.
      /// A linear problem whose matrix is constant in time (coefficients free of t) keeps its
      /// factorisation from step to step while the scheme's weights (mass_a0, theta) are the same:
      /// each step then assembles its residual only, and solves with the kept factors.
      void newton(double t, double mass_a0, double mass_h, const Vector<double> &history, double theta, double)
      {
        Vector<double> residual(dofh.n_dofs()), delta(dofh.n_dofs());
        const unsigned int max_it = nonlinear ? in.newton_max : 1;
        const bool reuse = !nonlinear && !coefficients_in_time;
        for (unsigned int it = 0; it < max_it; ++it)
          {
            if (reuse && prepared && factors_a0 == mass_a0 && factors_theta == theta)
              assemble_residual(t, mass_a0, mass_h, history, theta, residual);
            else
              {
                assemble_system(t, mass_a0, mass_h, history, theta, residual);
                factors.reset();
                ssor.reset();
                if (krylov)
                  {
                    ssor = std::make_unique<PreconditionSSOR<SparseMatrix<double>>>();
                    ssor->initialize(jacobian, 1.2);
                  }
                else
                  {
                    factors = std::make_unique<SparseDirectUMFPACK>();
                    factors->initialize(jacobian);
                  }
                prepared      = true;
                factors_a0    = mass_a0;
                factors_theta = theta;
              }
            linear_solve(residual, delta);
            homogeneous.distribute(delta);
            u.add(-1.0, delta);
            info["newton_iterations"] += 1;
            const double norm = u.l2_norm();
            if (delta.l2_norm() <= in.newton_rtol * std::max(norm, 1e-300))
              return;
          }
        if (nonlinear)
          AssertThrow(false, ExcMessage("Newton did not converge in " + std::to_string(max_it) + " iterations"));
      }

      /// delta = J^{-1} residual: with the kept factors, or (a 3-D SPD system) by SSOR-preconditioned
      /// CG to 1e-12 of the residual -- a 3-D P2 factorisation took 25x DOLFINx's Krylov solve --
      /// falling back to the factorisation if CG does not converge
      void linear_solve(const Vector<double> &residual, Vector<double> &delta)
      {
        if (ssor)
          {
            SolverControl            control(KRYLOV_MAX_ITERATIONS, 1e-12 * residual.l2_norm());
            SolverCG<Vector<double>> cg(control);
            delta = 0;
            try
              {
                cg.solve(jacobian, delta, residual, *ssor);
                info["linear_iterations"] += control.last_step();
                return;
              }
            catch (const SolverControl::NoConvergence &)
              {
                ssor.reset();
                krylov  = false;
                factors = std::make_unique<SparseDirectUMFPACK>();
                factors->initialize(jacobian);
                info["krylov_fallbacks"] += 1;
              }
          }
        delta = residual;
        factors->solve(delta);
      }

      void assemble_system(double t, double mass_a0, double mass_h, const Vector<double> &history, double theta,
                           Vector<double> &residual)
      {
        jacobian = 0;
        assemble_residual(t, mass_a0, mass_h, history, theta, residual, true);
      }

      /// The residual at u (and the Jacobian too when `with_matrix`), constrained rows zero.
      void assemble_residual(double t, double mass_a0, double mass_h, const Vector<double> &history, double theta,
                             Vector<double> &residual, bool with_matrix = false)
      {
        residual = 0;
        assemble(u, t, mass_a0, history, mass_h, theta, residual, with_matrix);
        if (explicit_step != nullptr)
          residual += *explicit_step;
        // constrained rows: the explicit part must not disturb them
        for (unsigned int i = 0; i < residual.size(); ++i)
          if (homogeneous.is_constrained(i))
            residual[i] = 0;
      }

      /// Adds  m (mass_a0 w - mass_h history) v + weight S(w, t)(v)  to `residual` (and its
      /// Jacobian in w to `jacobian` when `with_matrix`).
      void assemble(const Vector<double> &w, double t, double mass_a0, const Vector<double> &history, double mass_h,
                    double weight, Vector<double> &residual, bool with_matrix)
      {
        const bool transient_mass = mass > 0 && mass_a0 != 0.0;
        const bool hessians = supg && in.degree > 1;
        FEValues<dim> fv(*disc.mapping, *fe, *disc.quadrature,
                         update_values | update_gradients | update_quadrature_points | update_JxW_values |
                           (hessians ? update_hessians : update_default));
        FEFaceValues<dim> ff(*disc.mapping, *fe, *disc.face_quadrature,
                             update_values | update_quadrature_points | update_JxW_values);
        const unsigned int n = fe->n_dofs_per_cell(), nq = disc.quadrature->size();
        FullMatrix<double> cm(n, n);
        Vector<double> cr(n);
        std::vector<types::global_dof_index> dofs(n);
        std::vector<double> wv(nq), hv(nq), lap(nq), sv(nq);
        std::vector<Tensor<1, dim>> wg(nq);
        for (auto *fn : {kappa.get(), c.get(), f.get(), beta.get()})
          fn->set_time(t);
        std::map<types::boundary_id, const BoundaryEntry *> natural;
        std::map<types::boundary_id, std::unique_ptr<Formula<dim>>> data;
        for (const auto &b : in.bcs)
          if (b.kind != "dirichlet")
            {
              natural[b.id] = &b;
              data[b.id] = parsed<dim>(b.value, t);
            }
        // kappa, c and beta free of t are evaluated (muParser) once per quadrature point, on the
        // first assembly, and read back on every later one
        const bool cached = !coefficients_in_time && coefficients_ready;
        const std::size_t n_modes = f_space.size();
        std::vector<double> mode_at_t(n_modes);
        for (std::size_t m = 0; m < n_modes; ++m)
          {
            f_time[m]->set_time(t);
            mode_at_t[m] = f_time[m]->value(Point<dim>());
          }
        if (f_rest)
          f_rest->set_time(t);
        if (n_modes > 0 && !modes_ready)
          mode_values.resize(disc.tria.n_active_cells() * nq * n_modes);
        if (!coefficients_in_time && !coefficients_ready)
          {
            coefficient_k.resize(disc.tria.n_active_cells() * nq);
            coefficient_c.resize(disc.tria.n_active_cells() * nq);
            coefficient_b.resize(disc.tria.n_active_cells() * nq);
          }
        for (const auto &cell : dofh.active_cell_iterators())
          {
            fv.reinit(cell);
            cm = 0;
            cr = 0;
            fv.get_function_values(w, wv);
            fv.get_function_gradients(w, wg);
            if (transient_mass)
              fv.get_function_values(history, hv);
            if (hessians)
              fv.get_function_laplacians(w, lap);
            if (source != nullptr)
              fv.get_function_values(*source, sv);
            const double h = cell->diameter();
            for (unsigned int q = 0; q < nq; ++q)
              {
                const Point<dim> &x = fv.quadrature_point(q);
                const std::size_t at = cell->active_cell_index() * nq + q;
                double f_here = 0;
                if (n_modes == 0)
                  f_here = f->value(x);
                else
                  {
                    double *g = &mode_values[at * n_modes];
                    if (!modes_ready)
                      for (std::size_t m = 0; m < n_modes; ++m)
                        g[m] = f_space[m]->value(x);
                    for (std::size_t m = 0; m < n_modes; ++m)
                      f_here += mode_at_t[m] * g[m];
                    if (f_rest)
                      f_here += f_rest->value(x);
                  }
                const double dx = fv.JxW(q), fq = f_weight * f_here + (source != nullptr ? sv[q] : 0.0);
                double k, cq;
                Tensor<1, dim> b;
                if (cached)
                  {
                    k  = coefficient_k[at];
                    cq = coefficient_c[at];
                    b  = coefficient_b[at];
                  }
                else
                  {
                    k  = kappa->value(x);
                    cq = c->value(x);
                    for (unsigned int d = 0; d < dim; ++d)
                      b[d] = beta->value(x, d);
                    if (!coefficients_in_time)
                      {
                        coefficient_k[at] = k;
                        coefficient_c[at] = cq;
                        coefficient_b[at] = b;
                      }
                  }
                double r = 0, dr = 0;
                if (reaction)
                  {
                    reaction->set_time(wv[q]);
                    dreaction->set_time(wv[q]);
                    r = reaction->value(x);
                    dr = dreaction->value(x);
                  }
                double tau = 0, strong = 0;
                if (supg)
                  {
                    const double bn = b.norm();
                    if (bn > 0)
                      {
                        const double pe = bn * h / (2 * k);
                        tau = h / (2 * bn) * (1 / std::tanh(pe) - 1 / pe);
                      }
                    strong = -k * (hessians ? lap[q] : 0.0) + b * wg[q] - fq;
                  }
                const double point_terms = cq * wv[q] + r - fq;
                for (unsigned int i = 0; i < n; ++i)
                  {
                    const double vi = fv.shape_value(i, q);
                    const Tensor<1, dim> gi = fv.shape_grad(i, q);
                    double ri = k * (wg[q] * gi) + (convective ? (b * wg[q]) * vi : 0.0) + point_terms * vi;
                    if (burgers)
                      ri += wv[q] * (b * wg[q]) * vi;
                    if (supg)
                      ri += tau * (b * gi) * strong;
                    double res = weight * ri;
                    if (transient_mass)
                      res += mass * (mass_a0 * wv[q] - mass_h * hv[q]) * vi;
                    cr(i) += res * dx;
                    if (!with_matrix)
                      continue;
                    for (unsigned int j = 0; j < n; ++j)
                      {
                        const double vj = fv.shape_value(j, q);
                        const Tensor<1, dim> gj = fv.shape_grad(j, q);
                        double jij = k * (gj * gi) + (convective ? (b * gj) * vi : 0.0) + (cq + dr) * vj * vi;
                        if (burgers)
                          jij += (vj * (b * wg[q]) + wv[q] * (b * gj)) * vi;
                        if (supg)
                          {
                            double sj = b * gj;
                            if (hessians)
                              sj -= k * trace(fv.shape_hessian(j, q));
                            jij += tau * (b * gi) * sj;
                          }
                        double m = weight * jij;
                        if (transient_mass)
                          m += mass * mass_a0 * vj * vi;
                        cm(i, j) += m * dx;
                      }
                  }
              }
            if (!natural.empty() && cell->at_boundary())
              for (const auto face : cell->face_indices())
                {
                  if (!cell->face(face)->at_boundary())
                    continue;
                  auto it = natural.find(cell->face(face)->boundary_id());
                  if (it == natural.end())
                    continue;
                  const BoundaryEntry &e = *it->second;
                  const Formula<dim> &g = *data[it->first];
                  ff.reinit(cell, face);
                  std::vector<double> fw(ff.n_quadrature_points);
                  ff.get_function_values(w, fw);
                  for (unsigned int q = 0; q < ff.n_quadrature_points; ++q)
                    {
                      const double gq = g.value(ff.quadrature_point(q)), dx = ff.JxW(q);
                      for (unsigned int i = 0; i < n; ++i)
                        {
                          const double vi = ff.shape_value(i, q);
                          cr(i) += weight * (e.alpha * fw[q] - gq) * vi * dx;
                          if (with_matrix && e.kind == "robin")
                            for (unsigned int j = 0; j < n; ++j)
                              cm(i, j) += weight * e.alpha * ff.shape_value(j, q) * vi * dx;
                        }
                    }
                }
            cell->get_dof_indices(dofs);
            if (with_matrix)
              homogeneous.distribute_local_to_global(cm, cr, dofs, jacobian, residual);
            else
              homogeneous.distribute_local_to_global(cr, dofs, residual);
          }
        coefficients_ready = !coefficients_in_time;
        modes_ready        = n_modes > 0;
      }

      const Inputs &                            in;
      Discretization<dim>                       disc;
      DoFHandler<dim>                           dofh;
      std::unique_ptr<FiniteElement<dim>>       fe;
      std::unique_ptr<Formula<dim>>      kappa, c, f, beta;
      std::unique_ptr<Formula<dim>>      reaction, dreaction;
      bool                                      convective = false, burgers = false, nonlinear = false, supg = false;
      bool                                      coefficients_in_time = false, coefficients_ready = false;
      std::vector<std::unique_ptr<Formula<dim>>> f_time, f_space;
      std::unique_ptr<Formula<dim>>      f_rest;
      bool                                      modes_ready = false;
      std::vector<double>                       mode_values;
      std::vector<double>                       coefficient_k, coefficient_c;
      std::vector<Tensor<1, dim>>               coefficient_b;
      std::unique_ptr<SparseDirectUMFPACK>      factors;
      std::unique_ptr<PreconditionSSOR<SparseMatrix<double>>> ssor;
      bool                                      krylov = false, prepared = false;
      static constexpr unsigned int             KRYLOV_MAX_ITERATIONS = 5000;
      double                                    factors_a0 = 0, factors_theta = 0;
      double                                    mass = 0;
      AffineConstraints<double>                 homogeneous, inhomogeneous;
      SparsityPattern                           pattern;
      SparseMatrix<double>                      jacobian;
      Vector<double>                            u;
      const Vector<double> *                    explicit_step = nullptr;
      std::map<std::string, double>             info;
    };
  } // namespace

  template <int dim>
  void solve_scalar(const Inputs &in, double start)
  {
    Scalar<dim> problem(in);
    problem.run();
    problem.output(now() - start);
  }

  /// Biharmonic with u and Laplace(u) given on the boundary, split exactly into two Poisson
  /// problems: -Laplace(w) = f with w = -laplacian, then -Laplace(u) = w with u = value.
  template <int dim>
  void solve_biharmonic(const Inputs &in, double start)
  {
    Scalar<dim> problem(in);
    problem.dirichlet_key = "laplacian";
    problem.run();
    const Vector<double> w = problem.solution();
    problem.dirichlet_key = "value";
    problem.source = &w;
    problem.f_weight = 0.0;
    problem.run();
    problem.output(now() - start);
  }

  template <int dim>
  void solve_wave(const Inputs &in, double start)
  {
    Scalar<dim> problem(in);
    problem.run_wave();
    problem.output(now() - start);
  }

  template void solve_wave<2>(const Inputs &, double);
  template void solve_wave<3>(const Inputs &, double);
  template void solve_biharmonic<2>(const Inputs &, double);
  template void solve_biharmonic<3>(const Inputs &, double);
  template void solve_scalar<2>(const Inputs &, double);
  template void solve_scalar<3>(const Inputs &, double);
} // namespace casekit
