// CUPTI's profiler host API, wrapped for diescope-cupti: chip catalogs and pass counts need no GPU.
// Only diescope-cupti links this (the main diescope binary must start where CUDA is absent).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "diescope/core/error.hpp"
#include "diescope/metrics/name.hpp"

// A failing CUPTI call throws cupti::CuptiError (src/collect/cupti/cupti_call.hpp), a DeviceError.
namespace diescope::collect::cupti_host {

using metrics::MetricType;

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

  std::vector<std::string> base_metrics(MetricType type) const;
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

}  // namespace diescope::collect::cupti_host
