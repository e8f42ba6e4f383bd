// Scrapers of /metrics in parallel, as a Prometheus fleet scrapes one agent: --scrapers threads
// start together (a barrier) and each sends --requests GET /metrics one after another, each on a
// new connection ("Connection: close", as the agent answers). Every request is timed from before
// connect() to the server's close, with CLOCK_MONOTONIC; the client costs a few tens of
// microseconds a request, so the times are the server's and the kernel's, not an interpreter's.
// Prints one line of key=value pairs: n (answered with 200 and a whole body), failed (refused,
// reset, timed out or not 200), p50_ms, p99_ms, max_ms, bytes (of the last body).
//
//   metrics_load --port 9402 [--host 127.0.0.1] [--scrapers 100] [--requests 20] [--path /metrics]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

std::int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// One request; the body's size, or -1 when it failed.
long get_once(const sockaddr_in& addr, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  long result = -1;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0 &&
      ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
    std::string all;
    char buf[65536];
    for (;;) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n > 0) {
        all.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      if (n == 0) {
        const auto head_end = all.find("\r\n\r\n");
        const auto length_at = all.find("Content-Length: ");
        if (all.rfind("HTTP/1.1 200", 0) == 0 && head_end != std::string::npos && length_at < head_end) {
          const long length = std::atol(all.c_str() + length_at + 16);
          if (static_cast<long>(all.size() - head_end - 4) == length) result = length;
        }
      }
      break;
    }
  }
  ::close(fd);
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  std::string host = "127.0.0.1", path = "/metrics";
  int port = 0, scrapers = 100, requests = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    if (key == "--port")
      port = std::atoi(argv[i + 1]);
    else if (key == "--host")
      host = argv[i + 1];
    else if (key == "--scrapers")
      scrapers = std::atoi(argv[i + 1]);
    else if (key == "--requests")
      requests = std::atoi(argv[i + 1]);
    else if (key == "--path")
      path = argv[i + 1];
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  if (port <= 0 || scrapers <= 0 || requests <= 0 || inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    std::fprintf(stderr,
                 "metrics_load: give --port N (and a numeric IPv4 --host, positive --scrapers and "
                 "--requests)\n");
    return 2;
  }
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n";
  std::vector<std::int64_t> times;
  std::mutex times_mutex;
  std::atomic<long> failed{0}, bytes{0};
  std::barrier start(scrapers);
  std::vector<std::thread> threads;
  for (int t = 0; t < scrapers; ++t) {
    threads.emplace_back([&] {
      std::vector<std::int64_t> mine;
      mine.reserve(static_cast<std::size_t>(requests));
      start.arrive_and_wait();
      for (int r = 0; r < requests; ++r) {
        const std::int64_t t0 = now_ns();
        const long got = get_once(addr, request);
        const std::int64_t t1 = now_ns();
        if (got < 0) {
          failed.fetch_add(1);
        } else {
          mine.push_back(t1 - t0);
          bytes.store(got);
        }
      }
      const std::lock_guard lock(times_mutex);
      times.insert(times.end(), mine.begin(), mine.end());
    });
  }
  for (std::thread& t : threads) t.join();
  std::sort(times.begin(), times.end());
  auto pick = [&](double f) {
    if (times.empty()) return 0.0 / 0.0;
    const auto at =
        std::min(times.size() - 1, static_cast<std::size_t>(f * static_cast<double>(times.size())));
    return static_cast<double>(times[at]) / 1e6;
  };
  std::printf("n=%zu failed=%ld p50_ms=%.3f p99_ms=%.3f max_ms=%.3f bytes=%ld\n", times.size(), failed.load(),
              pick(0.5), pick(0.99), times.empty() ? 0.0 / 0.0 : static_cast<double>(times.back()) / 1e6,
              bytes.load());
  return times.empty() ? 1 : 0;
}
