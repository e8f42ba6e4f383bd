#include <cmath>

#include <fmt/format.h>

#include "diescope/harness/printer.hpp"
#include "diescope/harness/result.hpp"
#include "diescope/core/atomic_file.hpp"

namespace diescope::harness {

namespace {

std::string field(std::string_view text) {
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char ch : text) {
    if (ch == '"') quoted += '"';
    quoted += ch;
  }
  return quoted + "\"";
}

std::string number(double v) {
  return std::isnan(v) ? "nan" : fmt::format("{:.9g}", v);
}

std::string params(const AxisPoint& point) {
  std::string out;
  for (const auto& [name, value] : point.values())
    out += (out.empty() ? "" : ";") + name + "=" + to_string(value);
  return out;
}

}  // namespace

std::string to_csv(const std::vector<RunResult>& results) {
  std::string out =
      "name,family,params,domain,backend,timing,section,metric,display_name,unit,origin,count,mean,median,"
      "p95,min,"
      "max,stddev\n";
  for (const RunResult& r : results) {
    const std::string prefix =
        fmt::format("{},{},{},{},{},{},", field(r.name), field(r.family), field(params(r.point)),
                    to_string(r.domain), field(r.backend), to_string(r.timing));
    auto row = [&](std::string_view section, std::string_view metric, std::string_view display,
                   std::string_view unit, std::string_view origin, const Summary& s) {
      out +=
          prefix + fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", field(section), field(metric),
                               field(display), field(unit), origin, s.count, number(s.mean), number(s.median),
                               number(s.p95), number(s.min), number(s.max), number(s.stddev));
    };
    if (r.skip_reason) row("status", "skipped", *r.skip_reason, "", "", Summary{});
    if (r.error) row("status", "error", *r.error, "", "", Summary{});
    if (r.time.count > 0) {
      row("timing", "real_time", "time per iteration", "s", "timed", r.time);
      row("timing", "cpu_time", "host CPU time per iteration", "s", "timed", r.cpu_time);
    }
    for (const MetricSummary& m : r.metrics) {
      row(m.key.section, m.key.name, m.label(), m.key.unit,
          m.origin == MetricOrigin::timed ? "timed" : "diagnostic_pass", m.stats);
    }
  }
  return out;
}

CsvPrinter::CsvPrinter(std::filesystem::path path) : path_(std::move(path)) {}
void CsvPrinter::report(const RunResult& result) {
  results_.push_back(result);
}
void CsvPrinter::end() {
  core::write_file_atomically(path_, to_csv(results_));
}

}  // namespace diescope::harness
