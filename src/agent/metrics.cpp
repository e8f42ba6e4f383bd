#include "diescope/agent/metrics.hpp"

#include <charconv>
#include <cmath>

#include "diescope/core/version.hpp"

namespace diescope::agent {

namespace {

std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

struct Label {
  std::string name;
  std::string value;
};

class Writer {
 public:
  explicit Writer(ExpositionFormat format) : format_(format) {}

  // Starts a family. `unit` is the base unit the name ends in ("" when none).
  void family(const std::string& name, const char* type, const std::string& help,
              const std::string& unit = "") {
    family_ = name;
    counter_ = std::string(type) == "counter";
    // Prometheus text names the counter family with _total; OpenMetrics names it without.
    std::string declared = name;
    if (counter_ && format_ == ExpositionFormat::prometheus_text) declared += "_total";
    out_ += "# HELP " + declared + " " + help + "\n";
    out_ += "# TYPE " + declared + " " + type + "\n";
    if (format_ == ExpositionFormat::openmetrics && !unit.empty())
      out_ += "# UNIT " + declared + " " + unit + "\n";
  }
  void sample(const std::vector<Label>& labels, double value) {
    out_ += family_;
    if (counter_) out_ += "_total";
    if (!labels.empty()) {
      out_ += '{';
      for (std::size_t i = 0; i < labels.size(); ++i) {
        if (i) out_ += ',';
        out_ += labels[i].name + "=\"" + escape_label_value(labels[i].value) + "\"";
      }
      out_ += '}';
    }
    out_ += ' ' + number(value) + '\n';
  }
  std::string finish() {
    if (format_ == ExpositionFormat::openmetrics) out_ += "# EOF\n";
    return std::move(out_);
  }

