// Shared pieces of casekit's deal.II programs: inputs (case_spec.json, the agent view, and
// settings.json, the private settings with expressions pre-printed for muParser), the mesh of the
// case's domain (written by casekit from its domain registry, ASCII gmsh), finite elements on
// simplices or hypercubes, parsed functions, Dirichlet/periodic constraints, values at points and
// the output on the evaluation grid (solution_grid.bin, row-major float64, plus meta.json and, for a
// case with target values, targets.json: targets.cc).
#pragma once

#include <deal.II/base/function_parser.h>
#include <deal.II/base/quadrature_lib.h>
#include <deal.II/base/thread_local_storage.h>
#include <deal.II/dofs/dof_handler.h>
#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/fe_simplex_p.h>
#include <deal.II/fe/fe_system.h>
#include <deal.II/fe/mapping_fe.h>
#include <deal.II/fe/mapping_q.h>
#include <deal.II/grid/grid_tools_cache.h>
#include <deal.II/grid/manifold.h>
#include <deal.II/grid/tria.h>
#include <deal.II/lac/affine_constraints.h>
#include <deal.II/lac/vector.h>

#include <boost/property_tree/ptree.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace casekit
{
  using namespace dealii;
  using Tree = boost::property_tree::ptree;

  struct BoundaryEntry
  {
    std::string              kind;  // dirichlet | neumann | robin
    types::boundary_id       id;
    std::vector<std::string> value; // components (muParser)
    std::string              laplacian;
    double                   alpha = 0;
  };

  struct Inputs
  {
    Tree                                   spec;     // case_spec.json
    Tree                                   settings; // settings.json
    std::string                            family;
    unsigned int                           dim;
    unsigned int                           degree;
    bool                                   simplex;
    bool                                   transient;
    double                                 t0 = 0, t_end = 0, dt = 0;
    unsigned int                           steps = 0;
    std::string                            scheme;
    std::vector<BoundaryEntry>             bcs;
    struct Periodic
    {
      types::boundary_id  source, target;
      std::vector<double> translation; // target point = source point + translation
    };
    std::vector<Periodic>                  periodic;
    double                                 newton_rtol;
    unsigned int                           newton_max;

    std::vector<std::string> expressions(const std::string &key) const;
    double number(const std::string &key) const;
    bool has(const std::string &key) const;
  };

  Inputs read_inputs();

  /// The chart (rho, theta) of an axis-aligned ellipse (a circle when the semi-axes are equal):
  /// p = center + (a rho cos theta, b rho sin theta); the curve is rho = 1.  Used in 2-D only.
  template <int dim>
  class EllipseChart : public ChartManifold<dim, dim, dim>
  {
  public:
    EllipseChart(const Point<dim> &center, const Point<dim> &semi_axes);
    std::unique_ptr<Manifold<dim, dim>> clone() const override;
    Point<dim> pull_back(const Point<dim> &p) const override;
    Point<dim> push_forward(const Point<dim> &chart) const override;

  private:
    static Tensor<1, dim> period();
    const Point<dim> center, semi_axes;
  };

  template <int dim>
  struct Discretization
  {
    Triangulation<dim>                  tria;
    // a curved simplex mesh: the P2 position field of MappingFEField (nodes on the exact curves);
    // declared before the mapping, which refers to them
    std::unique_ptr<FiniteElement<dim>> geometry_fe;
    std::unique_ptr<DoFHandler<dim>>    geometry_dofs;
    Vector<double>                      positions;
    std::unique_ptr<Mapping<dim>>       mapping;
    std::unique_ptr<Quadrature<dim>>    quadrature;
    std::unique_ptr<Quadrature<dim - 1>> face_quadrature;

    Discretization(const Inputs &in);
    std::unique_ptr<FiniteElement<dim>> scalar_fe(unsigned int degree) const;
    bool simplex;
  };

  /// A function of x, y[, z] and a "time" variable (t, or u for parsed_in_u), one muParser text per
  /// component.  A text is one muParser expression or, when it is too long for muParser's 20000
  /// characters, a chain "_c0 := <text>; _c1 := <text>; <final text>" (solvers/chain.py): every
  /// definition is evaluated in order, each by its own muParser over the variables and the earlier
  /// names, then the final text.  Without any chain it is deal.II's FunctionParser, as before.
  /// Safe to call from several threads: each thread has its own parsers (as FunctionParser).
  template <int dim>
  class Formula : public Function<dim>
  {
  public:
    Formula(const std::vector<std::string> &exprs, const std::string &time_name, double time = 0.0);
    ~Formula() override;
    double value(const Point<dim> &p, unsigned int component = 0) const override;
    void vector_value(const Point<dim> &p, Vector<double> &values) const override;
    void set_time(const double new_time) override;

  private:
    struct Chain
    {
      std::vector<std::string> names;  // one per definition
      std::vector<std::string> bodies; // one per definition, then the final text
    };
    struct Parsers; // one thread's muParsers of every chain (common.cc)
    Parsers &parsers() const;
    double evaluate(Parsers &mine, const Point<dim> &p, unsigned int component) const;

    std::unique_ptr<FunctionParser<dim>> plain; // every text one expression
    std::vector<Chain>                   chains;
    std::string                          time_name;
    mutable Threads::ThreadLocalStorage<std::shared_ptr<Parsers>> per_thread;
  };

  /// whether a muParser text is a chain of definitions (Formula)
  bool is_chain(const std::string &expr);

  /// the muParser text of -(expr), a chain's definitions kept
  std::string negated(const std::string &expr);

  template <int dim>
  std::unique_ptr<Formula<dim>> parsed(const std::vector<std::string> &exprs, double time = 0.0);

  /// whether a muParser expression names the time variable t (an identifier, not a letter of
  /// another name nor a number's exponent); in a chain, whether any definition or the final text
  /// does (the names "_c0" ... are identifiers of their own)
  bool depends_on_time(const std::string &expr);

  /// R(x, u) (no time dependence) as a parser over (x, y[, z]) whose "time" variable is named u:
  /// set_time(u) before value(x)
  template <int dim>
  std::unique_ptr<Formula<dim>> parsed_in_u(const std::string &expr);

  /// Dirichlet values of the given kind on each tagged part; periodic pairs.
  template <int dim>
  void make_constraints(const Inputs &in, const Mapping<dim> &mapping, const DoFHandler<dim> &dofh,
                        AffineConstraints<double> &constraints, double time, const ComponentMask &mask,
                        const std::string &key, bool homogeneous);

  /// Values of a finite element field at arbitrary points, robust at curved boundaries: the cell
  /// holding a point is located with the straight-sided mapping (an R-tree of cell bounding boxes)
  /// and the point mapped into it with the case's own (possibly curved) mapping; a point outside
  /// the mesh (between a chord and its curve, or outside the domain) takes the polynomial of the
  /// nearest cell extended to it.
  template <int dim>
  class Sampler
  {
  public:
    Sampler(const Mapping<dim> &mapping, const DoFHandler<dim> &dofh, const Vector<double> &solution);
    /// every component of the field at p; `located` (if given) says whether a cell holds p
    Vector<double> operator()(const Point<dim> &p, bool *located = nullptr) const;

  private:
    const Mapping<dim> &                mapping;
    const DoFHandler<dim> &             dofh;
    const Vector<double> &              solution;
    const bool                          simplex;
    std::unique_ptr<Mapping<dim>>       locator;
    std::unique_ptr<GridTools::Cache<dim>> cache;
  };

  /// Write the case's output field on the evaluation grid and meta.json (and targets.json when
  /// the case asks for target values: write_targets).
  /// `unknown` selects the components of `solution` that form the output's unknown.
  template <int dim>
  void write_output(const Inputs &in, const Mapping<dim> &mapping, const DoFHandler<dim> &dofh,
                    const Vector<double> &solution, unsigned int first_component, unsigned int n_components,
                    double wall_seconds, const std::map<std::string, double> &info);

  /// The case's target values (settings.json "targets", one entry per case_spec target) from the
  /// solution, written to targets.json ({name: value}, as casekit.solvers.targets.write does):
  /// `grid` holds the output arrays on the evaluation grid (row-major, x fastest), of which the
  /// points settings.json "grid_inside" marks '1' are inside the exact domain.
  template <int dim>
  void write_targets(const Inputs &in, const Mapping<dim> &mapping, const DoFHandler<dim> &dofh,
                     const Vector<double> &solution, unsigned int first_component, unsigned int n_components,
                     const Sampler<dim> &sample, const std::vector<std::vector<double>> &grid);

  double now();
} // namespace casekit
