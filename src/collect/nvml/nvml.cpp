// The NVML adapter: every call goes through the function table, so a fake table tests it all.
#include "diescope/collect/nvml.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "nvml_abi.hpp"

namespace diescope::collect {
namespace abi = nvml_abi;
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string vendor_text(const abi::Functions& f, abi::Return code) {
  const char* text = f.error_string ? f.error_string(code) : nullptr;
  return text ? text : "";
}

std::string short_location(const char* file, int line) {
  std::string where = file;
  if (auto slash = where.rfind('/'); slash != std::string::npos) where = where.substr(slash + 1);
  return where + ":" + std::to_string(line);
}

void check(const abi::Functions& f, abi::Return code, const char* call, const char* file, int line) {
  if (code == abi::kSuccess) return;
  throw NvmlError(call, short_location(file, line), code, abi::return_name(code), vendor_text(f, code));
}
// Throws NvmlError naming the call, file:line and NVML's name for the result.
#define DS_NVML_CHECK(functions, call) check((functions), (call), #call, __FILE__, __LINE__)

// Why a reading is missing, in words.
std::string why_not(const abi::Functions& f, abi::Return code) {
  if (code == abi::kErrorNotSupported) return "not supported on this GPU";
  std::string text = vendor_text(f, code);
  return abi::return_name(code) + (text.empty() ? "" : " (" + text + ")");
}

std::string fix_for(int code) {
  switch (code) {
    case abi::kErrorDriverNotLoaded:
      return "load the NVIDIA kernel driver (nvidia-smi should list your GPU); in a container, start it with "
             "the "
             "GPU passed through (e.g. --gpus all)";
    case abi::kErrorNoPermission:
      return "run with permission to open /dev/nvidia*";
    case abi::kErrorGpuIsLost:
      return "the GPU fell off the bus: check nvidia-smi and the kernel log";
    case 18:
      return "the NVML library and the kernel driver differ in version: reboot, or reinstall the driver";
    default:
      return "check that nvidia-smi works on this machine";
  }
}

}  // namespace

NvmlError::NvmlError(std::string call, std::string location, int code, std::string code_name,
                     const std::string& text)
    : DeviceError(
          call + " failed at " + location + ": " + code_name + (text.empty() ? "" : " (" + text + ")"),
          fix_for(code)),
      call_(std::move(call)),
      location_(std::move(location)),
      code_(code),
      code_name_(std::move(code_name)) {}

// ---- Nvml ----

std::unique_ptr<Nvml> Nvml::load() {
  return std::unique_ptr<Nvml>(new Nvml(abi::load_library()));
}

Nvml::Nvml(std::unique_ptr<abi::Library> library) : library_(std::move(library)) {
  // The table lives in the library object: a non-owning pointer (aliasing an empty owner).
  functions_ = std::shared_ptr<const abi::Functions>(std::shared_ptr<void>(), &library_->functions);
  init();
}

Nvml::Nvml(std::shared_ptr<const abi::Functions> functions) : functions_(std::move(functions)) {
  init();
}

void Nvml::init() {
  const auto& f = *functions_;
  if (!f.init || !f.shutdown || !f.device_count || !f.handle_by_index) {
    throw core::DeviceError("the NVML function table lacks a required call", "update the NVIDIA driver");
  }
  const abi::Return rc = f.init();
  if (rc != abi::kSuccess) {
    throw NvmlError(f.init_symbol.empty() ? "nvmlInit_v2" : f.init_symbol, short_location(__FILE__, __LINE__),
                    rc, abi::return_name(rc), vendor_text(f, rc));
  }
}

Nvml::~Nvml() {
  if (functions_ && functions_->shutdown) functions_->shutdown();
  functions_.reset();  // before the library that owns the table goes
}

int Nvml::device_count() const {
  unsigned count = 0;
  DS_NVML_CHECK(*functions_, functions_->device_count(&count));
  return static_cast<int>(count);
}

NvmlDevice Nvml::device(int index) const {
  const int count = device_count();
  if (count == 0) {
    throw core::DeviceError(
        "NVML found no NVIDIA GPU on this machine",
        "check that nvidia-smi lists a GPU; in a container, pass the GPU through (e.g. --gpus all)");
  }
  if (index < 0 || index >= count) {
    throw core::DeviceError(
        "GPU index " + std::to_string(index) + " does not exist: NVML lists " + std::to_string(count) +
            " GPU" + (count == 1 ? " (index 0)" : "s (indexes 0 to " + std::to_string(count - 1) + ")"),
        "pick an index that nvidia-smi -L lists");
  }
  abi::Device handle = nullptr;
  DS_NVML_CHECK(*functions_, functions_->handle_by_index(static_cast<unsigned>(index), &handle));
  return NvmlDevice(*this, index, handle);
}

