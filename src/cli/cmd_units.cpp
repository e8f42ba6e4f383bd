// `diescope units`: the per-architecture unit tables. Prints them, writes docs/units.json, checks
// through diescope-cupti that each fits one counter pass on every chip it lists, and (with
// --nvml-probe) shows what NVML reports for a GPU.
#include <fmt/core.h>

#include <algorithm>
#include <optional>

#include "command.hpp"
#include "options.hpp"
#include "diescope/collect/nvml.hpp"
#include "diescope/collect/unit_tables.hpp"
#include "diescope/core/atomic_file.hpp"
#include "diescope/core/error.hpp"

namespace diescope::cli {
namespace {

using namespace diescope::collect;

struct UnitsOptions {
  std::string write_path;
  bool check = false;
  std::string cupti;
  std::optional<int> device;  // --gpus N: the GPU for --check-passes and --nvml-probe
  std::string counters_of;
  bool nvml_probe = false;
  double probe_seconds = 2;
};

std::function<int()> setup_units(Args sub) {
  auto options = std::make_shared<UnitsOptions>();
  sub.option("--write", options->write_path, "write the tables as JSON to this path (docs/units.json)");
  sub.flag("--check-passes", options->check,
           "check through CUPTI's host API that every table fits one counter pass on every chip it lists");
  sub.option("--cupti", options->cupti,
             "path to diescope-cupti (default: beside diescope, or $DIESCOPE_CUPTI)");
  sub.option("--counters", options->counters_of,
             "print one table's counters, one per line (e.g. hopper-gh100)");
  sub.flag("--nvml-probe", options->nvml_probe,
           "print what NVML reports for a GPU: identity, clocks, engines, processes, GPU-Util samples");
  sub.one_gpu(options->device,
              "the GPU for --check-passes (count with its own counter availability) or --nvml-probe "
              "(default 0)");
  sub.number("--probe-seconds", options->probe_seconds,
             "how long --nvml-probe reads GPU-Util, 0.1 to 60 s (default 2)");
  return [options]() -> int {
    if (options->device && !options->check && !options->nvml_probe)
      throw core::UsageError("--gpus needs --check-passes or --nvml-probe",
                             "add one of them, or drop --gpus");
    if (!(options->probe_seconds >= 0.1 && options->probe_seconds <= 60))
      throw core::UsageError(fmt::format("--probe-seconds {:g} is out of range", options->probe_seconds),
                             "give 0.1 to 60 seconds (default 2)");
    if (!options->counters_of.empty()) {
      const UnitTable* table = unit_table_by_name(options->counters_of);
      if (!table) {
        std::string names;
        for (const auto& t : unit_tables()) names += (names.empty() ? "" : ", ") + t.name;
        throw core::UsageError("no unit table named '" + options->counters_of + "'",
                               "choose one of: " + names);
      }
      for (const auto& m : table_metrics(*table)) fmt::print("{}\n", m);
      return 0;
    }
    int code = 0;
    bool did = false;
    if (!options->write_path.empty()) {
      core::write_file_atomically(options->write_path, units_json());
      fmt::print(stderr, "wrote {}\n", options->write_path);
      did = true;
    }
    if (options->check) {
      code = print_pass_checks(options->cupti, options->device);
      did = true;
    }
    if (options->nvml_probe) {
      code = std::max(code, print_nvml_probe(options->device.value_or(0), options->probe_seconds));
      did = true;
    }
    return did ? code : print_unit_tables();
  };
}

const CommandRegistrar registrar{Command{
    "units", 80, setup_units,
    "the per-architecture unit tables: print them, write docs/units.json, check each fits one counter pass"}};

}  // namespace
}  // namespace diescope::cli
