// Triggered captures as a user runs them (docs/agent.md#triggered-captures), in replay mode: a rules
// file with an error stops the agent before anything starts, SIGUSR1 starts a capture and SIGTERM in
// the middle of it leaves it closed and readable, and POST /capture needs the token.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "diescope/agent/http_server.hpp"
#include "diescope/recording/reader.hpp"
#include "running_program.hpp"

// Its own namespace: the part's test files compile as one (docs/building.md#one-test-binary-per-part).
namespace diescope::agent::capture_cli_test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::RunningProgram;

const std::string kDiescope = DIESCOPE_BINARY;
const std::string kRecording = std::string(DIESCOPE_SOURCE_DIR) + "/data/recordings/h200/ffma66.dsrec";

fs::path temp_dir(const std::string& name) {
  return testing::fresh_dir("capture-cli", name);
}

fs::path write(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
  return p;
}

// Waits until `pattern` is in the agent's stderr; the text so far.
std::string wait_for_err(RunningProgram& agent, const std::string& pattern, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string all;
  while (std::chrono::steady_clock::now() < deadline) {
    all = agent.stderr_text();
    if (all.find(pattern) != std::string::npos) break;
    std::this_thread::sleep_for(50ms);
  }
  return all;
}

std::vector<fs::path> capture_folders(const fs::path& root) {
  std::vector<fs::path> out;
  if (!fs::exists(root)) return out;
  for (const auto& e : fs::directory_iterator(root))
    if (fs::exists(e.path() / "capture.json")) out.push_back(e.path());
  return out;
}

TEST(AgentCaptureCli, ARulesFileWithAnErrorStopsTheAgentNamingItsLine) {
  const fs::path dir = temp_dir("bad");
  const fs::path rules = write(dir / "rules.json",
                               "{\n  \"rules\": [\n    {\"name\": \"a\", \"when\": \"sigusr1\", "
                               "\"capture_s\": 5, \"lenght_s\": 3}\n  ]\n}\n");
  RunningProgram agent(
      {kDiescope, "agent", "--replay", kRecording, "--no-db", "--no-listen", "--rules", rules.string()});
  ASSERT_TRUE(agent.started());
  const auto status = agent.wait(10s);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->describe(), "exited with code 2");
  const std::string err = agent.stderr_text();
  EXPECT_NE(err.find(rules.string() + ":3: unknown field \"lenght_s\" in a rule"), std::string::npos) << err;
  EXPECT_TRUE(capture_folders(dir / "captures").empty());
}

// SIGUSR1 starts a 30 s capture; SIGTERM 1.5 s later stops the agent, which closes the capture there:
// capture.json says cut_short, the recording reads back with its end, and the report is written.
TEST(AgentCaptureCli, SigtermDuringACaptureLeavesItClosedAndReadable) {
  const fs::path dir = temp_dir("sigterm");
  const fs::path rules =
      write(dir / "rules.json", "{\"captures\": {\"folder\": \"" + (dir / "captures").string() +
                                    "\"},\n \"rules\": [{\"name\": \"usr1\", \"when\": "
                                    "\"sigusr1\", \"capture_s\": 30}]}\n");
  RunningProgram agent({kDiescope, "agent", "--replay", kRecording, "--replay-loop", "--duty-on-ms", "500",
                        "--duty-period-ms", "1000", "--drain-ms", "250", "--no-db", "--no-listen", "--ndjson",
                        "--rules", rules.string()});
  ASSERT_TRUE(agent.started());
  std::string err = wait_for_err(agent, "captures: rules from", 10s);
  ASSERT_NE(err.find("captures: rules from"), std::string::npos) << err;
  agent.signal(SIGUSR1);
  err = wait_for_err(agent, "rule usr1 fired on GPU 0 (SIGUSR1)", 10s);
  ASSERT_NE(err.find("rule usr1 fired on GPU 0 (SIGUSR1)"), std::string::npos) << err;
  std::this_thread::sleep_for(1500ms);
  agent.signal(SIGTERM);
  const auto status = agent.wait(15s);
  ASSERT_TRUE(status) << "the agent did not stop on SIGTERM";
  EXPECT_EQ(status->describe(), "exited with code 0") << agent.stderr_text();
  const auto folders = capture_folders(dir / "captures");
  ASSERT_EQ(folders.size(), 1u);
  std::ifstream in(folders[0] / "capture.json");
  const auto summary = nlohmann::json::parse(in);
  EXPECT_EQ(summary["state"], "cut_short");
  const double held_s =
      static_cast<double>(summary["end_ns"].get<long long>() - summary["start_ns"].get<long long>()) / 1e9;
  EXPECT_GT(held_s, 1.0);
  EXPECT_LT(held_s, 10.0);
  auto rec = recording::open_recording(folders[0] / "capture.dsrec");
  ASSERT_TRUE(rec->side().end);
  EXPECT_EQ(rec->side().end->ending.text, "the agent stopped (SIGTERM)");
  EXPECT_TRUE(fs::exists(folders[0] / "report.html"));
  EXPECT_GE(agent.drain_lines().size(), 1u);  // the records went on
}

