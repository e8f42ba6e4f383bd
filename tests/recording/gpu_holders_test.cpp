// GPU holders (docs/recording-format.md#gpu-holders): holder records round-trip through the writer
// and the reader; the writer and the reader refuse what breaks a rule; a version-2 recording still
// reads and may not hold them.
#include "diescope/recording/format.hpp"
#include "diescope/recording/writer.hpp"
#include "test_files.hpp"

namespace diescope {
namespace {

using recording::GpuHolder;
using recording::HolderRole;
using testing::expect_input_error;
using testing::small_meta;
using testing::TempDir;

TEST(GpuHolders, RoundTripWithRolesAndNames) {
  TempDir dir;
  const auto path = dir / "holders.dsrec";
  const recording::RecordingMeta meta = small_meta();
  const std::vector<GpuHolder> written = {
      {meta.start_ns, 4242, HolderRole::command, "python3"},
      {meta.start_ns, 4250, HolderRole::diescope, "diescope-cupti"},
      {meta.start_ns + 2'000'000'000, 853, HolderRole::other, "my worker (2)"},  // spaces and parentheses
      {meta.start_ns + 3'000'000'000, 854, HolderRole::other, ""},               // name not readable
      {meta.start_ns + 9'000'000'000, 853, HolderRole::gone, ""},
  };
  {
    recording::RecordingWriter out(path, meta);
    for (const GpuHolder& h : written) out.write(h);
    out.close();
  }
  const std::string text = testing::read_bytes(path);
  EXPECT_NE(
      text.find("\nholder " + std::to_string(meta.start_ns + 2'000'000'000) + " 853 other my worker (2)\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("\nholder " + std::to_string(meta.start_ns + 9'000'000'000) + " 853 gone\n"),
            std::string::npos);
  const auto r = recording::open_recording(path);
  const auto& read = r->side().holders;
  ASSERT_EQ(read.size(), written.size());
  for (std::size_t i = 0; i < written.size(); ++i) {
    EXPECT_EQ(read[i].ts_ns, written[i].ts_ns) << i;
    EXPECT_EQ(read[i].pid, written[i].pid) << i;
    EXPECT_EQ(read[i].role, written[i].role) << i;
    EXPECT_EQ(read[i].name, written[i].name) << i;
  }
}

TEST(GpuHolders, RoleWordsRoundTrip) {
  for (HolderRole role : {HolderRole::command, HolderRole::diescope, HolderRole::other, HolderRole::gone})
    EXPECT_EQ(recording::holder_role_from_text(recording::holder_role_text(role)), role);
  EXPECT_EQ(recording::holder_role_text(HolderRole::other), "other");
  EXPECT_FALSE(recording::holder_role_from_text("mine").has_value());
}

TEST(GpuHolders, WriterRefusesABadPidAndANamedGone) {
  TempDir dir;
  recording::RecordingWriter w(dir / "w.dsrec", small_meta());
  EXPECT_THROW(w.write(GpuHolder{100, 0, HolderRole::other, "x"}), core::Error);
  EXPECT_THROW(w.write(GpuHolder{100, 7, HolderRole::gone, "x"}), core::Error);
}

class HolderBadInput : public testing::BadFiles {};

TEST_F(HolderBadInput, LinesAreChecked) {
  expect_refused({
      {"holder 1 0 other x\n", 3, "a pid must be above 0"},
      {"holder 1 5 mine x\n", 3, "the holder role 'mine' is none of"},
      {"holder 1 5 gone x\n", 3, "carries no name"},
      {"holder 1 5\n", 3, "ends before its role"},
      {"holder 2 5 other\nholder 1 6 other\n", 4, "earlier than the previous"},
  });
}

TEST_F(HolderBadInput, VersionTwoReadsWithoutHoldersAndRefusesThem) {
  std::string v2 = header_;
  v2.replace(v2.find("diescope-recording 4"), 20, "diescope-recording 2");
  v2.replace(v2.find("\"format_version\":4"), 18, "\"format_version\":2");
  const auto r = recording::open_recording(raw(v2 + "proc 5 2 0 0\n"));
  EXPECT_EQ(r->meta().format_version, 2);
  EXPECT_TRUE(r->side().holders.empty());
  expect_input_error(raw(v2 + "holder 5 853 other ncu\n"), 3, "version 3 introduced that kind");
}

}  // namespace
}  // namespace diescope
