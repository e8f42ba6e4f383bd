// The parent side of the sampler child, driven by the fake child (no GPU): the ordinary run, a
// child that crashes mid-run, a child that reports an error, lost samples, and stopping by signal.
#include <csignal>
#include <gtest/gtest.h>

#include "diescope/collect/sampler.hpp"
#include "diescope/core/error.hpp"

// Its own namespace: the part's test files compile as one (docs/building.md#one-test-binary-per-part).
namespace diescope::collect::process_test {
namespace {

namespace m = sampler_msg;
using namespace std::chrono_literals;

SamplerConfig fake_config(std::vector<std::string> extra = {}) {
  SamplerConfig config;
  config.executable = DIESCOPE_SAMPLER_FAKE;
  config.device = 0;
  config.interval_ms = 2;
  config.drain_ms = 20;
  config.metrics = {"unit_a", "unit_b"};
  config.extra_args = std::move(extra);
  return config;
}

// Reads until the child closes its output (or 10 s pass).
std::vector<SamplerMessage> read_to_end(SamplerProcess& child) {
  std::vector<SamplerMessage> all;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (child.pump_for(all, 200ms) && std::chrono::steady_clock::now() < deadline) {}
  return all;
}

std::vector<m::Sample> samples_of(const std::vector<SamplerMessage>& messages) {
  std::vector<m::Sample> out;
  for (const auto& message : messages)
    if (auto* s = std::get_if<m::Sample>(&message)) out.push_back(*s);
  return out;
}

template <typename T>
const T* first_of(const std::vector<SamplerMessage>& messages) {
  for (const auto& message : messages)
    if (auto* x = std::get_if<T>(&message)) return x;
  return nullptr;
}

TEST(SamplerProcess, OrdinaryRunStreamsSamplesAndEndsCleanly) {
  SamplerProcess child(fake_config());
  std::vector<SamplerMessage> messages;
  // Wait for a few drains' worth of samples, then stop by closing its input.
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (samples_of(messages).size() < 12 && std::chrono::steady_clock::now() < deadline)
    ASSERT_TRUE(child.pump_for(messages, 200ms));
  child.request_stop();
  auto rest = read_to_end(child);
  messages.insert(messages.end(), rest.begin(), rest.end());
  SamplerExit exit = child.wait(5s);

  EXPECT_TRUE(exit.clean()) << exit.describe();
  ASSERT_FALSE(messages.empty());
  EXPECT_TRUE(std::holds_alternative<m::Hello>(messages.front()));
  EXPECT_TRUE(std::holds_alternative<m::Bye>(messages.back()));
  ASSERT_NE(first_of<m::Metrics>(messages), nullptr);
  EXPECT_EQ(first_of<m::Metrics>(messages)->names, (std::vector<std::string>{"unit_a", "unit_b"}));
  ASSERT_NE(first_of<m::Off>(messages), nullptr);
  EXPECT_EQ(first_of<m::Off>(messages)->reason, "");  // an ordinary stop has no reason
  EXPECT_EQ(first_of<m::Gap>(messages), nullptr);

  auto samples = samples_of(messages);
  ASSERT_GE(samples.size(), 12u);
  EXPECT_EQ(std::get<m::Bye>(messages.back()).samples, static_cast<long>(samples.size()));
  EXPECT_EQ(child.samples_received(), static_cast<long>(samples.size()));
  for (std::size_t k = 0; k < samples.size(); ++k) {
    // The fake's value of metric j in sample k is 10*(j+1) + k%10: sample 11 reads 11 and 21.
    ASSERT_EQ(samples[k].values.size(), 2u);
    EXPECT_EQ(samples[k].values[0], 10.0 + double(k % 10));
    EXPECT_EQ(samples[k].values[1], 20.0 + double(k % 10));
    if (k > 0) {
      EXPECT_EQ(samples[k].start_ns, samples[k - 1].end_ns);          // consecutive samples touch
      EXPECT_EQ(samples[k].end_ns - samples[k].start_ns, 2'000'000);  // 2 ms interval
    }
  }
  // The first sample spans the setup: it starts before "on" and ends one interval after it.
  const auto* on = first_of<m::On>(messages);
  ASSERT_NE(on, nullptr);
  EXPECT_LE(samples[0].start_ns, on->ts_ns);
  EXPECT_EQ(samples[0].end_ns, on->ts_ns + 2'000'000);
}

TEST(SamplerProcess, CrashKeepsTheSamplesThatArrivedAndSaysHowItEnded) {
  SamplerProcess child(fake_config({"--crash-after", "5"}));
  auto messages = read_to_end(child);
  SamplerExit exit = child.wait(5s);

  EXPECT_EQ(samples_of(messages).size(), 5u);  // every sample sent before the crash arrived
  EXPECT_EQ(first_of<m::Bye>(messages), nullptr);
  EXPECT_EQ(first_of<m::Off>(messages), nullptr);
  EXPECT_FALSE(exit.clean());
  EXPECT_FALSE(exit.exited);
  EXPECT_EQ(exit.signal, SIGSEGV);
  EXPECT_FALSE(exit.said_bye);
  EXPECT_NE(exit.describe().find("killed by signal SIGSEGV"), std::string::npos) << exit.describe();
  EXPECT_NE(exit.describe().find("without finishing"), std::string::npos);
}

TEST(SamplerProcess, ChildErrorArrivesAsAMessageWithItsKind) {
  SamplerProcess child(fake_config({"--fail-with", "busy"}));
  auto messages = read_to_end(child);
  SamplerExit exit = child.wait(5s);
  const auto* error = first_of<m::Error>(messages);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->kind, m::ErrorKind::busy);
  EXPECT_TRUE(exit.exited);
  EXPECT_EQ(exit.exit_code, 3);
  EXPECT_TRUE(samples_of(messages).empty());
}

TEST(SamplerProcess, BadArgumentsAreAUsageError) {
  auto config = fake_config({"--interval-ms", "0"});  // overrides the 2 ms given before it
  SamplerProcess child(config);
  auto messages = read_to_end(child);
  SamplerExit exit = child.wait(5s);
  const auto* error = first_of<m::Error>(messages);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->kind, m::ErrorKind::usage);
  EXPECT_EQ(error->text, "--interval-ms must be at least 0.01 (got '0')");
  EXPECT_EQ(exit.exit_code, core::kExitUsage);
}

