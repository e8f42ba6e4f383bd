// Calibration files: the JSON form and back, dates, where they are written and under what name.
#include <gtest/gtest.h>

#include <cstdlib>

#include "diescope/calibrate/calibration_file.hpp"
#include "diescope/core/error.hpp"
#include "helpers.hpp"

namespace diescope::calibrate {
namespace {

using namespace test;
using nlohmann::json;

TEST(CalibrationFile, RoundTripsThroughJson) {
  CalibrationFile f = h200_file();
  f.units.push_back(checked("tensor", Verdict::inconclusive, std::nullopt));
  f.units.back().recipe =
      recording::UnitRecipe{recording::UnitRecipe::Combine::mean, {"a.avg.pct", "b.avg.pct"}};
  f.device_model = json{{"stream", json{{"bandwidth_bytes_per_s", 4.0e12}}}};
  const std::string text = dump_calibration(f);
  ASSERT_EQ(text.back(), '\n');
  const json j = json::parse(text);
  EXPECT_EQ(j["kind"], "diescope-calibration");
  EXPECT_EQ(j["units"][2]["ceiling_pct"], nullptr);
  EXPECT_EQ(j["units"][2]["ceiling_pct_reason"], "no counted step at full load");

  const CalibrationFile back = calibration_from_json(j);
  EXPECT_EQ(back.schema, 3);
  EXPECT_EQ(back.method, 4);
  EXPECT_EQ(back.commit, "0123456789ab");
  EXPECT_EQ(back.date, "2026-11-30T12:34:56Z");
  EXPECT_FALSE(back.quick);
  EXPECT_EQ(back.gpu.model, "NVIDIA H200");
  EXPECT_EQ(back.gpu.driver, "580.159.04");
  EXPECT_EQ(back.gpu.l2_bytes, 52'428'800);
  ASSERT_EQ(back.units.size(), 3u);
  EXPECT_EQ(back.units[0].key, "fp32");
  EXPECT_EQ(back.units[0].verdict, Verdict::pass);
  EXPECT_DOUBLE_EQ(back.units[0].ceiling_pct.value(), 98.8);
  EXPECT_EQ(back.units[2].recipe.combine, recording::UnitRecipe::Combine::mean);
  EXPECT_EQ(back.units[2].recipe.counters, (std::vector<std::string>{"a.avg.pct", "b.avg.pct"}));
  EXPECT_FALSE(back.units[2].ceiling_pct.has_value());
  EXPECT_EQ(back.device_model["stream"]["bandwidth_bytes_per_s"], 4.0e12);
}

std::string format_error(const json& j) {
  try {
    calibration_from_json(j);
  } catch (const CalibrationFormatError& e) {
    return e.what();
  }
  return "read";
}

TEST(CalibrationFile, EveryMalformedFieldIsNamed) {
  const json good = calibration_to_json(h200_file());
  json j = good;
  j["gpu"].erase("driver");
  EXPECT_EQ(format_error(j), "field gpu.driver is missing or not a string");
  j = good;
  j["quick"] = "no";
  EXPECT_EQ(format_error(j), "field quick is missing or not true or false");
  j = good;
  j["date"] = "yesterday";
  EXPECT_EQ(format_error(j), "field date \"yesterday\" is not a UTC time like 2026-11-30T12:34:56Z");
  j = good;
  j["units"][1]["verdict"] = "passed";
  EXPECT_EQ(format_error(j), "field units[1].verdict \"passed\" is not pass, fail, inconclusive or no_check");
  j = good;
  j["units"][0]["recipe"]["combine"] = "mean";  // a mean names two counters
  EXPECT_EQ(format_error(j), "field units[0].recipe.counters has 1 name(s); \"mean\" takes 2");
  j = good;
  j["units"][0]["ceiling_pct"] = "high";
  EXPECT_EQ(format_error(j), "field units[0].ceiling_pct is missing or not a number or null");
  EXPECT_EQ(format_error(json::array()), "not a JSON object");
}

TEST(Dates, ParseAndFormatUtc) {
  // 1970 to 2026: 56 years with 14 leap days (1972 ... 2024) = 20,454 days; January to October 2026 =
  // 304 days; 29 more to the 30th: 20,787 days x 86,400 = 1,795,996,800 s, + 12:34:56 (45,296 s).
  EXPECT_EQ(parse_utc_date("2026-11-30T12:34:56Z"), 1'796'042'096);
  EXPECT_EQ(format_utc_date(1'796'042'096), "2026-11-30T12:34:56Z");
  EXPECT_EQ(parse_utc_date("1970-01-01T00:00:00Z"), 0);
  for (const char* bad : {"2026-02-30T00:00:00Z", "2026-11-30 12:34:56", "2026-11-30T25:00:00Z",
                          "2026-11-30T12:34:56", "2026-11-30T12:34:56+01:00", "", "2026-1l-30T12:34:56Z"})
    EXPECT_FALSE(parse_utc_date(bad).has_value()) << bad;
}

// Sets an environment variable for one test and puts the old value back.
class EnvGuard {
 public:
  explicit EnvGuard(const char* name) : name_(name) {
    if (const char* v = std::getenv(name)) old_ = v;
  }
  ~EnvGuard() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(CalibrationFolder, XdgDataHomeThenHome) {
  EnvGuard xdg("XDG_DATA_HOME"), home("HOME");
  ::setenv("XDG_DATA_HOME", "/data/me", 1);
  ::setenv("HOME", "/home/me", 1);
  EXPECT_EQ(default_calibration_dir(), fs::path("/data/me/diescope/calibrations"));
  // A relative XDG_DATA_HOME is ignored, as the XDG spec says; so is an empty one.
  ::setenv("XDG_DATA_HOME", "relative/data", 1);
  EXPECT_EQ(default_calibration_dir(), fs::path("/home/me/.local/share/diescope/calibrations"));
  ::setenv("XDG_DATA_HOME", "", 1);
  EXPECT_EQ(default_calibration_dir(), fs::path("/home/me/.local/share/diescope/calibrations"));
  ::unsetenv("XDG_DATA_HOME");
  ::unsetenv("HOME");
  EXPECT_FALSE(default_calibration_dir().has_value());
}

TEST(CalibrationWriter, NamesTheFileAndNeverOverwrites) {
  const fs::path dir = scratch("writer") / "not" / "yet";
  const CalibrationFile f = h200_file();
  EXPECT_EQ(calibration_file_name(f), "GH100-580.159.04-20261130T123456Z-full.json");
  const fs::path first = write_calibration(f, dir);
  EXPECT_EQ(first, dir / "GH100-580.159.04-20261130T123456Z-full.json");
  const fs::path second = write_calibration(f, dir);
  EXPECT_EQ(second, dir / "GH100-580.159.04-20261130T123456Z-full-2.json");
  EXPECT_EQ(read_text(first), dump_calibration(f));
  EXPECT_EQ(calibration_from_json(json::parse(read_text(second))).date, f.date);
  CalibrationFile quick = h200_file("2026-12-01T00:00:00Z", true);
  quick.gpu.chip.clear();  // no chip name: the model stands in, made safe for a file name
  EXPECT_EQ(calibration_file_name(quick), "NVIDIA_H200-580.159.04-20261201T000000Z-quick.json");
}

TEST(CalibrationWriter, UnwritableFolderIsAnError) {
  const fs::path dir = scratch("unwritable");
  write_text(dir / "file", "x");  // a file where the folder should go
  try {
    write_calibration(h200_file(), dir / "file" / "calibrations");
    FAIL() << "wrote under a file";
  } catch (const core::Error& e) {
    EXPECT_NE(e.cause().find("cannot create the calibration folder"), std::string::npos) << e.cause();
    EXPECT_EQ(e.exit_code(), core::kExitInput);
  }
}

}  // namespace
}  // namespace diescope::calibrate
