// Target values from a deal.II solution, one function per target kind (never per family), in a
// registry by kind name.  settings.json "targets" holds one entry per case_spec target, written by
// casekit (solvers/targets.py): its name and kind, the output component it is about (-1: the
// output field itself, the unknown or its magnitude), and per kind the boundary id and the flux
// coefficient as muParser text (boundary_flux) or the point (point).
//   mean           the quantity integrated over the cells (FEValues with the case's mapping and a
//                  Gauss rule) over the measure
//   boundary_flux  c grad(u) . n integrated over the boundary faces of the part's id (FEFaceValues:
//                  n the outward normal of the cell), c at t_end
//   point          the field evaluated at the point (Sampler: the located cell's FEValues)
//   max            over the support points of the unknown's element in every cell (the mesh nodes)
//                  and the evaluation grid's points inside the exact domain (settings.json
//                  "grid_inside", from casekit's domain registry) -- what the DOLFINx track does
// The values go to targets.json ({name: value}, 17 significant digits), every one finite, as
// casekit.solvers.targets.write writes them for the Python tracks.
#include "common.h"

#include <deal.II/base/exceptions.h>
#include <deal.II/fe/fe_values.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>

namespace casekit
{
  namespace
  {
    /// What every kind reads: the solution and where it lives.
    template <int dim>
    struct Solved
    {
      const Inputs &                          in;
      const Mapping<dim> &                    mapping;
      const DoFHandler<dim> &                 dofh;
      const Vector<double> &                  solution;
      unsigned int                            first, n;
      const Sampler<dim> &                    sample;
      const std::vector<std::vector<double>> &grid;

      /// the target's quantity from every component of the field at a point
      double quantity(const Vector<double> &v, int component) const
      {
        if (component >= 0)
          return v[first + component];
        double s = 0;
        for (unsigned int c = 0; c < n; ++c)
          s += v[first + c] * v[first + c];
        return n == 1 ? v[first] : std::sqrt(s);
      }

      /// Gauss points enough for the square of the solution's polynomials (QGaussSimplex has at
      /// most 4 per direction in 9.4)
      unsigned int points() const
      {
        const unsigned int q = dofh.get_fe().degree + 2;
        return simplex() ? std::min(q, 4u) : q;
      }

      bool simplex() const
      {
        return dofh.get_fe().reference_cell().is_simplex();
      }

      std::unique_ptr<Quadrature<dim>> cell_rule() const
      {
        if (simplex())
          return std::make_unique<QGaussSimplex<dim>>(points());
        return std::make_unique<QGauss<dim>>(points());
      }

      std::unique_ptr<Quadrature<dim - 1>> face_rule() const
      {
        if (simplex())
          return std::make_unique<QGaussSimplex<dim - 1>>(points());
        return std::make_unique<QGauss<dim - 1>>(points());
      }

      double t_end() const
      {
        return in.transient ? in.t_end : 0.0;
      }
    };

    template <int dim>
    using TargetFn = std::function<double(const Solved<dim> &, const Tree &)>;

    template <int dim>
    double mean(const Solved<dim> &s, const Tree &entry)
    {
      const int          component = entry.get<int>("component");
      const auto &       fe        = s.dofh.get_fe();
      const auto         rule      = s.cell_rule();
      FEValues<dim>      fv(s.mapping, fe, *rule, update_values | update_JxW_values);
      std::vector<Vector<double>> values(rule->size(), Vector<double>(fe.n_components()));
      double integral = 0, measure = 0;
      for (const auto &cell : s.dofh.active_cell_iterators())
        {
          fv.reinit(cell);
          fv.get_function_values(s.solution, values);
          for (unsigned int q = 0; q < rule->size(); ++q)
            {
              integral += s.quantity(values[q], component) * fv.JxW(q);
              measure += fv.JxW(q);
            }
        }
      return integral / measure;
    }

    template <int dim>
    double boundary_flux(const Solved<dim> &s, const Tree &entry)
    {
      const auto name = entry.get<std::string>("name");
      AssertThrow(s.n == 1, ExcMessage("target '" + name + "': a boundary flux needs a scalar unknown"));
      const auto id   = entry.get<types::boundary_id>("boundary");
      const auto c    = parsed<dim>({entry.get<std::string>("coefficient")}, s.t_end());
      const auto &fe  = s.dofh.get_fe();
      const auto rule = s.face_rule();
      FEFaceValues<dim> ff(s.mapping, fe, *rule,
                           update_gradients | update_normal_vectors | update_quadrature_points | update_JxW_values);
      std::vector<std::vector<Tensor<1, dim>>> gradients(rule->size(), std::vector<Tensor<1, dim>>(fe.n_components()));
      double       flux  = 0;
      unsigned int faces = 0;
      for (const auto &cell : s.dofh.active_cell_iterators())
        if (cell->at_boundary())
          for (const auto f : cell->face_indices())
            if (cell->face(f)->at_boundary() && cell->face(f)->boundary_id() == id)
              {
                ff.reinit(cell, f);
                ff.get_function_gradients(s.solution, gradients);
                for (unsigned int q = 0; q < rule->size(); ++q)
                  flux += c->value(ff.quadrature_point(q)) * (gradients[q][s.first] * ff.normal_vector(q)) * ff.JxW(q);
                ++faces;
              }
      AssertThrow(faces > 0, ExcMessage("target '" + name + "': the mesh has no boundary face with id " +
                                        std::to_string(id)));
      return flux;
    }

