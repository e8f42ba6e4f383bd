#include "diescope/workloads/options.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <functional>
#include <memory>

#include "diescope/core/error.hpp"

namespace diescope::workloads {

const std::vector<WorkloadInfo>& workload_catalog() {
  static const std::vector<WorkloadInfo> catalog = {
      {"ffma", "FP32 fused multiply-adds on a chosen number of SMs (one block per SM); counts FLOPs exactly"},
      {"stream", "STREAM copy and triad over large vectors; counts the bytes read and written"},
      {"gemm", "bf16 matrix product on the tensor cores through cuBLAS; counts 2*m*n*k FLOPs per call"},
      {"duty", "a kernel busy A ms of every P ms; reports the fraction of time it ran"},
  };
  return catalog;
}

bool is_workload(std::string_view name) {
  const auto& catalog = workload_catalog();
  return std::any_of(catalog.begin(), catalog.end(), [&](const WorkloadInfo& w) { return w.name == name; });
}

std::string overview_help(std::string_view program) {
  std::string text =
      std::string(program) +
      " NAME [OPTIONS]\n\n"
      "Bundled GPU workloads whose work is known. Each prints `diescope: measure start` and\n"
      "`diescope: measure stop` around its steady window (flushed at once), then (ffma, gemm)\n"
      "`diescope: measure flops FLOPS`, the window's FLOPs, and one JSON line with the work it\n"
      "counted, its CUDA-event time and the SM clock it ran at.\n\nWorkloads:\n";
  for (const auto& w : workload_catalog()) {
    text += "  " + std::string(w.name);
    text.append(w.name.size() < 8 ? 8 - w.name.size() : 1, ' ');
    text += std::string(w.summary) + "\n";
  }
  text += "\n`" + std::string(program) + " NAME --help` describes a workload's options.\n";
  return text;
}

namespace {

const std::string kMarkersNote =
    "\n\nOutput: `diescope: measure start` and `diescope: measure stop` on stdout around the measured\n"
    "window, each flushed at once; then one JSON line with the counted work, the event time and the\n"
    "SM clock. A human-readable summary goes to stderr.";

std::string number(double value) {
  return fmt::format("{:g}", value);
}

void add_common(CLI::App& app, CommonOptions& common) {
  app.add_option("--seconds", common.seconds, "length of the measured window in seconds")
      ->check(CLI::Range(0.01, 86400.0))
      ->capture_default_str();
  // --gpus as in every diescope command (this one takes one GPU); --gpu and --device are hidden aliases.
  const CLI::Validator gpu_index(
      [](std::string& text) -> std::string {
        const bool digits =
            !text.empty() && text.size() < 10 && text.find_first_not_of("0123456789") == std::string::npos;
        return digits ? std::string() : "'" + text + "' is not a GPU index (a whole number from 0)";
      },
      "");
  app.add_option("--gpus", common.device, "the GPU to run on, as CUDA numbers it")
      ->check(gpu_index)
      ->type_name("N")
      ->capture_default_str();
  for (const char* alias : {"--gpu", "--device"})
    app.add_option(alias, common.device)->check(gpu_index)->group("");
}

std::unique_ptr<CLI::App> make_app(const std::string& name, const std::string& description) {
  auto app = std::make_unique<CLI::App>(description + kMarkersNote, "diescope workload " + name);
  app->set_help_flag("-h,--help", "print this help and exit");
  return app;
}

// Builds the parser for one workload; `finish` runs checks that involve more than one option.
struct WorkloadParser {
  std::unique_ptr<CLI::App> app;
  std::function<WorkloadOptions()> finish;
};

WorkloadParser ffma_parser() {
  auto options = std::make_shared<FfmaOptions>();
  auto app =
      make_app("ffma",
               "FFMA on a chosen number of SMs. One block of 1024 threads per SM: each block asks for more\n"
               "than half of an SM's shared memory, so no SM can hold two, and the kernel checks the SM\n"
               "ids its blocks ran on. FLOPs = 2 x FMAs per thread x threads x launches. Launches are\n"
               "queued ahead so the GPU never waits on the host inside the window.");
  app->add_option("--sms", options->sms, "SMs to load (default: all of the device)")
      ->check(CLI::Range(1, 100000));
  add_common(*app, options->common);
  return {std::move(app), [options] { return WorkloadOptions{*options}; }};
}

WorkloadParser stream_parser() {
  auto options = std::make_shared<StreamOptions>();
  auto app =
      make_app("stream",
               "STREAM copy (b = a) and triad (a = b + s*c) on float vectors. Bytes counted per launch:\n"
               "copy 2 x N x 4, triad 3 x N x 4. GB/s over CUDA-event time. With --kernel all, each kernel\n"
               "gets its own window (start and stop markers) and its own JSON line, copy first.");
  auto kernel_name = std::make_shared<std::string>("copy");
  app->add_option("--kernel", *kernel_name, "copy, triad or all")
      ->check(CLI::IsMember({"copy", "triad", "all"}, CLI::ignore_case))
      ->capture_default_str();
  app->add_option("--elements", options->elements, "floats per vector (default 2^28, 1 GiB each)")
      ->check(CLI::Range(std::uint64_t{1024}, std::uint64_t{1} << 40))
      ->capture_default_str();
  add_common(*app, options->common);
  return {std::move(app), [options, kernel_name] {
            const std::string name = CLI::detail::to_lower(*kernel_name);
            options->kernels = name == "triad" ? std::vector{StreamKernel::triad}
                               : name == "all" ? std::vector{StreamKernel::copy, StreamKernel::triad}
                                               : std::vector{StreamKernel::copy};
            return WorkloadOptions{*options};
          }};
}

WorkloadParser gemm_parser() {
  auto options = std::make_shared<GemmOptions>();
  auto app =
      make_app("gemm",
               "bf16 GEMM on the tensor cores through cuBLAS (cublasGemmEx: bf16 A, B and C, FP32 compute).\n"
               "FLOPs = 2 x m x n x k per call; calls are queued ahead for the whole window.");
  for (auto [flag, field] :
       {std::pair{"--m", &options->m}, std::pair{"--n", &options->n}, std::pair{"--k", &options->k}}) {
    app->add_option(flag, *field, std::string("matrix dimension ") + (flag + 2))
        ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20))
        ->capture_default_str();
  }
  add_common(*app, options->common);
  return {std::move(app), [options] { return WorkloadOptions{*options}; }};
}

