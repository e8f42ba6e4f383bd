// NVML, loaded at run time (dlopen "libnvidia-ml.so.1") behind one adapter, so diescope starts and
// says why where no driver is installed. No vendor types here: the C ABI lives in
// src/collect/nvml/nvml_abi.hpp, and tests drive the adapter with a fake function table.
//
// Readings that cannot be taken are NaN with a reason, never 0. Times are ns on CLOCK_REALTIME
// (NVML's own sample timestamps are microseconds since the epoch and are converted).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "diescope/core/error.hpp"
#include "diescope/recording/records.hpp"

namespace diescope::collect {

namespace nvml_abi {
struct Functions;
struct Library;
struct DeviceTag;
}  // namespace nvml_abi

// An NVML call that failed: the call, where it was made, NVML's name for the code and its own text.
class NvmlError : public core::DeviceError {
 public:
  NvmlError(std::string call, std::string location, int code, std::string code_name,
            const std::string& vendor_text);
  const std::string& call() const { return call_; }
  const std::string& location() const { return location_; }
  int code() const { return code_; }
  const std::string& code_name() const { return code_name_; }  // "NVML_ERROR_NOT_SUPPORTED"

 private:
  std::string call_;
  std::string location_;
  int code_;
  std::string code_name_;
};

// One reading: a value, or NaN and why not.
struct NvmlReading {
  double value = std::numeric_limits<double>::quiet_NaN();
  std::string why;  // empty when read
  bool ok() const { return why.empty(); }
};

// A video or JPEG engine NVML can report on: listed unless NVML says "not supported". That is not
// proof the chip has it: on the H200 NVML answers the encoder query with 0% although NVIDIA lists no
// NVENC for GH100 parts (bench/results/units/2026-11-29-h200-one-pass-check/), so such a column
// only ever reads 0.
struct NvmlEngine {
  std::string key;     // "nvenc", "nvdec", "nvjpg"
  std::string label;   // "Video encoder"
  std::string metric;  // catalog name, "nvenc__utilization.pct"
};

// What one nvmlDeviceGetSamples(GPU utilization) call gave.
struct UtilSamplesRead {
  enum class Status {
    ok,           // samples newer than the last seen one (possibly none)
    none,         // NVML said there are no samples newer than the last seen one (NVML_ERROR_NOT_FOUND)
    unsupported,  // the driver lacks the call, or the GPU does not keep samples (NOT_SUPPORTED)
    failed,       // any other failure
  };
  Status status = Status::ok;
  std::vector<recording::UtilSample>
      samples;                  // oldest first, ts in ns, source samples, pct in whole percents
  std::uint64_t newest_us = 0;  // the newest NVML timestamp seen (pass it back next time)
  std::string error;            // for unsupported and failed
};

// One entry of NVML's compute or graphics process list (docs/attribution.md#who-holds-a-gpu).
struct NvmlProcess {
  static constexpr unsigned kNoInstance = 0xFFFFFFFFu;  // MIG off (or a driver that does not say)
  unsigned pid = 0;
  unsigned gpu_instance_id = kNoInstance;
  bool compute = false;
  bool graphics = false;
  std::uint64_t used_memory_bytes = 0;  // 0 where NVML does not say
};

// What one nvmlDeviceGetProcessUtilization call gave: each process's SM percent over NVML's own
// sample periods, newer than the last seen timestamp.
struct ProcessUtilRead {
  struct Sample {
    unsigned pid = 0;
    std::uint64_t ts_us = 0;
    unsigned sm_pct = 0;
    unsigned mem_pct = 0;
  };
  enum class Status { ok, none, unsupported, failed };
  Status status = Status::ok;
  std::vector<Sample> samples;
  std::uint64_t newest_us = 0;
  std::string error;
};

// A GPU instance under MIG: its ID, its profile as nvidia-smi and dcgm-exporter name it ("1g.18gb")
// and the MIG device's UUID ("MIG-...").
struct MigInstance {
  unsigned gpu_instance_id = 0;
  std::string profile;
  std::string uuid;
};
struct MigState {
  enum class Mode { disabled, enabled, unknown };
  Mode mode = Mode::unknown;
  std::vector<MigInstance> instances;  // enabled: one per GPU instance, by ID
  std::string why;                     // unknown: why NVML could not say
};

class NvmlDevice;

// NVML initialised; shut down on destruction. Not copyable; devices borrow it.
class Nvml {
 public:
  // Loads the driver's library. Throws DeviceError naming the cause and the fix when there is no
  // driver, a required symbol is missing, or nvmlInit fails.
  static std::unique_ptr<Nvml> load();
  // Uses a given function table (tests inject fakes). Calls init; throws like load().
  explicit Nvml(std::shared_ptr<const nvml_abi::Functions> functions);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  int device_count() const;
  // Throws DeviceError for an index NVML does not list (and when it lists no GPU at all).
  NvmlDevice device(int index) const;
  std::string driver_version() const;
  std::string library_path() const;   // empty for an injected table
  std::string bound_symbols() const;  // "nvmlInit_v2 nvmlDeviceGetCount_v2 ..." (what load() chose)
  const nvml_abi::Functions& functions() const { return *functions_; }

 private:
  Nvml(std::unique_ptr<nvml_abi::Library> library);
  void init();
  std::unique_ptr<nvml_abi::Library> library_;
  std::shared_ptr<const nvml_abi::Functions> functions_;
};

class NvmlDevice {
 public:
  NvmlDevice(const Nvml& nvml, int index, nvml_abi::DeviceTag* handle);
  int index() const { return index_; }
  // For the parts of the adapter that call NVML themselves (GPM).
  nvml_abi::DeviceTag* handle() const { return handle_; }
  const nvml_abi::Functions& functions() const { return nvml_->functions(); }

