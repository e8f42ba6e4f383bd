// `diescope units`: the per-architecture unit tables. Prints them, writes docs/units.json, checks
// through diescope-cupti that each fits one counter pass on every chip it lists, and (with
// --nvml-probe) shows what NVML reports for a GPU.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fmt/core.h>
#include <optional>
#include <thread>

#include "command.hpp"
#include "options.hpp"
#include "diescope/collect/nvml.hpp"
#include "diescope/collect/unit_tables.hpp"
#include "diescope/core/atomic_file.hpp"
#include "diescope/core/clock.hpp"
#include "diescope/core/error.hpp"
#include "diescope/recording/format.hpp"

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

std::string recipe_text(const recording::ColumnDef& c) {
  if (c.recipe.combine == recording::UnitRecipe::Combine::mean) {
    return "mean(" + c.recipe.counters.at(0) + ", " + c.recipe.counters.at(1) + ")";
  }
  return c.recipe.counters.empty() ? std::string("?") : c.recipe.counters.front();
}

std::string flags_text(const recording::ColumnDef& c) {
  std::string out;
  for (recording::UnitFlag f : c.flags)
    out += (out.empty() ? " [" : ", ") + std::string(recording::unit_flag_text(f));
  return out.empty() ? out : out + "]";
}

int print_tables() {
  for (const auto& table : unit_tables()) {
    std::string chips;
    for (const auto& chip : table.chips) chips += (chips.empty() ? "" : " ") + chip;
    fmt::print("{} ({}; chips {})\n", table.name, table.architecture, chips);
    auto section = [](const char* title, const std::vector<recording::ColumnDef>& columns) {
      if (columns.empty()) return;
      fmt::print("  {}\n", title);
      for (const auto& c : columns) fmt::print("    {:<16} {}{}\n", c.label, recipe_text(c), flags_text(c));
    };
    section("units", table.units);
    section("diagnostics", table.diagnostics);
    section("counts", table.counts);
  }
  fmt::print("\nNotes and flags: docs/units.json (diescope units --write docs/units.json)\n");
  return 0;
}

std::string require_cupti_tool(const std::string& given) {
  std::string path = given.empty() ? find_diescope_cupti() : given;
  if (path.empty()) {
    throw core::DeviceError(
        "diescope-cupti was not found beside diescope (it holds the CUPTI code)",
        "build it (cmake --build BUILD --target diescope-cupti), point DIESCOPE_CUPTI at it, or pass "
        "--cupti PATH");
  }
  return path;
}

// The first line of `key value` output whose key matches, or empty.
std::string field(const std::string& out, const std::string& key) {
  std::size_t pos = 0;
  while (pos < out.size()) {
    std::size_t end = out.find('\n', pos);
    if (end == std::string::npos) end = out.size();
    const std::string line = out.substr(pos, end - pos);
    if (line.rfind(key + " ", 0) == 0) return line.substr(key.size() + 1);
    pos = end + 1;
  }
  return {};
}

int check_passes_command(const UnitsOptions& options) {
  const std::string tool = require_cupti_tool(options.cupti);
  const ToolRun version = run_tool({tool, "version"}, std::chrono::seconds(60));
  fmt::print(
      "# diescope units --check-passes: each unit table's counters, counted together by CUPTI's profiler\n"
      "# host API (diescope-cupti passes) on every chip the table lists. One pass is required:\n"
      "# PM sampling reads only sets that fit one pass.\n");
  fmt::print("# CUPTI API version {}\n", field(version.out, "cupti_api_version").empty()
                                             ? std::string("unknown")
                                             : field(version.out, "cupti_api_version"));
  if (options.device)
    fmt::print("# counter availability from GPU {} (the real device)\n", *options.device);
  else
    fmt::print("# counter availability: none (host only, no GPU needed)\n");

  std::optional<std::string> device_chip;
  if (options.device) {
    const ToolRun run = run_tool({tool, "device-chip", "--device", std::to_string(*options.device)},
                                 std::chrono::seconds(120));
    device_chip = field(run.out, "chip");
    if (run.exit_code != 0 || device_chip->empty()) {
      throw core::DeviceError(
          "could not read GPU " + std::to_string(*options.device) + "'s chip: " + run.err,
          "check that nvidia-smi lists the GPU, or drop --gpus to check on the host only");
    }
  }

  fmt::print("{:<16} {:<6} {:>8} {:>6}  {}\n", "table", "chip", "counters", "passes", "result");
  int checked = 0, failed = 0;
  std::vector<std::string> listed;
  for (const auto& table : unit_tables()) {
    const std::vector<std::string> metrics = table_metrics(table);
    for (const auto& chip : table.chips) {
      listed.push_back(chip);
      if (device_chip && chip != *device_chip) continue;
      PassCheck check;
      if (options.device) {
        std::vector<std::string> argv = {tool, "passes", "--device", std::to_string(*options.device)};
        argv.insert(argv.end(), metrics.begin(), metrics.end());
        const ToolRun run = run_tool(argv, std::chrono::seconds(120));
        check.chip = chip;
        check.metrics = metrics.size();
        if (auto p = field(run.out, "passes"); !p.empty()) check.passes = std::stoi(p);
        if (run.exit_code != 0) check.error = run.err;
      } else {
        check = check_passes(tool, chip, metrics);
      }
      ++checked;
      std::string result;
      if (check.fits()) {
        result = "fits one pass";
      } else {
        ++failed;
        if (!check.rejected.empty()) {
          result = "UNKNOWN COUNTERS:";
          for (const auto& r : check.rejected) result += " " + r;
        } else if (check.passes) {
          result = "DOES NOT FIT (" + std::to_string(*check.passes) + " passes)";
        } else {
          result = "CHECK FAILED: " + check.error;
          while (!result.empty() && result.back() == '\n') result.pop_back();
        }
      }
      fmt::print("{:<16} {:<6} {:>8} {:>6}  {}\n", table.name, chip, metrics.size(),
                 check.passes ? std::to_string(*check.passes) : std::string("-"), result);
    }
  }
  if (options.device && checked == 0) {
    fmt::print("GPU {} is a {}: no unit table lists it\n", *options.device, *device_chip);
    return 1;
  }
  // Chips CUPTI knows that no table covers: said plainly, not hidden.
  if (!options.device) {
    const ToolRun chips = run_tool({tool, "list-chips"}, std::chrono::seconds(60));
    std::string uncovered;
    std::size_t pos = 0;
    while (pos < chips.out.size()) {
      std::size_t end = chips.out.find('\n', pos);
      if (end == std::string::npos) end = chips.out.size();
      const std::string chip = chips.out.substr(pos, end - pos);
      if (!chip.empty() && std::find(listed.begin(), listed.end(), chip) == listed.end())
        uncovered += " " + chip;
      pos = end + 1;
    }
    if (!uncovered.empty()) fmt::print("chips CUPTI knows that no unit table lists:{}\n", uncovered);
  }
  if (failed > 0) {
    fmt::print("{} of {} table/chip checks failed\n", failed, checked);
    return 1;
  }
  fmt::print("all {} table/chip checks fit one pass\n", checked);
  return 0;
}

