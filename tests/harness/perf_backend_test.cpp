#include <gtest/gtest.h>

#include <cerrno>
#include <map>
#include <set>

#include "diescope/harness/perf_backend.hpp"

namespace diescope::harness {
namespace {

// Stands in for the kernel: counters in `missing` fail to open with their errno; reads return
// `value_of` per counter with the given enabled/running times.
class FakePerfApi final : public PerfEventApi {
 public:
  std::map<PerfCounter, int> missing;           // counter -> errno
  std::set<PerfCounter> missing_in_group_only;  // open alone but not in a group
  std::map<PerfCounter, std::uint64_t> value_of;
  std::uint64_t enabled = 1000, running = 1000;
  bool group_never_runs = false;
  int opens_in_group = 0, opens_alone = 0, closes = 0;

  int open(PerfCounter c, int group_fd, bool as_group) override {
    (as_group ? opens_in_group : opens_alone)++;
    if (auto it = missing.find(c); it != missing.end()) return -it->second;
    if (as_group && missing_in_group_only.count(c)) return -EINVAL;
    const int fd = next_fd_++;
    counter_of_[fd] = c;
    if (as_group) members_[group_fd == -1 ? fd : group_fd].push_back(c);
    return fd;
  }
  void close(int fd) override {
    ++closes;
    counter_of_.erase(fd);
  }
  void reset_and_enable(int, bool) override {}
  void disable(int, bool) override {}
  bool read(int fd, bool whole_group, std::span<PerfReading> out) override {
    if (whole_group) {
      const auto& m = members_.at(fd);
      if (m.size() != out.size()) return false;
      for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = {value_of[m[i]], enabled, group_never_runs ? 0 : running};
      return true;
    }
    out[0] = {value_of[counter_of_.at(fd)], enabled, running};
    return true;
  }