std::string Nvml::driver_version() const {
  char buffer[abi::kDriverBuffer] = {};
  DS_NVML_CHECK(*functions_, functions_->driver_version(buffer, sizeof buffer));
  return buffer;
}

std::string Nvml::library_path() const {
  return library_ ? library_->path : std::string();
}

std::string Nvml::bound_symbols() const {
  const auto& f = *functions_;
  std::string out;
  for (const std::string* s : {&f.init_symbol, &f.count_symbol, &f.handle_symbol, &f.reasons_symbol,
                               &f.compute_symbol, &f.graphics_symbol}) {
    if (s->empty()) continue;
    out += (out.empty() ? "" : " ") + *s;
  }
  return out;
}

// ---- NvmlDevice ----

NvmlDevice::NvmlDevice(const Nvml& nvml, int index, abi::DeviceTag* handle)
    : nvml_(&nvml), index_(index), handle_(handle) {}

recording::GpuIdentity NvmlDevice::identity() const {
  recording::GpuIdentity id;
  id.index = index_;
  char name[abi::kNameBuffer] = {};
  DS_NVML_CHECK(fn(), fn().name(handle_, name, sizeof name));
  id.model = name;
  char uuid[abi::kUuidBuffer] = {};
  DS_NVML_CHECK(fn(), fn().uuid(handle_, uuid, sizeof uuid));
  id.uuid = uuid;
  id.driver = nvml_->driver_version();
  int major = 0, minor = 0;
  if (fn().compute_capability && fn().compute_capability(handle_, &major, &minor) == abi::kSuccess) {
    id.compute_capability = major * 10 + minor;
  }
  abi::PciInfo pci{};
  if (fn().pci_info && fn().pci_info(handle_, &pci) == abi::kSuccess)
    id.pci_bus_id = std::string(pci.busId, strnlen(pci.busId, sizeof pci.busId));
  return id;  // chip, l2_bytes and sm_count stay unknown: NVML does not report them
}

NvmlReading NvmlDevice::sm_clock_mhz() const {
  unsigned mhz = 0;
  const abi::Return rc = fn().clock_info(handle_, abi::kClockSm, &mhz);
  if (rc != abi::kSuccess) return {kNaN, why_not(fn(), rc)};
  return {static_cast<double>(mhz), {}};
}

NvmlReading NvmlDevice::memory_clock_mhz() const {
  unsigned mhz = 0;
  const abi::Return rc = fn().clock_info(handle_, abi::kClockMem, &mhz);
  if (rc != abi::kSuccess) return {kNaN, why_not(fn(), rc)};
  return {static_cast<double>(mhz), {}};
}

recording::ClockReading NvmlDevice::clocks(recording::TimeNs now_ns) const {
  return recording::ClockReading{now_ns, sm_clock_mhz().value, memory_clock_mhz().value};
}

recording::ThrottleReading NvmlDevice::throttle_reasons(recording::TimeNs now_ns) const {
  recording::ThrottleReading reading{now_ns, std::nullopt};
  if (!fn().clock_event_reasons) return reading;
  unsigned long long mask = 0;
  if (fn().clock_event_reasons(handle_, &mask) == abi::kSuccess) reading.mask = mask;
  return reading;
}

recording::PowerLimitReading NvmlDevice::power_limit(recording::TimeNs now_ns) const {
  recording::PowerLimitReading reading{now_ns, kNaN};
  unsigned milliwatts = 0;
  if (fn().enforced_power_limit && fn().enforced_power_limit(handle_, &milliwatts) == abi::kSuccess) {
    reading.limit_w = milliwatts / 1000.0;
  }
  // Draw and the energy counter with the limit, so that every path that records the limit records
  // them too (docs/energy.md#what-is-recorded).
  reading.draw_w = power_draw_w().value;
  reading.energy_mj = total_energy_mj().value;
  return reading;
}