TEST(SamplerProcess, LostSampleShowsAsAGap) {
  // The fake skips one interval after its 3rd sample: sample 3 starts 2 ms after sample 2 ends.
  SamplerProcess child(fake_config({"--gap-at", "3", "--max-samples", "6"}));
  auto messages = read_to_end(child);
  EXPECT_TRUE(child.wait(5s).clean());
  auto samples = samples_of(messages);
  ASSERT_EQ(samples.size(), 6u);
  const auto* gap = first_of<m::Gap>(messages);
  ASSERT_NE(gap, nullptr);
  EXPECT_EQ(gap->from_ns, samples[2].end_ns);
  EXPECT_EQ(gap->to_ns, samples[3].start_ns);
  EXPECT_EQ(gap->to_ns - gap->from_ns, 2'000'000);
}

// The multi-GPU stand-in (docs/method.md#several-gpus): --fake-level DEVICE:PCT holds every value
// of that GPU at PCT; other GPUs keep the ordinary pattern 10 x (metric + 1) + sample % 10.
TEST(SamplerProcess, FakeLevelHoldsOneGpusValues) {
  SamplerProcess held(fake_config({"--fake-level", "0:37.5", "--fake-level", "1:20", "--max-samples", "4"}));
  auto samples = samples_of(read_to_end(held));
  EXPECT_TRUE(held.wait(5s).clean());
  ASSERT_EQ(samples.size(), 4u);
  for (const auto& sample : samples) EXPECT_EQ(sample.values, (std::vector<double>{37.5, 37.5}));

  SamplerProcess other(fake_config({"--fake-level", "1:20", "--max-samples", "2"}));  // device 0 is not held
  samples = samples_of(read_to_end(other));
  EXPECT_TRUE(other.wait(5s).clean());
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[1].values, (std::vector<double>{11.0, 21.0}));

  SamplerProcess bad(fake_config({"--fake-level", "1"}));
  auto messages = read_to_end(bad);
  bad.wait(5s);
  const auto* error = first_of<m::Error>(messages);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->text, "--fake-level takes DEVICE:PCT, e.g. 1:20 (got '1')");
}

TEST(SamplerProcess, SigtermStopsItCleanly) {
  SamplerProcess child(fake_config());
  std::vector<SamplerMessage> messages;
  while (!first_of<m::On>(messages)) ASSERT_TRUE(child.pump_for(messages, 1s));
  child.send_signal(SIGTERM);
  auto rest = read_to_end(child);
  SamplerExit exit = child.wait(5s);
  EXPECT_TRUE(exit.clean()) << exit.describe();
  ASSERT_NE(first_of<m::Off>(rest), nullptr);
}

TEST(SamplerProcess, MissingExecutableIsADeviceErrorWithAFix) {
  auto config = fake_config();
  config.executable = "/nonexistent/diescope-cupti";
  try {
    SamplerProcess child(config);
    FAIL() << "a missing sampler must throw";
  } catch (const core::DeviceError& e) {
    EXPECT_NE(e.cause().find("could not run the counter sampler /nonexistent/diescope-cupti"),
              std::string::npos);
    EXPECT_NE(e.fix().find("DIESCOPE_CUPTI"), std::string::npos);
  }
}

}  // namespace
}  // namespace diescope::collect::process_test
