#include "common.h"

#include <deal.II/base/exceptions.h>
#include <deal.II/base/timer.h>
#include <deal.II/dofs/dof_tools.h>
#include <deal.II/fe/fe_values.h>
#include <deal.II/grid/grid_in.h>
#include <deal.II/grid/grid_tools.h>
#include <deal.II/grid/grid_tools_cache.h>
#include <deal.II/fe/mapping_fe_field.h>
#include <deal.II/numerics/rtree.h>
#include <deal.II/numerics/vector_tools.h>

#include <boost/geometry/index/rtree.hpp>
#include <boost/property_tree/json_parser.hpp>

#include <muParser.h>

#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>
#include <set>
#include <sstream>

namespace casekit
{
  double now()
  {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }

  static std::vector<std::string> strings(const Tree &node)
  {
    std::vector<std::string> out;
    if (node.empty())
      out.push_back(node.get_value<std::string>());
    else
      for (const auto &child : node)
        out.push_back(child.second.get_value<std::string>());
    return out;
  }

  std::vector<std::string> Inputs::expressions(const std::string &key) const
  {
    return strings(settings.get_child("expressions." + key));
  }

  double Inputs::number(const std::string &key) const
  {
    return settings.get<double>("numbers." + key);
  }

  bool Inputs::has(const std::string &key) const
  {
    return settings.get_child_optional("expressions." + key).has_value();
  }

  Inputs read_inputs()
  {
    Inputs in;
    boost::property_tree::read_json("case_spec.json", in.spec);
#ifdef CASEKIT_EMBEDDED_SETTINGS
    std::istringstream embedded(CASEKIT_EMBEDDED_SETTINGS);
    boost::property_tree::read_json(embedded, in.settings);
#else
    boost::property_tree::read_json("settings.json", in.settings);
#endif
    const Tree &s = in.settings;
    in.family = in.spec.get<std::string>("pde.type");
    in.dim = in.spec.get<unsigned int>("domain.dim");
    in.degree = s.get<unsigned int>("degree");
    in.simplex = s.get<bool>("simplex");
    in.transient = s.get<bool>("transient");
    in.scheme = s.get<std::string>("scheme", "crank_nicolson");
    in.newton_rtol = s.get<double>("newton_rtol", 1e-10);
    in.newton_max = s.get<unsigned int>("newton_max", 30);
    if (in.transient)
      {
        in.t0 = in.spec.get<double>("pde.time.t0");
        in.t_end = in.spec.get<double>("pde.time.t_end");
        in.steps = s.get<unsigned int>("steps");
        in.dt = (in.t_end - in.t0) / in.steps;
      }
    for (const auto &b : s.get_child("bc"))
      {
        BoundaryEntry e;
        e.kind = b.second.get<std::string>("kind");
        e.id = b.second.get<types::boundary_id>("id");
        e.value = strings(b.second.get_child("value"));
        e.laplacian = b.second.get<std::string>("laplacian", "");
        e.alpha = b.second.get<double>("alpha", 0.0);
        in.bcs.push_back(e);
      }
    if (auto p = s.get_child_optional("periodic"))
      for (const auto &pair : *p)
        {
          Inputs::Periodic v;
          v.source = pair.second.get<types::boundary_id>("source");
          v.target = pair.second.get<types::boundary_id>("target");
          for (const auto &x : pair.second.get_child("translation"))
            v.translation.push_back(x.second.get_value<double>());
          in.periodic.push_back(v);
        }
    return in;
  }

  /// How far a reference point lies outside the reference simplex or hypercube (0 inside).
  template <int dim>
  static double outside_reference_cell(const Point<dim> &r, const bool simplex)
  {
    double away = 0.0, sum = 0.0;
    for (unsigned int d = 0; d < dim; ++d)
      {
        away = std::max(away, -r[d]);
        if (!simplex)
          away = std::max(away, r[d] - 1.0);
        sum += r[d];
      }
    return simplex ? std::max(away, sum - 1.0) : away;
  }