NvmlReading NvmlDevice::power_draw_w() const {
  if (!fn().power_usage) return {kNaN, "the driver lacks nvmlDeviceGetPowerUsage"};
  unsigned milliwatts = 0;
  const abi::Return rc = fn().power_usage(handle_, &milliwatts);
  if (rc != abi::kSuccess) return {kNaN, why_not(fn(), rc)};
  return {milliwatts / 1000.0, {}};
}

NvmlReading NvmlDevice::polled_gpu_util() const {
  abi::Utilization util{};
  const abi::Return rc = fn().utilization_rates(handle_, &util);
  if (rc != abi::kSuccess) return {kNaN, why_not(fn(), rc)};
  return {static_cast<double>(util.gpu), {}};
}

namespace {

double sample_value(int type, const abi::Value& v) {
  switch (type) {
    case abi::kValueDouble:
      return v.dVal;
    case abi::kValueUnsignedInt:
      return v.uiVal;
    case abi::kValueUnsignedLong:
      return static_cast<double>(v.ulVal);
    case abi::kValueUnsignedLongLong:
      return static_cast<double>(v.ullVal);
    case abi::kValueSignedLongLong:
      return static_cast<double>(v.sllVal);
    case abi::kValueSignedInt:
      return v.siVal;
    case abi::kValueUnsignedShort:
      return v.usVal;
    default:
      return kNaN;
  }
}

}  // namespace

UtilSamplesRead NvmlDevice::gpu_util_samples(std::uint64_t last_seen_us) const {
  UtilSamplesRead read;
  read.newest_us = last_seen_us;
  if (!fn().samples) {
    read.status = UtilSamplesRead::Status::unsupported;
    read.error = "the driver's NVML has no nvmlDeviceGetSamples";
    return read;
  }
  auto classify = [&](abi::Return rc) {
    if (rc == abi::kErrorNotFound) {
      read.status = UtilSamplesRead::Status::none;
    } else if (rc == abi::kErrorNotSupported || rc == abi::kErrorFunctionNotFound) {
      read.status = UtilSamplesRead::Status::unsupported;
      read.error = "nvmlDeviceGetSamples: " + why_not(fn(), rc);
    } else {
      read.status = UtilSamplesRead::Status::failed;
      read.error = "nvmlDeviceGetSamples: " + why_not(fn(), rc);
    }
    return read;
  };
  // First ask how many there are, then fetch; NVML may add samples in between, so allow one retry.
  int type = abi::kValueUnsignedInt;
  unsigned count = 0;
  abi::Return rc = fn().samples(handle_, abi::kGpuUtilizationSamples, last_seen_us, &type, &count, nullptr);
  if (rc != abi::kSuccess) return classify(rc);
  if (count == 0) {
    read.status = UtilSamplesRead::Status::none;
    return read;
  }
  std::vector<abi::Sample> buffer;
  for (int attempt = 0; attempt < 2; ++attempt) {
    buffer.assign(count + 8, abi::Sample{});
    count = static_cast<unsigned>(buffer.size());
    rc = fn().samples(handle_, abi::kGpuUtilizationSamples, last_seen_us, &type, &count, buffer.data());
    if (rc != abi::kErrorInsufficientSize) break;
    count *= 2;
  }
  if (rc != abi::kSuccess) return classify(rc);
  count = std::min<unsigned>(count, static_cast<unsigned>(buffer.size()));
  buffer.resize(count);
  std::sort(buffer.begin(), buffer.end(),
            [](const abi::Sample& a, const abi::Sample& b) { return a.timeStamp < b.timeStamp; });
  for (const auto& s : buffer) {
    if (s.timeStamp <= last_seen_us) continue;  // NVML returns only newer ones; guard anyway
    const double pct = sample_value(type, s.sampleValue);
    if (std::isnan(pct)) continue;
    read.samples.push_back(recording::UtilSample{static_cast<recording::TimeNs>(s.timeStamp) * 1000, pct,
                                                 recording::UtilSource::samples});
    read.newest_us = std::max<std::uint64_t>(read.newest_us, s.timeStamp);
  }
  return read;
}

namespace {

using EngineCall = abi::Return (*)(abi::Device, unsigned*, unsigned*);

EngineCall engine_call(const abi::Functions& f, const std::string& key) {
  if (key == "nvenc") return f.encoder_utilization;
  if (key == "nvdec") return f.decoder_utilization;
  if (key == "nvjpg") return f.jpg_utilization;
  return nullptr;
}

}  // namespace