// POST /capture: no token and a wrong one are refused (401); the right one starts a capture (200,
// naming its folder); a second while it runs is refused (429, busy) and counted on /metrics.
TEST(AgentCaptureCli, PostCaptureNeedsTheTokenAndIsCounted) {
  const fs::path dir = temp_dir("post");
  const std::string token = "0123456789abcdef-token";
  write(dir / "token", token + "\n");
  const fs::path rules =
      write(dir / "rules.json", "{\"captures\": {\"folder\": \"" + (dir / "captures").string() +
                                    "\", \"token_file\": \"" + (dir / "token").string() +
                                    "\"},\n \"rules\": [{\"name\": \"on-request\", \"when\": \"http\", "
                                    "\"capture_s\": 30}]}\n");
  RunningProgram agent({kDiescope, "agent", "--replay", kRecording, "--replay-loop", "--duty-on-ms", "500",
                        "--duty-period-ms", "1000", "--drain-ms", "250", "--no-db", "--listen", "127.0.0.1:0",
                        "--rules", rules.string()});
  ASSERT_TRUE(agent.started());
  const std::string err = wait_for_err(agent, "captures: rules from", 10s);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(err, m, std::regex("serving /metrics on http://127\\.0\\.0\\.1:([0-9]+)/")))
      << err;
  const int port = std::stoi(m[1]);
  EXPECT_EQ(http_post("127.0.0.1", port, "/capture").status, 401);
  EXPECT_EQ(http_post("127.0.0.1", port, "/capture", "Bearer " + token + "x").status, 401);
  const HttpResponse ok = http_post("127.0.0.1", port, "/capture?gpu=0", "Bearer " + token);
  EXPECT_EQ(ok.status, 200) << ok.body << ok.error;
  EXPECT_NE(ok.body.find("capturing into " + (dir / "captures").string()), std::string::npos) << ok.body;
  const HttpResponse again = http_post("127.0.0.1", port, "/capture", "Bearer " + token);
  EXPECT_EQ(again.status, 429) << again.body;
  EXPECT_NE(again.body.find("GPU 0: busy"), std::string::npos) << again.body;
  EXPECT_EQ(http_post("127.0.0.1", port, "/capture?rule=nope", "Bearer " + token).status, 404);
  const HttpResponse metrics = http_get("127.0.0.1", port, "/metrics");
  EXPECT_NE(metrics.body.find("diescope_captures_total{rule=\"on-request\",outcome=\"busy\"} 1"),
            std::string::npos)
      << metrics.body;
  agent.signal(SIGTERM);
  const auto status = agent.wait(15s);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->describe(), "exited with code 0");
  EXPECT_EQ(capture_folders(dir / "captures").size(), 1u);
}

}  // namespace
}  // namespace diescope::agent::capture_cli_test
