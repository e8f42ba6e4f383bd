// Scrapers of /metrics in parallel from a few epoll threads, so that the load generator is not the
// floor it measures: --scrapers connections (100, a fleet) are shared among --threads threads (4, at
// most the machine's cores less the server's), each driving its share with non-blocking sockets in
// an epoll set of its own. The agent answers every request with "Connection: close", so each scrape
// opens a new connection, as Prometheus does with a server that closes (no keep-alive).
//
//   --mode burst (default): every --every-ms (100) all scrapers start together, at one absolute time
//     that every thread waits for, as when a fleet's scrapers fire at the same instant; a round ends
//     when every scrape of it has ended; --rounds rounds (50).
//   --mode loop: each scraper starts its next scrape as soon as its last one ended, --rounds each
//     (metrics_load's closed loop, without its hundred client threads).
//
// Each scrape is timed with CLOCK_MONOTONIC from just before its connect() to its end of stream
// (latency), and from its round's start (from_start: with the time the thread took to reach it).
// A scrape counts as answered when the status is 200 and the body is exactly Content-Length bytes;
// otherwise (refused, reset, not 200, short, or over --timeout-ms) it is failed. Prints one line of
// key=value pairs: n, failed, p50_ms, p99_ms, max_ms (latency), start_p99_ms and start_max_ms
// (from_start), round_p50_ms and round_max_ms (a round's start to its last answer), bytes (of the
// last body). --times FILE writes one row per scrape: round, scraper, start_us (connect after the
// round's start), latency_us, ok.
// (docs/footprint.md#the-agents-own-cost)
//
// Before its threads start it grows its file descriptor table for every scraper's socket, so that no
// burst waits for the kernel to grow it (--cold-fd-table 1 leaves it to grow in the first burst).
//
//   metrics_scrape --port 9402 [--host 127.0.0.1] [--scrapers 100] [--threads 4] [--mode burst|loop]
//                  [--rounds 50] [--every-ms 100] [--timeout-ms 5000] [--path /metrics] [--times FILE]
//                  [--cold-fd-table 0|1]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

std::int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

void sleep_until_ns(std::int64_t t) {
  timespec ts{};
  ts.tv_sec = t / 1'000'000'000;
  ts.tv_nsec = t % 1'000'000'000;
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {}
}

struct Options {
  std::string host = "127.0.0.1";
  std::string path = "/metrics";
  std::string times_file;
  int port = 0;
  int scrapers = 100;
  int threads = 4;
  int rounds = 50;
  double every_ms = 100;
  double timeout_ms = 5000;
  bool loop = false;
  bool cold = false;  // --cold-fd-table: leave the table to grow during the first burst
};

struct Timing {
  int round = 0;
  int scraper = 0;
  std::int64_t start_ns = 0;    // connect() after the round's start
  std::int64_t latency_ns = 0;  // connect() to the end of the answer
  bool ok = false;
};

// The answer's body size when it is a whole 200 answer, else -1.
long whole_body(const std::string& all) {
  const auto head_end = all.find("\r\n\r\n");
  if (all.rfind("HTTP/1.1 200", 0) != 0 || head_end == std::string::npos) return -1;
  const auto length_at = all.find("Content-Length: ");
  if (length_at == std::string::npos || length_at > head_end) return -1;
  const long length = std::atol(all.c_str() + length_at + 16);
  return static_cast<long>(all.size() - head_end - 4) == length ? length : -1;
}

// One scraper's connection in flight.
struct Slot {
  int fd = -1;
  int index = 0;  // the scraper's number over every thread
  int done = 0;   // scrapes ended (loop mode)
  bool sent = false;
  std::int64_t round_start = 0;
  std::int64_t started = 0;
  int round = 0;
  std::string in;
};

class Driver {
 public:
  Driver(const Options& o, const sockaddr_in& addr, int first, int count)
      : o_(o), addr_(addr), ep_(::epoll_create1(EPOLL_CLOEXEC)), slots_(static_cast<std::size_t>(count)) {
    request_ = "GET " + o.path + " HTTP/1.1\r\nHost: " + o.host + "\r\nUser-Agent: metrics_scrape\r\n\r\n";
    for (int i = 0; i < count; ++i) {
      slots_[static_cast<std::size_t>(i)].index = first + i;
      slots_[static_cast<std::size_t>(i)].in.reserve(1 << 16);
    }
  }
  ~Driver() {
    if (ep_ >= 0) ::close(ep_);
  }
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  // burst: rounds at t0 + r * every; loop: every scraper back to back from t0.
  void run(std::int64_t t0) {
    if (o_.loop) {
      sleep_until_ns(t0);
      for (Slot& s : slots_) open(s, t0, 0);
      drain();
      return;
    }
    const auto every = static_cast<std::int64_t>(o_.every_ms * 1e6);
    for (int r = 0; r < o_.rounds; ++r) {
      const std::int64_t at = t0 + r * every;
      sleep_until_ns(at);
      for (Slot& s : slots_) open(s, at, r);
      drain();
    }
  }