std::vector<NvmlEngine> NvmlDevice::engines() const {
  std::vector<NvmlEngine> out;
  const NvmlEngine all[] = {{"nvenc", "Video encoder", "nvenc__utilization.pct"},
                            {"nvdec", "Video decoder", "nvdec__utilization.pct"},
                            {"nvjpg", "JPEG decoder", "nvjpg__utilization.pct"}};
  for (const auto& engine : all) {
    EngineCall call = engine_call(fn(), engine.key);
    if (!call) continue;
    unsigned pct = 0, period_us = 0;
    // Only "not supported" says the chip lacks the engine; any other failure is a failed reading of
    // an engine it has.
    if (call(handle_, &pct, &period_us) != abi::kErrorNotSupported) out.push_back(engine);
  }
  return out;
}

NvmlReading NvmlDevice::engine_utilization(const NvmlEngine& engine) const {
  EngineCall call = engine_call(fn(), engine.key);
  if (!call) return {kNaN, "not in this driver's NVML"};
  unsigned pct = 0, period_us = 0;
  const abi::Return rc = call(handle_, &pct, &period_us);
  if (rc != abi::kSuccess) return {kNaN, why_not(fn(), rc)};
  return {static_cast<double>(pct), {}};
}

std::vector<recording::ColumnDef> NvmlDevice::engine_columns() const {
  std::vector<recording::ColumnDef> columns;
  for (const auto& engine : engines()) {
    recording::ColumnDef c;
    c.key = engine.key;
    c.label = engine.label;
    c.metric = engine.metric;
    c.source = recording::UnitSource::nvml_engine;
    // The recipe names the NVML call the value comes from, as a chip unit's names its counters.
    c.recipe.combine = recording::UnitRecipe::Combine::counter;
    c.recipe.counters = {engine.key == "nvenc"   ? "nvmlDeviceGetEncoderUtilization"
                         : engine.key == "nvdec" ? "nvmlDeviceGetDecoderUtilization"
                                                 : "nvmlDeviceGetJpgUtilization"};
    c.counted_by_gpu_util = false;
    c.note =
        "NVML's utilisation of this engine over NVML's own recent window, read once a second; each chip "
        "sample takes the first reading at or after its end. GPU-Util does not count this engine. NVML "
        "can report an engine the chip does not have as 0% (the encoder on an H200).";
    columns.push_back(std::move(c));
  }
  return columns;
}

namespace {

// One process list with every entry's fields; nullopt when it cannot be read.
std::optional<std::vector<NvmlProcess>> list_entries(const abi::Functions& f, abi::Device device,
                                                     abi::Return (*list)(abi::Device, unsigned*, void*),
                                                     bool compute) {
  if (!list) return std::nullopt;
  unsigned count = 0;
  abi::Return rc = list(device, &count, nullptr);
  if (rc == abi::kSuccess) return std::vector<NvmlProcess>{};
  if (rc != abi::kErrorInsufficientSize) return std::nullopt;
  const std::size_t stride = f.process_entry_size;
  for (int attempt = 0; attempt < 3; ++attempt) {
    // Room for a few newcomers; twice the bytes so that no entry layout can overrun the buffer.
    const unsigned capacity = count + 8;
    std::vector<unsigned char> buffer(2 * capacity * stride, 0);
    count = capacity;
    rc = list(device, &count, buffer.data());
    if (rc == abi::kErrorInsufficientSize) continue;
    if (rc != abi::kSuccess) return std::nullopt;
    std::vector<NvmlProcess> out;
    for (unsigned i = 0; i < std::min(count, capacity); ++i) {
      NvmlProcess p;
      p.compute = compute;
      p.graphics = !compute;
      if (stride == sizeof(abi::ProcessInfoV2)) {
        abi::ProcessInfoV2 e{};
        std::memcpy(&e, buffer.data() + i * stride, sizeof e);
        p.pid = e.pid;
        p.used_memory_bytes = e.usedGpuMemory;
        p.gpu_instance_id = e.gpuInstanceId;
      } else {
        abi::ProcessInfoV1 e{};
        std::memcpy(&e, buffer.data() + i * stride, sizeof e);
        p.pid = e.pid;
        p.used_memory_bytes = e.usedGpuMemory;
      }
      // NVML reports unknown memory as ~0 (NVML_VALUE_NOT_AVAILABLE).
      if (p.used_memory_bytes == ~0ULL) p.used_memory_bytes = 0;
      out.push_back(p);
    }
    return out;
  }
  return std::nullopt;
}

// The distinct pids on one process list; nullopt when it cannot be read.
std::optional<std::set<unsigned>> list_processes(const abi::Functions& f, abi::Device device,
                                                 abi::Return (*list)(abi::Device, unsigned*, void*)) {
  const auto entries = list_entries(f, device, list, true);
  if (!entries) return std::nullopt;
  std::set<unsigned> pids;
  for (const NvmlProcess& p : *entries) pids.insert(p.pid);
  return pids;
}

// Distinct pids on one process list; -1 when it cannot be read.
int count_processes(const abi::Functions& f, abi::Device device,
                    abi::Return (*list)(abi::Device, unsigned*, void*)) {
  const auto pids = list_processes(f, device, list);
  return pids ? static_cast<int>(pids->size()) : -1;
}

}  // namespace

