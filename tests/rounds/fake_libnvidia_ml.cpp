// A stand-in libnvidia-ml.so.1 for command-line tests on machines without a GPU: exports the NVML
// symbols diescope's adapter binds and answers them from the fake table the run tests use
// (tests/collect/nvml_fake.hpp: one H200, GPU-Util 97% by polling, no sample buffer). Loaded only
// by a test that puts its folder first on LD_LIBRARY_PATH for the diescope it starts.
#include "collect/nvml_fake.hpp"

namespace fake = diescope::collect::fake_nvml;
namespace abi = diescope::collect::nvml_abi;

extern "C" {

__attribute__((visibility("default"))) abi::Return nvmlInit_v2() {
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

}  // extern "C"
