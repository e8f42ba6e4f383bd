// GpuUtilReader's switch to polling, one test per reason, with times computed by hand.
// Host times are ns; NVML sample stamps are us. The reader starts at T0 (host time, ns).
#include <gtest/gtest.h>

#include "diescope/collect/nvml.hpp"
#include "nvml_fake.hpp"

// Its own namespace: the part's test files compile as one (docs/building.md#one-test-binary-per-part).
namespace diescope::collect::gpu_util_reader_test {
namespace {

namespace abi = nvml_abi;
using fake_nvml::fake_functions;
using fake_nvml::state;
using fake_nvml::util_sample;
using Reason = GpuUtilReader::Reason;

constexpr recording::TimeNs T0 = 1'800'000'000'000'000'000;  // an arbitrary 2027 host time
constexpr recording::TimeNs kMs = recording::kNsPerMs;
constexpr recording::TimeNs kS = recording::kNsPerSecond;
// NVML stamps in us for host time T0 + offset.
constexpr unsigned long long us(recording::TimeNs offset_ns) {
  return static_cast<unsigned long long>((T0 + offset_ns) / 1000);
}

struct Harness {
  std::shared_ptr<abi::Functions> functions = fake_functions();
  std::unique_ptr<Nvml> nvml;
  std::unique_ptr<NvmlDevice> device;
  std::unique_ptr<GpuUtilReader> reader;
  std::vector<recording::UtilSample> out;
  void start() {
    nvml = std::make_unique<Nvml>(functions);
    device = std::make_unique<NvmlDevice>(nvml->device(0));
    reader = std::make_unique<GpuUtilReader>(*device, T0);
  }
  void read_at(recording::TimeNs offset) { reader->read(T0 + offset, out); }
};

TEST(GpuUtilReader, ReadsNewSamplesOnlyAndDropsThoseBeforeTheRun) {
  Harness h;
  h.start();
  // Held by NVML at the first read: one from 1.5 s before the start (describes time before the run,
  // dropped: older than T0 - 1 s), one 0.8 s before (kept: its period may reach into the run), one after.
  state().samples = {util_sample(us(-1500 * kMs), 5), util_sample(us(-800 * kMs), 6),
                     util_sample(us(100 * kMs), 97)};
  h.read_at(150 * kMs);
  ASSERT_EQ(h.out.size(), 2u);
  EXPECT_EQ(h.out[0].ts_ns, T0 - 800 * kMs);
  EXPECT_EQ(h.out[1].ts_ns, T0 + 100 * kMs);
  EXPECT_EQ(h.out[1].pct, 97);
  // Next read asks for samples after the newest seen (us(100 ms)), and gets the one at 300 ms.
  state().samples.push_back(util_sample(us(300 * kMs), 99));
  h.read_at(350 * kMs);
  EXPECT_EQ(state().last_seen_args.back(), us(100 * kMs));
  ASSERT_EQ(h.out.size(), 3u);
  EXPECT_EQ(h.out[2].ts_ns, T0 + 300 * kMs);
  EXPECT_FALSE(h.reader->polling());
}

TEST(GpuUtilReader, SwitchesWhenTheGpuReportsNoSamples) {
  Harness h;
  h.start();
  state().util = {73, 10};
  // The first read asks for everything NVML holds (last seen 0) and gets NOT_FOUND.
  h.read_at(100 * kMs);
  EXPECT_EQ(state().last_seen_args.front(), 0u);
  EXPECT_TRUE(h.reader->polling());
  EXPECT_EQ(h.reader->reason(), Reason::no_samples);
  EXPECT_EQ(h.reader->switched_at_ns(), T0 + 100 * kMs);
  // The same read already polls, so no gap opens.
  ASSERT_EQ(h.out.size(), 1u);
  EXPECT_EQ(h.out[0].source, recording::UtilSource::polled);
  EXPECT_EQ(h.out[0].ts_ns, T0 + 100 * kMs);
  EXPECT_EQ(h.out[0].pct, 73);
  // For good: samples appearing later are not read again.
  state().samples = {util_sample(us(150 * kMs), 50)};
  const std::size_t queries = state().last_seen_args.size();
  h.read_at(200 * kMs);
  EXPECT_EQ(state().last_seen_args.size(), queries);
  EXPECT_EQ(h.out.back().source, recording::UtilSource::polled);
}

TEST(GpuUtilReader, SwitchesWhenTheDriverLacksTheCall) {
  Harness h;
  h.functions->samples = nullptr;
  h.start();
  h.read_at(100 * kMs);
  EXPECT_EQ(h.reader->reason(), Reason::call_missing);
  EXPECT_NE(h.reader->reason_text().find("nvmlDeviceGetSamples"), std::string::npos)
      << h.reader->reason_text();
  ASSERT_EQ(h.out.size(), 1u);
  EXPECT_EQ(h.out[0].source, recording::UtilSource::polled);
}

TEST(GpuUtilReader, SwitchesWhenTheCallIsNotSupported) {
  Harness h;
  h.start();
  state().sample_results = {abi::kErrorNotSupported};
  h.read_at(100 * kMs);
  EXPECT_EQ(h.reader->reason(), Reason::call_missing);
}

TEST(GpuUtilReader, ThreeFailuresNeedSevenSeconds) {
  Harness h;
  h.start();
  state().samples = {util_sample(us(-100 * kMs), 0)};
  // Reads every 1 s, each failing: failures at 1, 2, 3 s are three but span 3 - 1 = 2 s < 7 s, so no
  // switch yet. The failure at 8 s is the 8th and spans 8 - 1 = 7 s >= 7 s: switch at 8 s. (The
  // 10 s no-new-sample rule would fire at 10 s, later.)
  state().sample_results = std::vector<abi::Return>(20, abi::kErrorTimeout);
  for (int s = 1; s <= 7; ++s) {
    h.read_at(s * kS);
    EXPECT_FALSE(h.reader->polling()) << "switched after a failure at " << s << " s";
  }
  h.read_at(8 * kS);
  EXPECT_TRUE(h.reader->polling());
  EXPECT_EQ(h.reader->reason(), Reason::repeated_failures);
  EXPECT_EQ(h.reader->switched_at_ns(), T0 + 8 * kS);
  EXPECT_NE(h.reader->reason_text().find("failed 8 times in a row over 7.0 s"), std::string::npos)
      << h.reader->reason_text();
}

TEST(GpuUtilReader, FastFailuresSwitchOnlyOnceSevenSecondsHavePassed) {
  Harness h;
  h.start();
  // Failures every 100 ms from 0.1 s: the 3rd (0.3 s) spans 0.2 s only. First failure at 0.1 s, so
  // the first failure at or after 0.1 + 7 = 7.1 s switches: the read at 7.1 s (the 71st failure).
  state().sample_results = std::vector<abi::Return>(200, abi::kErrorTimeout);
  for (int k = 1; k <= 70; ++k) h.read_at(k * 100 * kMs);
  EXPECT_FALSE(h.reader->polling());
  h.read_at(71 * 100 * kMs);
  EXPECT_EQ(h.reader->reason(), Reason::repeated_failures);
  EXPECT_EQ(h.reader->switched_at_ns(), T0 + 7100 * kMs);
}

TEST(GpuUtilReader, ASuccessResetsTheFailureCount) {
  Harness h;
  h.start();
  state().samples = {util_sample(us(-100 * kMs), 0)};
  // Reads at 1..20 s. Failures at 1, 2, 3 s; the read at 4 s succeeds with a new sample (resetting the
  // count and the 10 s clock); failures again from 5 s. First failure of the new run: 5 s, so the
  // switch comes at 5 + 7 = 12 s (the 10 s clock would only fire at 4 + 10 = 14 s).
  std::vector<abi::Return> script = {abi::kErrorTimeout, abi::kErrorTimeout, abi::kErrorTimeout,
                                     abi::kSuccess};
  script.resize(30, abi::kErrorTimeout);
  state().sample_results = script;
  for (int s = 1; s <= 11; ++s) {
    if (s == 4) state().samples.push_back(util_sample(us(3900 * kMs), 50));
    h.read_at(s * kS);
    EXPECT_FALSE(h.reader->polling()) << "at " << s << " s";
  }
  h.read_at(12 * kS);
  EXPECT_EQ(h.reader->reason(), Reason::repeated_failures);
  EXPECT_EQ(h.reader->switched_at_ns(), T0 + 12 * kS);
}

TEST(GpuUtilReader, SwitchesWhenNoNewSampleArrivesForTenSeconds) {
  Harness h;
  h.start();
  state().samples = {util_sample(us(50 * kMs), 97)};
  // Reads every 100 ms. The first (0.1 s) finds the sample; none arrives after it. The last new sample
  // arrived at 0.1 s, so the first read at or after 0.1 + 10 = 10.1 s switches: the 101st read.
  for (int k = 1; k <= 100; ++k) h.read_at(k * 100 * kMs);
  EXPECT_FALSE(h.reader->polling());
  h.read_at(101 * 100 * kMs);
  EXPECT_TRUE(h.reader->polling());
  EXPECT_EQ(h.reader->reason(), Reason::no_new_samples);
  EXPECT_EQ(h.reader->switched_at_ns(), T0 + 10100 * kMs);
  EXPECT_NE(h.reader->reason_text().find("for 10.0 s"), std::string::npos) << h.reader->reason_text();
  EXPECT_EQ(h.out.back().source, recording::UtilSource::polled);
}

TEST(GpuUtilReader, AnOldSampleOnTheFirstReadStartsTheTenSecondClock) {
  Harness h;
  h.start();
  // The first read succeeds with an old sample only (dropped, but it is a sample: no "no samples"
  // switch). Then nothing: first read at 0.1 s saw it, so the switch comes at 0.1 + 10 = 10.1 s.
  state().samples = {util_sample(us(-5 * kS), 0)};
  h.read_at(100 * kMs);
  EXPECT_TRUE(h.out.empty());
  EXPECT_FALSE(h.reader->polling());
  h.read_at(10 * kS);
  EXPECT_FALSE(h.reader->polling());
  h.read_at(10100 * kMs);
  EXPECT_EQ(h.reader->reason(), Reason::no_new_samples);
}

TEST(GpuUtilReader, AnUnreadablePollIsNotRecorded) {
  Harness h;
  h.functions->samples = nullptr;
  h.start();
  state().util_result = abi::kErrorUnknown;
  h.read_at(100 * kMs);
  EXPECT_TRUE(h.reader->polling());
  EXPECT_TRUE(h.out.empty());  // no NaN, no 0: simply nothing
}

}  // namespace
}  // namespace diescope::collect::gpu_util_reader_test