recording::ProcessReading NvmlDevice::processes(recording::TimeNs now_ns) const {
  recording::ProcessReading reading;
  reading.ts_ns = now_ns;
  reading.compute = count_processes(fn(), handle_, fn().compute_processes);
  reading.graphics = count_processes(fn(), handle_, fn().graphics_processes);
  return reading;
}

std::optional<std::vector<NvmlProcess>> NvmlDevice::process_list() const {
  const auto compute = list_entries(fn(), handle_, fn().compute_processes, true);
  const auto graphics = list_entries(fn(), handle_, fn().graphics_processes, false);
  if (!compute && !graphics) return std::nullopt;
  std::vector<NvmlProcess> merged;
  auto add = [&merged](const NvmlProcess& p) {
    for (NvmlProcess& m : merged) {
      if (m.pid == p.pid && m.gpu_instance_id == p.gpu_instance_id) {
        m.compute = m.compute || p.compute;
        m.graphics = m.graphics || p.graphics;
        m.used_memory_bytes = std::max(m.used_memory_bytes, p.used_memory_bytes);
        return;
      }
    }
    merged.push_back(p);
  };
  if (compute)
    for (const NvmlProcess& p : *compute) add(p);
  if (graphics)
    for (const NvmlProcess& p : *graphics) add(p);
  std::sort(merged.begin(), merged.end(), [](const NvmlProcess& a, const NvmlProcess& b) {
    return a.pid != b.pid ? a.pid < b.pid : a.gpu_instance_id < b.gpu_instance_id;
  });
  return merged;
}

NvmlReading NvmlDevice::total_energy_mj() const {
  return total_energy_mj_by_call();
}

NvmlReading NvmlDevice::total_energy_mj_by_field() const {
  if (!fn().field_values) return {kNaN, "the driver lacks nvmlDeviceGetFieldValues"};
  abi::FieldValue value{};
  value.fieldId = abi::kFieldTotalEnergy;
  const abi::Return rc = fn().field_values(handle_, 1, &value);
  if (rc != abi::kSuccess) return {kNaN, why_not(fn(), rc)};
  if (value.nvmlReturn != abi::kSuccess) return {kNaN, why_not(fn(), value.nvmlReturn)};
  const double mj = sample_value(value.valueType, value.value);
  if (std::isnan(mj)) return {kNaN, "NVML gave the energy field an unknown value type"};
  return {mj, {}};
}

NvmlReading NvmlDevice::total_energy_mj_by_call() const {
  if (!fn().total_energy) return {kNaN, "the driver lacks nvmlDeviceGetTotalEnergyConsumption"};
  unsigned long long mj = 0;
  const abi::Return rc = fn().total_energy(handle_, &mj);
  if (rc != abi::kSuccess) return {kNaN, why_not(fn(), rc)};
  return {static_cast<double>(mj), {}};
}