  /// The reference point a (possibly curved) mapping takes to p, by Newton from `ref` with a
  /// finite-difference Jacobian of the forward map (deal.II 9.4's MappingFEField has no inverse
  /// on simplices); extends beyond the cell for points just outside it.
  template <int dim>
  static Point<dim> inverse_map(const Mapping<dim> &mapping, const typename Triangulation<dim>::active_cell_iterator &cell,
                                const Point<dim> &p, Point<dim> ref)
  {
    const double eps = 1e-7, tol = 1e-13 * cell->diameter();
    for (unsigned int it = 0; it < 30; ++it)
      {
        const Point<dim>     x = mapping.transform_unit_to_real_cell(cell, ref);
        const Tensor<1, dim> r = p - x;
        if (r.norm() <= tol)
          break;
        Tensor<2, dim> jacobian;
        for (unsigned int d = 0; d < dim; ++d)
          {
            Point<dim> q = ref;
            q[d] += eps;
            const Point<dim> xd = mapping.transform_unit_to_real_cell(cell, q);
            for (unsigned int e = 0; e < dim; ++e)
              jacobian[e][d] = (xd[e] - x[e]) / eps;
          }
        const Tensor<1, dim> step = invert(jacobian) * r;
        ref += step;
        if (step.norm() < 1e-14)
          break;
      }
    return ref;
  }

  template <int dim>
  EllipseChart<dim>::EllipseChart(const Point<dim> &center, const Point<dim> &semi_axes)
    : ChartManifold<dim, dim, dim>(period()), center(center), semi_axes(semi_axes)
  {}

  template <int dim>
  Tensor<1, dim> EllipseChart<dim>::period()
  {
    Tensor<1, dim> p;
    p[1] = 2 * numbers::PI;
    return p;
  }

  template <int dim>
  std::unique_ptr<Manifold<dim, dim>> EllipseChart<dim>::clone() const
  {
    return std::make_unique<EllipseChart<dim>>(center, semi_axes);
  }

  template <int dim>
  Point<dim> EllipseChart<dim>::pull_back(const Point<dim> &p) const
  {
    const double qx = (p[0] - center[0]) / semi_axes[0], qy = (p[1] - center[1]) / semi_axes[1];
    double theta = std::atan2(qy, qx);
    if (theta < 0)
      theta += 2 * numbers::PI;
    Point<dim> out = p;  // further coordinates (none in 2-D) pass through
    out[0] = std::hypot(qx, qy);
    out[1] = theta;
    return out;
  }

  template <int dim>
  Point<dim> EllipseChart<dim>::push_forward(const Point<dim> &c) const
  {
    Point<dim> out = c;
    out[0] = center[0] + semi_axes[0] * c[0] * std::cos(c[1]);
    out[1] = center[1] + semi_axes[1] * c[0] * std::sin(c[1]);
    return out;
  }

