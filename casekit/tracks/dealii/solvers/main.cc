// casekit's deal.II calibration program: reads case_spec.json and settings.json (private
// settings with every expression pre-printed for muParser and boundary ids for the mesh file),
// solves with the solver the settings name, and writes solution_grid.bin and meta.json.
#include "common.h"

#include <deal.II/base/exceptions.h>

#include <exception>
#include <iostream>

namespace casekit
{
  template <int dim>
  void solve_scalar(const Inputs &in, double start);
  template <int dim>
  void solve_elasticity(const Inputs &in, double start);
  template <int dim>
  void solve_flow(const Inputs &in, double start);
  template <int dim>
  void solve_biharmonic(const Inputs &in, double start);
  template <int dim>
  void solve_wave(const Inputs &in, double start);
} // namespace casekit

int main()
{
  using namespace casekit;
  const double start = now();
  try
    {
      const Inputs      in     = read_inputs();
      const std::string solver = in.settings.get<std::string>("solver");
      if (solver == "scalar")
        in.dim == 2 ? solve_scalar<2>(in, start) : solve_scalar<3>(in, start);
      else if (solver == "elasticity")
        in.dim == 2 ? solve_elasticity<2>(in, start) : solve_elasticity<3>(in, start);
      else if (solver == "wave")
        in.dim == 2 ? solve_wave<2>(in, start) : solve_wave<3>(in, start);
      else if (solver == "biharmonic")
        in.dim == 2 ? solve_biharmonic<2>(in, start) : solve_biharmonic<3>(in, start);
      else if (solver == "flow")
        in.dim == 2 ? solve_flow<2>(in, start) : solve_flow<3>(in, start);
      else
        {
          std::cerr << "casekit_dealii: unknown solver '" << solver << "' (scalar, wave, biharmonic, elasticity, flow)" << std::endl;
          return 2;
        }
    }
  catch (const std::exception &exc)
    {
      std::cerr << "casekit_dealii: " << exc.what() << std::endl;
      return 1;
    }
  return 0;
}