ProcessUtilRead NvmlDevice::process_utilization(std::uint64_t last_seen_us) const {
  ProcessUtilRead read;
  read.newest_us = last_seen_us;
  if (!fn().process_utilization) {
    read.status = ProcessUtilRead::Status::unsupported;
    read.error = "the driver lacks nvmlDeviceGetProcessUtilization";
    return read;
  }
  unsigned count = 0;
  abi::Return rc = fn().process_utilization(handle_, nullptr, &count, last_seen_us);
  if (rc == abi::kErrorNotFound || (rc == abi::kSuccess && count == 0)) {
    read.status = ProcessUtilRead::Status::none;
    return read;
  }
  if (rc != abi::kSuccess && rc != abi::kErrorInsufficientSize) {
    read.status = rc == abi::kErrorNotSupported ? ProcessUtilRead::Status::unsupported
                                                : ProcessUtilRead::Status::failed;
    read.error = why_not(fn(), rc);
    return read;
  }
  std::vector<abi::ProcessUtilizationSample> buffer(count + 8);
  count = static_cast<unsigned>(buffer.size());
  rc = fn().process_utilization(handle_, buffer.data(), &count, last_seen_us);
  if (rc == abi::kErrorNotFound) {
    read.status = ProcessUtilRead::Status::none;
    return read;
  }
  if (rc != abi::kSuccess) {
    read.status = ProcessUtilRead::Status::failed;
    read.error = why_not(fn(), rc);
    return read;
  }
  for (unsigned i = 0; i < std::min<std::size_t>(count, buffer.size()); ++i) {
    const abi::ProcessUtilizationSample& e = buffer[i];
    read.samples.push_back({e.pid, e.timeStamp, e.smUtil, e.memUtil});
    read.newest_us = std::max<std::uint64_t>(read.newest_us, e.timeStamp);
  }
  return read;
}

MigState NvmlDevice::mig() const {
  MigState state;
  if (!fn().mig_mode) {
    state.mode = MigState::Mode::disabled;  // a driver without MIG calls has no MIG
    return state;
  }
  unsigned current = 0, pending = 0;
  abi::Return rc = fn().mig_mode(handle_, &current, &pending);
  if (rc == abi::kErrorNotSupported) {
    state.mode = MigState::Mode::disabled;
    return state;
  }
  if (rc != abi::kSuccess) {
    state.why = why_not(fn(), rc);
    return state;
  }
  if (current != abi::kDeviceMigEnable) {
    state.mode = MigState::Mode::disabled;
    return state;
  }
  state.mode = MigState::Mode::enabled;
  if (!fn().max_mig_devices || !fn().mig_device_by_index || !fn().gpu_instance_id) {
    state.mode = MigState::Mode::unknown;
    state.why = "MIG is on, but the driver lacks the calls that list MIG devices";
    return state;
  }
  unsigned max = 0;
  if ((rc = fn().max_mig_devices(handle_, &max)) != abi::kSuccess) {
    state.mode = MigState::Mode::unknown;
    state.why = why_not(fn(), rc);
    return state;
  }
  for (unsigned i = 0; i < max; ++i) {
    abi::Device mig = nullptr;
    if (fn().mig_device_by_index(handle_, i, &mig) != abi::kSuccess) continue;  // an empty slot
    MigInstance instance;
    if (fn().gpu_instance_id(mig, &instance.gpu_instance_id) != abi::kSuccess) continue;
    // A MIG device's name ends in its profile: "NVIDIA H200 MIG 1g.18gb" (docs/attribution.md#mig).
    char name[abi::kNameBuffer] = {};
    if (fn().name(mig, name, sizeof name) == abi::kSuccess) {
      const std::string text = name;
      const auto at = text.rfind("MIG ");
      instance.profile = at == std::string::npos ? text : text.substr(at + 4);
    }
    char uuid[abi::kUuidBuffer] = {};
    if (fn().uuid(mig, uuid, sizeof uuid) == abi::kSuccess) instance.uuid = uuid;
    bool seen = false;
    for (const MigInstance& m : state.instances) seen = seen || m.gpu_instance_id == instance.gpu_instance_id;
    if (!seen) state.instances.push_back(std::move(instance));  // several compute instances, one GPU instance
  }
  std::sort(state.instances.begin(), state.instances.end(),
            [](const MigInstance& a, const MigInstance& b) { return a.gpu_instance_id < b.gpu_instance_id; });
  return state;
}

std::optional<std::vector<unsigned>> NvmlDevice::process_ids() const {
  const auto compute = list_processes(fn(), handle_, fn().compute_processes);
  const auto graphics = list_processes(fn(), handle_, fn().graphics_processes);
  if (!compute && !graphics) return std::nullopt;
  std::set<unsigned> all;
  if (compute) all.insert(compute->begin(), compute->end());
  if (graphics) all.insert(graphics->begin(), graphics->end());
  return std::vector<unsigned>(all.begin(), all.end());
}

}  // namespace diescope::collect