std::string reading_text(const NvmlReading& r, const char* unit) {
  return r.ok() ? fmt::format("{:g} {}", r.value, unit) : "n/a (" + r.why + ")";
}

int nvml_probe(const UnitsOptions& options) {
  auto nvml = Nvml::load();
  fmt::print("library {}\nsymbols {}\ndriver {}\ngpus {}\n", nvml->library_path(), nvml->bound_symbols(),
             nvml->driver_version(), nvml->device_count());
  NvmlDevice device = nvml->device(options.device.value_or(0));
  const recording::GpuIdentity id = device.identity();
  fmt::print("gpu {}: {} {} compute capability {}.{}\n", id.index, id.model, id.uuid,
             id.compute_capability / 10, id.compute_capability % 10);
  fmt::print("sm clock {}\nmemory clock {}\n", reading_text(device.sm_clock_mhz(), "MHz"),
             reading_text(device.memory_clock_mhz(), "MHz"));
  const recording::PowerLimitReading power = device.power_limit(core::realtime_ns());
  fmt::print("enforced power limit {:g} W\n", power.limit_w);
  const recording::ThrottleReading reasons = device.throttle_reasons(core::realtime_ns());
  if (reasons.mask)
    fmt::print("clock event reasons 0x{:x}\n", *reasons.mask);
  else
    fmt::print("clock event reasons n/a\n");
  const auto engines = device.engines();
  fmt::print("engines {}\n", engines.size());
  for (const auto& e : engines)
    fmt::print("  {} ({}): {}\n", e.key, e.label, reading_text(device.engine_utilization(e), "%"));
  const recording::ProcessReading processes = device.processes(core::realtime_ns());
  fmt::print("processes compute {} graphics {}\n", processes.compute, processes.graphics);
  fmt::print("polled gpu util {}\n", reading_text(device.polled_gpu_util(), "%"));

  const recording::TimeNs start = core::realtime_ns();
  GpuUtilReader reader(device, start);
  std::vector<recording::UtilSample> samples;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(options.probe_seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    reader.read(core::realtime_ns(), samples);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  fmt::print("gpu util over {:g} s: {} readings ({})\n", options.probe_seconds, samples.size(),
             reader.polling() ? "polled: " + reader.reason_text() : std::string("NVML samples"));
  recording::TimeNs previous = 0;
  for (const auto& s : samples) {
    fmt::print("  {:+.3f} s  {:g} %{}\n", static_cast<double>(s.ts_ns - start) / 1e9, s.pct,
               previous ? fmt::format("  (+{:.0f} ms)", static_cast<double>(s.ts_ns - previous) / 1e6) : "");
    previous = s.ts_ns;
  }
  return 0;
}

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
      code = check_passes_command(*options);
      did = true;
    }
    if (options->nvml_probe) {
      code = std::max(code, nvml_probe(*options));
      did = true;
    }
    return did ? code : print_tables();
  };
}

const CommandRegistrar registrar{Command{
    "units", 80, setup_units,
    "the per-architecture unit tables: print them, write docs/units.json, check each fits one counter pass"}};

}  // namespace
}  // namespace diescope::cli
