// A real Prometheus server (Debian's package) on loopback scrapes the agent in replay mode; a query
// through Prometheus's HTTP API must return the recording's DIE-Util, computed here independently by
// the method's analysis of the same span.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <filesystem>
#include <fstream>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <sys/socket.h>

#include "diescope/agent/http_server.hpp"
#include "diescope/analysis/analyze.hpp"
#include "diescope/recording/reader.hpp"
#include "running_program.hpp"

namespace diescope::agent {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::RunningProgram;

const std::string kPrometheus = "/usr/bin/prometheus";
const std::string kDiescope = DIESCOPE_BINARY;
const std::string kRecording = std::string(DIESCOPE_SOURCE_DIR) + "/data/recordings/h200-probe-shape.dsrec";

// A loopback port free now (the kernel's choice of an ephemeral port).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const int port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

TEST(AgentPrometheus, PrometheusQueryReturnsTheRecordingsDieUtil) {
  if (!fs::exists(kPrometheus))
    GTEST_SKIP() << "no " << kPrometheus << " (scripts/setup.sh installs Debian's prometheus)";
  const fs::path dir = fs::temp_directory_path() / ("diescope-agent-prom-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "tsdb");

  // The agent: the whole 3.55 s recording in one always-on period at 2x, then it keeps serving.
  RunningProgram agent({kDiescope, "agent", "--replay", kRecording, "--replay-speed", "2", "--duty-on-ms",
                        "60000", "--duty-period-ms", "60000", "--linger", "--no-db", "--listen",
                        "127.0.0.1:0"});
  ASSERT_TRUE(agent.started());
  int agent_port = 0;
  const std::string marker = "serving /metrics on http://127.0.0.1:";
  for (int i = 0; i < 20 && agent_port == 0; ++i) {
    auto line = agent.read_err_line(1s);
    if (line && line->find(marker) != std::string::npos)
      agent_port = std::atoi(line->c_str() + line->find(marker) + marker.size());
  }
  ASSERT_GT(agent_port, 0) << agent.stderr_text();

  const int prom_port = free_port();
  {
    std::ofstream config(dir / "prometheus.yml");
    config << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
           << "scrape_configs:\n  - job_name: diescope\n    static_configs:\n"
           << "      - targets: ['127.0.0.1:" << agent_port << "']\n";
  }
  RunningProgram prometheus({kPrometheus, "--config.file=" + (dir / "prometheus.yml").string(),
                             "--storage.tsdb.path=" + (dir / "tsdb").string(),
                             "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)},
                            (dir / "prometheus.log").string());
  ASSERT_TRUE(prometheus.started());

  const analysis::Analysis expected = analysis::analyze(*recording::open_recording(kRecording));
  ASSERT_TRUE(std::isfinite(expected.run.die_util_pct));

  // Poll Prometheus until its latest scrape holds the record (the replay ends after ~1.8 s).
  nlohmann::json sample;
  std::string last_body;
  const auto deadline = std::chrono::steady_clock::now() + 25s;
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(500ms);
    HttpResponse r = http_get("127.0.0.1", prom_port, "/api/v1/query?query=diescope_die_util_percent");
    if (r.status != 200) continue;
    last_body = r.body;
    auto body = nlohmann::json::parse(r.body, nullptr, false);
    if (body.is_discarded() || body["status"] != "success") continue;
    const auto& result = body["data"]["result"];
    if (result.is_array() && !result.empty()) {
      sample = result[0];
      break;
    }
  }
  ASSERT_FALSE(sample.is_null()) << "Prometheus never returned diescope_die_util_percent; last answer: "
                                 << last_body;
  EXPECT_EQ(sample["metric"]["gpu"], "0");
  // dcgm-exporter's label names (docs/agent.md#metrics), as a real Prometheus stores them.
  EXPECT_EQ(sample["metric"]["modelName"], "NVIDIA H200");
  EXPECT_EQ(sample["metric"]["UUID"], expected.meta.gpu.uuid);
  EXPECT_EQ(sample["metric"]["Hostname"], expected.meta.host);
  // The bundled recording does not hold the PCI bus id: its empty label is stored as absent.
  EXPECT_FALSE(sample["metric"].contains("pci_bus_id"));
  EXPECT_FALSE(sample["metric"].contains("uuid"));
  EXPECT_FALSE(sample["metric"].contains("model"));
  EXPECT_EQ(sample["metric"]["job"], "diescope");
  const double value = std::stod(sample["value"][1].get<std::string>());
  EXPECT_DOUBLE_EQ(value, expected.run.die_util_pct);

  prometheus.signal(SIGTERM);
  agent.signal(SIGTERM);
  EXPECT_TRUE(agent.wait(10s));
  EXPECT_TRUE(prometheus.wait(10s));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace diescope::agent
