// docs/units.json must be what the tables say today.
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>

#include "diescope/collect/unit_tables.hpp"

namespace diescope::collect {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(UnitsJson, DocsFileIsCurrent) {
  const std::string path = std::string(DIESCOPE_SOURCE_DIR) + "/docs/units.json";
  const std::string committed = read_file(path);
  ASSERT_FALSE(committed.empty()) << path << " is missing: run diescope units --write docs/units.json";
  EXPECT_TRUE(committed == units_json())
      << "docs/units.json differs from the unit tables: run diescope units --write docs/units.json";
}

TEST(UnitsJson, CarriesEveryTableUnitRecipeFlagAndNote) {
  const auto doc = nlohmann::json::parse(units_json());
  ASSERT_EQ(doc["tables"].size(), unit_tables().size());
  const auto& hopper = doc["tables"][0];
  EXPECT_EQ(hopper["name"], "hopper-gh100");
  EXPECT_EQ(hopper["chips"], nlohmann::json::array({"GH100"}));
  EXPECT_EQ(hopper["units"][0]["key"], "fp32");
  EXPECT_EQ(hopper["units"][0]["recipe"]["combine"], "counter");
  EXPECT_EQ(hopper["units"][0]["flags"], nlohmann::json::array());
  EXPECT_EQ(hopper["units"][3]["key"], "ldst");
  EXPECT_EQ(hopper["units"][3]["flags"], nlohmann::json::array({"stand_in_counter", "different_measure"}));
  EXPECT_FALSE(hopper["units"][0]["note"].get<std::string>().empty());
  EXPECT_FALSE(hopper["note"].get<std::string>().empty());
  // A mean lists both counters.
  const auto& ada = doc["tables"][2];
  EXPECT_EQ(ada["name"], "ada-ad10x");
  EXPECT_EQ(ada["units"][0]["recipe"]["combine"], "mean");
  EXPECT_EQ(ada["units"][0]["recipe"]["counters"].size(), 2u);
  EXPECT_EQ(doc["tables"].back()["units"][1]["flags"], nlohmann::json::array({"different_measure"}));
}

}  // namespace
}  // namespace diescope::collect
