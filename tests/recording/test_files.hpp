// Helpers for the recording tests: a private temporary folder, files with given bytes, and a
// check that opening or reading a file fails with an InputError naming the file and line.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "diescope/core/error.hpp"
#include "diescope/recording/format.hpp"
#include "diescope/recording/reader.hpp"
#include "diescope/recording/records.hpp"
#include "diescope/recording/writer.hpp"

namespace diescope::testing {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "diescope-recording-test-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

inline std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// NaN equals NaN; otherwise exact, including the sign of zero.
inline bool same_value(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

// A small meta with every kind of column: 2 units, 1 diagnostic, 1 count, 2 engines.
inline recording::RecordingMeta small_meta() {
  recording::RecordingMeta m;
  m.tool_version = "test";
  m.method = 3;
  m.gpu.index = 1;
  m.gpu.uuid = "GPU-1234";
  m.gpu.model = "NVIDIA H200";
  m.gpu.chip = "GH100";
  m.gpu.driver = "580.159";
  m.gpu.compute_capability = 90;
  m.gpu.l2_bytes = 52428800;
  m.gpu.sm_count = 132;
  m.unit_table = "hopper-test";
  auto col = [](std::string key, std::string unit, recording::UnitSource source, bool counted) {
    recording::ColumnDef c;
    c.key = key;
    c.label = "Label of " + key;
    c.metric = "sm__" + key + ".avg.pct_of_peak_sustained_elapsed";
    c.recipe.counters = {c.metric};
    c.source = source;
    c.unit = std::move(unit);
    c.counted_by_gpu_util = counted;
    return c;
  };
  m.units = {col("fp32", "pct", recording::UnitSource::chip, true),
             col("dram", "pct", recording::UnitSource::chip, true)};
  m.units[0].recipe.combine = recording::UnitRecipe::Combine::mean;
  m.units[0].recipe.counters = {"sm__inst_executed_pipe_fmaheavy", "sm__inst_executed_pipe_fmalite"};
  m.units[0].flags = {recording::UnitFlag::stand_in_counter, recording::UnitFlag::different_measure};
  m.units[0].note = "mean of the \"two\" halves\nsecond line";
  m.diagnostics = {col("sm_active", "pct", recording::UnitSource::chip, true)};
  m.counts = {col("dram_bytes", "bytes", recording::UnitSource::chip, true)};
  m.engines = {col("nvenc", "pct", recording::UnitSource::nvml_engine, false),
               col("nvdec", "pct", recording::UnitSource::nvml_engine, false)};
  m.interval_ms = 10;
  m.drain_ms = 1000;
  m.gpu_util_resolution_pct = 1;
  m.start_ns = 1'700'000'000'000'000'000;
  m.run_type = "round";
  m.command = {"python", "train.py", "--lr", "3e-4", "caf\xc3\xa9"};
  m.host = "node-7";
  m.duty_on_ms = 100;
  m.duty_period_ms = 1000;
  return m;
}

// The first two lines of a recording with `meta`, exactly as the writer makes them.
inline std::string header_for(const recording::RecordingMeta& meta, const TempDir& dir) {
  const auto path = dir / "header.dsrec";
  {
    recording::RecordingWriter w(path, meta);
    w.close();
  }
  return read_bytes(path);
}

// Writes the small meta's header (as the writer makes it) and then `records`, by hand, into
// `dir / name`: the recordings other tools may write. Returns the path.
inline std::filesystem::path small_recording(const TempDir& dir, const std::string& name,
                                             const std::string& records) {
  const auto path = dir / name;
  write_bytes(path, header_for(small_meta(), dir) + records);
  return path;
}

// Reads every stream of a recording to its end (what the analysis does).
inline void read_everything(const recording::Recording& source) {
  recording::for_each_kind<recording::StreamKinds>([&]<typename Record>(std::type_identity<Record>) {
    Record r;
    for (auto s = source.stream<Record>(); s->next(r);) {}
  });
}

// Opens and reads `path` whole; expects an InputError for `line` whose message names the file and
// contains `fragment`. Returns the message.
inline std::string expect_input_error(const std::filesystem::path& path, long line,
                                      const std::string& fragment) {
  try {
    const auto source = recording::open_recording(path);
    read_everything(*source);
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_EQ(e.path(), path.string());
    const std::string where =
        line > 0 ? path.string() + ":" + std::to_string(line) + ": " : path.string() + ": ";
    EXPECT_EQ(std::string(e.what()).rfind(where, 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << "message: " << e.what();
    EXPECT_FALSE(e.fix().empty());
    EXPECT_EQ(e.exit_code(), core::kExitInput);
    return e.what();
  }
  ADD_FAILURE() << "no InputError for " << path << " (expected line " << line << ", '" << fragment << "')";
  return {};
}

// The fixture of the tests that feed the reader bad files: a private folder and the small meta's
// header (its first two lines). Each file gets a new name: rewriting one file over and over is slow
// on ext4.
class BadFiles : public ::testing::Test {
 protected:
  std::filesystem::path fresh(const std::string& name) {
    return dir_ / (std::to_string(++files_) + "-" + name);
  }
  // The header followed by `records`: records start on line 3.
  std::filesystem::path with_records(const std::string& records, const std::string& name = "bad.dsrec") {
    return raw(header_ + records, name);
  }
  std::filesystem::path raw(const std::string& bytes, const std::string& name = "raw.dsrec") {
    auto path = fresh(name);
    write_bytes(path, bytes);
    return path;
  }
  // Records after the header, refused at `line` (the header is lines 1 and 2) with a message that
  // contains `fragment`.
  struct Refused {
    std::string records;
    long line = 0;
    std::string fragment;
  };
  void expect_refused(const std::vector<Refused>& cases) {
    for (const Refused& c : cases) {
      SCOPED_TRACE(c.records);
      expect_input_error(with_records(c.records), c.line, c.fragment);
    }
  }
  // The header with `from` replaced by `to`.
  std::string header_with(const std::string& from, const std::string& to) {
    std::string h = header_;
    const auto at = h.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) h.replace(at, from.size(), to);
    return h;
  }

  TempDir dir_;
  int files_ = 0;
  std::string header_ = header_for(small_meta(), dir_);
};

}  // namespace diescope::testing
