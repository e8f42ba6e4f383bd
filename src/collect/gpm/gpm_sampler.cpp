// NVML GPM through the adapter's function table (docs/method.md#gpm-as-a-second-chip-source).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include <fmt/format.h>

#include "diescope/collect/gpm.hpp"
#include "diescope/core/clock.hpp"
#include "diescope/core/error.hpp"
#include "nvml_abi.hpp"

namespace diescope::collect {
namespace abi = nvml_abi;
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kBytesPerMiB = 1024.0 * 1024.0;

struct MetricName {
  std::string_view name;
  unsigned id;
  bool mib_per_s;  // a rate in MiB/s that the sampler turns into bytes over the sample
};

// NVML's nvmlGpmMetricId_t values for the metrics the GPM table reads.
constexpr MetricName kMetrics[] = {
    {"NVML_GPM_METRIC_GRAPHICS_UTIL", 1, false},
    {"NVML_GPM_METRIC_SM_UTIL", 2, false},
    {"NVML_GPM_METRIC_SM_OCCUPANCY", 3, false},
    {"NVML_GPM_METRIC_INTEGER_UTIL", 4, false},
    {"NVML_GPM_METRIC_ANY_TENSOR_UTIL", 5, false},
    {"NVML_GPM_METRIC_DFMA_TENSOR_UTIL", 6, false},
    {"NVML_GPM_METRIC_HMMA_TENSOR_UTIL", 7, false},
    {"NVML_GPM_METRIC_IMMA_TENSOR_UTIL", 9, false},
    {"NVML_GPM_METRIC_DRAM_BW_UTIL", 10, false},
    {"NVML_GPM_METRIC_FP64_UTIL", 11, false},
    {"NVML_GPM_METRIC_FP32_UTIL", 12, false},
    {"NVML_GPM_METRIC_FP16_UTIL", 13, false},
    {"NVML_GPM_METRIC_PCIE_TX_PER_SEC", 20, true},
    {"NVML_GPM_METRIC_PCIE_RX_PER_SEC", 21, true},
    {"NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC", 60, true},
    {"NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC", 61, true},
};

const MetricName* find_metric(std::string_view name) {
  for (const auto& m : kMetrics)
    if (m.name == name) return &m;
  return nullptr;
}

std::string why_not(const abi::Functions& f, abi::Return code) {
  if (code == abi::kErrorNotSupported) return "NVML_ERROR_NOT_SUPPORTED";
  const char* text = f.error_string ? f.error_string(code) : nullptr;
  return abi::return_name(code) + (text && *text ? std::string(" (") + text + ")" : std::string());
}

}  // namespace

std::optional<unsigned> gpm_metric_id(std::string_view name) {
  if (const MetricName* m = find_metric(name)) return m->id;
  return std::nullopt;
}

GpmSupport gpm_support(const NvmlDevice& device) {
  const abi::Functions& f = device.functions();
  if (!f.gpm_query_support) {
    return {false,
            "this driver's NVML has no GPM calls (nvmlGpmQueryDeviceSupport and its four "
            "siblings; they came with the R520 drivers)"};
  }
  abi::GpmSupport support{abi::kGpmSupportVersion, 0};
  const abi::Return rc = f.gpm_query_support(device.handle(), &support);
  if (rc != abi::kSuccess) return {false, "nvmlGpmQueryDeviceSupport failed: " + why_not(f, rc)};
  if (!support.isSupportedDevice)
    return {false, "NVML says this GPU has no GPM (GPM needs Hopper or later, and no vGPU or MIG slice)"};
  return {true, {}};
}

// The two GPM sample buffers; `previous` holds the last sample taken.
struct GpmSampler::Impl {
  std::optional<NvmlDevice> device;  // a copy: the caller's may be a temporary
  abi::GpmSample previous = nullptr;
  abi::GpmSample current = nullptr;
  bool have_previous = false;
  recording::TimeNs previous_ns = 0;
  // The table's counters in table_metrics() order, with their catalogue entries.
  std::vector<std::string> counters;
  std::vector<const MetricName*> catalogue;
  std::unique_ptr<ColumnEvaluator> evaluator;
  std::vector<double> values;
  abi::GpmMetricsGet request{};

