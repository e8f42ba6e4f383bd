// `diescope agent` as a user runs it, in replay mode: records in the store and on stdout, a clean
// stop on SIGTERM, and a store that survives kill -9 in the middle of writes.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "diescope/analysis/analyze.hpp"
#include "diescope/recording/reader.hpp"
#include "running_program.hpp"
#include "sql_probe.hpp"

// Its own namespace: the part's test files compile as one (docs/building.md#one-test-binary-per-part).
namespace diescope::agent::cli_test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::RunningProgram;

const std::string kDiescope = DIESCOPE_BINARY;
const std::string kRecording = std::string(DIESCOPE_SOURCE_DIR) + "/data/recordings/h200-probe-shape.dsrec";

fs::path temp_dir(const std::string& name) {
  return testing::fresh_dir("agent-cli", name);
}

struct Db : test_support::SqlProbe {
  explicit Db(const fs::path& p) : SqlProbe(p, SQLITE_OPEN_READWRITE) {}
};

TEST(AgentCli, ReplayWritesRecordsToTheStoreAndStdout) {
  const fs::path dir = temp_dir("replay");
  const fs::path db = dir / "agent.db";
  // Always on, one period longer than the 3.55 s recording: one record covering all of it, at 4x.
  RunningProgram agent({kDiescope, "agent", "--replay", kRecording, "--replay-speed", "4", "--duty-on-ms",
                        "60000", "--duty-period-ms", "60000", "--db", db.string(), "--ndjson",
                        "--no-listen"});
  ASSERT_TRUE(agent.started());
  const auto status = agent.wait(15s);
  ASSERT_TRUE(status) << "the agent did not end with the replay";
  EXPECT_EQ(status->describe(), "exited with code 0") << agent.stderr_text();
  const auto lines = agent.drain_lines();
  ASSERT_EQ(lines.size(), 1u) << agent.stderr_text();
  const auto record = nlohmann::json::parse(lines[0]);

  // The same DIE-Util as the method's analysis of the whole recording, run here independently.
  const analysis::Analysis expected = analysis::analyze(*recording::open_recording(kRecording));
  ASSERT_TRUE(std::isfinite(expected.run.die_util_pct));
  EXPECT_DOUBLE_EQ(record["chip"]["die_util_pct"].get<double>(), expected.run.die_util_pct);
  EXPECT_EQ(record["chip"]["samples_used"].get<long>(), expected.run.samples_used);
  EXPECT_EQ(record["chip"]["limiting_unit"], *expected.run.limiting_unit);
  EXPECT_EQ(record["source"], "replay");
  EXPECT_EQ(record["method"], expected.method);
  // The recording is an H200's at 10 ms with the default duty cycle, a setting the cost table holds:
  // the record carries the measured interval, not a reason.
  EXPECT_TRUE(record["cost"]["reason"].is_null()) << record["cost"].dump();
  EXPECT_LT(record["cost"]["slowdown_lo_pct"].get<double>(), record["cost"]["slowdown_hi_pct"].get<double>());

  Db store(db);
  EXPECT_EQ(store.text("SELECT count(*) FROM records"), "1");
  EXPECT_EQ(store.text("SELECT id FROM records"), std::to_string(record["id"].get<long>()));
  EXPECT_DOUBLE_EQ(std::stod(store.text("SELECT printf('%.17g', die_util_pct) FROM records")),
                   expected.run.die_util_pct);
  EXPECT_EQ(store.text("PRAGMA integrity_check"), "ok");
}

TEST(AgentCli, SigtermStopsWithTheCountersDisabled) {
  const fs::path dir = temp_dir("sigterm");
  const fs::path db = dir / "agent.db";
  RunningProgram agent({kDiescope, "agent", "--replay", kRecording, "--replay-loop", "--replay-speed", "2",
                        "--duty-on-ms", "500", "--duty-period-ms", "1000", "--drain-ms", "250", "--db",
                        db.string(), "--ndjson", "--no-listen"});
  ASSERT_TRUE(agent.started());
  ASSERT_TRUE(agent.read_line(10s)) << "no record came: " << agent.stderr_text();
  agent.signal(SIGTERM);
  const auto status = agent.wait(10s);
  ASSERT_TRUE(status) << "the agent did not stop on SIGTERM";
  EXPECT_EQ(status->describe(), "exited with code 0");
  const std::string err = agent.stderr_text();
  EXPECT_NE(err.find("stopping (SIGTERM): disabling the counters"), std::string::npos) << err;
  EXPECT_NE(err.find("stopped; counters disabled"), std::string::npos) << err;
  Db store(db);
  EXPECT_EQ(store.text("PRAGMA integrity_check"), "ok");
  EXPECT_GE(std::stoi(store.text("SELECT count(*) FROM records")), 1);
}

TEST(AgentCli, Kill9LeavesEveryCommittedRecordInAnIntactStore) {
  const fs::path dir = temp_dir("kill9");
  const fs::path db = dir / "agent.db";
  // A record every 2 ms of wall time (100 ms periods at 50x), each its own transaction: the
  // kill lands in the middle of writes. A line reaches stdout only after its commit.
  RunningProgram agent({kDiescope, "agent", "--replay", kRecording, "--replay-loop", "--replay-speed", "50",
                        "--duty-on-ms", "50", "--duty-period-ms", "100", "--poll-ms", "50", "--db",
                        db.string(), "--ndjson", "--no-listen"});
  ASSERT_TRUE(agent.started());
  std::vector<std::string> lines;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (lines.size() < 150 && std::chrono::steady_clock::now() < deadline) {
    if (auto line = agent.read_line(1s)) lines.push_back(*line);
  }
  ASSERT_GE(lines.size(), 150u) << agent.stderr_text();
  agent.signal(SIGKILL);
  ASSERT_TRUE(agent.wait(5s));
  for (auto& line : agent.drain_lines()) lines.push_back(line);  // committed before the kill

  std::set<long> committed;
  for (const auto& line : lines) committed.insert(nlohmann::json::parse(line)["id"].get<long>());
  Db store(db);
  EXPECT_EQ(store.text("PRAGMA integrity_check"), "ok");
  long missing = 0;
  for (long id : committed)
    if (store.text("SELECT count(*) FROM records WHERE id=" + std::to_string(id)) != "1") ++missing;
  EXPECT_EQ(missing, 0) << "of " << committed.size() << " committed records";
  EXPECT_GE(std::stol(store.text("SELECT count(*) FROM records")), static_cast<long>(committed.size()));
  // Every stored record has its units.
  EXPECT_EQ(
      store.text(
          "SELECT count(*) FROM records r WHERE NOT EXISTS (SELECT 1 FROM units u WHERE u.record_id=r.id)"),
      "0");
}

TEST(AgentCli, BadSettingsSayWhatToDo) {
  RunningProgram agent(
      {kDiescope, "agent", "--replay", kRecording, "--duty-on-ms", "0", "--no-db", "--no-listen"});
  const auto status = agent.wait(10s);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->describe(), "exited with code 2");
  const std::string err = agent.stderr_text();
  EXPECT_NE(err.find("diescope: error: --duty-on-ms"), std::string::npos) << err;
  EXPECT_NE(err.find("  fix: "), std::string::npos) << err;

  RunningProgram missing({kDiescope, "agent", "--replay", "/nonexistent.dsrec", "--no-db", "--no-listen"});
  const auto status2 = missing.wait(10s);
  ASSERT_TRUE(status2);
  EXPECT_EQ(status2->describe(), "exited with code 3") << missing.stderr_text();
}

}  // namespace
}  // namespace diescope::agent::cli_test