  template <int dim>
  Discretization<dim>::Discretization(const Inputs &in) : simplex(in.simplex)
  {
    GridIn<dim> grid_in;
    grid_in.attach_triangulation(tria);
#ifdef CASEKIT_EMBEDDED_MESH
    std::istringstream file(CASEKIT_EMBEDDED_MESH);
#else
    std::ifstream file(in.settings.get<std::string>("mesh"));
    AssertThrow(file, ExcMessage("cannot open the mesh file " + in.settings.get<std::string>("mesh")));
#endif
    grid_in.read_msh(file);
    // boundary faces on a curve of the domain (a circle or an axis-aligned ellipse) get that
    // curve's chart (manifold id k+1 for chart k), so a second-order mapping puts their midpoints
    // on the exact curve; the rest stays flat
    unsigned int curved = 0;
    if (dim == 2)
      if (auto charts = in.settings.get_child_optional("charts"))
        {
          unsigned int k = 0;
          for (const auto &c : *charts)
            {
              Point<dim> center, axes;
              unsigned int d = 0;
              for (const auto &x : c.second.get_child("center"))
                center[d++] = x.second.get_value<double>();
              d = 0;
              for (const auto &x : c.second.get_child("semi_axes"))
                axes[d++] = x.second.get_value<double>();
              const EllipseChart<dim> chart(center, axes);
              const types::manifold_id id = ++k;
              for (const auto &cell : tria.active_cell_iterators())
                for (const auto f : cell->face_indices())
                  if (cell->face(f)->at_boundary())
                    {
                      bool on = true;
                      for (const auto v : cell->face(f)->vertex_indices())
                        on = on && std::abs(chart.pull_back(cell->face(f)->vertex(v))[0] - 1.0) < 1e-6;
                      if (on)
                        {
                          cell->face(f)->set_manifold_id(id);
                          ++curved;
                        }
                    }
              tria.set_manifold(id, chart);
            }
        }
    // QGaussSimplex is implemented up to 4 points per direction (exact to degree 7)
    const unsigned int q = in.simplex ? std::min(in.degree + 2, 4u) : in.degree + 2;
    const unsigned int order = (curved > 0) ? in.settings.get<unsigned int>("geometry_order", 1) : 1;
    if (simplex && order > 1)
      {
        // MappingFE ignores manifolds in 9.4: build the P2 position field by hand, with the
        // mid-edge nodes of curved boundary faces moved onto their curve along its chart
        const MappingFE<dim> linear(FE_SimplexP<dim>(1));
        geometry_fe = std::make_unique<FESystem<dim>>(FE_SimplexP<dim>(2), dim);
        geometry_dofs = std::make_unique<DoFHandler<dim>>(tria);
        geometry_dofs->distribute_dofs(*geometry_fe);
        std::map<types::global_dof_index, Point<dim>> support;
        DoFTools::map_dofs_to_support_points(linear, *geometry_dofs, support);
        positions.reinit(geometry_dofs->n_dofs());
        std::vector<unsigned int>            component(geometry_dofs->n_dofs());
        std::vector<types::global_dof_index> dofs(geometry_fe->n_dofs_per_cell());
        for (const auto &cell : geometry_dofs->active_cell_iterators())
          {
            cell->get_dof_indices(dofs);
            for (unsigned int i = 0; i < dofs.size(); ++i)
              {
                component[dofs[i]] = geometry_fe->system_to_component_index(i).first;
                positions[dofs[i]] = support[dofs[i]][component[dofs[i]]];
              }
          }
        for (const auto &cell : geometry_dofs->active_cell_iterators())
          {
            for (const auto f : cell->face_indices())
              {
                const auto face = cell->face(f);
                if (!face->at_boundary() || face->manifold_id() == numbers::flat_manifold_id)
                  continue;
                const auto *chart = dynamic_cast<const EllipseChart<dim> *>(&tria.get_manifold(face->manifold_id()));
                if (chart == nullptr)
                  continue;
                std::vector<types::global_dof_index> face_dofs(geometry_fe->n_dofs_per_face(f));
                face->get_dof_indices(face_dofs);
                for (const auto dof : face_dofs)
                  {
                    Point<dim> q = chart->pull_back(support[dof]);
                    q[0] = 1.0;
                    positions[dof] = chart->push_forward(q)[component[dof]];
                  }
              }
          }
        mapping = std::make_unique<MappingFEField<dim, dim, Vector<double>>>(*geometry_dofs, positions);
        quadrature = std::make_unique<QGaussSimplex<dim>>(q);
        face_quadrature = std::make_unique<QGaussSimplex<dim - 1>>(q);
      }
    else if (simplex)
      {
        mapping = std::make_unique<MappingFE<dim>>(FE_SimplexP<dim>(1));
        quadrature = std::make_unique<QGaussSimplex<dim>>(q);
        face_quadrature = std::make_unique<QGaussSimplex<dim - 1>>(q);
      }
    else
      {
        mapping = std::make_unique<MappingQ<dim>>(order);
        quadrature = std::make_unique<QGauss<dim>>(q);
        face_quadrature = std::make_unique<QGauss<dim - 1>>(q);
      }
  }

  template <int dim>
  std::unique_ptr<FiniteElement<dim>> Discretization<dim>::scalar_fe(unsigned int degree) const
  {
    if (simplex)
      {
        AssertThrow(degree >= 1 && degree <= 2, ExcMessage("deal.II 9.4 has simplex Lagrange elements of degree 1 "
                                                           "and 2 only"));
        return std::make_unique<FE_SimplexP<dim>>(degree);
      }
    return std::make_unique<FE_Q<dim>>(degree);
  }

