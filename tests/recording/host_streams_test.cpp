// Host streams (docs/recording-format.md#host-streams): hstream, task and host records round-trip
// through the writer and the reader with their descriptors; the writer and the reader refuse what
// breaks a rule; version-1 recordings still read, and may not hold the new kinds.
#include <limits>

#include "diescope/metrics/catalog.hpp"
#include "diescope/recording/host_streams.hpp"
#include "diescope/recording/synthetic.hpp"
#include "test_files.hpp"

namespace diescope {
namespace {

using testing::expect_input_error;
using testing::small_meta;
using testing::TempDir;
using testing::write_bytes;

using testing::kNaN;

recording::HostStream stream(std::int64_t id, std::string_view name, const metrics::Scope& scope,
                             int cpus = 4) {
  metrics::PeakInputs inputs;
  inputs.logical_cpus = cpus;
  return recording::HostStream{100, id, *metrics::describe_metric(name, scope, inputs)};
}

TEST(HostStreams, RoundTripWithDescriptorsTasksAndValues) {
  TempDir dir;
  recording::RecordingMeta m = small_meta();
  m.host_interval_ms = 100;
  const auto path = dir / "host.dsrec";
  {
    recording::RecordingWriter w(path, m);
    w.write(stream(0, "cpu__cycles_busy.avg.pct_of_peak_sustained_elapsed", metrics::Scope::system()));
    w.write(stream(1, "cpu__cycles_busy.avg.pct_of_peak_sustained_elapsed", metrics::Scope::cpu(3)));
    w.write(stream(2, "proc__cycles_active.sum.per_second", metrics::Scope::process(4242)));
    w.write(stream(3, "disk__read_bytes.sum.per_second", metrics::Scope::block_device("nvme0n1")));
    w.write(recording::HostTask{100, 4242, 17, "python3 train.py\\x"});
    w.write(recording::HostTask{150, 4243, 4242, "pt_data_worker"});
    const std::vector<recording::HostValue> a = {{0, 12.5}, {1, 100}, {3, 3.95e10}};
    const std::vector<recording::HostValue> b = {{0, kNaN}, {2, 390.5}};
    w.write(recording::HostSample{200, a});
    w.write(recording::HostSample{300, b});
    w.close();
  }
  const auto r = recording::open_recording(path);
  EXPECT_EQ(r->meta().format_version, 4);
  EXPECT_EQ(r->meta().host_interval_ms, 100);
  const auto& streams = r->side().host_streams;
  ASSERT_EQ(streams.size(), 4U);
  EXPECT_EQ(streams[1].descriptor.full_name(), "cpu__cycles_busy.avg.pct_of_peak_sustained_elapsed");
  EXPECT_EQ(streams[1].descriptor.type, metrics::MetricType::throughput);
  EXPECT_EQ(streams[1].descriptor.unit, metrics::Unit::pct);
  EXPECT_EQ(streams[1].descriptor.scope, metrics::Scope::cpu(3));
  EXPECT_EQ(streams[1].descriptor.peak, 100.0);
  // A process's CPU peaks at 100 per logical CPU: 4 CPUs, 400.
  EXPECT_EQ(streams[2].descriptor.peak, 400.0);
  EXPECT_EQ(streams[2].descriptor.scope, metrics::Scope::process(4242));
  // No peak: NaN on the line and the catalog's reason after it.
  EXPECT_FALSE(streams[3].descriptor.peak.has_value());
  EXPECT_EQ(streams[3].descriptor.no_peak_reason, "no /sys/block source gives a device's rated bandwidth");
  EXPECT_EQ(streams[3].descriptor.scope, metrics::Scope::block_device("nvme0n1"));
  ASSERT_EQ(r->side().host_tasks.size(), 2U);
  EXPECT_EQ(r->side().host_tasks[0].name, "python3 train.py\\x");
  EXPECT_EQ(r->side().host_tasks[1].ppid, 4242);

  const recording::HostData data = recording::load_host_data(*r);
  ASSERT_EQ(data.series.size(), 4U);
  EXPECT_EQ(data.interval_ms, 100);
  const recording::HostSeries* total =
      data.find("cpu__cycles_busy.avg.pct_of_peak_sustained_elapsed", metrics::Scope::system());
  ASSERT_NE(total, nullptr);
  ASSERT_EQ(total->points.size(), 2U);
  EXPECT_EQ(total->points[0], (metrics::Point{200, 12.5}));
  EXPECT_TRUE(std::isnan(total->points[1].value));  // NaN travels as nan, never as 0
  EXPECT_EQ(data.series[2].points.size(), 1U);
  EXPECT_EQ(data.series[2].points[0].value, 390.5);
  EXPECT_EQ(data.series[3].points[0].value, 3.95e10);
  EXPECT_EQ(data.all_of("cpu__cycles_busy.avg.pct_of_peak_sustained_elapsed").size(), 2U);
  EXPECT_EQ(data.scope_label(metrics::Scope::process(4243)), "pt_data_worker (pid 4243)");
  EXPECT_EQ(data.scope_label(metrics::Scope::process(9)), "pid 9");
  // A window keeps the points in [from, to).
  EXPECT_EQ(recording::load_host_data(*r, 250, 400).series[0].points.size(), 1U);
}

TEST(HostStreams, WriterRefusesUndeclaredDuplicateAndUnorderedStreams) {
  TempDir dir;
  recording::RecordingMeta m = small_meta();
  m.host_interval_ms = 10;
  recording::RecordingWriter w(dir / "w.dsrec", m);
  const std::vector<recording::HostValue> undeclared = {{7, 1}};
  EXPECT_THROW(w.write(recording::HostSample{100, undeclared}), core::Error);
  w.write(stream(0, "mem__used_bytes", metrics::Scope::system()));
  w.write(stream(1, "mem__available_bytes", metrics::Scope::system()));
  EXPECT_THROW(w.write(stream(1, "mem__cached_bytes", metrics::Scope::system())), core::Error);
  const std::vector<recording::HostValue> descending = {{1, 1}, {0, 2}};
  EXPECT_THROW(w.write(recording::HostSample{100, descending}), core::Error);
  EXPECT_THROW(w.write(recording::HostSample{100, {}}), core::Error);
  const std::vector<recording::HostValue> inf = {{0, std::numeric_limits<double>::infinity()}};
  EXPECT_THROW(w.write(recording::HostSample{100, inf}), core::Error);
  EXPECT_THROW(w.write(recording::HostTask{100, 0, 1, "x"}), core::Error);
}

class HostBadInput : public ::testing::Test {
 protected:
  std::filesystem::path with_records(const std::string& records) {
    const auto path = dir_ / (std::to_string(++files_) + ".dsrec");
    write_bytes(path, header_ + records);
    return path;
  }
  TempDir dir_;
  int files_ = 0;
  std::string header_ = testing::header_for(small_meta(), dir_);
};

const std::string kCpu =
    "hstream 1 0 cpu__cycles_busy.avg.pct_of_peak_sustained_elapsed throughput pct system 100\n";

TEST_F(HostBadInput, DeclarationsAreChecked) {
  expect_input_error(with_records("hstream 1 -1 mem__used_bytes counter bytes system nan\n"), 3, "negative");
  expect_input_error(with_records("hstream 1 0 mem_used_bytes counter bytes system nan\n"), 3, "no \"__\"");
  expect_input_error(with_records("hstream 1 0 mem__used_bytes gauge bytes system nan\n"), 3,
                     "'gauge' is not counter, ratio or throughput");
  expect_input_error(with_records("hstream 1 0 mem__used_bytes counter furlongs system nan\n"), 3,
                     "unit 'furlongs'");
  expect_input_error(with_records("hstream 1 0 mem__used_bytes counter bytes process:x nan\n"), 3,
                     "scope 'process:x'");
  expect_input_error(with_records("hstream 1 0 mem__used_bytes counter bytes system inf\n"), 3, "infinite");
  expect_input_error(with_records("hstream 1 0 mem__used_bytes counter bytes system 5 why\n"), 3,
                     "write the peak as nan");
  // A ratio takes no rollup: the type's suffix rules apply.
  expect_input_error(with_records("hstream 1 0 disk__busy.avg.pct ratio pct device:sda 100\n"), 3, "ratio");
  expect_input_error(with_records(kCpu + kCpu), 0, "declared twice");
}

TEST_F(HostBadInput, SamplesAreCheckedWhenTheirStreamIsRead) {
  auto read_host = [](const std::filesystem::path& path) {
    const auto r = recording::open_recording(path);
    auto cursor = r->stream<recording::HostSample>();
    recording::HostSample s;
    while (cursor->next(s)) {}
  };
  auto expect_bad = [&](const std::string& records, const std::string& what) {
    const auto path = with_records(records);
    try {
      read_host(path);
      ADD_FAILURE() << "no error for: " << records;
    } catch (const core::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_bad(kCpu + "host 2 1 5\n", "host stream 1 is not declared");
  expect_bad(kCpu + "host 2\n", "no values");
  expect_bad(kCpu + "host 2 0\n", "ends before its value");
  expect_bad(kCpu + "host 2 0 inf\n", "infinite");
  expect_bad(kCpu + "host 2 0 1 0 2\n", "must ascend");
  expect_bad(kCpu + "host 3 0 1\nhost 2 0 1\n", "earlier than the previous");
  read_host(with_records(kCpu + "host 2 0 nan\nhost 3 0 -0\n"));  // NaN is allowed
}

TEST_F(HostBadInput, VersionOneReadsWithoutHostStreamsAndRefusesThem) {
  // A version-1 header: no host_interval_ms in the meta.
  std::string v1 = header_;
  v1.replace(v1.find("diescope-recording 4"), 20, "diescope-recording 1");
  v1.replace(v1.find("\"format_version\":4"), 18, "\"format_version\":1");
  const auto at = v1.find(",\"host_interval_ms\":null");
  ASSERT_NE(at, std::string::npos);
  v1.erase(at, std::string(",\"host_interval_ms\":null").size());
  const auto old = dir_ / "v1.dsrec";
  write_bytes(old, v1 + "util 5 50 samples\n");
  const auto r = recording::open_recording(old);
  EXPECT_EQ(r->meta().format_version, 1);
  EXPECT_TRUE(std::isnan(r->meta().host_interval_ms));
  EXPECT_TRUE(recording::load_host_data(*r).empty());
  const auto bad = dir_ / "v1-host.dsrec";
  write_bytes(bad, v1 + kCpu);
  expect_input_error(bad, 3, "version 2 introduced that kind");
  // Version 2 requires the field.
  std::string v2 = header_;
  v2.erase(v2.find(",\"host_interval_ms\":null"), std::string(",\"host_interval_ms\":null").size());
  const auto missing = dir_ / "v2-missing.dsrec";
  write_bytes(missing, v2);
  expect_input_error(missing, 2, "host_interval_ms");
}

TEST(HostStreams, SyntheticInputBoundRecordingReadsBack) {
  TempDir dir;
  const recording::SyntheticSpec spec = recording::input_bound_spec();
  recording::write_synthetic_recording(dir / "ib.dsrec", spec);
  const auto r = recording::open_recording(dir / "ib.dsrec");
  const recording::HostData data = recording::load_host_data(*r);
  EXPECT_EQ(data.series.size(), spec.host_streams.size());
  EXPECT_EQ(data.tasks.size(), 5U);
  // 20 cycles of 1 s, a host sample every 100 ms: 200 samples, each stream in each.
  EXPECT_EQ(data.series[0].points.size(), 200U);
  // The first sample covers the first 100 ms of a step: (100 + 4 * 70) / 8 = 47.5% busy.
  EXPECT_EQ(data.series[0].points[0].value, 47.5);
  // The seventh covers 600..700 ms, all wait: (5 + 4 * 98) / 8 = 49.625, written to 4 digits.
  EXPECT_EQ(data.series[0].points[6].value, 49.62);
}

}  // namespace
}  // namespace diescope
