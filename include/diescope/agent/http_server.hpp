// A small HTTP/1.1 server for /metrics, and a client for tests and the footprint benchmark.
//
// Why not cpp-httplib: Debian 12 ships it as a compiled shared library (libcpp-httplib.so.0.11,
// which pulls in OpenSSL, zlib and brotli), not header-only, and the GPU machine has no such
// library; linking it would stop the whole diescope binary from starting there. /metrics needs
// one GET route, so the server is written here on plain sockets: a small pool of threads, each with
// its own epoll set over the shared listening socket and the connections it accepted, at most 1024
// connections in all, every response "Connection: close", 8 KiB request limit, 5 s per request
// (docs/agent.md#metrics-under-load).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "diescope/core/unique_fd.hpp"

namespace diescope::agent {

struct ListenAddress {
  std::string host;  // numeric IPv4 or IPv6 (without brackets), or a name such as localhost
  int port = 0;      // 0: any free port
};

// Parses "ADDR:PORT", "[V6ADDR]:PORT" or ":PORT" (= 127.0.0.1). Throws UsageError.
ListenAddress parse_listen_address(const std::string& text);

struct HttpReply {
  HttpReply() = default;
  HttpReply(int status_code, std::string type, std::string text,
            std::shared_ptr<const std::string> shared = nullptr)
      : status(status_code),
        content_type(std::move(type)),
        body(std::move(text)),
        shared_body(std::move(shared)) {}

  int status = 200;
  std::string content_type;
  std::string body;
  // When set, the body sent instead of `body`: bytes rendered once and shared by every scrape
  // (docs/agent.md#metrics-under-load).
  std::shared_ptr<const std::string> shared_body;
};

// A POST request as the server hands it on (the capture requests: docs/agent.md#post-capture).
struct HttpPost {
  std::string target;  // the path, e.g. "/capture"
  std::string query;   // after '?'
  std::string authorization;
  bool peer_loopback = false;  // the client connected from 127.0.0.0/8 or ::1
};

class MetricsServer {
 public:
  // Called on any of the serving threads, possibly at once, for GET/HEAD /metrics with the request's
  // Accept header: it must be thread-safe.
  using Handler = std::function<HttpReply(const std::string& accept)>;
  // Called for POST /capture on a serving thread, one request at a time; empty: POST is refused (405).
  using PostHandler = std::function<HttpReply(const HttpPost& request)>;

  static constexpr int kDefaultThreads = 4;

  // Binds and listens (throws DeviceError naming the address when it cannot), then serves on
  // `threads` threads of its own until destroyed.
  MetricsServer(const ListenAddress& address, Handler handler, PostHandler post = {},
                int threads = kDefaultThreads);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // The bound address, e.g. "127.0.0.1:9402" (the real port when 0 was asked for).
  std::string address() const { return bound_; }
  int port() const { return port_; }
  long requests_served() const { return served_.load(); }

  // One client's connection, on the serving thread that accepted it.
  struct Connection {
    core::UniqueFd fd;
    std::string in;
    std::string head;                         // the status line and headers
    std::shared_ptr<const std::string> body;  // null: none (HEAD)
    std::size_t sent = 0;                     // of head, then body
    std::int64_t deadline_ms = 0;
    bool responding = false;
    std::uint32_t waiting_for = 0;  // the epoll events it is registered for; 0: not registered
  };

 private:
  void serve();
  // Reads what the socket holds, answers once the request's head is whole, sends what the socket
  // takes; true when the connection is done (answered, refused or gone).
  bool advance(Connection& c);
  void respond_if_whole(Connection& c);
  Handler handler_;
  PostHandler post_;
  std::mutex post_mutex_;  // one POST at a time, as with a single serving thread
  core::UniqueFd listen_fd_;
  core::Pipe wake_;  // a byte on it stops every serving thread (none reads it)
  int port_ = 0;
  std::string bound_;
  std::atomic<long> served_{0};
  std::atomic<long> open_{0};  // connections open over every thread
  std::vector<std::thread> threads_;
};

struct HttpResponse {
  int status = 0;  // 0: no response (see error)
  std::string headers;
  std::string body;
  std::string error;
};

// GET http://host:port/path with one connection. For tests and benchmarks.
HttpResponse http_get(const std::string& host, int port, const std::string& path,
                      const std::string& accept = "", int timeout_ms = 5000);
// POST http://host:port/path with no body and an optional Authorization header. For tests and scripts.
HttpResponse http_post(const std::string& host, int port, const std::string& path,
                       const std::string& authorization = "", int timeout_ms = 5000);

}  // namespace diescope::agent