  std::vector<Timing> timings;
  long bytes = 0;

 private:
  void open(Slot& s, std::int64_t round_start, int round) {
    s.round_start = round_start;
    s.round = round;
    s.sent = false;
    s.in.clear();
    s.started = now_ns();
    s.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s.fd < 0) {
      finish(s, false);
      return;
    }
    ++open_;
    if (::connect(s.fd, reinterpret_cast<const sockaddr*>(&addr_), sizeof addr_) != 0 &&
        errno != EINPROGRESS) {
      finish(s, false);
      return;
    }
    // On loopback the handshake is usually over when connect() returns: the request goes at once,
    // else when the socket is writable.
    const ssize_t n = ::send(s.fd, request_.data(), request_.size(), MSG_NOSIGNAL);
    if (n == static_cast<ssize_t>(request_.size())) {
      s.sent = true;
    } else if (n >= 0 || (errno != EAGAIN && errno != ENOTCONN && errno != EINPROGRESS)) {
      finish(s, false);
      return;
    }
    epoll_event ev{};
    ev.events = s.sent ? EPOLLIN : EPOLLOUT;
    ev.data.ptr = &s;
    if (::epoll_ctl(ep_, EPOLL_CTL_ADD, s.fd, &ev) != 0) finish(s, false);
  }

  // Ends a scrape: closes it, records it and, in loop mode, starts the scraper's next.
  void finish(Slot& s, bool ok) {
    const std::int64_t end = now_ns();
    if (s.fd >= 0) {
      ::close(s.fd);  // also takes it out of the epoll set
      s.fd = -1;
      --open_;
    }
    timings.push_back(Timing{s.round, s.index, s.started - s.round_start, end - s.started, ok});
    if (o_.loop && ++s.done < o_.rounds) open(s, end, s.done);
  }

  void step(Slot& s, std::uint32_t events) {
    if (!s.sent) {
      int err = 0;
      socklen_t len = sizeof err;
      if ((events & (EPOLLERR | EPOLLHUP)) != 0 ||
          ::getsockopt(s.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
        finish(s, false);
        return;
      }
      const ssize_t n = ::send(s.fd, request_.data(), request_.size(), MSG_NOSIGNAL);
      if (n != static_cast<ssize_t>(request_.size())) {
        finish(s, false);
        return;
      }
      s.sent = true;
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.ptr = &s;
      if (::epoll_ctl(ep_, EPOLL_CTL_MOD, s.fd, &ev) != 0) finish(s, false);
      return;
    }
    char buf[65536];
    for (;;) {
      const ssize_t n = ::recv(s.fd, buf, sizeof buf, 0);
      if (n > 0) {
        s.in.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
      const long body = n == 0 ? whole_body(s.in) : -1;
      if (body >= 0) bytes = body;
      finish(s, body >= 0);
      return;
    }
  }

  // Runs the epoll set until no scrape is open, failing those past the timeout.
  void drain() {
    epoll_event events[64];
    const auto timeout = static_cast<std::int64_t>(o_.timeout_ms * 1e6);
    while (open_ > 0) {
      const int ready = ::epoll_wait(ep_, events, 64, 50);
      for (int i = 0; i < ready; ++i) step(*static_cast<Slot*>(events[i].data.ptr), events[i].events);
      if (ready == 0) {
        const std::int64_t now = now_ns();
        for (Slot& s : slots_)
          if (s.fd >= 0 && now - s.started > timeout) finish(s, false);
      }
    }
  }

  const Options& o_;
  sockaddr_in addr_;
  int ep_;
  std::vector<Slot> slots_;
  std::string request_;
  int open_ = 0;
};

// Grows this process's file descriptor table to hold `fds` descriptors while it has one thread. The
// kernel grows a shared table by waiting for an RCU grace period (synchronize_rcu in expand_fdtable),
// which stalled every thread opening a socket for 6 to 28 ms in the first burst on the H200; with one
// thread it does not wait, and a table never shrinks (docs/footprint.md#the-agents-own-cost).
void grow_fd_table(int fds) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  const auto top = static_cast<int>(std::min<rlim_t>(limit.rlim_cur, static_cast<rlim_t>(fds)) - 1);
  if (top > 2 && ::dup2(2, top) == top) ::close(top);
}

