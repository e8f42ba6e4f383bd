#include <cuda_runtime.h>

#include <optional>

#include <fmt/format.h>

#include "diescope/harness/cuda.hpp"
#include "diescope/collect/nvml.hpp"

namespace diescope::harness {

namespace {

// NVML writes UUIDs as "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
std::string nvml_style_uuid(const cudaUUID_t& uuid) {
  std::string out = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", static_cast<unsigned char>(uuid.bytes[i]));
  }
  return out;
}

class NvmlClockMonitor final : public ClockMonitor {
 public:
  explicit NvmlClockMonitor(int cuda_device) {
    cudaDeviceProp prop{};
    int peak_khz = 0;
    if (cudaGetDeviceProperties(&prop, cuda_device) != cudaSuccess ||
        cudaDeviceGetAttribute(&peak_khz, cudaDevAttrClockRate, cuda_device) != cudaSuccess) {
      cudaGetLastError();
      why_ = fmt::format("CUDA device {} cannot be queried", cuda_device);
      return;
    }
    model_ = prop.name;
    peak_mhz_ = peak_khz / 1000.0;
    const std::string uuid = nvml_style_uuid(prop.uuid);
    try {
      nvml_ = collect::Nvml::load();
      for (int i = 0; i < nvml_->device_count() && !device_; ++i) {
        collect::NvmlDevice candidate = nvml_->device(i);
        if (candidate.identity().uuid == uuid) device_.emplace(candidate);
      }
      if (!device_) why_ = "NVML lists no GPU with UUID " + uuid;
    } catch (const std::exception& e) {
      why_ = std::string("NVML unavailable: ") + e.what();
    }
  }

  std::optional<double> sm_clock_mhz() override {
    if (!device_) return std::nullopt;
    const collect::NvmlReading r = device_->sm_clock_mhz();
    return r.ok() ? std::optional(r.value) : std::nullopt;
  }

  // Unknown (throttle detection off) unless NVML can read this device's clock.
  std::optional<double> reference_sm_clock_mhz() override {
    return device_ && peak_mhz_ > 0 ? std::optional(peak_mhz_) : std::nullopt;
  }

  std::string describe() const override {
    if (!why_.empty()) return why_;
    return fmt::format("NVML SM clock of {}, against its {:.0f} MHz peak", model_, peak_mhz_);
  }

 private:
  std::unique_ptr<collect::Nvml> nvml_;
  std::optional<collect::NvmlDevice> device_;
  std::string model_;
  double peak_mhz_ = 0;
  std::string why_;
};

}  // namespace

ClockMonitorFactory gpu_clock_monitor(int cuda_device) {
  return [cuda_device] { return std::make_unique<NvmlClockMonitor>(cuda_device); };
}

}  // namespace diescope::harness
