// Google Benchmark's JSON format, as its compare.py and other tools read it.
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "diescope/harness/flush.hpp"
#include "diescope/harness/printer.hpp"
#include "diescope/harness/result.hpp"
#include "diescope/core/atomic_file.hpp"
#include "diescope/core/version.hpp"

namespace diescope::harness {

namespace {

using json = nlohmann::ordered_json;

// Keys Google Benchmark itself writes in an entry; a metric with one of these names is qualified.
const std::set<std::string> kReservedKeys = {"name",
                                             "family_index",
                                             "per_family_instance_index",
                                             "run_name",
                                             "run_type",
                                             "repetitions",
                                             "repetition_index",
                                             "threads",
                                             "iterations",
                                             "real_time",
                                             "cpu_time",
                                             "time_unit",
                                             "aggregate_name",
                                             "aggregate_unit",
                                             "error_occurred",
                                             "error_message",
                                             "label",
                                             "diescope"};

// Counter names: the metric's name where that is unambiguous within the result; otherwise metrics in
// a named section become "section.name" (a Google Benchmark key becomes "custom.name"), then
// "section.name[unit]"; a diagnostic-pass metric that still clashes gets a "diagnostic." prefix.
std::vector<std::string> counter_names(const RunResult& r) {
  std::map<std::string, int> by_name;
  std::map<std::string, int> by_section_name;
  for (const MetricSummary& m : r.metrics) {
    ++by_name[m.key.name];
    ++by_section_name[m.key.section + "." + m.key.name];
  }
  std::vector<std::string> names;
  std::set<std::string> taken;
  for (const MetricSummary& m : r.metrics) {
    std::string name = m.key.name;
    if ((by_name[name] > 1 && !m.key.section.empty()) || kReservedKeys.count(name)) {
      name = m.key.section.empty() ? std::string("custom") : m.key.section;
      name += '.';
      name += m.key.name;
    }
    if (by_section_name[m.key.section + "." + m.key.name] > 1) {
      name += '[';
      name += m.key.unit;
      name += ']';
    }
    if (taken.count(name)) name.insert(0, "diagnostic.");
    taken.insert(name);
    names.push_back(name);
  }
  return names;
}

void put_finite(json& entry, const std::string& key, double value) {
  if (std::isfinite(value)) entry[key] = value;
}

json base_entry(const RunResult& r) {
  return json{
      {"name", r.name},     {"family_index", r.family_index}, {"per_family_instance_index", r.instance_index},
      {"run_name", r.name}, {"run_type", "iteration"},        {"threads", 1}};
}

json diescope_extras(const RunResult& r) {
  return json{{"domain", to_string(r.domain)},
              {"backend", r.backend},
              {"timing", to_string(r.timing)},
              {"cache_flush", r.cache_flush},
              {"stop_reason", to_string(r.stop_reason)},
              {"samples", r.time.count},
              {"warmup_samples", r.warmup_samples},
              {"failed_samples", r.failed_samples},
              {"throttled_samples", r.throttled_samples},
              {"outlier_samples", r.outlier_samples},
              {"diagnostic_pass_runs", r.diagnostic_pass_runs},
              {"wall_seconds", r.wall_seconds},
              {"diagnostics", r.visible_diagnostics()}};
}

}  // namespace

nlohmann::ordered_json to_google_benchmark_json(const RunContext& c, const std::vector<RunResult>& results,
                                                const JsonOptions& options) {
  json caches = json::array();
  for (const HostCache& cache : c.caches) {
    caches.push_back({{"type", cache.type},
                      {"level", cache.level},
                      {"size", cache.size_bytes},
                      {"num_sharing", cache.num_sharing}});
  }
  json out;
  out["context"] = {{"date", c.date},
                    {"host_name", c.host_name},
                    {"executable", c.executable},
                    {"num_cpus", c.num_cpus},
                    {"mhz_per_cpu", static_cast<long>(std::lround(c.mhz_per_cpu))},
                    {"cpu_scaling_enabled", c.cpu_scaling_enabled},
                    {"caches", caches},
                    {"load_avg", c.load_avg},
#ifdef NDEBUG
                    {"library_build_type", "release"},
#else
                    {"library_build_type", "debug"},
#endif
                    {"library", "diescope::harness"},
                    {"diescope_version", core::kToolVersion}};
  json benchmarks = json::array();
  for (const RunResult& r : results) {
    if (!r.ok()) {
      json entry = base_entry(r);
      entry["repetitions"] = 0;
      entry["repetition_index"] = 0;
      entry["iterations"] = 0;
      entry["error_occurred"] = true;
      entry["error_message"] = r.skip_reason ? "skipped: " + *r.skip_reason
                               : r.error     ? *r.error
                                             : std::string("no sample was kept");
      entry["diescope"] = diescope_extras(r);
      benchmarks.push_back(entry);
      continue;
    }
    const double unit = seconds_per(r.time_unit);
    const std::vector<std::string> names = counter_names(r);
    const std::size_t samples = r.time.count;

    if (options.per_sample_entries) {
      std::map<MetricKey, std::string> timed_names;
      for (std::size_t k = 0; k < r.metrics.size(); ++k) {
        if (r.metrics[k].origin == MetricOrigin::timed) timed_names.emplace(r.metrics[k].key, names[k]);
      }
      for (std::size_t i = 0; i < samples; ++i) {
        json entry = base_entry(r);
        entry["repetitions"] = samples;
        entry["repetition_index"] = i;
        entry["iterations"] = r.iterations_per_sample;
        entry["real_time"] = r.sample_seconds[i] / unit;
        entry["cpu_time"] = r.sample_cpu_seconds[i] / unit;
        entry["time_unit"] = to_string(r.time_unit);
        for (const MetricValue& m : r.sample_metrics[i]) {
          if (auto it = timed_names.find(MetricKey{m.section, m.name, m.unit}); it != timed_names.end()) {
            put_finite(entry, it->second, m.value);
          }
        }
        benchmarks.push_back(entry);
      }
    } else {
      json entry = base_entry(r);
      entry["repetitions"] = 1;
      entry["repetition_index"] = 0;
      entry["iterations"] = r.iterations_per_sample * samples;
      entry["real_time"] = r.time.mean / unit;
      entry["cpu_time"] = r.cpu_time.mean / unit;
      entry["time_unit"] = to_string(r.time_unit);
      for (std::size_t k = 0; k < r.metrics.size(); ++k) put_finite(entry, names[k], r.metrics[k].stats.mean);
      benchmarks.push_back(entry);
    }

    struct Aggregate {
      const char* name;
      const char* unit;
      std::function<double(const Summary&)> of;
    };
    const Aggregate aggregates[] = {
        {"mean", "time", [](const Summary& s) { return s.mean; }},
        {"median", "time", [](const Summary& s) { return s.median; }},
        {"stddev", "time", [](const Summary& s) { return s.stddev; }},
        {"cv", "percentage", [](const Summary& s) { return s.relative_noise(); }},
        {"p95", "time", [](const Summary& s) { return s.p95; }},
        {"min", "time", [](const Summary& s) { return s.min; }},
        {"max", "time", [](const Summary& s) { return s.max; }},
    };
    for (const Aggregate& a : aggregates) {
      const bool time_unit = std::string_view(a.unit) == "time";
      const double real = a.of(r.time) / (time_unit ? unit : 1.0);
      const double cpu = a.of(r.cpu_time) / (time_unit ? unit : 1.0);
      if (!std::isfinite(real) || !std::isfinite(cpu)) continue;  // e.g. stddev of one sample
      json entry = base_entry(r);
      entry["name"] = r.name + "_" + a.name;
      entry["run_type"] = "aggregate";
      entry["repetitions"] = samples;
      entry["aggregate_name"] = a.name;
      entry["aggregate_unit"] = a.unit;
      entry["iterations"] = samples;
      entry["real_time"] = real;
      entry["cpu_time"] = cpu;
      entry["time_unit"] = to_string(r.time_unit);
      for (std::size_t k = 0; k < r.metrics.size(); ++k)
        put_finite(entry, names[k], a.of(r.metrics[k].stats));
      if (std::string_view(a.name) == "mean") entry["diescope"] = diescope_extras(r);
      benchmarks.push_back(entry);
    }
  }
  out["benchmarks"] = benchmarks;
  return out;
}

JsonPrinter::JsonPrinter(std::filesystem::path path, JsonOptions options)
    : path_(std::move(path)), options_(options) {}

void JsonPrinter::begin(const RunContext& context) {
  context_ = context;
}
void JsonPrinter::report(const RunResult& result) {
  results_.push_back(result);
}
void JsonPrinter::end() {
  core::write_file_atomically(path_, to_google_benchmark_json(context_, results_, options_).dump(2) + "\n");
}

}  // namespace diescope::harness