 private:
  ExpositionFormat format_;
  std::string out_;
  std::string family_;
  bool counter_ = false;
};

std::vector<Label> gpu_labels(const GpuStatus& g) {
  // dcgm-exporter's names, so dashboards join the two on them (docs/agent.md#metrics).
  return {{"gpu", std::to_string(g.index)},
          {"UUID", g.uuid},
          {"modelName", g.model},
          {"Hostname", g.hostname},
          {"pci_bus_id", g.pci_bus_id}};
}

std::vector<Label> with(std::vector<Label> labels, Label extra) {
  labels.push_back(std::move(extra));
  return labels;
}

double mhz_to_hz(double mhz) {
  return mhz * 1e6;
}
double pct_to_ratio(double pct) {
  return pct / 100.0;
}

// One gauge family over every GPU that has a record.
template <typename Get>
void per_record(Writer& w, const std::vector<GpuStatus>& gpus, const std::string& name,
                const std::string& help, const std::string& unit, Get get) {
  w.family(name, "gauge", help, unit);
  for (const GpuStatus& g : gpus)
    if (g.last) w.sample(gpu_labels(g), get(*g.last));
}

}  // namespace

std::string escape_label_value(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

ExpositionFormat format_for_accept(const std::string& accept) {
  return accept.find("application/openmetrics-text") != std::string::npos ? ExpositionFormat::openmetrics
                                                                          : ExpositionFormat::prometheus_text;
}

std::string render_metrics(const std::vector<GpuStatus>& gpus, const AgentInfo& info, ExpositionFormat format,
                           const std::vector<HostFigure>& host) {
  Writer w(format);
  w.family("diescope_agent_info", "gauge", "The agent's version, method and record schema (value 1).");
  w.sample({{"version", core::kToolVersion},
            {"method", std::to_string(core::kMethodVersion)},
            {"record_schema", std::to_string(kAgentRecordSchema)},
            {"source", info.source}},
           1);
  w.family("diescope_duty_on_seconds", "gauge", "How long the counters are on in each duty period (setting).",
           "seconds");
  w.sample({}, info.duty_on_ms / 1000.0);
  w.family("diescope_duty_period_seconds", "gauge",
           "The duty period; one record per period per GPU (setting).", "seconds");
  w.sample({}, info.duty_period_ms / 1000.0);

  per_record(w, gpus, "diescope_gpu_util_percent",
             "NVML GPU-Util (what nvidia-smi shows) over the latest record's chip-sampled time.", "percent",
             [](const AgentRecord& r) { return r.gpu_util_pct; });
  per_record(w, gpus, "diescope_die_util_percent",
             "DIE-Util: the busiest chip unit's time-weighted percent of peak over the latest chip window.",
             "percent", [](const AgentRecord& r) { return r.die_util_pct; });
  per_record(w, gpus, "diescope_gap_percent",
             "GPU-Util minus DIE-Util, in percentage points (latest record).", "percent",
             [](const AgentRecord& r) { return r.gap_pct; });
  per_record(w, gpus, "diescope_stranded_percent", "Stranded capacity: 100 minus DIE-Util (latest record).",
             "percent", [](const AgentRecord& r) { return r.stranded_pct; });
  per_record(w, gpus, "diescope_stranded_idle_percent",
             "Stranded while nothing ran: 100 minus GPU-Util (latest record).", "percent",
             [](const AgentRecord& r) { return r.stranded_idle_pct; });
  per_record(w, gpus, "diescope_stranded_active_percent",
             "Stranded while a kernel ran: GPU-Util minus DIE-Util past the noise floor (latest record).",
             "percent", [](const AgentRecord& r) { return r.stranded_active_pct; });

  w.family("diescope_unit_percent", "gauge",
           "Each unit's time-weighted percent of its peak over the latest chip window.", "percent");
  for (const GpuStatus& g : gpus) {
    if (!g.last) continue;
    for (const UnitFigure& u : g.last->units)
      w.sample(with(with(gpu_labels(g), {"unit", u.key}), {"unit_label", u.label.empty() ? u.key : u.label}),
               u.mean_pct);
  }
  w.family(
      "diescope_limiting_unit", "gauge",
      "1 for the unit that limited the chip in the latest record, 0 for the others (all 0 when none did).");
  for (const GpuStatus& g : gpus) {
    if (!g.last) continue;
    for (const UnitFigure& u : g.last->units)
      w.sample(with(gpu_labels(g), {"unit", u.key}),
               g.last->limiting_unit && *g.last->limiting_unit == u.key ? 1 : 0);
  }
  per_record(w, gpus, "diescope_chip_coverage_ratio",
             "Share of the scheduled counter time that usable chip samples covered (latest record).", "ratio",
             [](const AgentRecord& r) { return pct_to_ratio(r.chip_coverage_pct); });
  per_record(w, gpus, "diescope_chip_coverage_partial",
             "1 when chip coverage fell under the 90% gate and the latest record is partial, else 0.", "",
             [](const AgentRecord& r) {
               return r.chip_coverage_gate == analysis::CoverageGate::partial ? 1.0 : 0.0;
             });
  per_record(w, gpus, "diescope_gpu_util_coverage_ratio",
             "Share of the chip-sampled time that GPU-Util samples covered (latest record).", "ratio",
             [](const AgentRecord& r) { return pct_to_ratio(r.gpu_util_coverage_pct); });

  w.family("diescope_sm_clock_hertz", "gauge",
           "SM clock over the latest chip window (min, time-weighted mean, max).", "hertz");
  for (const GpuStatus& g : gpus) {
    if (!g.last) continue;
    w.sample(with(gpu_labels(g), {"stat", "min"}), mhz_to_hz(g.last->sm_clock.min_mhz));
    w.sample(with(gpu_labels(g), {"stat", "mean"}), mhz_to_hz(g.last->sm_clock.mean_mhz));
    w.sample(with(gpu_labels(g), {"stat", "max"}), mhz_to_hz(g.last->sm_clock.max_mhz));
  }
  w.family("diescope_memory_clock_hertz", "gauge",
           "Memory clock over the latest chip window (min, time-weighted mean, max).", "hertz");
  for (const GpuStatus& g : gpus) {
    if (!g.last) continue;
    w.sample(with(gpu_labels(g), {"stat", "min"}), mhz_to_hz(g.last->mem_clock.min_mhz));
    w.sample(with(gpu_labels(g), {"stat", "mean"}), mhz_to_hz(g.last->mem_clock.mean_mhz));
    w.sample(with(gpu_labels(g), {"stat", "max"}), mhz_to_hz(g.last->mem_clock.max_mhz));
  }
  per_record(w, gpus, "diescope_record_counters_on_seconds",
             "Measured time the counters were on in the latest record's period.", "seconds",
             [](const AgentRecord& r) { return r.counters_on_s; });
  per_record(
      w, gpus, "diescope_record_end_timestamp_seconds",
      "End of the latest record's period, in seconds since the Unix epoch (the recording's time in replay).",
      "seconds", [](const AgentRecord& r) { return static_cast<double>(r.period_end_ns) * 1e-9; });
  per_record(
      w, gpus, "diescope_cost_estimate_available",
      "1 when the latest record carries a measured cost estimate for its GPU model and setting, else 0.", "",
      [](const AgentRecord& r) { return r.cost ? 1.0 : 0.0; });
  w.family("diescope_cost_slowdown_percent", "gauge",
           "Measured slowdown of the work from the counters at this setting: the 95% interval's bounds.",
           "percent");
  for (const GpuStatus& g : gpus) {
    if (!g.last || !g.last->cost) continue;
    w.sample(with(gpu_labels(g), {"bound", "lower"}), g.last->cost->slowdown_lo_pct);
    w.sample(with(gpu_labels(g), {"bound", "upper"}), g.last->cost->slowdown_hi_pct);
  }

  w.family("diescope_counters_enabled", "gauge",
           "1 while the GPU's chip counters are on (or being started), else 0.");
  for (const GpuStatus& g : gpus) w.sample(gpu_labels(g), g.counters_on ? 1 : 0);
  w.family("diescope_counters_on_seconds", "counter",
           "Measured time the chip counters were on, over closed records.", "seconds");
  for (const GpuStatus& g : gpus) w.sample(gpu_labels(g), g.counters_on_total_s);
  // docs/energy.md#in-the-agent: joules over closed records, and the part spent while DIE-Util was low.
  w.family("diescope_energy_joules", "counter",
           "Energy the GPU used over closed records, from NVML's energy counter (or its power draw where the "
           "counter is absent or went back).",
           "joules");
  for (const GpuStatus& g : gpus) w.sample(gpu_labels(g), g.energy_total_j);
  w.family("diescope_energy_stranded_joules", "counter",
           "Energy used over closed records' chip-sampled time while DIE-Util was under 10%.", "joules");
  for (const GpuStatus& g : gpus) w.sample(gpu_labels(g), g.stranded_energy_total_j);
  per_record(w, gpus, "diescope_power_watts", "Mean power draw over the latest record's period.", "watts",
             [](const AgentRecord& r) { return r.mean_power_w; });
  w.family("diescope_records", "counter", "Records written for the GPU.");
  for (const GpuStatus& g : gpus) w.sample(gpu_labels(g), static_cast<double>(g.records));
  w.family("diescope_clock_restarts", "counter",
           "Records abandoned and restarted after a wall-clock step or a suspend.");
  for (const GpuStatus& g : gpus) w.sample(gpu_labels(g), static_cast<double>(g.clock_restarts));
  w.family("diescope_sampler_restarts", "counter",
           "Times the counter sampler was restarted after it failed.");
  for (const GpuStatus& g : gpus) w.sample(gpu_labels(g), static_cast<double>(g.sampler_restarts));
  if (!host.empty()) {
    // One family for every host stream: its name is the recording's metric name, which Prometheus
    // names cannot spell (dots), so it goes in a label beside its scope and unit.
    w.family("diescope_host_metric", "gauge",
             "A host probe over the span since the previous publish (min, time-weighted mean, max), under "
             "the metric name, scope and unit a recording's host stream has.");
    for (const HostFigure& f : host) {
      const std::vector<Label> labels = {{"metric", f.descriptor.full_name()},
                                         {"scope", metrics::scope_word(f.descriptor.scope)},
                                         {"unit", std::string(metrics::to_string(f.descriptor.unit))}};
      w.sample(with(labels, {"stat", "min"}), f.min);
      w.sample(with(labels, {"stat", "mean"}), f.mean);
      w.sample(with(labels, {"stat", "max"}), f.max);
    }
  }
  return w.finish();
}

std::string append_families(std::string body, const std::string& families) {
  const std::string eof = "# EOF\n";
  const bool openmetrics =
      body.size() >= eof.size() && body.compare(body.size() - eof.size(), eof.size(), eof) == 0;
  body.insert(openmetrics ? body.size() - eof.size() : body.size(), families);
  return body;
}

}  // namespace diescope::agent
