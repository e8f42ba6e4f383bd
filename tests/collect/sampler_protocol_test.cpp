// The sampler's line protocol: every message survives a round trip; malformed lines are refused.
#include <cmath>
#include <gtest/gtest.h>

#include "diescope/collect/sampler.hpp"

namespace diescope::collect {
namespace {

namespace m = sampler_msg;

SamplerMessage round_trip(const SamplerMessage& in) {
  std::string line = format_message(in);
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  std::string why;
  auto out = parse_message(line, &why);
  EXPECT_TRUE(out.has_value()) << line << ": " << why;
  return out.value_or(m::Note{});
}

TEST(SamplerProtocol, SampleKeepsEveryBitOfItsValuesAndNan) {
  // 0.1 and 1/3 have no short decimal form; the shortest round-trip text must still give the same bits.
  m::Sample in{
      1'764'000'000'123'456'789, 1'764'000'000'133'456'789, {0.1, 1.0 / 3.0, 3.951e10, std::nan(""), 0.0}};
  auto out = std::get<m::Sample>(round_trip(in));
  EXPECT_EQ(out.start_ns, in.start_ns);
  EXPECT_EQ(out.end_ns, in.end_ns);
  ASSERT_EQ(out.values.size(), 5u);
  EXPECT_EQ(out.values[0], 0.1);
  EXPECT_EQ(out.values[1], 1.0 / 3.0);
  EXPECT_EQ(out.values[2], 3.951e10);
  EXPECT_TRUE(std::isnan(out.values[3]));
  EXPECT_EQ(out.values[4], 0.0);
}

TEST(SamplerProtocol, DeviceAndTextFieldsRoundTrip) {
  m::Device in{3, 90, 132, "GPU-0f1e2d3c-aaaa-bbbb-cccc-0123456789ab", "GH100", "NVIDIA H200 NVL"};
  auto out = std::get<m::Device>(round_trip(in));
  EXPECT_EQ(out.index, 3);
  EXPECT_EQ(out.compute_capability, 90);
  EXPECT_EQ(out.sm_count, 132);
  EXPECT_EQ(out.uuid, in.uuid);
  EXPECT_EQ(out.chip, "GH100");
  EXPECT_EQ(out.name, "NVIDIA H200 NVL");  // the name keeps its spaces: it is the last field

  auto note = std::get<m::Note>(round_trip(m::Note{"clock", "line one\nline two"}));
  EXPECT_EQ(note.topic, "clock");
  EXPECT_EQ(note.text, "line one line two");  // a newline would end the message; it becomes a space

  auto err =
      std::get<m::Error>(round_trip(m::Error{m::ErrorKind::permission, 35, "cuptiPmSamplingEnable failed"}));
  EXPECT_EQ(err.kind, m::ErrorKind::permission);
  EXPECT_EQ(err.code, 35);
  EXPECT_EQ(err.text, "cuptiPmSamplingEnable failed");

  auto metrics = std::get<m::Metrics>(round_trip(m::Metrics{{"dram__bytes.sum", "gr__cycles_active.avg"}}));
  EXPECT_EQ(metrics.names, (std::vector<std::string>{"dram__bytes.sum", "gr__cycles_active.avg"}));

  auto clock = std::get<m::Clock>(round_trip(m::Clock{-1'700'000'000'000'000'000, 250, "bracketed"}));
  EXPECT_EQ(clock.offset_ns, -1'700'000'000'000'000'000);
  EXPECT_EQ(clock.uncertainty_ns, 250);
  EXPECT_EQ(std::get<m::Gap>(round_trip(m::Gap{10, 30})).to_ns, 30);
  EXPECT_EQ(std::get<m::Off>(round_trip(m::Off{5, ""})).reason, "");
  EXPECT_EQ(std::get<m::Bye>(round_trip(m::Bye{293})).samples, 293);
  EXPECT_EQ(std::get<m::Drain>(round_trip(m::Drain{7, 100, 1234, 1})).decode_us, 1234);
  EXPECT_EQ(std::get<m::Drain>(round_trip(m::Drain{7, 100, 1234, 1})).blanked, 1);
  EXPECT_EQ(std::get<m::Drain>(*parse_message("drain 7 100 1234")).blanked, 0);  // the field is optional
  EXPECT_EQ(std::get<m::Overflow>(round_trip(m::Overflow{9, "lost"})).text, "lost");
  EXPECT_EQ(std::get<m::Hello>(round_trip(m::Hello{1, 4242, "cupti"})).pid, 4242);
  EXPECT_EQ(std::get<m::On>(round_trip(m::On{77})).ts_ns, 77);
}

TEST(SamplerProtocol, RefusesMalformedLines) {
  std::string why;
  EXPECT_FALSE(parse_message("", &why));
  EXPECT_FALSE(parse_message("s 10", &why));         // no end time
  EXPECT_FALSE(parse_message("s 10 20 abc", &why));  // a value that is not a number
  EXPECT_EQ(why, "sample value is not a number");
  EXPECT_FALSE(parse_message("metrics 3 a b", &why));  // shorter than its count
  EXPECT_FALSE(parse_message("metrics 1 a b", &why));  // longer than its count
  EXPECT_FALSE(parse_message("error melted 1 x", &why));
  EXPECT_FALSE(parse_message("frobnicate 1", &why));
  EXPECT_EQ(why, "unknown message 'frobnicate'");
  EXPECT_TRUE(parse_message("s 10 20", &why));  // a sample with no metrics is well formed
}

TEST(SamplerProtocol, ErrorsNameCauseAndFix) {
  auto permission = describe_error(m::Error{m::ErrorKind::permission, 35, ""}, 0);
  EXPECT_EQ(permission.cause, "no permission for GPU performance counters on GPU 0");
  EXPECT_NE(permission.fix.find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos);
  EXPECT_NE(permission.fix.find("/etc/modprobe.d/"), std::string::npos);
  auto busy = describe_error(m::Error{m::ErrorKind::busy, 26, "cuptiPmSamplingEnable failed"}, 1);
  EXPECT_EQ(busy.cause,
            "the performance counters of GPU 1 are held by another profiler (cuptiPmSamplingEnable failed)");
  EXPECT_NE(busy.fix.find("GPU-Util only"), std::string::npos);
  auto missing = describe_error(m::Error{m::ErrorKind::no_device, 0, ""}, 7);
  EXPECT_EQ(missing.cause, "GPU 7 does not exist");
}

}  // namespace
}  // namespace diescope::collect