  bool depends_on_time(const std::string &expr)
  {
    const auto letter = [](char ch) { return std::isalpha(static_cast<unsigned char>(ch)) || ch == '_'; };
    const auto digit  = [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)) != 0; };
    std::size_t i = 0;
    while (i < expr.size())
      {
        if (digit(expr[i]) || expr[i] == '.')
          {  // a number, with its exponent (1e-5, 2.5E+3)
            while (i < expr.size() && (digit(expr[i]) || expr[i] == '.'))
              ++i;
            if (i < expr.size() && (expr[i] == 'e' || expr[i] == 'E'))
              {
                ++i;
                if (i < expr.size() && (expr[i] == '+' || expr[i] == '-'))
                  ++i;
                while (i < expr.size() && digit(expr[i]))
                  ++i;
              }
          }
        else if (letter(expr[i]))
          {
            const std::size_t start = i;
            while (i < expr.size() && (letter(expr[i]) || digit(expr[i])))
              ++i;
            if (expr.compare(start, i - start, "t") == 0)
              return true;
          }
        else
          ++i;
      }
    return false;
  }

  static std::string variables(unsigned int dim, const std::string &time_name)
  {
    std::string v = dim == 2 ? "x,y" : "x,y,z";
    return v + "," + time_name;
  }

  static std::string trimmed(const std::string &s)
  {
    const auto first = s.find_first_not_of(" \t\n");
    if (first == std::string::npos)
      return "";
    return s.substr(first, s.find_last_not_of(" \t\n") - first + 1);
  }

  // muParser has neither ';' nor ":=": only a chain (solvers/chain.py) holds them
  bool is_chain(const std::string &expr)
  {
    return expr.find(';') != std::string::npos;
  }

  std::string negated(const std::string &expr)
  {
    const auto last = expr.rfind(';');
    if (last == std::string::npos)
      return "-(" + expr + ")";
    return expr.substr(0, last + 1) + " -(" + trimmed(expr.substr(last + 1)) + ")";
  }

  namespace
  {
    // the functions deal.II's FunctionParser adds to muParser's own (mu_parser_internal.cc in 9.4),
    // so a text means the same in a chain as in one FunctionParser
    double rounded(double v) { return static_cast<double>(static_cast<int>(v + (v >= 0.0 ? 0.5 : -0.5))); }
    double mu_if(double c, double a, double b) { return rounded(c) != 0 ? a : b; }
    double mu_int(double v) { return rounded(v); }
    double mu_ceil(double v) { return std::ceil(v); }
    double mu_floor(double v) { return std::floor(v); }
    double mu_cot(double v) { return 1.0 / std::tan(v); }
    double mu_csc(double v) { return 1.0 / std::sin(v); }
    double mu_sec(double v) { return 1.0 / std::cos(v); }
    double mu_log(double v) { return std::log(v); }
    double mu_pow(double a, double b) { return std::pow(a, b); }
    double mu_erfc(double v) { return std::erfc(v); }

    [[noreturn]] void parse_error(const mu::ParserError &e, const std::string &what)
    {
      std::cerr << "Message:  <" << e.GetMsg() << ">\n"
                << "Formula:  <" << e.GetExpr().substr(0, 2000) << ">\n"
                << "Token:    <" << e.GetToken().substr(0, 2000) << ">\n"
                << "Position: <" << e.GetPos() << ">\n";
      AssertThrow(false, ExcMessage("muParser cannot read " + what + ": " + e.GetMsg()));
      std::abort();
    }
  } // namespace

  template <int dim>
  struct Formula<dim>::Parsers
  {
    std::array<double, dim + 1>                            vars{};   // x, y[, z], time
    std::vector<std::vector<double>>                       defined;  // per chain: its definitions' values
    std::vector<std::vector<std::unique_ptr<mu::Parser>>> parsers;  // per chain: definitions, then the final
  };

  template <int dim>
  Formula<dim>::Formula(const std::vector<std::string> &exprs, const std::string &time_name, double time)
    : Function<dim>(exprs.size(), time), time_name(time_name)
  {
    bool any_chain = false;
    for (const auto &e : exprs)
      any_chain = any_chain || is_chain(e);
    if (!any_chain)
      {
        plain = std::make_unique<FunctionParser<dim>>(exprs.size());
        plain->initialize(variables(dim, time_name), exprs, {{"pi", numbers::PI}}, true);
        plain->set_time(time);
        return;
      }
    for (const auto &e : exprs)
      {
        Chain c;
        std::size_t start = 0;
        for (auto end = e.find(';'); end != std::string::npos; start = end + 1, end = e.find(';', start))
          {
            const std::string piece = e.substr(start, end - start);
            const auto is = piece.find(":=");
            AssertThrow(is != std::string::npos, ExcMessage("a chain's definition without ':=': " + piece.substr(0, 200)));
            c.names.push_back(trimmed(piece.substr(0, is)));
            c.bodies.push_back(trimmed(piece.substr(is + 2)));
          }
        c.bodies.push_back(trimmed(e.substr(start)));
        chains.push_back(std::move(c));
      }
    // read (muParser parses on the first evaluation) every text now, so a wrong one fails at once
    Parsers &mine = parsers();
    for (unsigned int c = 0; c < chains.size(); ++c)
      evaluate(mine, Point<dim>(), c);
  }

  template <int dim>
  Formula<dim>::~Formula() = default;

  template <int dim>
  typename Formula<dim>::Parsers &Formula<dim>::parsers() const
  {
    std::shared_ptr<Parsers> &mine = per_thread.get();
    if (mine)
      return *mine;
    auto made = std::make_shared<Parsers>();
    const char *const coordinates[] = {"x", "y", "z"};
    made->defined.resize(chains.size());
    made->parsers.resize(chains.size());
    for (std::size_t k = 0; k < chains.size(); ++k)
      {
        const Chain &c = chains[k];
        made->defined[k].assign(c.names.size(), 0.0); // never resized again: the parsers hold addresses
        for (std::size_t i = 0; i < c.bodies.size(); ++i)
          {
            auto p = std::make_unique<mu::Parser>();
            try
              {
                p->DefineConst("pi", numbers::PI);
                for (unsigned int d = 0; d < dim; ++d)
                  p->DefineVar(coordinates[d], &made->vars[d]);
                p->DefineVar(time_name, &made->vars[dim]);
                for (std::size_t j = 0; j < i && j < c.names.size(); ++j)
                  p->DefineVar(c.names[j], &made->defined[k][j]);
                p->DefineFun("if", mu_if, true);
                p->DefineFun("int", mu_int, true);
                p->DefineFun("ceil", mu_ceil, true);
                p->DefineFun("floor", mu_floor, true);
                p->DefineFun("cot", mu_cot, true);
                p->DefineFun("csc", mu_csc, true);
                p->DefineFun("sec", mu_sec, true);
                p->DefineFun("log", mu_log, true);
                p->DefineFun("pow", mu_pow, true);
                p->DefineFun("erfc", mu_erfc, true);
                p->SetExpr(c.bodies[i]);
              }
            catch (const mu::ParserError &e)
              {
                parse_error(e, i < c.names.size() ? "the definition of " + c.names[i] : "a chain's final text");
              }
            made->parsers[k].push_back(std::move(p));
          }
      }
    mine = made;
    return *mine;
  }

  template <int dim>
  double Formula<dim>::evaluate(Parsers &mine, const Point<dim> &p, unsigned int component) const
  {
    for (unsigned int d = 0; d < dim; ++d)
      mine.vars[d] = p[d];
    mine.vars[dim] = this->get_time();
    auto &chain = mine.parsers[component];
    auto &defined = mine.defined[component];
    try
      {
        for (std::size_t j = 0; j < defined.size(); ++j)
          defined[j] = chain[j]->Eval();
        return chain.back()->Eval();
      }
    catch (const mu::ParserError &e)
      {
        parse_error(e, "a chain of component " + std::to_string(component));
      }
  }

  template <int dim>
  double Formula<dim>::value(const Point<dim> &p, unsigned int component) const
  {
    AssertIndexRange(component, this->n_components);
    if (plain)
      return plain->value(p, component);
    return evaluate(parsers(), p, component);
  }

  template <int dim>
  void Formula<dim>::vector_value(const Point<dim> &p, Vector<double> &values) const
  {
    AssertDimension(values.size(), this->n_components);
    if (plain)
      return plain->vector_value(p, values);
    Parsers &mine = parsers();
    for (unsigned int c = 0; c < this->n_components; ++c)
      values[c] = evaluate(mine, p, c);
  }

  template <int dim>
  void Formula<dim>::set_time(const double new_time)
  {
    Function<dim>::set_time(new_time);
    if (plain)
      plain->set_time(new_time);
  }

  template <int dim>
  std::unique_ptr<Formula<dim>> parsed(const std::vector<std::string> &exprs, double time)
  {
    return std::make_unique<Formula<dim>>(exprs, "t", time);
  }

  template <int dim>
  std::unique_ptr<Formula<dim>> parsed_in_u(const std::string &expr)
  {
    return std::make_unique<Formula<dim>>(std::vector<std::string>{expr}, "u");
  }

  /// Periodicity by support points: every DoF on a target part equals the DoF of the same
  /// component at (point - translation) on its source part.  (Matching points, not faces: it
  /// needs no face orientation, which deal.II 9.4 does not get right on simplex meshes.)
  template <int dim>
  static void add_periodicity(const Inputs &in, const Mapping<dim> &mapping, const DoFHandler<dim> &dofh,
                              AffineConstraints<double> &constraints, const ComponentMask &mask)
  {
    std::map<types::global_dof_index, Point<dim>> points;
    DoFTools::map_dofs_to_support_points(mapping, dofh, points);
    const auto &fe = dofh.get_fe();
    std::vector<unsigned int> component(dofh.n_dofs());
    {
      std::vector<types::global_dof_index> dofs(fe.n_dofs_per_cell());
      for (const auto &cell : dofh.active_cell_iterators())
        {
          cell->get_dof_indices(dofs);
          for (unsigned int i = 0; i < dofs.size(); ++i)
            component[dofs[i]] = fe.system_to_component_index(i).first;
        }
    }
    double scale = 0;
    for (const auto &[dof, p] : points)
      scale = std::max(scale, p.norm());
    const double tol = 1e-9 * std::max(scale, 1.0);
    auto key = [&](const Point<dim> &p, unsigned int c) {
      std::array<long long, dim + 1> k{};
      for (unsigned int d = 0; d < dim; ++d)
        k[d] = std::llround(p[d] / tol / 1000);
      k[dim] = c;
      return k;
    };
    for (const auto &pair : in.periodic)
      {
        const IndexSet source = DoFTools::extract_boundary_dofs(dofh, mask, {pair.source});
        const IndexSet target = DoFTools::extract_boundary_dofs(dofh, mask, {pair.target});
        std::map<std::array<long long, dim + 1>, types::global_dof_index> by_point;
        for (const auto dof : source)
          by_point[key(points.at(dof), component[dof])] = dof;
        unsigned int matched = 0;
        for (const auto dof : target)
          {
            Point<dim> p = points.at(dof);
            for (unsigned int d = 0; d < dim; ++d)
              p[d] -= pair.translation[d];
            auto it = by_point.find(key(p, component[dof]));
            AssertThrow(it != by_point.end(), ExcMessage("periodic boundary " + std::to_string(pair.target) +
                                                         ": a node has no partner on boundary " +
                                                         std::to_string(pair.source)));
            if (it->second == dof || constraints.is_constrained(dof))
              continue;
            constraints.add_line(dof);
            constraints.add_entry(dof, it->second, 1.0);
            ++matched;
          }
        AssertThrow(matched > 0, ExcMessage("no periodic nodes matched"));
      }
  }

  template <int dim>
  void make_constraints(const Inputs &in, const Mapping<dim> &mapping, const DoFHandler<dim> &dofh,
                        AffineConstraints<double> &constraints, double time, const ComponentMask &mask,
                        const std::string &key, bool homogeneous)
  {
    constraints.clear();
    DoFTools::make_hanging_node_constraints(dofh, constraints);
    if (!in.periodic.empty())
      // every component is periodic (pressure too); only Dirichlet data follow `mask`
      add_periodicity(in, mapping, dofh, constraints, ComponentMask(dofh.get_fe().n_components(), true));
    const unsigned int n = dofh.get_fe().n_components();
    const unsigned int first = mask.first_selected_component(n);
    for (const auto &b : in.bcs)
      {
        if (b.kind != "dirichlet")
          continue;
        std::vector<std::string> exprs(n, "0");
        if (!homogeneous)
          {
            if (key == "laplacian")
              exprs[first] = negated(b.laplacian);
            else
              for (unsigned int c = 0; c < b.value.size(); ++c)
                exprs[first + c] = b.value[c];
          }
        auto f = parsed<dim>(exprs, time);
        VectorTools::interpolate_boundary_values(mapping, dofh, b.id, *f, constraints, mask);
      }
    constraints.close();
  }

  template <int dim>
  Sampler<dim>::Sampler(const Mapping<dim> &mapping, const DoFHandler<dim> &dofh, const Vector<double> &solution)
    : mapping(mapping)
    , dofh(dofh)
    , solution(solution)
    , simplex(dofh.get_fe().reference_cell().is_simplex())
  {
    if (simplex)
      locator = std::make_unique<MappingFE<dim>>(FE_SimplexP<dim>(1));
    else
      locator = std::make_unique<MappingQ<dim>>(1);
    cache = std::make_unique<GridTools::Cache<dim>>(dofh.get_triangulation(), *locator);
  }

  template <int dim>
  Vector<double> Sampler<dim>::operator()(const Point<dim> &p, bool *located) const
  {
    // locate cells with the straight-sided mapping (fast), then map into the located cell with
    // the case's own (possibly curved) mapping
    const auto &boxes = cache->get_cell_bounding_boxes_rtree();
    std::vector<std::pair<BoundingBox<dim>, typename Triangulation<dim>::active_cell_iterator>> hits;
    typename Triangulation<dim>::active_cell_iterator cell = dofh.get_triangulation().end();
    Point<dim> ref;
    // the cells whose bounding boxes hold the point (an R-tree query), checked one by one
    // with the straight-sided mapping; deal.II's own search sweeps every cell of the mesh
    // for a point outside it (a minute per solve on a star whose grid is half outside)
    boxes.query(boost::geometry::index::intersects(p), std::back_inserter(hits));
    for (const auto &hit : hits)
      {
        try
          {
            Point<dim> r = locator->transform_real_to_unit_cell(hit.second, p);
            if (outside_reference_cell(r, simplex) > 1e-10)
              continue;
            if (&mapping != locator.get())
              r = inverse_map(mapping, hit.second, p, r);
            if (outside_reference_cell(r, simplex) > 1e-10)
              continue;
            cell = hit.second;
            ref = r;
            break;
          }
        catch (...)
          {
          }
      }
    if (located != nullptr)
      *located = cell != dofh.get_triangulation().end();
    if (cell == dofh.get_triangulation().end())
      {
        // not located (outside the straight-sided mesh between a chord and its curve, or
        // outside the domain): of the cells around the nearest vertex and their
        // neighbours, take the one whose (possibly curved) mapping puts the point nearest
        // to its reference cell and extend it there; points outside the domain are masked
        // by the evaluator.  The nearest vertex and the cells around a vertex come from
        // the cache (an R-tree and a vertex-to-cell map), not from sweeps over the mesh
        const auto &to_cells = cache->get_vertex_to_cell_map();
        std::vector<std::pair<Point<dim>, unsigned int>> nearest;
        cache->get_used_vertices_rtree().query(boost::geometry::index::nearest(p, 1), std::back_inserter(nearest));
        AssertThrow(!nearest.empty(), ExcMessage("a mesh without vertices"));
        std::set<typename Triangulation<dim>::active_cell_iterator> candidates;
        for (const auto &c : to_cells[nearest[0].second])
          for (const auto w : c->vertex_indices())
            for (const auto &n : to_cells[c->vertex_index(w)])
              candidates.insert(n);
        AssertThrow(!candidates.empty(), ExcMessage("a mesh vertex without cells"));
        cell = *candidates.begin();
        for (unsigned int d = 0; d < dim; ++d)
          ref[d] = simplex ? 1.0 / (dim + 1) : 0.5;
        double best = std::numeric_limits<double>::infinity();
        for (const auto &candidate : candidates)
          {
            try
              {
                Point<dim> r = locator->transform_real_to_unit_cell(candidate, p);
                if (&mapping != locator.get())
                  r = inverse_map(mapping, candidate, p, r);
                const double away = outside_reference_cell(r, simplex);
                if (away < best)
                  {
                    best = away;
                    cell = candidate;
                    ref = r;
                  }
              }
            catch (...)
              {
              }
          }
      }
    const auto &fe = dofh.get_fe();
    Quadrature<dim> q(std::vector<Point<dim>>{ref});
    FEValues<dim> fv(mapping, fe, q, update_values);
    fv.reinit(typename DoFHandler<dim>::active_cell_iterator(&dofh.get_triangulation(), cell->level(), cell->index(),
                                                              &dofh));
    std::vector<Vector<double>> values(1, Vector<double>(fe.n_components()));
    fv.get_function_values(solution, values);
    return values[0];
  }

  template <int dim>
  void write_output(const Inputs &in, const Mapping<dim> &mapping, const DoFHandler<dim> &dofh,
                    const Vector<double> &solution, unsigned int first_component, unsigned int n_components,
                    double wall_seconds, const std::map<std::string, double> &info)
  {
    const Tree &grid = in.spec.get_child("eval_grid");
    std::vector<double> bbox;
    for (const auto &v : grid.get_child("bbox"))
      bbox.push_back(v.second.get_value<double>());
    const unsigned int nx = grid.get<unsigned int>("nx"), ny = grid.get<unsigned int>("ny"),
                       nz = dim == 3 ? grid.get<unsigned int>("nz") : 1;
    auto axis = [&](unsigned int i, unsigned int n, unsigned int k) {
      return n == 1 ? bbox[2 * i] : bbox[2 * i] + (bbox[2 * i + 1] - bbox[2 * i]) * k / (n - 1.0);
    };
    const bool components = in.spec.get_child_optional("output.components").has_value();
    const unsigned int n_out = components ? n_components : 1;
    std::vector<std::vector<double>> out(n_out, std::vector<double>(std::size_t(nx) * ny * nz));

    const Sampler<dim> sample(mapping, dofh, solution);
    std::size_t idx = 0;
    for (unsigned int kz = 0; kz < nz; ++kz)
      for (unsigned int j = 0; j < ny; ++j)
        for (unsigned int i = 0; i < nx; ++i, ++idx)
          {
            Point<dim> p;
            p[0] = axis(0, nx, i);
            p[1] = axis(1, ny, j);
            if (dim == 3)
              p[2] = axis(2, nz, kz);
            const Vector<double> value = sample(p);
            if (components)
              for (unsigned int c = 0; c < n_components; ++c)
                out[c][idx] = value[first_component + c];
            else
              {
                double s = 0;
                for (unsigned int c = 0; c < n_components; ++c)
                  s += value[first_component + c] * value[first_component + c];
                out[0][idx] = n_components == 1 ? value[first_component] : std::sqrt(s);
              }
          }
    std::ofstream bin("solution_grid.bin", std::ios::binary);
    for (const auto &column : out)
      bin.write(reinterpret_cast<const char *>(column.data()), column.size() * sizeof(double));
    if (in.settings.get_child_optional("targets").has_value())
      write_targets<dim>(in, mapping, dofh, solution, first_component, n_components, sample, out);
    // meta.json by hand: property_tree would write every number as a string
    auto number = [](double v) {
      std::ostringstream os;
      os.precision(17);
      if (std::isfinite(v) && v == std::floor(v) && std::abs(v) < 1e15)
        os << static_cast<long long>(v);
      else
        os << v;
      return os.str();
    };
    std::ofstream meta("meta.json");
    meta << "{\"status\": \"ok\", \"wall_time_sec\": " << number(wall_seconds) << ", \"solver_info\": {";
    bool first = true;
    for (const auto &[k, v] : info)
      {
        meta << (first ? "" : ", ") << "\"" << k << "\": " << number(v);
        first = false;
      }
    meta << "}}\n";
  }

  template class Sampler<2>;
  template class Sampler<3>;
  template class EllipseChart<2>;
  template class EllipseChart<3>;
  template struct Discretization<2>;
  template struct Discretization<3>;
  template class Formula<2>;
  template class Formula<3>;
  template std::unique_ptr<Formula<2>> parsed<2>(const std::vector<std::string> &, double);
  template std::unique_ptr<Formula<3>> parsed<3>(const std::vector<std::string> &, double);
  template std::unique_ptr<Formula<2>> parsed_in_u<2>(const std::string &);
  template std::unique_ptr<Formula<3>> parsed_in_u<3>(const std::string &);
  template void make_constraints<2>(const Inputs &, const Mapping<2> &, const DoFHandler<2> &,
                                    AffineConstraints<double> &, double, const ComponentMask &,
                                    const std::string &, bool);
  template void make_constraints<3>(const Inputs &, const Mapping<3> &, const DoFHandler<3> &,
                                    AffineConstraints<double> &, double, const ComponentMask &,
                                    const std::string &, bool);
  template void write_output<2>(const Inputs &, const Mapping<2> &, const DoFHandler<2> &, const Vector<double> &,
                                unsigned int, unsigned int, double, const std::map<std::string, double> &);
  template void write_output<3>(const Inputs &, const Mapping<3> &, const DoFHandler<3> &, const Vector<double> &,
                                unsigned int, unsigned int, double, const std::map<std::string, double> &);
} // namespace casekit