WorkloadParser duty_parser() {
  auto options = std::make_shared<DutyOptions>();
  auto app =
      make_app("duty",
               "A kernel on/off duty cycle: every period, a kernel keeps every SM busy for --on-ms, then\n"
               "the GPU idles until the next period. Reports the on-fraction measured with CUDA events.");
  app->add_option("--on-ms", options->on_ms, "busy time in each period, milliseconds")
      ->check(CLI::Range(0.1, 3600000.0))
      ->capture_default_str();
  app->add_option("--period-ms", options->period_ms, "period, milliseconds")
      ->check(CLI::Range(1.0, 3600000.0))
      ->capture_default_str();
  add_common(*app, options->common);
  return {std::move(app), [options]() -> WorkloadOptions {
            if (options->on_ms > options->period_ms) {
              throw core::UsageError("--on-ms " + number(options->on_ms) + " is longer than --period-ms " +
                                         number(options->period_ms),
                                     "give an on-time no longer than the period");
            }
            if (options->common.seconds < options->period_ms / 1000.0) {
              throw core::UsageError("--seconds is shorter than one period",
                                     "give --seconds at least --period-ms / 1000");
            }
            return *options;
          }};
}

WorkloadParser parser_for(std::string_view name) {
  if (name == "ffma") return ffma_parser();
  if (name == "stream") return stream_parser();
  if (name == "gemm") return gemm_parser();
  return duty_parser();
}

}  // namespace

ParsedCommand parse_command_line(const std::vector<std::string>& args) {
  ParsedCommand parsed;
  if (args.empty() || args.front() == "-h" || args.front() == "--help") {
    parsed.help = overview_help("diescope workload");
    return parsed;
  }
  parsed.name = args.front();
  if (!is_workload(parsed.name)) {
    throw core::UsageError("unknown workload '" + parsed.name + "'",
                           "choose one of: ffma, stream, gemm, duty");
  }
  WorkloadParser parser = parser_for(parsed.name);
  // CLI11 takes its arguments in reverse order.
  std::vector<std::string> rest(args.rbegin(), args.rend() - 1);
  try {
    parser.app->parse(rest);
  } catch (const CLI::CallForHelp&) {
    parsed.help = parser.app->help();
    return parsed;
  } catch (const CLI::ParseError& e) {
    throw core::UsageError(std::string(e.what()), "see `diescope workload " + parsed.name + " --help`");
  }
  parsed.options = parser.finish();
  return parsed;
}

}  // namespace diescope::workloads