  const abi::Functions& fn() const { return device->functions(); }
  std::optional<unsigned> gpu_instance;  // MIG: nvmlGpmMigSampleGet on this GPU instance
  // One GPM sample of the whole GPU, or of one GPU instance under MIG (docs/attribution.md#mig).
  abi::Return take(abi::GpmSample into) const {
    if (gpu_instance) return fn().gpm_mig_sample_get(device->handle(), *gpu_instance, into);
    return fn().gpm_sample_get(device->handle(), into);
  }
  ~Impl() {
    if (previous) fn().gpm_sample_free(previous);
    if (current) fn().gpm_sample_free(current);
  }
  // Reads the metrics over (previous, current) into `values` and `why` (one per counter).
  abi::Return read(double seconds, std::vector<std::string>& why) {
    request = abi::GpmMetricsGet{};
    request.version = abi::kGpmMetricsGetVersion;
    request.numMetrics = static_cast<unsigned>(catalogue.size());
    request.sample1 = previous;
    request.sample2 = current;
    for (std::size_t i = 0; i < catalogue.size(); ++i) request.metrics[i].metricId = catalogue[i]->id;
    const abi::Return rc = fn().gpm_metrics_get(&request);
    values.assign(catalogue.size(), kNaN);
    why.assign(catalogue.size(), std::string());
    for (std::size_t i = 0; i < catalogue.size(); ++i) {
      if (rc != abi::kSuccess) {
        why[i] = "nvmlGpmMetricsGet: " + why_not(fn(), rc);
        continue;
      }
      const abi::GpmMetric& m = request.metrics[i];
      if (m.nvmlReturn != abi::kSuccess || !std::isfinite(m.value)) {
        why[i] = m.nvmlReturn != abi::kSuccess ? why_not(fn(), m.nvmlReturn) : "not a number";
        continue;
      }
      values[i] = catalogue[i]->mib_per_s ? m.value * kBytesPerMiB * seconds : m.value;
    }
    return rc;
  }
};

GpmSampler::GpmSampler(const NvmlDevice& device, recording::TimeNs now_ns, double probe_ms,
                       std::optional<unsigned> gpu_instance)
    : impl_(std::make_unique<Impl>()) {
  if (gpu_instance && !device.functions().gpm_mig_sample_get)
    throw core::DeviceError("the driver lacks nvmlGpmMigSampleGet, so GPM cannot read a MIG GPU instance",
                            "update the NVIDIA driver");
  impl_->gpu_instance = gpu_instance;
  const GpmSupport support = gpm_support(device);
  if (!support.supported)
    throw core::DeviceError(
        "NVML GPM cannot be read on GPU " + std::to_string(device.index()) + ": " + support.why,
        "use PM sampling (--source pm) on this GPU, or update the NVIDIA driver");
  Impl& im = *impl_;
  im.device.emplace(device);
  const abi::Functions& f = device.functions();
  for (abi::GpmSample* s : {&im.previous, &im.current}) {
    const abi::Return rc = f.gpm_sample_alloc(s);
    if (rc != abi::kSuccess)
      throw core::DeviceError("nvmlGpmSampleAlloc failed: " + why_not(f, rc),
                              "check that nvidia-smi works on this machine, or use --source pm");
  }
  const UnitTable& full = gpm_unit_table();
  for (const auto& name : table_metrics(full)) {
    const MetricName* m = find_metric(name);
    if (!m)
      throw core::Error("the GPM table names " + name + ", which diescope's GPM catalogue lacks",
                        "this is a bug in diescope: please report it", core::kExitInternal);
    im.counters.push_back(name);
    im.catalogue.push_back(m);
  }
  // The first pair: which metrics does this GPU answer?
  abi::Return rc = im.take(im.previous);
  if (rc != abi::kSuccess)
    throw core::DeviceError(
        "nvmlGpmSampleGet failed on GPU " + std::to_string(device.index()) + ": " + why_not(f, rc),
        "check that nvidia-smi works on this machine, or use --source pm");
  const recording::TimeNs first_mono = core::monotonic_ns();
  std::this_thread::sleep_for(std::chrono::microseconds(static_cast<long>(probe_ms * 1000)));
  rc = im.take(im.current);
  const recording::TimeNs elapsed = core::monotonic_ns() - first_mono;
  if (rc != abi::kSuccess)
    throw core::DeviceError(
        "nvmlGpmSampleGet failed on GPU " + std::to_string(device.index()) + ": " + why_not(f, rc),
        "check that nvidia-smi works on this machine, or use --source pm");
  std::vector<std::string> why;
  rc = im.read(static_cast<double>(elapsed) / 1e9, why);
  if (rc != abi::kSuccess)
    throw core::DeviceError(
        "nvmlGpmMetricsGet failed on GPU " + std::to_string(device.index()) + ": " + why_not(f, rc),
        "check that nvidia-smi works on this machine, or use --source pm");
  std::vector<std::string> unanswered;
  for (std::size_t i = 0; i < im.counters.size(); ++i) {
    if (why[i].empty()) continue;
    unanswered.push_back(im.counters[i]);
    left_out_.push_back(im.counters[i] + ": " + why[i]);
  }
  table_ = table_without_counters(full, unanswered, "the driver did not answer their GPM metrics");
  if (table_.units.empty())
    throw core::DeviceError(
        "NVML GPM answered none of the unit metrics on GPU " + std::to_string(device.index()),
        "use PM sampling (--source pm) on this GPU");
  // From here on only the table's counters are asked for, in its order.
  im.counters = table_metrics(table_);
  im.catalogue.clear();
  for (const auto& name : im.counters) im.catalogue.push_back(find_metric(name));
  im.evaluator = std::make_unique<ColumnEvaluator>(table_, im.counters);
  std::swap(im.previous, im.current);
  im.have_previous = true;
  im.previous_ns = now_ns + elapsed;
}

