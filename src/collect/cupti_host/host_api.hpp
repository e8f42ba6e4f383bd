// CUPTI's profiler host API, wrapped for diescope-cupti: chip catalogs and pass counts need no GPU.
// Only diescope-cupti links this (the main diescope binary must start where CUDA is absent).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "diescope/core/error.hpp"

namespace diescope::cupti_host {

// A CUPTI call that failed: the call, where it was made and CUPTI's own name for the result.
class CuptiError : public DeviceError {
 public:
  CuptiError(std::string call, std::string location, int code, std::string code_name);
  const std::string& call() const { return call_; }
  const std::string& location() const { return location_; }
  int code() const { return code_; }
  const std::string& code_name() const { return code_name_; }

 private:
  std::string call_;
  std::string location_;
  int code_;
  std::string code_name_;
};

// Throws CuptiError when `result` (a CUptiResult) is not success.
void check_cupti(int result, const char* call, const char* file, int line);
#define DS_CUPTI_CHECK(call) ::diescope::cupti_host::check_cupti(static_cast<int>(call), #call, __FILE__, __LINE__)

std::string cupti_result_name(int result);

enum class MetricKind { counter = 0, ratio = 1, throughput = 2 };
std::string_view metric_kind_name(MetricKind kind);

// CUPTI's own list of chips its host API knows.
std::vector<std::string> supported_chips();

// One PM-sampling host object for a chip; released on destruction.
class HostObject {
 public:
  // `availability` is a counter-availability image from a real device, or empty (host only).
  HostObject(std::string chip, const std::vector<std::uint8_t>& availability);
  ~HostObject();
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;

  std::vector<std::string> base_metrics(MetricKind kind) const;
  // Adds the metrics to this object's configuration; false when CUPTI refuses the set (an unknown name).
  bool add_metrics(const std::vector<std::string>& metrics);
  // Passes the configuration built so far needs.
  std::size_t passes() const;

 private:
  std::string chip_;
  void* object_ = nullptr;  // CUpti_Profiler_Host_Object*
};

struct PassCount {
  std::size_t passes = 0;
  std::vector<std::string> rejected;  // names the chip does not know; passes is 0 when any
};
// Passes `metrics` need together on `chip`. When CUPTI refuses the set, names each metric it refuses.
PassCount count_passes(const std::string& chip, const std::vector<std::string>& metrics,
                       const std::vector<std::uint8_t>& availability);

// A real device's chip name and counter-availability image (needs the driver and a GPU).
struct DeviceCounters {
  std::string chip;
  std::vector<std::uint8_t> availability;
};
DeviceCounters read_device_counters(int device_index);

}  // namespace diescope::cupti_host