double pick_ms(const std::vector<std::int64_t>& sorted, double f) {
  if (sorted.empty()) return std::nan("");
  const auto at =
      std::min(sorted.size() - 1, static_cast<std::size_t>(f * static_cast<double>(sorted.size())));
  return static_cast<double>(sorted[at]) / 1e6;
}

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; i += 2) {
    const std::string key = argv[i];
    if (i + 1 >= argc) return false;
    const char* v = argv[i + 1];
    if (key == "--port")
      o.port = std::atoi(v);
    else if (key == "--host")
      o.host = v;
    else if (key == "--scrapers")
      o.scrapers = std::atoi(v);
    else if (key == "--threads")
      o.threads = std::atoi(v);
    else if (key == "--rounds")
      o.rounds = std::atoi(v);
    else if (key == "--every-ms")
      o.every_ms = std::atof(v);
    else if (key == "--timeout-ms")
      o.timeout_ms = std::atof(v);
    else if (key == "--path")
      o.path = v;
    else if (key == "--times")
      o.times_file = v;
    else if (key == "--cold-fd-table" && (std::strcmp(v, "0") == 0 || std::strcmp(v, "1") == 0))
      o.cold = std::strcmp(v, "1") == 0;
    else if (key == "--mode" && (std::strcmp(v, "burst") == 0 || std::strcmp(v, "loop") == 0))
      o.loop = std::strcmp(v, "loop") == 0;
    else
      return false;
  }
  return o.port > 0 && o.port < 65536 && o.scrapers > 0 && o.threads > 0 && o.rounds > 0 && o.every_ms > 0 &&
         o.timeout_ms > 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (!parse(argc, argv, o) || inet_pton(AF_INET, o.host.c_str(), &addr.sin_addr) != 1) {
    std::fprintf(
        stderr,
        "metrics_scrape: give --port N (1-65535), a numeric IPv4 --host, positive --scrapers, --threads,"
        " --rounds, --every-ms and --timeout-ms, --mode burst or loop, --cold-fd-table 0 or 1\n");
    return 2;
  }
  addr.sin_port = htons(static_cast<std::uint16_t>(o.port));
  o.threads = std::min(o.threads, o.scrapers);
  if (!o.cold) grow_fd_table(2 * o.scrapers + 64);
  std::vector<std::unique_ptr<Driver>> drivers;
  for (int t = 0; t < o.threads; ++t) {
    const int first = o.scrapers * t / o.threads;
    drivers.push_back(std::make_unique<Driver>(o, addr, first, o.scrapers * (t + 1) / o.threads - first));
  }
  // Every thread starts its first round at the same absolute time, 20 ms from now.
  const std::int64_t t0 = now_ns() + 20'000'000;
  std::vector<std::thread> threads;
  threads.reserve(drivers.size());
  for (const auto& d : drivers) threads.emplace_back([driver = d.get(), t0] { driver->run(t0); });
  for (std::thread& t : threads) t.join();

  std::vector<Timing> all;
  long bytes = 0;
  for (const auto& d : drivers) {
    all.insert(all.end(), d->timings.begin(), d->timings.end());
    bytes = std::max(bytes, d->bytes);
  }
  std::vector<std::int64_t> latency, from_start;
  std::vector<std::int64_t> round_end(static_cast<std::size_t>(o.loop ? 0 : o.rounds), 0);
  long failed = 0;
  for (const Timing& t : all) {
    if (!t.ok) {
      ++failed;
      continue;
    }
    latency.push_back(t.latency_ns);
    from_start.push_back(t.start_ns + t.latency_ns);
    if (!o.loop) {
      std::int64_t& e = round_end[static_cast<std::size_t>(t.round)];
      e = std::max(e, t.start_ns + t.latency_ns);
    }
  }
  std::sort(latency.begin(), latency.end());
  std::sort(from_start.begin(), from_start.end());
  std::sort(round_end.begin(), round_end.end());
  if (!o.times_file.empty()) {
    std::FILE* f = std::fopen(o.times_file.c_str(), "w");
    if (f == nullptr) {
      std::fprintf(stderr, "metrics_scrape: cannot write %s: %s\n", o.times_file.c_str(),
                   std::strerror(errno));
      return 1;
    }
    std::fprintf(f, "round\tscraper\tstart_us\tlatency_us\tok\n");
    for (const Timing& t : all)
      std::fprintf(f, "%d\t%d\t%.1f\t%.1f\t%d\n", t.round, t.scraper, static_cast<double>(t.start_ns) / 1e3,
                   static_cast<double>(t.latency_ns) / 1e3, t.ok ? 1 : 0);
    std::fclose(f);
  }
  std::printf(
      "mode=%s scrapers=%d threads=%d n=%zu failed=%ld p50_ms=%.3f p99_ms=%.3f max_ms=%.3f start_p99_ms=%.3f "
      "start_max_ms=%.3f round_p50_ms=%.3f round_max_ms=%.3f bytes=%ld\n",
      o.loop ? "loop" : "burst", o.scrapers, o.threads, latency.size(), failed, pick_ms(latency, 0.5),
      pick_ms(latency, 0.99), latency.empty() ? std::nan("") : static_cast<double>(latency.back()) / 1e6,
      pick_ms(from_start, 0.99),
      from_start.empty() ? std::nan("") : static_cast<double>(from_start.back()) / 1e6,
      pick_ms(round_end, 0.5), round_end.empty() ? std::nan("") : static_cast<double>(round_end.back()) / 1e6,
      bytes);
  return latency.empty() ? 1 : 0;
}
