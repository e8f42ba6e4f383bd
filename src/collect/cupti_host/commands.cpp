#include "commands.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <optional>

#include "cupti_call.hpp"
#include "diescope/core/error.hpp"
#include "host_api.hpp"

#include <cupti_version.h>

namespace diescope::collect::cupti_host {
namespace {

// Parses a subcommand's options; returns the exit code to leave with, or nullopt to go on.
std::optional<int> parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : core::kExitUsage;
  }
  return std::nullopt;
}

std::vector<std::string> read_metric_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw core::InputError(path, 0, "cannot be read", "give a file with one metric name per line");
  std::vector<std::string> names;
  std::string line;
  while (std::getline(in, line)) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    const auto last = line.find_last_not_of(" \t\r");
    names.push_back(line.substr(first, last - first + 1));
  }
  return names;
}

}  // namespace

int list_chips_main(int argc, char** argv) {
  CLI::App app{"Lists the chips CUPTI's profiler host API knows (no GPU needed).",
               "diescope-cupti list-chips"};
  if (auto code = parse(app, argc, argv)) return *code;
  for (const auto& chip : supported_chips()) std::printf("%s\n", chip.c_str());
  return 0;
}

int list_metrics_main(int argc, char** argv) {
  CLI::App app{"Lists a chip's PM-sampling base metrics, one per line: <kind> <name> (no GPU needed).",
               "diescope-cupti list-metrics"};
  std::string chip;
  std::string kind = "all";
  app.add_option("--chip", chip, "CUPTI chip name, e.g. GH100")->required();
  app.add_option("--kind", kind, "counter, ratio, throughput or all")
      ->check(CLI::IsMember({"counter", "ratio", "throughput", "all"}));
  if (auto code = parse(app, argc, argv)) return *code;
  HostObject object(chip, {});
  for (MetricType type : {MetricType::counter, MetricType::ratio, MetricType::throughput}) {
    if (kind != "all" && kind != metrics::to_string(type)) continue;
    for (const auto& name : object.base_metrics(type)) {
      std::printf("%s %s\n", std::string(metrics::to_string(type)).c_str(), name.c_str());
    }
  }
  return 0;
}

int passes_main(int argc, char** argv) {
  CLI::App app{
      "Counts the PM-sampling counter passes a metric set needs on a chip. Prints `passes N` (and a "
      "`rejected NAME` line for each name the chip does not know, exit code 3). With --device the count "
      "takes that GPU's counter availability into account (needs the driver and the GPU).",
      "diescope-cupti passes"};
  std::string chip;
  std::optional<int> device;
  bool each = false;
  std::string metrics_file;
  std::vector<std::string> metrics;
  app.add_option("--chip", chip, "CUPTI chip name, e.g. GH100");
  app.add_option("--device", device, "read the chip name and counter availability from this GPU");
  app.add_flag("--each", each, "also count each metric's passes on its own");
  app.add_option("--metrics-file", metrics_file, "one metric name per line, '#' starts a comment");
  app.add_option("metrics", metrics, "full metric names, e.g. dram__bytes.sum.pct_of_peak_sustained_elapsed");
  if (auto code = parse(app, argc, argv)) return *code;
  if (!metrics_file.empty()) {
    auto more = read_metric_file(metrics_file);
    metrics.insert(metrics.end(), more.begin(), more.end());
  }
  if (metrics.empty()) throw core::UsageError("no metrics given", "name them, or pass --metrics-file FILE");
  if (chip.empty() && !device)
    throw core::UsageError("no chip given", "pass --chip CHIP (e.g. GH100) or --device N");

  std::vector<std::uint8_t> availability;
  std::string source = "host-only";
  if (device) {
    DeviceCounters counters = read_device_counters(*device);
    if (!chip.empty() && chip != counters.chip) {
      throw core::UsageError(
          "--chip " + chip + " but GPU " + std::to_string(*device) + " is a " + counters.chip,
          "drop --chip, or name the GPU's own chip");
    }
    chip = counters.chip;
    availability = std::move(counters.availability);
    source =
        "device " + std::to_string(*device) + " (" + std::to_string(availability.size()) + " byte image)";
  }
  std::printf("chip %s\ncounter_availability %s\nmetrics %zu\n", chip.c_str(), source.c_str(),
              metrics.size());
  if (each) {
    for (const auto& metric : metrics) {
      PassCount one = count_passes(chip, {metric}, availability);
      if (one.rejected.empty()) std::printf("metric %zu %s\n", one.passes, metric.c_str());
    }
  }
  PassCount count = count_passes(chip, metrics, availability);
  for (const auto& name : count.rejected) std::printf("rejected %s\n", name.c_str());
  if (!count.rejected.empty()) {
    std::fflush(stdout);
    std::fprintf(stderr,
                 "diescope-cupti: error: %zu metric name%s unknown on %s\n  fix: see `diescope-cupti "
                 "list-metrics --chip %s`\n",
                 count.rejected.size(), count.rejected.size() == 1 ? " is" : "s are", chip.c_str(),
                 chip.c_str());
    return core::kExitInput;
  }
  std::printf("passes %zu\n", count.passes);
  return 0;
}

int version_main(int argc, char** argv) {
  CLI::App app{"Prints the CUPTI API version this program runs against.", "diescope-cupti version"};
  if (auto code = parse(app, argc, argv)) return *code;
  std::uint32_t version = 0;
  DIESCOPE_CUPTI_CHECK(cuptiGetVersion(&version));
  std::printf("cupti_api_version %u\n", version);
  return 0;
}

int device_chip_main(int argc, char** argv) {
  CLI::App app{"Prints a GPU's CUPTI chip name (needs the driver and the GPU).",
               "diescope-cupti device-chip"};
  int device = 0;
  app.add_option("--device", device, "GPU index")->required();
  if (auto code = parse(app, argc, argv)) return *code;
  std::printf("chip %s\n", read_device_counters(device).chip.c_str());
  return 0;
}

}  // namespace diescope::collect::cupti_host
