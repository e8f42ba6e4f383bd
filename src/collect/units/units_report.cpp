// `diescope units`' reports (docs/units.json, docs/method.md#units-and-recipes): the unit tables as text,
// and the check, through diescope-cupti, that each table fits one counter pass on every chip it lists.
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "diescope/collect/unit_tables.hpp"
#include "diescope/core/error.hpp"
#include "diescope/recording/format.hpp"

namespace diescope::collect {

namespace {

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

}  // namespace

int print_unit_tables() {
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

namespace {

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

}  // namespace

int print_pass_checks(const std::string& cupti, std::optional<int> device) {
  const std::string tool = require_cupti_tool(cupti);
  const ToolRun version = run_tool({tool, "version"}, std::chrono::seconds(60));
  fmt::print(
      "# diescope units --check-passes: each unit table's counters, counted together by CUPTI's profiler\n"
      "# host API (diescope-cupti passes) on every chip the table lists. One pass is required:\n"
      "# PM sampling reads only sets that fit one pass.\n");
  fmt::print("# CUPTI API version {}\n", field(version.out, "cupti_api_version").empty()
                                             ? std::string("unknown")
                                             : field(version.out, "cupti_api_version"));
  if (device)
    fmt::print("# counter availability from GPU {} (the real device)\n", *device);
  else
    fmt::print("# counter availability: none (host only, no GPU needed)\n");

  std::optional<std::string> device_chip;
  if (device) {
    const ToolRun run =
        run_tool({tool, "device-chip", "--device", std::to_string(*device)}, std::chrono::seconds(120));
    device_chip = field(run.out, "chip");
    if (run.exit_code != 0 || device_chip->empty()) {
      throw core::DeviceError(
          "could not read GPU " + std::to_string(*device) + "'s chip: " + run.err,
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
      if (device) {
        std::vector<std::string> argv = {tool, "passes", "--device", std::to_string(*device)};
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
  if (device && checked == 0) {
    fmt::print("GPU {} is a {}: no unit table lists it\n", *device, *device_chip);
    return 1;
  }
  // Chips CUPTI knows that no table covers: said plainly, not hidden.
  if (!device) {
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

}  // namespace diescope::collect
