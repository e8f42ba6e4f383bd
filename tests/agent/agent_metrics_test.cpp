// The /metrics exposition and the HTTP server that serves it.
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <atomic>
#include <barrier>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>
#include <sstream>

#include "diescope/agent/http_server.hpp"
#include "diescope/agent/metrics.hpp"
#include "diescope/core/error.hpp"

namespace diescope::agent {
namespace {

GpuStatus status_with_record() {
  GpuStatus g;
  g.index = 0;
  g.uuid = "GPU-1234";
  g.model = "NVIDIA H200";
  g.hostname = "gpu-node-3";
  g.pci_bus_id = "00000000:19:00.0";
  g.records = 3;
  g.counters_on_total_s = 6.0;
  g.energy_total_j = 12500;
  g.stranded_energy_total_j = 2500;
  AgentRecord r;
  r.mean_power_w = 412.5;
  r.gpu_util_pct = 90;
  r.die_util_pct = 60;
  r.gap_pct = 30;
  r.stranded_pct = 40;
  r.stranded_idle_pct = 10;
  r.stranded_active_pct = 30;
  r.units = {UnitFigure{"fp32", "FP32", 60, 100, {}}, UnitFigure{"dram", "DRAM", 30, 100, {}}};
  r.limiting_unit = "fp32";
  r.chip_coverage_pct = 99.5;
  r.chip_coverage_gate = analysis::CoverageGate::pass;
  r.gpu_util_coverage_pct = 100;
  r.sm_clock.mean_mhz = 1980;
  r.sm_clock.min_mhz = 1755;
  r.sm_clock.max_mhz = 1980;
  r.counters_on_s = 2.0;
  r.period_end_ns = 1'800'000'000'500'000'000;
  g.last = r;
  return g;
}

TEST(Metrics, PrometheusTextNamesUnitsAndLabels) {
  const std::string text = render_metrics({status_with_record()}, AgentInfo{"replay", 2000, 60000, 1000},
                                          ExpositionFormat::prometheus_text);
  // dcgm-exporter's label names and order: gpu, UUID, modelName, Hostname, pci_bus_id.
  const std::string gpu =
      "gpu=\"0\",UUID=\"GPU-1234\",modelName=\"NVIDIA "
      "H200\",Hostname=\"gpu-node-3\",pci_bus_id=\"00000000:19:00.0\"";
  const std::string labels = "{" + gpu + "}";
  EXPECT_NE(text.find("# HELP diescope_die_util_percent "), std::string::npos);
  EXPECT_NE(text.find("# TYPE diescope_die_util_percent gauge\n"), std::string::npos);
  EXPECT_NE(text.find("diescope_die_util_percent" + labels + " 60\n"), std::string::npos) << text;
  EXPECT_NE(text.find("diescope_gpu_util_percent" + labels + " 90\n"), std::string::npos);
  EXPECT_NE(text.find("diescope_gap_percent" + labels + " 30\n"), std::string::npos);
  EXPECT_NE(text.find("diescope_stranded_idle_percent" + labels + " 10\n"), std::string::npos);
  EXPECT_NE(text.find("diescope_stranded_active_percent" + labels + " 30\n"), std::string::npos);
  EXPECT_NE(text.find("diescope_unit_percent{" + gpu + ",unit=\"dram\",unit_label=\"DRAM\"} 30\n"),
            std::string::npos);
  // The limiting unit as a labelled gauge: 1 for it, 0 for the others.
  EXPECT_NE(text.find("diescope_limiting_unit{" + gpu + ",unit=\"fp32\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("diescope_limiting_unit{" + gpu + ",unit=\"dram\"} 0\n"), std::string::npos);
  // Base units: 99.5% is a ratio of 0.995; 1980 MHz is 1.98e9 Hz.
  EXPECT_NE(text.find("diescope_chip_coverage_ratio" + labels + " 0.995\n"), std::string::npos);
  EXPECT_NE(text.find("diescope_sm_clock_hertz{" + gpu + ",stat=\"mean\"} 1.98e+09\n"), std::string::npos);
  // Unread memory clock: NaN, not 0.
  EXPECT_NE(text.find("diescope_memory_clock_hertz{" + gpu + ",stat=\"mean\"} NaN\n"), std::string::npos);
  // Counters end in _total, in the TYPE line too, in the text format.
  EXPECT_NE(text.find("# TYPE diescope_records_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("diescope_records_total" + labels + " 3\n"), std::string::npos);
  EXPECT_NE(text.find("diescope_counters_on_seconds_total" + labels + " 6\n"), std::string::npos);
  EXPECT_NE(text.find("diescope_record_counters_on_seconds" + labels + " 2\n"), std::string::npos);
  // Energy (docs/energy.md#in-the-agent): joules over closed records, counters; power a gauge.
  EXPECT_NE(text.find("# TYPE diescope_energy_joules_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("diescope_energy_joules_total" + labels + " 12500\n"), std::string::npos);
  EXPECT_NE(text.find("diescope_energy_stranded_joules_total" + labels + " 2500\n"), std::string::npos);
  EXPECT_NE(text.find("diescope_power_watts" + labels + " 412.5\n"), std::string::npos);
  EXPECT_EQ(text.find("# EOF"), std::string::npos);
  // Every sample line's family has HELP and TYPE.
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = text.find('\n', pos);
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty() || line[0] == '#') continue;
    const std::string name = line.substr(0, line.find_first_of("{ "));
    EXPECT_NE(text.find("# TYPE " + name + " "), std::string::npos) << name;
    EXPECT_EQ(name.rfind("diescope_", 0), 0u) << name;
  }
}

// Every label the Grafana dashboard filters, groups or names a legend by is one the agent writes
// (or one Prometheus adds: instance, job), so no panel asks for `uuid` or `model` after a rename.
TEST(Metrics, TheDashboardUsesOnlyLabelsTheAgentWrites) {
  const std::string text = render_metrics({status_with_record()}, AgentInfo{"replay", 2000, 60000, 1000},
                                          ExpositionFormat::prometheus_text);
  std::set<std::string> written = {"instance", "job", "__name__"};
  const std::regex label(R"(([A-Za-z_][A-Za-z0-9_]*)=")");
  for (std::sregex_iterator it(text.begin(), text.end(), label), end; it != end; ++it)
    written.insert((*it)[1]);
  for (const char* name : {"gpu", "UUID", "modelName", "Hostname", "pci_bus_id"})
    EXPECT_TRUE(written.count(name)) << name << " is not among the agent's labels";

  std::ifstream in(std::string(DIESCOPE_SOURCE_DIR) + "/deploy/grafana-dashboard.json");
  std::stringstream dashboard;
  dashboard << in.rdbuf();
  const std::string d = dashboard.str();
  ASSERT_FALSE(d.empty());
  // {{label}} in legends, label=~ / label= in matchers (JSON-escaped quotes), label_values(..., label).
  const std::regex uses(
      R"(\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}|([A-Za-z_][A-Za-z0-9_]*)(=~|!=|=)\\"|, ([A-Za-z_][A-Za-z0-9_]*)\))");
  int checked = 0;
  for (std::sregex_iterator it(d.begin(), d.end(), uses), end; it != end; ++it) {
    const std::string name = (*it)[1].matched   ? (*it)[1].str()
                             : (*it)[2].matched ? (*it)[2].str()
                                                : (*it)[4].str();
    EXPECT_TRUE(written.count(name)) << "the dashboard uses the label " << name
                                     << ", which the agent does not write";
    ++checked;
  }
  EXPECT_GT(checked, 30);
}

TEST(Metrics, OpenMetricsWhenAsked) {
  EXPECT_EQ(format_for_accept("application/openmetrics-text;version=1.0.0,text/plain;q=0.5"),
            ExpositionFormat::openmetrics);
  EXPECT_EQ(format_for_accept("text/plain"), ExpositionFormat::prometheus_text);
  EXPECT_EQ(format_for_accept(""), ExpositionFormat::prometheus_text);
  const std::string text = render_metrics({status_with_record()}, AgentInfo{"replay", 2000, 60000, 1000},
                                          ExpositionFormat::openmetrics);
  EXPECT_NE(text.find("# TYPE diescope_records counter\n"), std::string::npos);
  EXPECT_NE(text.find("# UNIT diescope_die_util_percent percent\n"), std::string::npos);
  EXPECT_NE(text.find("# UNIT diescope_counters_on_seconds seconds\n"), std::string::npos);
  EXPECT_EQ(text.substr(text.size() - 6), "# EOF\n");
}

TEST(Metrics, NoRecordYetMeansNoGpuGaugesButCounters) {
  GpuStatus g = status_with_record();
  g.last.reset();
  g.records = 0;
  const std::string text =
      render_metrics({g}, AgentInfo{"live", 2000, 60000, 1000}, ExpositionFormat::prometheus_text);
  EXPECT_EQ(text.find("diescope_die_util_percent{"), std::string::npos);
  EXPECT_NE(text.find("diescope_records_total{gpu=\"0\",UUID=\"GPU-1234\",modelName=\"NVIDIA "
                      "H200\",Hostname=\"gpu-node-3\",pci_bus_id=\"00000000:19:00.0\"} 0\n"),
            std::string::npos);
}

TEST(Metrics, LabelValuesAreEscaped) {
  EXPECT_EQ(escape_label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

TEST(HttpServer, ServesMetricsOnLoopback) {
  int calls = 0;
  MetricsServer server(parse_listen_address("127.0.0.1:0"), [&](const std::string& accept) {
    ++calls;
    return HttpReply{200, "text/plain; version=0.0.4", "accept=" + accept + "\n"};
  });
  ASSERT_GT(server.port(), 0);
  HttpResponse r = http_get("127.0.0.1", server.port(), "/metrics", "application/openmetrics-text");
  EXPECT_EQ(r.status, 200) << r.error;
  EXPECT_EQ(r.body, "accept=application/openmetrics-text\n");
  EXPECT_NE(r.headers.find("Content-Length: 36"), std::string::npos) << r.headers;
  EXPECT_EQ(http_get("127.0.0.1", server.port(), "/nope").status, 404);
  EXPECT_EQ(http_get("127.0.0.1", server.port(), "/metrics?x=1").status, 200);
  EXPECT_EQ(calls, 2);
}

// docs/agent.md#metrics-under-load: a hundred scrapers at once are all answered (none refused: the
// backlog and the connection limit are both 1024), every one with the same shared bytes, and the
// handler runs on more than one serving thread at a time. The handler holds each call until a
// second call is inside too (or 2 s pass), so one serving thread alone would show 1 inside at most;
// the pool of 4 shows 2 or more.
TEST(HttpServer, AHundredScrapersAtOnceAreAllAnsweredBySeveralThreads) {
  const auto shared = std::make_shared<const std::string>("diescope_records_total 7\n");
  std::atomic<int> inside{0}, most_inside{0};
  MetricsServer server(parse_listen_address("127.0.0.1:0"), [&](const std::string&) {
    const int now = ++inside;
    int seen = most_inside.load();
    while (now > seen && !most_inside.compare_exchange_weak(seen, now)) {}
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (most_inside.load() < 2 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
    --inside;
    return HttpReply{200, "text/plain; version=0.0.4", "", shared};
  });
  constexpr int kScrapers = 100;
  std::vector<HttpResponse> got(kScrapers);
  std::barrier start(kScrapers);
  std::vector<std::thread> scrapers;
  for (int i = 0; i < kScrapers; ++i)
    scrapers.emplace_back([&, i] {
      start.arrive_and_wait();
      got[static_cast<std::size_t>(i)] = http_get("127.0.0.1", server.port(), "/metrics", "", 10000);
    });
  for (std::thread& t : scrapers) t.join();
  int answered = 0;
  for (const HttpResponse& r : got) {
    if (r.status == 200 && r.body == *shared) ++answered;
    EXPECT_NE(r.headers.find("Content-Length: 25"), std::string::npos) << r.headers << r.error;
  }
  EXPECT_EQ(answered, kScrapers);
  EXPECT_EQ(server.requests_served(), kScrapers);
  EXPECT_GE(most_inside.load(), 2);
}

// The size of this process's file descriptor table (FDSize in /proc/self/status), or -1.
long descriptor_table_size() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("FDSize:", 0) == 0) return std::stol(line.substr(7));
  return -1;
}

// docs/agent.md#metrics-under-load: no burst of connections waits for the kernel to grow the descriptor
// table (an RCU grace period while several threads share it): the server grows it, before its threads
// start, to hold its 1024 connections and 128 more, 1152 descriptors (or the soft RLIMIT_NOFILE when
// lower). Checked in a fresh process (the death test runs this binary again), whose table holds 64
// until something opens more: the server's own listening socket, pipe and epoll sets are 7.
TEST(HttpServer, TheDescriptorTableHoldsEveryConnectionBeforeServing) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        rlimit limit{};
        ::getrlimit(RLIMIT_NOFILE, &limit);
        const long want = static_cast<long>(std::min<rlim_t>(limit.rlim_cur, 1024 + 128));
        const long before = descriptor_table_size();
        bool grown = false;
        {
          MetricsServer server(parse_listen_address("127.0.0.1:0"), [](const std::string&) {
            return HttpReply{200, "text/plain", "x\n"};
          });
          grown = before < want && descriptor_table_size() >= want;
        }
        std::exit(grown ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

// A client socket connected to 127.0.0.1:port, with a receive buffer of `rcvbuf` bytes (0: the default).
int connect_to(int port, int rcvbuf = 0) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (rcvbuf > 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  return fd;
}

// docs/agent.md#metrics-under-load: a serving thread never waits on one client. With a single serving
// thread, a client that sent half a request head and one that asked for 8 MiB (more than any socket
// buffer on the way holds) and reads none of it are both left open; a hundred scrapers at once are
// still all answered, and well before the 5 s a request may take: a thread blocked on either client
// would hold every scraper for those 5 s.
TEST(HttpServer, SlowClientsDoNotHoldOthers) {
  const auto small = std::make_shared<const std::string>("diescope_records_total 7\n");
  const auto big = std::make_shared<const std::string>(std::size_t{8} << 20, 'x');
  MetricsServer server(
      parse_listen_address("127.0.0.1:0"),
      [&](const std::string& accept) {
        return HttpReply{200, "text/plain; version=0.0.4", "", accept == "big" ? big : small};
      },
      {}, 1);
  const int half = connect_to(server.port());
  const std::string half_head = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  ASSERT_EQ(::send(half, half_head.data(), half_head.size(), 0), static_cast<ssize_t>(half_head.size()));
  const int unread = connect_to(server.port(), 4096);
  const std::string big_request = "GET /metrics HTTP/1.1\r\nAccept: big\r\nConnection: close\r\n\r\n";
  ASSERT_EQ(::send(unread, big_request.data(), big_request.size(), 0),
            static_cast<ssize_t>(big_request.size()));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // both are now the server's

  constexpr int kScrapers = 100;
  std::vector<HttpResponse> got(kScrapers);
  std::barrier start(kScrapers);
  std::vector<std::thread> scrapers;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kScrapers; ++i)
    scrapers.emplace_back([&, i] {
      start.arrive_and_wait();
      got[static_cast<std::size_t>(i)] = http_get("127.0.0.1", server.port(), "/metrics", "", 10000);
    });
  for (std::thread& t : scrapers) t.join();
  const double took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int answered = 0;
  for (const HttpResponse& r : got) answered += r.status == 200 && r.body == *small ? 1 : 0;
  EXPECT_EQ(answered, kScrapers);
  EXPECT_LT(took_s, 4.0);
  // The unread answer is still being sent: its client can read the head and the body's start.
  char buf[64] = {};
  EXPECT_GT(::recv(unread, buf, sizeof buf, 0), 0);
  EXPECT_EQ(std::string(buf, 15), "HTTP/1.1 200 OK");
  ::close(half);
  ::close(unread);
}

// docs/agent.md#metrics: a request's head is held to 8 KiB (8192 bytes), however the bytes arrive.
// http_get sends "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: A\r\nConnection: close\r\n\r\n":
// 23 + 17 + (8 + |A| + 2) + 19 + 2 = 71 + |A| bytes.
TEST(HttpServer, RequestsOverEightKibAreRefused) {
  MetricsServer server(parse_listen_address("127.0.0.1:0"), [](const std::string&) {
    return HttpReply{200, "text/plain", "ok\n"};
  });
  const std::size_t head = 71;
  EXPECT_EQ(http_get("127.0.0.1", server.port(), "/metrics", std::string(8192 - head, 'a')).status, 200);
  EXPECT_EQ(http_get("127.0.0.1", server.port(), "/metrics", std::string(8193 - head, 'a')).status, 431);
  // 10 KiB arrives in five 2 KiB reads, the last one holding the head's end: refused all the same.
  EXPECT_EQ(http_get("127.0.0.1", server.port(), "/metrics", std::string(10240 - head, 'a')).status, 431);
}

TEST(HttpServer, ListenAddressesParse) {
  auto a = parse_listen_address("0.0.0.0:9402");
  EXPECT_EQ(a.host, "0.0.0.0");
  EXPECT_EQ(a.port, 9402);
  a = parse_listen_address("[::1]:80");
  EXPECT_EQ(a.host, "::1");
  a = parse_listen_address(":9000");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_THROW(parse_listen_address("9402"), core::UsageError);
  EXPECT_THROW(parse_listen_address("127.0.0.1:99999"), core::UsageError);
  EXPECT_THROW(parse_listen_address("::1:80"), core::UsageError);
}

TEST(HttpServer, BusyPortIsADeviceErrorNamingIt) {
  MetricsServer first(parse_listen_address("127.0.0.1:0"), [](const std::string&) { return HttpReply{}; });
  try {
    MetricsServer second(parse_listen_address("127.0.0.1:" + std::to_string(first.port())),
                         [](const std::string&) { return HttpReply{}; });
    FAIL() << "bound a port that is in use";
  } catch (const core::DeviceError& e) {
    EXPECT_NE(e.cause().find(std::to_string(first.port())), std::string::npos);
  }
}

// docs/attribution.md#in-the-agent: attribution's families go after the agent's, and before
// OpenMetrics' closing "# EOF", which must stay the last line.
TEST(Metrics, AppendedFamiliesGoBeforeEof) {
  const std::string family = "# TYPE diescope_gpu_holders gauge\ndiescope_gpu_holders{gpu=\"0\"} 2\n";
  EXPECT_EQ(append_families("a 1\n# EOF\n", family), "a 1\n" + family + "# EOF\n");
  EXPECT_EQ(append_families("a 1\n", family), "a 1\n" + family);
  EXPECT_EQ(append_families("a 1\n", ""), "a 1\n");
}

}  // namespace
}  // namespace diescope::agent
