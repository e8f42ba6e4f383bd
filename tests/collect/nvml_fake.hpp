// A fake NVML function table for CPU tests. One global state drives every fake call, so a test sets
// what "the driver" answers, builds an Nvml from fake_functions() and calls the real adapter.
#pragma once

#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nvml_abi.hpp"

namespace diescope::collect::fake_nvml {

namespace abi = nvml_abi;

struct State {
  int init_calls = 0;
  int shutdown_calls = 0;
  abi::Return init_result = abi::kSuccess;
  unsigned devices = 1;
  std::string name = "NVIDIA H200";
  std::string uuid = "GPU-00000000-1111-2222-3333-444444444444";  // GPU 0's; GPU N's ends in N (uuid_of)
  std::string driver = "580.159";
  int cc_major = 9, cc_minor = 0;
  abi::Return clock_result = abi::kSuccess;
  unsigned sm_mhz = 1980, mem_mhz = 3201;
  abi::Utilization util{97, 40};
  std::map<unsigned, unsigned> gpu_util_by_device;  // GPU-Util of GPU N where it differs from util.gpu
  abi::Return util_result = abi::kSuccess;
  unsigned long long reasons = 0x4;
  unsigned power_mw = 700000;
  unsigned draw_mw = 331500;  // nvmlDeviceGetPowerUsage
  abi::Return draw_result = abi::kSuccess;
  // Engines: result and value per key ("nvenc", "nvdec", "nvjpg").
  std::map<std::string, std::pair<abi::Return, unsigned>> engines = {
      {"nvenc", {abi::kErrorNotSupported, 0}}, {"nvdec", {abi::kSuccess, 12}}, {"nvjpg", {abi::kSuccess, 0}}};
  std::vector<unsigned> compute_pids = {};
  std::vector<unsigned> graphics_pids = {};
  abi::Return graphics_result = abi::kSuccess;
  // GPU-Util samples: everything the "driver" holds; calls return those newer than lastSeen.
  std::vector<abi::Sample> samples;
  int sample_type = abi::kValueUnsignedInt;
  std::vector<abi::Return> sample_results;  // consumed one per read; kSuccess when exhausted
  std::vector<unsigned long long> last_seen_args;
  // With samples_until_now, a read sees only the samples stamped up to its own time (the wall clock,
  // as NVML stamps them), as the driver's buffer fills; sample_read_us: the time of each read.
  bool samples_until_now = false;
  std::vector<unsigned long long> sample_read_us;
  // GPM: support, and each metric's value (or result) by NVML identifier; absent ids are NOT_SUPPORTED.
  bool gpm_supported = true;
  abi::Return gpm_sample_result = abi::kSuccess;
  abi::Return gpm_metrics_result = abi::kSuccess;
  std::map<unsigned, double> gpm_values = {{1, 97}, {2, 50},  {3, 20},  {4, 3},  {5, 1.5},
                                           {6, 0},  {7, 1},   {10, 4},  {11, 0}, {12, 46.3},
                                           {13, 0}, {20, 10}, {21, 20}, {60, 0}, {61, 0}};
  std::map<unsigned, abi::Return> gpm_metric_results;  // per metric; kSuccess when absent
  int gpm_allocated = 0;                               // live sample buffers
  int gpm_samples_taken = 0;
  int gpm_metrics_calls = 0;
  // Attribution: each pid's GPU instance (absent: MIG off), the energy counter, per-process samples
  // (calls return those newer than lastSeen) and MIG's GPU instances.
  std::map<unsigned, unsigned> pid_instance;
  unsigned long long energy_mj = 1'000'000;
  int energy_calls = 0;        // nvmlDeviceGetTotalEnergyConsumption
  int process_util_calls = 0;  // nvmlDeviceGetProcessUtilization
  abi::Return energy_result = abi::kSuccess;
  // The same counter as a field value (nvmlDeviceGetFieldValues, bound only where a test sets it):
  // the call's result, and the field's own.
  unsigned long long field_energy_mj = 1'000'000;
  abi::Return fields_result = abi::kSuccess;
  abi::Return field_energy_result = abi::kSuccess;
  int field_calls = 0;
  std::vector<abi::ProcessUtilizationSample> process_samples;
  abi::Return process_util_result = abi::kSuccess;
  unsigned mig_current = 0;
  struct Mig {
    unsigned gpu_instance_id;
    std::string profile;
    std::string uuid;
  };
  std::vector<Mig> mig;                 // one MIG device each
  std::vector<unsigned> gpm_mig_calls;  // the GPU instance of each nvmlGpmMigSampleGet
};

inline State& state() {
  static State s;
  return s;
}

// One object per GPU index, so that a call knows which GPU it is asked about (two-GPU stand-ins).
inline constexpr unsigned kMaxDevices = 8;
inline int device_objects[kMaxDevices] = {};
inline abi::Device handle(unsigned index = 0) {
  return reinterpret_cast<abi::Device>(&device_objects[index]);
}
inline unsigned index_of(abi::Device device) {
  for (unsigned i = 0; i < kMaxDevices; ++i)
    if (device == handle(i)) return i;
  return 0;
}
// GPU 0 has state().uuid; GPU N (N > 0) the same with its last digits replaced by N, so every GPU
// of a stand-in host has its own UUID.
inline std::string uuid_of(unsigned index) {
  std::string uuid = state().uuid;
  if (index == 0) return uuid;
  const std::string n = std::to_string(index);
  if (uuid.size() >= n.size()) uuid.replace(uuid.size() - n.size(), n.size(), n);
  return uuid;
}

// MIG devices: handles of their own, so name and UUID know which is asked.
inline int mig_objects[kMaxDevices] = {};
inline int mig_index(abi::Device device) {
  for (unsigned i = 0; i < kMaxDevices; ++i)
    if (device == reinterpret_cast<abi::Device>(&mig_objects[i])) return static_cast<int>(i);
  return -1;
}

inline void copy_string(const std::string& from, char* to, unsigned size) {
  std::strncpy(to, from.c_str(), size - 1);
  to[size - 1] = '\0';
}

inline abi::Return fake_init() {
  ++state().init_calls;
  return state().init_result;
}
inline abi::Return fake_shutdown() {
  ++state().shutdown_calls;
  return abi::kSuccess;
}
inline const char* fake_error_string(abi::Return code) {
  switch (code) {
    case abi::kErrorNotSupported:
      return "Not Supported";
    case abi::kErrorDriverNotLoaded:
      return "Driver Not Loaded";
    case abi::kErrorUnknown:
      return "Unknown Error";
    case abi::kErrorTimeout:
      return "Timeout";
    default:
      return "Some Error";
  }
}
inline abi::Return fake_count(unsigned* n) {
  *n = state().devices;
  return abi::kSuccess;
}
inline abi::Return fake_handle(unsigned index, abi::Device* out) {
  if (index >= state().devices || index >= kMaxDevices) return abi::kErrorInvalidArgument;
  *out = handle(index);
  return abi::kSuccess;
}
inline abi::Return fake_name(abi::Device device, char* buf, unsigned n) {
  if (const int m = mig_index(device); m >= 0) {
    copy_string(state().name + " MIG " + state().mig.at(static_cast<unsigned>(m)).profile, buf, n);
    return abi::kSuccess;
  }
  copy_string(state().name, buf, n);
  return abi::kSuccess;
}
inline abi::Return fake_uuid(abi::Device device, char* buf, unsigned n) {
  if (const int m = mig_index(device); m >= 0) {
    copy_string(state().mig.at(static_cast<unsigned>(m)).uuid, buf, n);
    return abi::kSuccess;
  }
  copy_string(uuid_of(index_of(device)), buf, n);
  return abi::kSuccess;
}
inline abi::Return fake_driver(char* buf, unsigned n) {
  copy_string(state().driver, buf, n);
  return abi::kSuccess;
}
inline abi::Return fake_util(abi::Device device, abi::Utilization* u) {
  if (state().util_result != abi::kSuccess) return state().util_result;
  *u = state().util;
  const auto own = state().gpu_util_by_device.find(index_of(device));
  if (own != state().gpu_util_by_device.end()) u->gpu = own->second;
  return abi::kSuccess;
}
inline abi::Return fake_clock(abi::Device, int type, unsigned* mhz) {
  if (state().clock_result != abi::kSuccess) return state().clock_result;
  *mhz = type == abi::kClockSm ? state().sm_mhz : state().mem_mhz;
  return abi::kSuccess;
}
inline abi::Return fake_cc(abi::Device, int* major, int* minor) {
  *major = state().cc_major;
  *minor = state().cc_minor;
  return abi::kSuccess;
}
inline abi::Return fake_reasons(abi::Device, unsigned long long* mask) {
  *mask = state().reasons;
  return abi::kSuccess;
}
inline abi::Return fake_draw(abi::Device, unsigned* mw) {
  *mw = state().draw_mw;
  return state().draw_result;
}

inline abi::Return fake_power(abi::Device, unsigned* mw) {
  *mw = state().power_mw;
  return abi::kSuccess;
}
// A GPU given GPU-Util 0 in gpu_util_by_device is idle: its engines read 0 too.
inline abi::Return engine(const char* key, abi::Device device, unsigned* pct, unsigned* period) {
  auto [rc, value] = state().engines.at(key);
  const auto own = state().gpu_util_by_device.find(index_of(device));
  if (own != state().gpu_util_by_device.end() && own->second == 0) value = 0;
  if (rc == abi::kSuccess) {
    *pct = value;
    *period = 167000;
  }
  return rc;
}
inline abi::Return fake_enc(abi::Device d, unsigned* p, unsigned* q) {
  return engine("nvenc", d, p, q);
}
inline abi::Return fake_dec(abi::Device d, unsigned* p, unsigned* q) {
  return engine("nvdec", d, p, q);
}
inline abi::Return fake_jpg(abi::Device d, unsigned* p, unsigned* q) {
  return engine("nvjpg", d, p, q);
}

// Fills 24-byte entries (the _v2/_v3 layout) as NVML does.
inline abi::Return fill_processes(const std::vector<unsigned>& pids, unsigned* count, void* infos) {
  if (pids.empty()) {
    *count = 0;
    return abi::kSuccess;
  }
  if (!infos || *count < pids.size()) {
    *count = static_cast<unsigned>(pids.size());
    return abi::kErrorInsufficientSize;
  }
  auto* entries = static_cast<abi::ProcessInfoV2*>(infos);
  for (std::size_t i = 0; i < pids.size(); ++i) {
    const auto gi = state().pid_instance.find(pids[i]);
    entries[i] = abi::ProcessInfoV2{pids[i], 1u << 20,
                                    gi == state().pid_instance.end() ? abi::kNoGpuInstance : gi->second, 0};
  }
  *count = static_cast<unsigned>(pids.size());
  return abi::kSuccess;
}
inline abi::Return fake_compute(abi::Device, unsigned* count, void* infos) {
  return fill_processes(state().compute_pids, count, infos);
}
inline abi::Return fake_graphics(abi::Device, unsigned* count, void* infos) {
  if (state().graphics_result != abi::kSuccess) return state().graphics_result;
  return fill_processes(state().graphics_pids, count, infos);
}

inline abi::Return fake_samples(abi::Device, int type, unsigned long long last_seen, int* value_type,
                                unsigned* count, abi::Sample* out) {
  if (type != abi::kGpuUtilizationSamples) return abi::kErrorInvalidArgument;
  auto& s = state();
  const auto now_us = static_cast<unsigned long long>(std::chrono::duration_cast<std::chrono::microseconds>(
                                                          std::chrono::system_clock::now().time_since_epoch())
                                                          .count());
  if (out == nullptr) {  // a size query consumes the scripted result for this read
    s.last_seen_args.push_back(last_seen);
    s.sample_read_us.push_back(now_us);
    if (!s.sample_results.empty()) {
      abi::Return rc = s.sample_results.front();
      s.sample_results.erase(s.sample_results.begin());
      if (rc != abi::kSuccess) return rc;
    }
  }
  std::vector<abi::Sample> newer;
  for (const auto& sample : s.samples) {
    if (sample.timeStamp > last_seen && (!s.samples_until_now || sample.timeStamp <= now_us))
      newer.push_back(sample);
  }
  if (newer.empty()) return abi::kErrorNotFound;
  *value_type = s.sample_type;
  if (out == nullptr) {
    *count = static_cast<unsigned>(newer.size());
    return abi::kSuccess;
  }
  if (*count < newer.size()) return abi::kErrorInsufficientSize;
  for (std::size_t i = 0; i < newer.size(); ++i) out[i] = newer[i];
  *count = static_cast<unsigned>(newer.size());
  return abi::kSuccess;
}

inline abi::Sample util_sample(unsigned long long ts_us, unsigned pct) {
  abi::Sample s{};
  s.timeStamp = ts_us;
  s.sampleValue.uiVal = pct;
  return s;
}

// GPM: a sample buffer is a counter of how many samples were taken when it was filled.
struct FakeGpmSample {
  int taken = 0;
};
inline abi::Return fake_gpm_support(abi::Device, abi::GpmSupport* support) {
  if (support->version != abi::kGpmSupportVersion) return abi::kErrorInvalidArgument;
  support->isSupportedDevice = state().gpm_supported ? 1 : 0;
  return abi::kSuccess;
}
inline abi::Return fake_gpm_alloc(abi::GpmSample* out) {
  ++state().gpm_allocated;
  *out = reinterpret_cast<abi::GpmSample>(new FakeGpmSample{});
  return abi::kSuccess;
}
inline abi::Return fake_gpm_free(abi::GpmSample sample) {
  --state().gpm_allocated;
  delete reinterpret_cast<FakeGpmSample*>(sample);
  return abi::kSuccess;
}
inline abi::Return fake_gpm_get(abi::Device, abi::GpmSample sample) {
  if (state().gpm_sample_result != abi::kSuccess) return state().gpm_sample_result;
  reinterpret_cast<FakeGpmSample*>(sample)->taken = ++state().gpm_samples_taken;
  return abi::kSuccess;
}
inline abi::Return fake_gpm_metrics(abi::GpmMetricsGet* get) {
  auto& s = state();
  ++s.gpm_metrics_calls;
  if (s.gpm_metrics_result != abi::kSuccess) return s.gpm_metrics_result;
  if (get->version != abi::kGpmMetricsGetVersion || get->numMetrics > abi::kGpmMetricMax) {
    return abi::kErrorInvalidArgument;
  }
  // NVML wants the older sample first.
  const int first = reinterpret_cast<FakeGpmSample*>(get->sample1)->taken;
  const int second = reinterpret_cast<FakeGpmSample*>(get->sample2)->taken;
  if (first == 0 || second <= first) return abi::kErrorInvalidArgument;
  for (unsigned i = 0; i < get->numMetrics; ++i) {
    abi::GpmMetric& m = get->metrics[i];
    auto result = s.gpm_metric_results.find(m.metricId);
    auto value = s.gpm_values.find(m.metricId);
    if (result != s.gpm_metric_results.end() && result->second != abi::kSuccess) {
      m.nvmlReturn = result->second;
    } else if (value == s.gpm_values.end()) {
      m.nvmlReturn = abi::kErrorNotSupported;
    } else {
      m.nvmlReturn = abi::kSuccess;
      m.value = value->second;
    }
  }
  return abi::kSuccess;
}

inline abi::Return fake_energy(abi::Device, unsigned long long* mj) {
  ++state().energy_calls;
  if (state().energy_result != abi::kSuccess) return state().energy_result;
  *mj = state().energy_mj;
  return abi::kSuccess;
}
inline abi::Return fake_field_values(abi::Device, int count, abi::FieldValue* values) {
  ++state().field_calls;
  if (state().fields_result != abi::kSuccess) return state().fields_result;
  for (int i = 0; i < count; ++i) {
    abi::FieldValue& v = values[i];
    if (v.fieldId != abi::kFieldTotalEnergy) {
      v.nvmlReturn = abi::kErrorNotSupported;
      continue;
    }
    v.nvmlReturn = state().field_energy_result;
    v.valueType = abi::kValueUnsignedLongLong;
    v.value.ullVal = state().field_energy_mj;
  }
  return abi::kSuccess;
}
inline abi::Return fake_process_util(abi::Device, abi::ProcessUtilizationSample* out, unsigned* count,
                                     unsigned long long last_seen) {
  ++state().process_util_calls;
  if (state().process_util_result != abi::kSuccess) return state().process_util_result;
  std::vector<abi::ProcessUtilizationSample> newer;
  for (const auto& e : state().process_samples)
    if (e.timeStamp > last_seen) newer.push_back(e);
  if (newer.empty()) return abi::kErrorNotFound;
  if (!out || *count < newer.size()) {
    *count = static_cast<unsigned>(newer.size());
    return abi::kErrorInsufficientSize;
  }
  for (std::size_t i = 0; i < newer.size(); ++i) out[i] = newer[i];
  *count = static_cast<unsigned>(newer.size());
  return abi::kSuccess;
}
inline abi::Return fake_mig_mode(abi::Device, unsigned* current, unsigned* pending) {
  *current = state().mig_current;
  *pending = state().mig_current;
  return abi::kSuccess;
}
inline abi::Return fake_max_mig(abi::Device, unsigned* count) {
  *count = 7;
  return abi::kSuccess;
}
inline abi::Return fake_mig_handle(abi::Device, unsigned index, abi::Device* out) {
  if (index >= state().mig.size()) return abi::kErrorNotFound;
  *out = reinterpret_cast<abi::Device>(&mig_objects[index]);
  return abi::kSuccess;
}
inline abi::Return fake_gi_id(abi::Device device, unsigned* id) {
  const int m = mig_index(device);
  if (m < 0) return abi::kErrorInvalidArgument;
  *id = state().mig.at(static_cast<unsigned>(m)).gpu_instance_id;
  return abi::kSuccess;
}
inline abi::Return fake_gpm_mig_get(abi::Device device, unsigned gpu_instance, abi::GpmSample sample) {
  state().gpm_mig_calls.push_back(gpu_instance);
  return fake_gpm_get(device, sample);
}

// A table with every call present, answering from state(). Resets the state.
inline std::shared_ptr<abi::Functions> fake_functions() {
  state() = State{};
  auto f = std::make_shared<abi::Functions>();
  f->init = fake_init;
  f->shutdown = fake_shutdown;
  f->error_string = fake_error_string;
  f->device_count = fake_count;
  f->handle_by_index = fake_handle;
  f->name = fake_name;
  f->uuid = fake_uuid;
  f->driver_version = fake_driver;
  f->utilization_rates = fake_util;
  f->clock_info = fake_clock;
  f->samples = fake_samples;
  f->compute_capability = fake_cc;
  f->clock_event_reasons = fake_reasons;
  f->enforced_power_limit = fake_power;
  f->power_usage = fake_draw;
  f->encoder_utilization = fake_enc;
  f->decoder_utilization = fake_dec;
  f->jpg_utilization = fake_jpg;
  f->compute_processes = fake_compute;
  f->graphics_processes = fake_graphics;
  f->process_entry_size = sizeof(abi::ProcessInfoV2);
  f->gpm_query_support = fake_gpm_support;
  f->gpm_sample_alloc = fake_gpm_alloc;
  f->gpm_sample_free = fake_gpm_free;
  f->gpm_sample_get = fake_gpm_get;
  f->gpm_metrics_get = fake_gpm_metrics;
  f->total_energy = fake_energy;
  f->process_utilization = fake_process_util;
  f->mig_mode = fake_mig_mode;
  f->max_mig_devices = fake_max_mig;
  f->mig_device_by_index = fake_mig_handle;
  f->gpu_instance_id = fake_gi_id;
  f->gpm_mig_sample_get = fake_gpm_mig_get;
  return f;
}

}  // namespace diescope::collect::fake_nvml
