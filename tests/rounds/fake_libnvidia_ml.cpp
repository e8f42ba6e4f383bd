// A stand-in libnvidia-ml.so.1 for command-line tests on machines without a GPU: exports the NVML
// symbols diescope's adapter binds and answers them from the fake table the run tests use
// (tests/collect/nvml_fake.hpp: one H200, GPU-Util 97% by polling, no sample buffer). Loaded only
// by a test that puts its folder first on LD_LIBRARY_PATH for the diescope it starts.
//
// A host of several GPUs, for the multi-GPU tests (docs/method.md#several-gpus), is set in the
// environment before diescope starts:
//   DIESCOPE_FAKE_NVML_GPUS=N            N GPUs (default 1), UUIDs ending in their index
//   DIESCOPE_FAKE_NVML_GPU_UTIL=A,B,...  GPU-Util of GPU 0, 1, ... in whole percents (default 97 each)
//   DIESCOPE_FAKE_NVML_NVLINK_MIBS=R     GPM's NVLink TX and RX rates, MiB/s (default 0)
//   DIESCOPE_FAKE_NVML_POWER_W=W         every GPU draws W watts: its energy counter is W x the
//                                        CLOCK_REALTIME seconds, in mJ (default: no energy counter)
#include <time.h>

#include <cstdlib>
#include <string>

#include "collect/nvml_fake.hpp"

namespace fake = diescope::collect::fake_nvml;
namespace abi = diescope::collect::nvml_abi;

