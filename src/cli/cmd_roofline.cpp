// `diescope roofline profile|plot`: per-kernel rooflines against the ceilings `diescope calibrate`
// measured (docs/roofline.md). The pipeline is roofline::profile and roofline::plot.
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "command.hpp"
#include "diescope/roofline/pipeline.hpp"
#include "diescope/roofline/profile.hpp"

namespace diescope::cli {
namespace {

// Whether `--` came after `roofline profile` on the command line: then the positionals are one
// command with its arguments, not several executables. CLI11 does not keep the separator, so it is
// read back from the kernel's copy of argv.
bool had_separator() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string arg;
  bool after_profile = false;
  while (std::getline(in, arg, '\0')) {
    if (arg == "profile") after_profile = true;
    if (after_profile && arg == "--") return true;
  }
  return false;
}

void add_table_options(Args& args, roofline::TableRequest& o) {
  args.option("--output", o.output,
              "the folder for roofline.csv, roofline.svg and roofline.html (default roofline)");
  args.option("--region", o.region, "keep only NVTX regions that match this regular expression");
  args.option("--kernel", o.kernel, "keep only kernels whose name matches this regular expression");
  args.option("--aggregate", o.aggregate,
              "none (one row per launch), sum (one per executable and region: work and time added) or "
              "dominant (per executable and region, the kernel with the most time)")
      .show_default();
  args.option("--color-by", o.color_by, "colour points by executable or region").show_default();
  args.option("--calibration", o.calibration,
              "a calibration file or folder (default: the folder `diescope calibrate` writes to)");
}

// The backends' settings as flags, each under its backend's heading in --help
// (docs/command-line.md#backend-options); -O NAME=VALUE is their old spelling, kept hidden.
struct BackendFlags {
  std::map<std::string, std::string> one;                // flags given once
  std::map<std::string, std::vector<std::string>> many;  // repeatable flags
  std::vector<std::string> old;                          // -O NAME=VALUE
  // NAME=VALUE for -O, --NAME=VALUE for a flag: parse_backend_settings words each as it was given.
  std::vector<std::string> items() const {
    std::vector<std::string> out = old;
    auto flag = [&out](const std::string& name, const std::string& value) {
      std::string item = "--";
      item.append(name).append("=").append(value);
      out.push_back(std::move(item));
    };
    for (const auto& [name, value] : one)
      if (!value.empty()) flag(name, value);
    for (const auto& [name, values] : many)
      for (const auto& v : values) flag(name, v);
    return out;
  }
};

void add_backend_flags(Args& args, BackendFlags& flags) {
  for (const roofline::BackendSetting& s : roofline::backend_settings()) {
    Opt opt = s.repeatable ? args.option("--" + s.name, flags.many[s.name], s.help).one_value_each()
                           : args.option("--" + s.name, flags.one[s.name], s.help);
    opt.type_name(s.value_name).group(roofline::backend_group(s));
  }
  args.option("-O", flags.old, "").one_value_each().group("");
}

std::function<int()> setup_roofline(Args sub) {
  auto profile = std::make_shared<roofline::ProfileRequest>();
  auto flags = std::make_shared<BackendFlags>();
  auto plot = std::make_shared<roofline::PlotRequest>();
  sub.require_subcommand();
  Args p = sub.subcommand("profile", "profile targets with Nsight Compute and plot their rooflines");
  p.option("--profiler", profile->profiler,
           "the profiler backend: ncu (Nsight Compute, per launch), range (diescope's own CUPTI range "
           "profiler, per NVTX region) or sampled (diescope's PM sampling with NVTX times, per NVTX "
           "region, FLOPs from --flop)")
      .show_default();
  p.option("--flop", profile->flops,
           "sampled: REGEX=VALUE[@PRECISION], the FLOPs of the regions whose executable[region] matches "
           "(first match wins; precision fp32 unless given, e.g. @tensor-bf16), repeatable")
      .one_value_each();
  p.option("--gpus", profile->gpus, "the GPUs to profile on, as ncu numbers them (default: every GPU)");
  p.option("--timeout", profile->timeout_s, "seconds each target may take under the profiler").show_default();
  p.flag("--force", profile->force, "profile again where a report is there already");
  p.flag("--skip-profile", profile->skip_profile, "use the reports already in the output folder");
  add_table_options(p, profile->table);
  add_backend_flags(p, *flags);
  p.option("targets", profile->targets, "EXECUTABLE... or -- CMD ARGS");
  p.footer(
      "Each target runs under `ncu --nvtx --clock-control none` with the table's metrics, address-space\n"
      "randomisation off (setarch -R) unless --aslr on, to DIR/<name>.ncu-rep. A target that fails or\n"
      "times out is named and skipped. --profiler range runs the program itself once per pass group\n"
      "with libdiescope-range.so injected (CUDA_INJECTION64_PATH): one row per NVTX region occurrence.\n"
      "--profiler sampled runs it under PM sampling with the library timing its NVTX regions: the kernel\n"
      "windows' time and DRAM bytes per region, FLOPs from --flop; with --iterations N a one-iteration\n"
      "run is subtracted (the program gets N as DIESCOPE_ITERATIONS and in place of {iterations}).\n"
      "docs/roofline.md says how every figure is made.\n\n"
      "Example: diescope roofline profile --output rl -- python3 train.py --steps 2\n");
  Args q = sub.subcommand("plot", "plot roofline tables again: concatenate, filter, aggregate");
  q.option("--from-csv", plot->csvs, "roofline.csv tables (deduplicated on executable and launch)");
  q.option("--from-export", plot->exports, "NAME=FILE: an `ncu --import --csv --page raw` export");
  q.option("--driver", plot->driver,
           "the driver the exports were made under, for the calibration lookup (default: this machine's)");
  add_table_options(q, plot->table);
  return [profile, flags, plot, p]() {
    if (p.parsed()) {
      roofline::ProfileRequest request = *profile;
      if (request.table.output.empty()) request.table.output = "roofline";
      request.settings = flags->items();
      request.one_command = had_separator();
      return roofline::profile(request);
    }
    return roofline::plot(*plot);
  };
}

const CommandRegistrar registrar{
    Command{"roofline", 60, setup_roofline,
            "per-kernel rooflines from Nsight Compute against the measured ceilings"}};

}  // namespace
}  // namespace diescope::cli