GpmSampler::~GpmSampler() = default;

std::optional<GpmSample> GpmSampler::sample(recording::TimeNs now_ns) {
  Impl& im = *impl_;
  const abi::Functions& f = im.fn();
  const abi::Return rc = im.take(im.current);
  if (rc != abi::kSuccess) {
    last_error_ = "nvmlGpmSampleGet: " + why_not(f, rc);
    im.have_previous = false;
    return std::nullopt;
  }
  if (!im.have_previous || now_ns <= im.previous_ns) {
    // Start a new pair from this sample.
    std::swap(im.previous, im.current);
    im.have_previous = true;
    im.previous_ns = now_ns;
    return std::nullopt;
  }
  GpmSample out;
  out.start_ns = im.previous_ns;
  out.end_ns = now_ns;
  std::vector<std::string> why;
  const abi::Return got = im.read(static_cast<double>(now_ns - im.previous_ns) / 1e9, why);
  if (got == abi::kSuccess && now_ns - im.previous_ns < 2 * kGpmRefreshNs) {
    // A pair with no refresh inside reads 0 (or fails) on every metric: keep it open.
    bool nothing = true;
    for (const double v : im.values)
      if (std::isfinite(v) && v != 0) nothing = false;
    if (nothing) {
      last_error_.clear();
      return std::nullopt;
    }
  }
  std::swap(im.previous, im.current);
  im.previous_ns = now_ns;
  if (got != abi::kSuccess) {
    last_error_ = "nvmlGpmMetricsGet: " + why_not(f, got);
    return std::nullopt;
  }
  last_error_.clear();
  im.evaluator->evaluate(im.values, out.columns);
  // Which column read which counter: the table's units, diagnostics and counts, in order.
  auto note_unread = [&](const std::vector<recording::ColumnDef>& columns) {
    for (const auto& column : columns) {
      const auto it = std::find(im.counters.begin(), im.counters.end(), column.recipe.counters.front());
      const std::size_t i = static_cast<std::size_t>(it - im.counters.begin());
      if (it != im.counters.end() && !why[i].empty()) out.unread.push_back(column.key + ": " + why[i]);
    }
  };
  note_unread(table_.units);
  note_unread(table_.diagnostics);
  note_unread(table_.counts);
  for (std::size_t u = 0; u < table_.units.size(); ++u) {
    const auto& column = table_.units[u];
    GpmUnitReading reading{column.key, column.label, out.columns.units[u], {}};
    if (!std::isfinite(reading.pct)) reading.why = "the driver did not answer its GPM metric in this sample";
    out.units.push_back(std::move(reading));
  }
  for (const auto& gap : gpm_unit_gaps())
    out.units.push_back(GpmUnitReading{gap.key, gap.label, kNaN, gap.why});
  return out;
}

}  // namespace diescope::collect