namespace {

unsigned env_whole(const char* text, unsigned fallback) {
  if (text == nullptr || *text == '\0') return fallback;
  return static_cast<unsigned>(std::strtoul(text, nullptr, 10));
}

// Reads the environment once, at nvmlInit, into the fake table's state.
void configure_from_environment() {
  fake::State& s = fake::state();
  s.devices = env_whole(std::getenv("DIESCOPE_FAKE_NVML_GPUS"), 1);
  if (const char* utils = std::getenv("DIESCOPE_FAKE_NVML_GPU_UTIL")) {
    const std::string list = utils;
    unsigned index = 0;
    std::size_t from = 0;
    while (from <= list.size()) {
      const std::size_t comma = list.find(',', from);
      const std::string item =
          list.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
      if (!item.empty()) s.gpu_util_by_device[index] = env_whole(item.c_str(), s.util.gpu);
      ++index;
      if (comma == std::string::npos) break;
      from = comma + 1;
    }
  }
  const double nvlink = static_cast<double>(env_whole(std::getenv("DIESCOPE_FAKE_NVML_NVLINK_MIBS"), 0));
  s.gpm_values[60] = nvlink;  // NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC
  s.gpm_values[61] = nvlink;  // NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) abi::Return nvmlInit_v2() {
  configure_from_environment();
  return fake::fake_init();
}
__attribute__((visibility("default"))) abi::Return nvmlShutdown() {
  return fake::fake_shutdown();
}
__attribute__((visibility("default"))) const char* nvmlErrorString(abi::Return code) {
  return fake::fake_error_string(code);
}
__attribute__((visibility("default"))) abi::Return nvmlDeviceGetCount_v2(unsigned* n) {
  return fake::fake_count(n);
}
__attribute__((visibility("default"))) abi::Return nvmlDeviceGetHandleByIndex_v2(unsigned i, abi::Device* d) {
  return fake::fake_handle(i, d);
}
__attribute__((visibility("default"))) abi::Return nvmlDeviceGetName(abi::Device d, char* b, unsigned n) {
  return fake::fake_name(d, b, n);
}
__attribute__((visibility("default"))) abi::Return nvmlDeviceGetUUID(abi::Device d, char* b, unsigned n) {
  return fake::fake_uuid(d, b, n);
}
__attribute__((visibility("default"))) abi::Return nvmlSystemGetDriverVersion(char* b, unsigned n) {
  return fake::fake_driver(b, n);
}
__attribute__((visibility("default"))) abi::Return nvmlDeviceGetUtilizationRates(abi::Device d,
                                                                                 abi::Utilization* u) {
  return fake::fake_util(d, u);
}
__attribute__((visibility("default"))) abi::Return nvmlDeviceGetClockInfo(abi::Device d, int type,
                                                                          unsigned* mhz) {
  return fake::fake_clock(d, type, mhz);
}
__attribute__((visibility("default"))) abi::Return nvmlDeviceGetSamples(abi::Device d, int type,
                                                                        unsigned long long last,
                                                                        int* value_type, unsigned* count,
                                                                        abi::Sample* out) {
  return fake::fake_samples(d, type, last, value_type, count, out);
}
__attribute__((visibility("default"))) abi::Return nvmlDeviceGetCudaComputeCapability(abi::Device d, int* a,
                                                                                      int* b) {
  return fake::fake_cc(d, a, b);
}
__attribute__((visibility("default"))) abi::Return nvmlDeviceGetCurrentClocksEventReasons(
    abi::Device d, unsigned long long* m) {
  return fake::fake_reasons(d, m);
}
__attribute__((visibility("default"))) abi::Return nvmlDeviceGetEnforcedPowerLimit(abi::Device d,
                                                                                   unsigned* mw) {
  return fake::fake_power(d, mw);
}
__attribute__((visibility("default"))) abi::Return nvmlDeviceGetEncoderUtilization(abi::Device d, unsigned* p,
                                                                                   unsigned* q) {
  return fake::fake_enc(d, p, q);
}
__attribute__((visibility("default"))) abi::Return nvmlDeviceGetDecoderUtilization(abi::Device d, unsigned* p,
                                                                                   unsigned* q) {
  return fake::fake_dec(d, p, q);
}
__attribute__((visibility("default"))) abi::Return nvmlDeviceGetJpgUtilization(abi::Device d, unsigned* p,
                                                                               unsigned* q) {
  return fake::fake_jpg(d, p, q);
}
__attribute__((visibility("default"))) abi::Return nvmlDeviceGetComputeRunningProcesses_v3(abi::Device d,
                                                                                           unsigned* c,
                                                                                           void* infos) {
  return fake::fake_compute(d, c, infos);
}
__attribute__((visibility("default"))) abi::Return nvmlDeviceGetGraphicsRunningProcesses_v3(abi::Device d,
                                                                                            unsigned* c,
                                                                                            void* infos) {
  return fake::fake_graphics(d, c, infos);
}

__attribute__((visibility("default"))) abi::Return nvmlDeviceGetTotalEnergyConsumption(
    abi::Device, unsigned long long* mj) {
  const unsigned watts = env_whole(std::getenv("DIESCOPE_FAKE_NVML_POWER_W"), 0);
  if (watts == 0) return abi::kErrorNotSupported;
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  *mj = static_cast<unsigned long long>(now.tv_sec) * watts * 1000ULL +
        static_cast<unsigned long long>(now.tv_nsec) * watts / 1000000ULL;
  return abi::kSuccess;
}
__attribute__((visibility("default"))) abi::Return nvmlDeviceGetPowerUsage(abi::Device d, unsigned* mw) {
  return fake::fake_draw(d, mw);
}
__attribute__((visibility("default"))) abi::Return nvmlGpmQueryDeviceSupport(abi::Device d,
                                                                             abi::GpmSupport* support) {
  return fake::fake_gpm_support(d, support);
}
__attribute__((visibility("default"))) abi::Return nvmlGpmSampleAlloc(abi::GpmSample* out) {
  return fake::fake_gpm_alloc(out);
}
__attribute__((visibility("default"))) abi::Return nvmlGpmSampleFree(abi::GpmSample sample) {
  return fake::fake_gpm_free(sample);
}
__attribute__((visibility("default"))) abi::Return nvmlGpmSampleGet(abi::Device d, abi::GpmSample sample) {
  return fake::fake_gpm_get(d, sample);
}
__attribute__((visibility("default"))) abi::Return nvmlGpmMetricsGet(abi::GpmMetricsGet* get) {
  return fake::fake_gpm_metrics(get);
}

}  // extern "C"