  // Name, UUID, driver, compute capability. chip, l2_bytes and sm_count are left unknown (empty, 0):
  // NVML does not report them; the counter sampler does.
  recording::GpuIdentity identity() const;

  NvmlReading sm_clock_mhz() const;
  NvmlReading memory_clock_mhz() const;
  recording::ClockReading clocks(recording::TimeNs now_ns) const;
  recording::ThrottleReading throttle_reasons(
      recording::TimeNs now_ns) const;  // mask nullopt when NVML cannot say
  // The power record: the enforced limit and the draw in watts, the energy counter in millijoules;
  // each NaN when unreadable.
  recording::PowerLimitReading power_limit(recording::TimeNs now_ns) const;
  NvmlReading power_draw_w() const;     // nvmlDeviceGetPowerUsage, in watts
  NvmlReading polled_gpu_util() const;  // nvmlDeviceGetUtilizationRates().gpu
  UtilSamplesRead gpu_util_samples(std::uint64_t last_seen_us) const;

  // The engines this GPU reports on (probed once per call), and one reading each, in that order.
  std::vector<NvmlEngine> engines() const;
  NvmlReading engine_utilization(const NvmlEngine& engine) const;
  // Engine columns for RecordingMeta::engines (source nvml_engine, not counted by GPU-Util).
  std::vector<recording::ColumnDef> engine_columns() const;

  // Other processes holding the GPU: distinct pids on the compute and graphics lists; -1 when a list
  // could not be read.
  recording::ProcessReading processes(recording::TimeNs now_ns) const;
  // The distinct pids on the compute and graphics lists, ascending; nullopt when neither list could
  // be read. NVML's pids are the host's: in a container they may name no process of its own.
  std::optional<std::vector<unsigned>> process_ids() const;
  // Both lists merged per pid, with each entry's GPU instance; nullopt when neither could be read.
  std::optional<std::vector<NvmlProcess>> process_list() const;
  // NVML's energy counter, millijoules since the driver loaded (nvmlDeviceGetTotalEnergyConsumption);
  // NaN and why otherwise.
  NvmlReading total_energy_mj() const;
  NvmlReading total_energy_mj_by_call() const;  // the same
  // The same counter as the field value NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION (nvmlDeviceGetFieldValues),
  // which bench/run/nvml_call_cost.cpp times beside the call: the call costs about 3.5 ms of CPU on the
  // H200 (docs/footprint.md#the-table).
  NvmlReading total_energy_mj_by_field() const;
  // nvmlDeviceGetProcessUtilization: per-process samples newer than `last_seen_us`.
  ProcessUtilRead process_utilization(std::uint64_t last_seen_us) const;
  // MIG mode and, when on, its GPU instances (docs/attribution.md#mig).
  MigState mig() const;

 private:
  const nvml_abi::Functions& fn() const { return nvml_->functions(); }
  const Nvml* nvml_;
  int index_;
  nvml_abi::DeviceTag* handle_;
};

// GPU-Util as the method reads it (docs/method.md#reading-gpu-util-from-nvml): NVML's timestamped
// samples, switching to polling nvmlDeviceGetUtilizationRates for good, with the reason, when
//   - the GPU reports no samples: the very first read (everything NVML holds) is empty or NOT_FOUND,
//   - the driver lacks the call (symbol missing, or NOT_SUPPORTED / FUNCTION_NOT_FOUND),
//   - reading samples fails 3 times in a row spanning at least 7 s (a success resets the count),
//   - no new sample arrives for 10 s (counted from the reader's start, then from the last new sample).
// A polled reading is stamped with the poll's host time; an unreadable poll is not recorded.
// Samples stamped more than 1 s (NVML's longest averaging period) before `start_ns` are left out.
class GpuUtilReader {
 public:
  enum class Reason { none, no_samples, call_missing, repeated_failures, no_new_samples };
  static constexpr int kMaxFailures = 3;
  static constexpr recording::TimeNs kFailureSpanNs = 7 * recording::kNsPerSecond;
  static constexpr recording::TimeNs kStaleNs = 10 * recording::kNsPerSecond;

  GpuUtilReader(const NvmlDevice& device, recording::TimeNs start_ns);
  // Call with the host time, at least every few seconds (the driver keeps its samples a while):
  // `run` and the agent call it every 5 s at most, and at every poll once it polls
  // (docs/live-collection.md#policies). Appends new readings, oldest first.
  void read(recording::TimeNs now_ns, std::vector<recording::UtilSample>& out);

  bool polling() const { return reason_ != Reason::none; }
  Reason reason() const { return reason_; }
  const std::string& reason_text() const { return reason_text_; }  // for a Note with topic "gpu_util"
  recording::TimeNs switched_at_ns() const { return switched_at_ns_; }
  static std::string_view reason_name(Reason reason);

 private:
  void switch_to_polling(Reason reason, recording::TimeNs now_ns, const std::string& detail);
  void poll(recording::TimeNs now_ns, std::vector<recording::UtilSample>& out);

  const NvmlDevice* device_;
  recording::TimeNs start_ns_;
  bool first_read_ = true;
  std::uint64_t last_seen_us_ = 0;
  recording::TimeNs last_new_sample_ns_;
  int failures_ = 0;
  recording::TimeNs first_failure_ns_ = 0;
  Reason reason_ = Reason::none;
  std::string reason_text_;
  recording::TimeNs switched_at_ns_ = 0;
};

// `diescope units --nvml-probe`: what NVML reports for GPU `gpu` (identity, clocks, power limit,
// throttle reasons, engines, processes) and its GPU-Util readings over `seconds`, on stdout. Returns 0;
// throws DeviceError when NVML cannot be loaded.
int print_nvml_probe(int gpu, double seconds);

}  // namespace diescope::collect
