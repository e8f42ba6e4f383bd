// NVML GPM as a second chip source (docs/method.md#gpm-as-a-second-chip-source): the driver's own
// performance monitors on Hopper and later, read through the NVML adapter. GPM answers while another
// profiler holds the PM-sampling counters, needs no profiling permission, and blocks no one, so `run`
// and the agent fall back to it; a live view (`top`) can use GpmSampler directly.
//
// GPM gives a metric over the time between two samples. GpmSampler keeps the previous sample and, at
// every call, returns each metric over (previous, now]. The first pair is taken when it is built, so
// it knows which metrics this GPU answers before any column is recorded.
#pragma once

#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "diescope/collect/nvml.hpp"
#include "diescope/collect/unit_tables.hpp"
#include "diescope/recording/records.hpp"

namespace diescope::collect {

// Whether this GPU and driver can give GPM metrics; `why` says why not.
struct GpmSupport {
  bool supported = false;
  std::string why;
};
GpmSupport gpm_support(const NvmlDevice& device);

// The NVML identifier of a GPM metric named as NVML's header names it ("NVML_GPM_METRIC_FP32_UTIL");
// nullopt for a name diescope does not know.
std::optional<unsigned> gpm_metric_id(std::string_view name);

// The shortest interval GPM metrics are taken over (docs/method.md#gpm-as-a-second-chip-source): on
// the H200 the driver refreshes GPM's counters every 100 ms, and a pair of samples with no refresh
// between them reads 0 on every metric (or fails), whatever the load.
inline constexpr double kGpmMinIntervalMs = 100;
inline constexpr recording::TimeNs kGpmRefreshNs = 100 * recording::kNsPerMs;

// One unit as GPM sees it: a percent of peak, or NaN and why (GPM lacks the unit, or the driver did
// not answer its metric in this sample).
struct GpmUnitReading {
  std::string key;    // "fp32", "l2", ...
  std::string label;  // "FP32"
  double pct = std::numeric_limits<double>::quiet_NaN();
  std::string why;  // empty when read
};

// One GPM sample: the table's columns over (start_ns, end_ns].
struct GpmSample {
  recording::TimeNs start_ns = 0;
  recording::TimeNs end_ns = 0;
  ColumnValues columns;  // in the order of table()'s units, diagnostics and counts; NaN where unread
  std::vector<std::string> unread;  // "fp32: NVML_ERROR_..." for each column the driver did not answer
  // Every unit of the GPM table, then every unit GPM does not see (gpm_unit_gaps()), NaN with why.
  std::vector<GpmUnitReading> units;
};

class GpmSampler {
 public:
  // Keeps a copy of `device` (the Nvml it came from must outlive the sampler). Checks support, allocates two
  // GPM samples and takes the first pair `probe_ms` apart (so the table can leave out what this GPU does not
  // answer). Throws DeviceError naming the cause and the fix when GPM cannot be read. The first pair spans at
  // least two refreshes (250 ms), so a metric is left out only when the driver truly does not answer it.
  // `gpu_instance`: under MIG, read one GPU instance through nvmlGpmMigSampleGet
  // (docs/attribution.md#mig); nullopt reads the whole GPU.
  GpmSampler(const NvmlDevice& device, recording::TimeNs now_ns, double probe_ms = 250,
             std::optional<unsigned> gpu_instance = std::nullopt);
  ~GpmSampler();
  GpmSampler(const GpmSampler&) = delete;
  GpmSampler& operator=(const GpmSampler&) = delete;

  // The GPM table less the columns this GPU did not answer in the first pair.
  const UnitTable& table() const { return table_; }
  // The metrics left out of table(), with NVML's reason ("NVML_GPM_METRIC_IMMA_TENSOR_UTIL:
  // NVML_ERROR_NOT_SUPPORTED").
  const std::vector<std::string>& left_out() const { return left_out_; }

  // Takes a GPM sample stamped `now_ns` and returns the metrics since the previous one. nullopt when
  // the sample could not be taken (`last_error()` says why; the next call then starts a new pair), and
  // with no error when the pair is shorter than two refreshes and read nothing but 0 or failures:
  // no refresh fell inside it, so the pair is kept open and the next call spans both.
  std::optional<GpmSample> sample(recording::TimeNs now_ns);
  const std::string& last_error() const { return last_error_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  UnitTable table_;
  std::vector<std::string> left_out_;
  std::string last_error_;
};

}  // namespace diescope::collect
