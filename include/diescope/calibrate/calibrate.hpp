// `diescope calibrate` on a GPU, from the probe to the written file
// (docs/calibration.md#how-a-calibration-runs-on-the-gpu): calibrate_gpu probes the GPU and its
// counters, plans the steps, runs them in diescope-workload under the run machinery
// (collect/run.hpp) while the sampler child records the counters, measures each step from that
// recording, judges and fits (build_calibration) and writes the file atomically. The command line
// parses the flags, shows what the listener hears and prints the result.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "diescope/calibrate/calibration_file.hpp"
#include "diescope/calibrate/steps.hpp"

namespace diescope::collect {
class Nvml;
}

namespace diescope::calibrate {

struct CalibrateOptions {
  bool quick = false;
  int gpu = 0;                     // NVML index, as nvidia-smi numbers it
  std::string output;              // a .json file, a folder, or empty for default_calibration_dir()
  bool keep = false;               // keep the scratch folder: recordings, plan, the workload's lines
  std::filesystem::path workload;  // diescope-workload; empty: the one beside this executable
};

// Told about the calibration as it goes (the command line's messages and progress line).
class CalibrateListener {
 public:
  virtual ~CalibrateListener() = default;
  virtual void probing() {}                                            // the probe starts
  virtual void planned(const DeviceFacts&, const CalibrationPlan&) {}  // the long part starts
  virtual void began(const Progress&) {}                               // the workload begins a step or sweep
  virtual void device_done(double /*seconds*/) {}  // the workload ended; its outcome is checked next
};

struct CalibrateResult {
  CalibrationFile file;
  std::filesystem::path written;
  std::optional<std::filesystem::path> kept;  // the scratch folder, when options.keep
};

// Runs a calibration of options.gpu through `nvml`. Throws UsageError for a GPU index NVML does not
// list or an --output file that exists; DeviceError, before the long part, when the counters cannot
// be read or the probe fails, and after it when the workload fails; Error (exit code 3) when the
// workload's lines are malformed.
CalibrateResult calibrate_gpu(const CalibrateOptions& options, const collect::Nvml& nvml,
                              CalibrateListener& listener);

// Writes `file` atomically where `output` says: a name ending in .json that is not a folder is the
// file itself (its folder created; never over an existing file: UsageError); any other name is a
// folder; empty is default_calibration_dir() (UsageError when neither XDG_DATA_HOME nor HOME is
// set). In a folder the name is calibration_file_name()'s (write_calibration). Returns the path.
std::filesystem::path write_calibration_output(const CalibrationFile& file, const std::string& output);

}  // namespace diescope::calibrate