 private:
  int next_fd_ = 3;
  std::map<int, PerfCounter> counter_of_;
  std::map<int, std::vector<PerfCounter>> members_;
};

const MetricValue* find(const SampleMeasurement& m, const std::string& name) {
  for (const MetricValue& v : m.metrics) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

SampleMeasurement one_sample(LinuxPerfBackend& backend, std::uint64_t iterations) {
  SampleMeasurement m;
  backend.begin();
  backend.end();
  backend.collect(SampleWindow{std::chrono::milliseconds(1), iterations, 0, SamplePhase::timed}, m);
  return m;
}

std::unique_ptr<FakePerfApi> api_with_values() {
  auto api = std::make_unique<FakePerfApi>();
  api->value_of = {{PerfCounter::cycles, 2000},          {PerfCounter::instructions, 3000},
                   {PerfCounter::branches, 400},         {PerfCounter::branch_misses, 40},
                   {PerfCounter::cache_references, 200}, {PerfCounter::cache_misses, 50},
                   {PerfCounter::task_clock, 1'500'000}, {PerfCounter::context_switches, 2},
                   {PerfCounter::page_faults, 5}};
  return api;
}

TEST(LinuxPerfBackend, GroupOpensAndMetricsArePerIteration) {
  auto api = api_with_values();
  FakePerfApi* fake = api.get();
  LinuxPerfBackend backend(std::move(api));
  EXPECT_EQ(backend.mode(), PerfMode::group);
  EXPECT_EQ(fake->opens_in_group, 8);  // every counter but context switches
  EXPECT_EQ(fake->opens_alone, 1);     // context switches, kernel side included
  EXPECT_TRUE(backend.diagnostics().empty());

  const SampleMeasurement m = one_sample(backend, 10);
  EXPECT_FALSE(m.duration_s);                                 // host-timed: the runner uses its own clock
  EXPECT_DOUBLE_EQ(find(m, "cycles")->value, 200.0);          // 2000 / 10 iterations
  EXPECT_DOUBLE_EQ(find(m, "instructions")->value, 300.0);    // 3000 / 10
  EXPECT_DOUBLE_EQ(find(m, "ipc")->value, 1.5);               // 3000 / 2000
  EXPECT_DOUBLE_EQ(find(m, "branch_miss_pct")->value, 10.0);  // 40 / 400
  EXPECT_DOUBLE_EQ(find(m, "cache_miss_pct")->value, 25.0);   // 50 / 200
  EXPECT_DOUBLE_EQ(find(m, "task_clock_ms")->value, 1.5);     // 1.5e6 ns
  EXPECT_DOUBLE_EQ(find(m, "context_switches")->value, 2.0);
  EXPECT_DOUBLE_EQ(find(m, "page_faults")->value, 5.0);
  for (const MetricValue& v : m.metrics) EXPECT_EQ(v.section, "host_pmu");
}

TEST(LinuxPerfBackend, FallsBackToIndividualCountersWhenTheGroupFails) {
  auto api = api_with_values();
  api->missing_in_group_only = {PerfCounter::instructions};
  FakePerfApi* fake = api.get();
  LinuxPerfBackend backend(std::move(api));
  EXPECT_EQ(backend.mode(), PerfMode::individual);
  EXPECT_TRUE(backend.has(PerfCounter::instructions));
  EXPECT_EQ(fake->closes, 1);  // the group's leader (cycles) was closed before falling back
  const auto d = backend.diagnostics();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].message.find("instructions could not be opened in it"), std::string::npos);
  EXPECT_DOUBLE_EQ(find(one_sample(backend, 1), "ipc")->value, 1.5);
}

TEST(LinuxPerfBackend, MissingHardwareCountersAreNamedAndSoftwareOnesStillCount) {
  auto api = api_with_values();
  for (auto c : {PerfCounter::cycles, PerfCounter::instructions, PerfCounter::branches,
                 PerfCounter::branch_misses, PerfCounter::cache_references, PerfCounter::cache_misses}) {
    api->missing[c] = ENOENT;  // a VM without a virtual PMU
  }
  LinuxPerfBackend backend(std::move(api));
  EXPECT_EQ(backend.mode(), PerfMode::individual);
  const auto d = backend.diagnostics();
  ASSERT_EQ(d.size(), 2u);  // the group fallback, then the missing counters
  EXPECT_NE(
      d[1].message.find("cycles, instructions, branches, branch-misses, cache-references, cache-misses"),
      std::string::npos);
  EXPECT_NE(d[1].message.find("virtual machines"), std::string::npos);
  const SampleMeasurement m = one_sample(backend, 1);
  EXPECT_FALSE(find(m, "ipc"));
  EXPECT_DOUBLE_EQ(find(m, "task_clock_ms")->value, 1.5);
}

TEST(LinuxPerfBackend, NoCounterAtAllIsADiagnosticAndTimingStillWorks) {
  auto api = std::make_unique<FakePerfApi>();
  for (int i = 0; i < static_cast<int>(kPerfCounterCount); ++i)
    api->missing[static_cast<PerfCounter>(i)] = EACCES;
  LinuxPerfBackend backend(std::move(api));
  EXPECT_EQ(backend.mode(), PerfMode::unavailable);
  const auto d = backend.diagnostics();
  ASSERT_FALSE(d.empty());
  EXPECT_NE(d.back().message.find("wall clock only"), std::string::npos);
  bool names_paranoid = false;
  for (const Diagnostic& x : d) names_paranoid |= x.message.find("perf_event_paranoid") != std::string::npos;
  EXPECT_TRUE(names_paranoid);
  EXPECT_TRUE(one_sample(backend, 1).metrics.empty());
}

TEST(LinuxPerfBackend, AGroupThatNeverRunsFallsBack) {
  auto api = api_with_values();
  api->group_never_runs = true;
  LinuxPerfBackend backend(std::move(api));
  EXPECT_EQ(backend.mode(), PerfMode::individual);
  EXPECT_NE(backend.diagnostics().front().message.find("never got the hardware counters"), std::string::npos);
}

TEST(LinuxPerfBackend, MultiplexedCountsAreScaledAndSaidToBe) {
  auto api = api_with_values();
  api->running = 500;  // counting half the time it was enabled
  LinuxPerfBackend backend(std::move(api));
  const SampleMeasurement m = one_sample(backend, 1);
  EXPECT_DOUBLE_EQ(find(m, "cycles")->value, 4000.0);  // 2000 x 1000 / 500
  const auto d = backend.diagnostics();
  ASSERT_FALSE(d.empty());
  EXPECT_NE(d.back().message.find("multiplexed (counting as little as 50%"), std::string::npos);
}

TEST(LinuxPerfBackend, RealKernelEitherCountsOrSaysWhy) {
  // On this machine's kernel: hardware counters may be missing (VMs, containers). Either the cycle
  // counter works, or a diagnostic names it.
  LinuxPerfBackend backend;
  volatile double sink = 0;
  SampleMeasurement m;
  backend.begin();
  for (int i = 0; i < 1'000'000; ++i) sink = sink + i;
  backend.end();
  backend.collect(SampleWindow{std::chrono::milliseconds(1), 1, 0, SamplePhase::timed}, m);
  if (backend.has(PerfCounter::cycles)) {
    ASSERT_TRUE(find(m, "cycles"));
    EXPECT_GT(find(m, "cycles")->value, 1e5);  // a million additions take more cycles than that
  } else {
    bool named = false;
    for (const Diagnostic& d : backend.diagnostics()) named |= d.message.find("cycles") != std::string::npos;
    EXPECT_TRUE(named);
  }
}

}  // namespace
}  // namespace diescope::harness
