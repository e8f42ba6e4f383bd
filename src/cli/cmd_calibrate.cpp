// `diescope calibrate [--quick] [--gpus N] [--output PATH] [--json] [--keep]`: parses the flags, runs
// calibrate::calibrate_gpu (calibrate/calibrate.hpp; docs/calibration.md) and prints what it hears
// and what it wrote: messages and the progress line on stderr, the summary (or the file) on stdout.
#include <unistd.h>

#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <fmt/core.h>

#include "command.hpp"
#include "options.hpp"
#include "diescope/calibrate/calibrate.hpp"
#include "diescope/calibrate/device_protocol.hpp"
#include "diescope/collect/nvml.hpp"

namespace diescope::cli {
namespace {

// The messages and the progress line: redrawn in place on a terminal, one plain line per step
// otherwise.
class StderrListener final : public calibrate::CalibrateListener {
 public:
  explicit StderrListener(bool terminal) : terminal_(terminal) {}
  void probing() override { std::cerr << "diescope: calibrate: checking the GPU and its counters\n"; }
  void planned(const calibrate::DeviceFacts& facts, const calibrate::CalibrationPlan& plan) override {
    std::cerr << "diescope: calibrate: " << calibrate::plan_text(facts, plan) << "\n";
  }
  void began(const calibrate::Progress& progress) override {
    if (terminal_)
      std::cerr << "\r\033[K" << calibrate::progress_text(progress, true) << std::flush;
    else
      std::cerr << calibrate::progress_text(progress, false) << "\n";
  }
  void device_done(double seconds) override {
    if (terminal_) std::cerr << "\r\033[K";
    std::cerr << fmt::format("diescope: calibrate: the device part took {:.1f} s\n", seconds);
  }

 private:
  bool terminal_;
};

struct CalibrateCliOptions {
  calibrate::CalibrateOptions run;
  bool json = false;  // print the file instead of the summary
  std::optional<int> gpu;
};

int calibrate_command(CalibrateCliOptions cli) {
  if (cli.gpu) cli.run.gpu = *cli.gpu;
  const std::unique_ptr<collect::Nvml> nvml = collect::Nvml::load();  // no driver: DeviceError with the fix
  StderrListener listener(::isatty(STDERR_FILENO) != 0);
  const calibrate::CalibrateResult result = calibrate::calibrate_gpu(cli.run, *nvml, listener);
  if (result.kept)
    std::cerr << "diescope: calibrate: kept the recording and the workload's lines in "
              << result.kept->string() << "\n";
  if (cli.json) {
    std::cout << calibrate::dump_calibration(result.file);
  } else {
    std::cout << calibrate::summary_text(result.file);
    std::cout << "\ncalibration file " << result.written.string() << "\n";
    if (result.file.quick)
      std::cout << "A quick check is a setup check, not a calibration: reports stay unvalidated.\n";
  }
  return 0;
}

std::function<int()> setup_calibrate(Args sub) {
  auto opt = std::make_shared<CalibrateCliOptions>();
  sub.flag(
      "--quick", opt->run.quick,
      "a setup check in under a minute: every SM and a quarter for 2 s per unit, STREAM with 3 repeats, no "
      "sweeps; reports treat it as unvalidated");
  sub.one_gpu(opt->gpu, "the GPU to calibrate, as nvidia-smi numbers it (default 0)");
  sub.text("--output", opt->run.output,
           "a .json file to write, or a folder (default $XDG_DATA_HOME/diescope/calibrations or "
           "~/.local/share/diescope/calibrations)",
           {"--out", "--report"})
      .type_name("PATH");
  sub.flag("--json", opt->json, "print the calibration file on stdout instead of the summary");
  sub.flag("--keep", opt->run.keep,
           "keep the counter recording and the kernels' own lines in a scratch folder");
  sub.footer(
      "Runs kernels whose work is known (FFMA, integer multiply-add, STREAM triad, bf16 tensor MMAs (wgmma "
      "on\n"
      "Hopper), DFMA, L1-hit global loads, L2 reads) on every SM and on fewer while the chip's counters are\n"
      "sampled, judges each unit (pass, fail, inconclusive) against that work, records each unit's reading "
      "at\n"
      "full load, times STREAM (and prints it against the DRAM peak the counter implies) and the\n"
      "device-model sweeps, and writes a calibration file that `diescope run` and `diescope report` find.\n"
      "Needs the GPU to itself: stop other profilers (ncu, nsys, DCGM profiling) first.\n\n"
      "Example: diescope calibrate --quick\n");
  return [opt]() { return calibrate_command(*opt); };
}

const CommandRegistrar registrar{
    Command{"calibrate", 40, setup_calibrate,
            "check each unit's counter against known work, measure the ceilings, fit the device model"}};

}  // namespace
}  // namespace diescope::cli
