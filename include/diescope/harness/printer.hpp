// Printers: one interface for every output (console table, Google Benchmark JSON, CSV) and a
// multiplexer that feeds several at once. Results arrive one parameter point at a time.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "diescope/harness/flush.hpp"

namespace diescope::harness {

struct RunResult;

// What Google Benchmark writes as "context": the machine and the run.
struct RunContext {
  std::string date;  // ISO 8601 with offset
  std::string host_name;
  std::string executable;
  int num_cpus = 0;
  double mhz_per_cpu = 0;
  bool cpu_scaling_enabled = false;
  std::vector<double> load_avg;
  std::vector<HostCache> caches;

  static RunContext of_this_process(std::string executable);
};

class Printer {
 public:
  virtual ~Printer() = default;
  virtual void begin(const RunContext&) {}
  virtual void report(const RunResult& result) = 0;
  virtual void end() {}
};

class MultiPrinter final : public Printer {
 public:
  MultiPrinter& add(std::unique_ptr<Printer> printer);
  void begin(const RunContext& context) override;
  void report(const RunResult& result) override;
  void end() override;
  bool empty() const { return printers_.empty(); }

 private:
  std::vector<std::unique_ptr<Printer>> printers_;
};

// A table per result: timing statistics, then the custom metrics grouped by section, the host-PMU
// rows under the domain's label, and the visible diagnostics.
class ConsolePrinter final : public Printer {
 public:
  explicit ConsolePrinter(std::ostream& out) : out_(out) {}
  void begin(const RunContext& context) override;
  void report(const RunResult& result) override;

 private:
  std::ostream& out_;
};
std::string format_console(const RunResult& result);

struct JsonOptions {
  // One "iteration" entry per kept sample (repetitions = samples), which is what lets compare.py
  // run its U test; off: a single entry per point with the mean. Aggregates are always written.
  bool per_sample_entries = true;
};

// Google Benchmark's JSON: {"context": {...}, "benchmarks": [...]}, each entry with name, run_name,
// run_type, repetitions, repetition_index, threads, iterations, real_time, cpu_time, time_unit and the
// metrics as counters; aggregates mean, median, stddev, cv, p95, min and max follow each point. A point
// that failed is written with error_occurred and error_message, as Google Benchmark does.
nlohmann::ordered_json to_google_benchmark_json(const RunContext& context,
                                                const std::vector<RunResult>& results,
                                                const JsonOptions& options = {});

class JsonPrinter final : public Printer {
 public:
  JsonPrinter(std::filesystem::path path, JsonOptions options = {});
  void begin(const RunContext& context) override;
  void report(const RunResult& result) override;
  void end() override;  // writes the file atomically

 private:
  std::filesystem::path path_;
  JsonOptions options_;
  RunContext context_;
  std::vector<RunResult> results_;
};

// Tidy CSV: one row per (point, statistic source): timing rows (real_time, cpu_time in seconds per
// iteration) and one row per metric summary, each with count, mean, median, p95, min, max, stddev.
std::string to_csv(const std::vector<RunResult>& results);

class CsvPrinter final : public Printer {
 public:
  explicit CsvPrinter(std::filesystem::path path);
  void report(const RunResult& result) override;
  void end() override;  // writes the file atomically

 private:
  std::filesystem::path path_;
  std::vector<RunResult> results_;
};

}  // namespace diescope::harness
