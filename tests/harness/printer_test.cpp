// Output formats, read back: Google Benchmark JSON, CSV and the console table, from a run whose
// numbers are fixed by the simulated device.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "diescope/harness/printer.hpp"
#include "diescope/harness/runner.hpp"
#include "helpers.hpp"

namespace diescope::harness {
namespace {

RunResult simulated_run(MeasurementDomain domain = MeasurementDomain::gpu) {
  Benchmark b("copy", [](State& s) {
    s.push_metric(MetricValue::integer("algo", 3, "id").with_display_name("algorithm"));
  });
  b.domain(domain)
      .timing(TimingMode::cold)
      .int_axis("bytes", {1024})
      .bytes_per_iteration(1 << 30)
      .time_unit(TimeUnit::microsecond)
      .cache_flusher([] { return std::make_unique<testing::CountingFlusher>(std::make_shared<int>(0)); })
      .backend([] {
        return std::make_unique<SimulatedGpuBackend>(testing::device_times({0.001, 0.002, 0.003}));
      })
      .stopping({.min_samples = 1, .min_time_s = 0, .max_noise = 0.0, .timeout_s = 100, .max_samples = 3});
  RunResult r = run_point(b, cartesian_product(b.config().axes).front());
  r.family_index = 2;
  return r;
}

RunContext fixed_context() {
  RunContext c;
  c.date = "2026-11-29T12:00:00+00:00";
  c.host_name = "test";
  c.executable = "harness_test";
  c.num_cpus = 4;
  c.mhz_per_cpu = 2100;
  return c;
}

const nlohmann::json* entry(const nlohmann::json& j, const std::string& name, int repetition = -1) {
  for (const auto& b : j["benchmarks"]) {
    if (b["name"] == name && (repetition < 0 || b["repetition_index"] == repetition)) return &b;
  }
  return nullptr;
}

TEST(GoogleBenchmarkJson, PerSampleEntriesAndAggregates) {
  const RunResult r = simulated_run();
  // Through text and back, as compare.py would read it.
  const nlohmann::json j = nlohmann::json::parse(to_google_benchmark_json(fixed_context(), {r}).dump());

  EXPECT_EQ(j["context"]["date"], "2026-11-29T12:00:00+00:00");
  EXPECT_EQ(j["context"]["num_cpus"], 4);
  EXPECT_EQ(j["context"]["library"], "diescope::harness");
  ASSERT_TRUE(j["benchmarks"].is_array());
  EXPECT_EQ(j["benchmarks"].size(), 3u + 7u);  // three samples; mean median stddev cv p95 min max

  const auto* second = entry(j, "copy/bytes:1024", 1);
  ASSERT_TRUE(second);
  EXPECT_EQ((*second)["run_name"], "copy/bytes:1024");
  EXPECT_EQ((*second)["run_type"], "iteration");
  EXPECT_EQ((*second)["repetitions"], 3);
  EXPECT_EQ((*second)["iterations"], 1);
  EXPECT_EQ((*second)["family_index"], 2);
  EXPECT_EQ((*second)["per_family_instance_index"], 0);
  EXPECT_EQ((*second)["threads"], 1);
  EXPECT_EQ((*second)["time_unit"], "us");
  EXPECT_DOUBLE_EQ((*second)["real_time"].get<double>(), 2000.0);  // 0.002 s in us
  EXPECT_DOUBLE_EQ((*second)["bandwidth"].get<double>(), 500.0);   // 1 GiB in 0.002 s
  EXPECT_DOUBLE_EQ((*second)["cuda_event_ms"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ((*second)["algo"].get<double>(), 3.0);
  EXPECT_TRUE((*second)["cpu_time"].is_number());

  const auto* mean = entry(j, "copy/bytes:1024_mean");
  ASSERT_TRUE(mean);
  EXPECT_EQ((*mean)["run_type"], "aggregate");
  EXPECT_EQ((*mean)["aggregate_name"], "mean");
  EXPECT_EQ((*mean)["aggregate_unit"], "time");
  EXPECT_DOUBLE_EQ((*mean)["real_time"].get<double>(), 2000.0);  // (1 + 2 + 3) / 3 ms
  EXPECT_EQ((*mean)["diescope"]["domain"], "gpu");
  EXPECT_EQ((*mean)["diescope"]["backend"], "simulated-gpu");
  EXPECT_EQ((*mean)["diescope"]["samples"], 3);

  const auto* p95 = entry(j, "copy/bytes:1024_p95");
  ASSERT_TRUE(p95);
  EXPECT_DOUBLE_EQ((*p95)["real_time"].get<double>(), 2900.0);  // rank 1.9: 2 + 0.9 x (3 - 2) ms
  const auto* cv = entry(j, "copy/bytes:1024_cv");
  ASSERT_TRUE(cv);
  EXPECT_EQ((*cv)["aggregate_unit"], "percentage");
  EXPECT_DOUBLE_EQ((*cv)["real_time"].get<double>(), 0.5);  // sd 0.001 / mean 0.002
}

TEST(GoogleBenchmarkJson, AggregatesOnlyAndErrors) {
  RunResult ok = simulated_run();
  RunResult failed = ok;
  failed.name = "broken";
  failed.error = "device error 999";
  const nlohmann::json j = to_google_benchmark_json(fixed_context(), {ok, failed}, JsonOptions{false});
  const auto* single = entry(j, "copy/bytes:1024");
  ASSERT_TRUE(single);
  EXPECT_EQ((*single)["repetitions"], 1);
  EXPECT_EQ((*single)["iterations"], 3);  // 1 per sample x 3 samples
  const auto* broken = entry(j, "broken");
  ASSERT_TRUE(broken);
  EXPECT_EQ((*broken)["error_occurred"], true);
  EXPECT_EQ((*broken)["error_message"], "device error 999");
  EXPECT_FALSE(broken->contains("real_time"));  // compare.py skips it rather than comparing nothing
}

TEST(GoogleBenchmarkJson, ClashingMetricNamesAreQualified) {
  RunResult r = simulated_run();
  r.metrics.push_back({MetricKey{"other", "algo", "id"}, "", MetricFormat::integer, MetricOrigin::timed, {}});
  r.metrics.back().stats.count = 1;
  r.metrics.back().stats.mean = 9;
  const nlohmann::json j = to_google_benchmark_json(fixed_context(), {r}, JsonOptions{false});
  const auto* single = entry(j, "copy/bytes:1024");
  ASSERT_TRUE(single);
  EXPECT_DOUBLE_EQ((*single)["algo"].get<double>(), 3.0);  // the default section keeps the plain name
  EXPECT_DOUBLE_EQ((*single)["other.algo"].get<double>(), 9.0);
}

TEST(JsonPrinter, WritesAFileThatParses) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("diescope_harness_json_" + std::to_string(::getpid()) + ".json");
  {
    JsonPrinter printer(path);
    printer.begin(fixed_context());
    printer.report(simulated_run());
    printer.end();
  }
  std::ifstream in(path);
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["benchmarks"][0]["name"], "copy/bytes:1024");
  std::filesystem::remove(path);
}

TEST(Csv, TidyRowsWithHeader) {
  RunResult r = simulated_run();
  r.error = "note, with \"quotes\"";  // escaping
  std::istringstream csv(to_csv({r}));
  std::string header, line;
  std::getline(csv, header);
  EXPECT_EQ(header,
            "name,family,params,domain,backend,timing,section,metric,display_name,unit,origin,count,mean,"
            "median,p95,min,"
            "max,stddev");
  std::getline(csv, line);
  EXPECT_EQ(
      line.rfind(
          "copy/bytes:1024,copy,bytes=1024,gpu,simulated-gpu,cold,status,error,\"note, with \"\"quotes\"\"\"",
          0),
      0u)
      << line;
  std::getline(csv, line);
  // mean 0.002 s, median 0.002, p95 0.0029, min 0.001, max 0.003, sd 0.001
  EXPECT_EQ(
      line,
      "copy/bytes:1024,copy,bytes=1024,gpu,simulated-gpu,cold,timing,real_time,time per iteration,s,timed,3,"
      "0.002,0.002,0.0029,0.001,0.003,0.001");
}

TEST(Console, ShowsTimingMetricsAndTheDomainsDiagnostics) {
  RunResult r = simulated_run(MeasurementDomain::mixed);
  r.diagnostics.push_back({DiagnosticKind::host_pmu, "low IPC: 0.40"});
  r.host_policy = HostDiagnostics::prefix_host;
  const std::string text = format_console(r);
  EXPECT_NE(text.find("copy/bytes:1024  [domain mixed, backend simulated-gpu, cold]"), std::string::npos)
      << text;
  EXPECT_NE(text.find("3 samples x 1 iteration(s)"), std::string::npos);
  EXPECT_NE(text.find("  counting flusher\n"), std::string::npos);  // cold mode names its flush
  EXPECT_NE(text.find("2 ms"), std::string::npos);                  // the mean, scaled
  EXPECT_NE(text.find("algorithm"), std::string::npos);
  EXPECT_NE(text.find("! [host] low IPC: 0.40"), std::string::npos);
}

TEST(MultiPrinter, FeedsEveryPrinter) {
  struct Count final : Printer {
    int* reports;
    explicit Count(int* n) : reports(n) {}
    void report(const RunResult&) override { ++*reports; }
  };
  int a = 0, b = 0;
  MultiPrinter multi;
  multi.add(std::make_unique<Count>(&a)).add(std::make_unique<Count>(&b));
  multi.begin(fixed_context());
  multi.report(simulated_run());
  multi.end();
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 1);
}

}  // namespace
}  // namespace diescope::harness