    template <int dim>
    Point<dim> point_of(const Tree &entry)
    {
      Point<dim>   p;
      unsigned int d = 0;
      for (const auto &x : entry.get_child("at"))
        {
          AssertThrow(d < dim, ExcMessage("target '" + entry.get<std::string>("name") + "': the point has more than " +
                                          std::to_string(dim) + " coordinates"));
          p[d++] = x.second.get_value<double>();
        }
      return p;
    }

    template <int dim>
    double point(const Solved<dim> &s, const Tree &entry)
    {
      return s.quantity(s.sample(point_of<dim>(entry)), entry.get<int>("component"));
    }

    template <int dim>
    double maximum(const Solved<dim> &s, const Tree &entry)
    {
      const int   component = entry.get<int>("component");
      const auto &fe        = s.dofh.get_fe();
      // the support points of the unknown's base element: the nodes of the field
      const auto &base = fe.base_element(fe.component_to_base_index(s.first).first);
      FEValues<dim> fv(s.mapping, fe, Quadrature<dim>(base.get_unit_support_points()), update_values);
      std::vector<Vector<double>> values(base.get_unit_support_points().size(), Vector<double>(fe.n_components()));
      double best = -std::numeric_limits<double>::infinity();
      for (const auto &cell : s.dofh.active_cell_iterators())
        {
          fv.reinit(cell);
          fv.get_function_values(s.solution, values);
          for (const auto &v : values)
            best = std::max(best, s.quantity(v, component));
        }
      // the grid arrays hold the output field: a component's own array, or the field itself
      const auto &column = s.grid[component >= 0 ? component : 0];
      const Tree &settings = s.in.settings;
      const auto  inside   = settings.get<std::string>("grid_inside");
      AssertThrow(inside.size() == column.size(),
                  ExcMessage("settings.json grid_inside has " + std::to_string(inside.size()) +
                             " points; the evaluation grid has " + std::to_string(column.size())));
      for (std::size_t i = 0; i < column.size(); ++i)
        if (inside[i] == '1')
          best = std::max(best, column[i]);
      return best;
    }

    template <int dim>
    const std::map<std::string, TargetFn<dim>> &kinds()
    {
      static const std::map<std::string, TargetFn<dim>> registry = {
        {"boundary_flux", boundary_flux<dim>}, {"max", maximum<dim>}, {"mean", mean<dim>}, {"point", point<dim>}};
      return registry;
    }

    std::string json_string(const std::string &text)
    {
      std::string out = "\"";
      for (const char ch : text)
        {
          if (ch == '"' || ch == '\\')
            out += '\\';
          out += ch;
        }
      return out + "\"";
    }
  } // namespace

  template <int dim>
  void write_targets(const Inputs &in, const Mapping<dim> &mapping, const DoFHandler<dim> &dofh,
                     const Vector<double> &solution, unsigned int first_component, unsigned int n_components,
                     const Sampler<dim> &sample, const std::vector<std::vector<double>> &grid)
  {
    const Solved<dim>  s{in, mapping, dofh, solution, first_component, n_components, sample, grid};
    std::ostringstream text;
    text.precision(17);
    text << "{";
    bool first = true;
    for (const auto &item : in.settings.get_child("targets"))
      {
        const Tree &entry = item.second;
        const auto  name  = entry.get<std::string>("name");
        const auto  kind  = entry.get<std::string>("kind");
        const auto  it    = kinds<dim>().find(kind);
        if (it == kinds<dim>().end())
          {
            std::string valid;
            for (const auto &k : kinds<dim>())
              valid += (valid.empty() ? "" : ", ") + k.first;
            AssertThrow(false, ExcMessage("target '" + name + "': unknown kind '" + kind + "' (valid: " + valid + ")"));
          }
        const double value = it->second(s, entry);
        AssertThrow(std::isfinite(value), ExcMessage("target '" + name + "' (" + kind + ") is not finite"));
        text << (first ? "" : ", ") << json_string(name) << ": " << value;
        first = false;
      }
    text << "}\n";
    std::ofstream out("targets.json");
    out << text.str();
  }

  template void write_targets<2>(const Inputs &, const Mapping<2> &, const DoFHandler<2> &, const Vector<double> &,
                                 unsigned int, unsigned int, const Sampler<2> &,
                                 const std::vector<std::vector<double>> &);
  template void write_targets<3>(const Inputs &, const Mapping<3> &, const DoFHandler<3> &, const Vector<double> &,
                                 unsigned int, unsigned int, const Sampler<3> &,
                                 const std::vector<std::vector<double>> &);
} // namespace casekit
