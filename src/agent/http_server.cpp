#include "diescope/agent/http_server.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <unordered_map>
#include <vector>

#include "diescope/core/clock.hpp"
#include "diescope/core/error.hpp"

namespace diescope::agent {

namespace {

constexpr std::size_t kMaxRequestBytes = 8192;
// Connections open at once over every serving thread, and the kernel's queue of connections not yet
// accepted: both above a hundred scrapers at once (docs/agent.md#metrics-under-load).
constexpr long kMaxConnections = 1024;
constexpr int kListenBacklog = 1024;
// Descriptors the process's table holds before the serving threads start: every connection at once and
// 128 for the agent's own files (docs/agent.md#metrics-under-load).
constexpr long kReservedDescriptors = kMaxConnections + 128;
// Connections one thread accepts before serving what it holds, so the others take their share.
constexpr int kAcceptBurst = 16;
constexpr std::int64_t kRequestTimeoutMs = 5000;

std::int64_t now_ms() {
  return core::monotonic_ns() / 1'000'000;
}

const char* reason_phrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 202:
      return "Accepted";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 409:
      return "Conflict";
    case 429:
      return "Too Many Requests";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The value of a header (case-insensitive name) in a raw header block, or "".
std::string header_value(const std::string& head, const std::string& name) {
  const std::string want = lower(name) + ":";
  std::size_t pos = head.find("\r\n");
  while (pos != std::string::npos && pos + 2 < head.size()) {
    const std::size_t start = pos + 2;
    const std::size_t end = head.find("\r\n", start);
    const std::string line = head.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (lower(line.substr(0, want.size())) == want) {
      std::string v = line.substr(want.size());
      const auto first = v.find_first_not_of(" \t");
      return first == std::string::npos ? std::string() : v.substr(first);
    }
    pos = end;
  }
  return {};
}

// Whether the connected peer is this host: 127.0.0.0/8, ::1, or IPv4-mapped loopback.
bool peer_is_loopback(int fd) {
  sockaddr_storage peer{};
  socklen_t len = sizeof peer;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) return false;
  if (peer.ss_family == AF_INET) {
    const auto* a4 = reinterpret_cast<const sockaddr_in*>(&peer);
    return (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
  }
  if (peer.ss_family == AF_INET6) {
    const auto* a6 = reinterpret_cast<const sockaddr_in6*>(&peer);
    if (IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr)) return true;
    return IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr) && a6->sin6_addr.s6_addr[12] == 127;
  }
  return false;
}

// Grows the process's file descriptor table to kReservedDescriptors (or the soft RLIMIT_NOFILE, when
// lower) by duplicating `fd` at the top and closing the copy; a table never shrinks. Linux grows a
// table shared by several threads only after an RCU grace period, during which every thread that
// opens a descriptor waits: on the H200 a burst of 100 connections held every thread of the load
// generator for 5.4 to 27.2 ms when its descriptors passed 64 (docs/agent.md#metrics-under-load).
// Grown here, at start, no burst waits for it.
void reserve_descriptors(int fd) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  const rlim_t want = std::min<rlim_t>(limit.rlim_cur, static_cast<rlim_t>(kReservedDescriptors));
  if (want < 2) return;
  const int top = ::fcntl(fd, F_DUPFD_CLOEXEC, static_cast<int>(want - 1));
  if (top >= 0) ::close(top);
}

// The response's head; its body is sent from the shared bytes without a copy.
void make_response(HttpReply reply, bool head_only, MetricsServer::Connection& c) {
  std::shared_ptr<const std::string> body = reply.shared_body
                                                ? std::move(reply.shared_body)
                                                : std::make_shared<const std::string>(std::move(reply.body));
  std::string out = "HTTP/1.1 " + std::to_string(reply.status) + " " + reason_phrase(reply.status) + "\r\n";
  out += "Content-Type: " +
         (reply.content_type.empty() ? std::string("text/plain; charset=utf-8") : reply.content_type) +
         "\r\n";
  out += "Content-Length: " + std::to_string(body->size()) + "\r\n";
  out += "Connection: close\r\n\r\n";
  c.head = std::move(out);
  if (!head_only) c.body = std::move(body);
}

// Sends what is left of the response; true when all of it is sent or the peer is gone.
bool send_some(MetricsServer::Connection& c) {
  const std::size_t body_size = c.body ? c.body->size() : 0;
  const std::size_t total = c.head.size() + body_size;
  while (c.sent < total) {
    iovec parts[2];
    int count = 0;
    if (c.sent < c.head.size()) {
      parts[count++] = {c.head.data() + c.sent, c.head.size() - c.sent};
      if (body_size > 0) parts[count++] = {const_cast<char*>(c.body->data()), body_size};
    } else {
      const std::size_t at = c.sent - c.head.size();
      parts[count++] = {const_cast<char*>(c.body->data()) + at, body_size - at};
    }
    msghdr msg{};
    msg.msg_iov = parts;
    msg.msg_iovlen = static_cast<std::size_t>(count);
    const ssize_t n = ::sendmsg(c.fd.get(), &msg, MSG_NOSIGNAL);
    if (n > 0) {
      c.sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return false;
    return true;
  }
  return true;
}

}  // namespace

ListenAddress parse_listen_address(const std::string& text) {
  const std::string fix =
      "use ADDR:PORT, e.g. --listen 127.0.0.1:9402 or --listen [::1]:9402 or --listen 0.0.0.0:9402";
  ListenAddress a;
  std::string port_text;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      throw core::UsageError("cannot read the listen address '" + text + "'", fix);
    }
    a.host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string::npos)
      throw core::UsageError("the listen address '" + text + "' has no port", fix);
    a.host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
    if (a.host.find(':') != std::string::npos) {
      throw core::UsageError("the listen address '" + text + "' looks like IPv6 without brackets", fix);
    }
  }
  if (a.host.empty()) a.host = "127.0.0.1";
  char* end = nullptr;
  const long port = std::strtol(port_text.c_str(), &end, 10);
  if (port_text.empty() || *end != '\0' || port < 0 || port > 65535) {
    throw core::UsageError("the port in the listen address '" + text + "' is not a number from 0 to 65535",
                           fix);
  }
  a.port = static_cast<int>(port);
  return a;
}

MetricsServer::MetricsServer(const ListenAddress& address, Handler handler, PostHandler post, int threads)
    : handler_(std::move(handler)), post_(std::move(post)) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string port_text = std::to_string(address.port);
  const std::string shown =
      (address.host.find(':') != std::string::npos ? "[" + address.host + "]" : address.host) + ":" +
      port_text;
  if (int rc = getaddrinfo(address.host.c_str(), port_text.c_str(), &hints, &found); rc != 0) {
    throw core::UsageError("cannot resolve the listen address " + shown + ": " + gai_strerror(rc),
                           "use a numeric address, e.g. --listen 127.0.0.1:9402");
  }
  std::string why;
  int bind_errno = 0;
  for (addrinfo* ai = found; ai; ai = ai->ai_next) {
    core::UniqueFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
    if (!fd) continue;
    const int one = 1;
    setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd.get(), ai->ai_addr, ai->ai_addrlen) == 0 && ::listen(fd.get(), kListenBacklog) == 0) {
      listen_fd_ = std::move(fd);
      break;
    }
    bind_errno = errno;
    why = std::strerror(errno);
  }
  freeaddrinfo(found);
  if (!listen_fd_) {
    // The fix depends on why: a port in use, an address this host does not have, a privileged port.
    if (bind_errno == EADDRNOTAVAIL)
      throw core::DeviceError(
          "cannot listen on " + shown + ": " + address.host + " is not an address of this host",
          "listen on one of this host's addresses (see `ip addr`), 0.0.0.0:" + port_text +
              " for every interface, or 127.0.0.1:" + port_text + " for this host only");
    if (bind_errno == EACCES)
      throw core::DeviceError(
          "cannot listen on " + shown + ": " + why,
          "ports under 1024 need root or CAP_NET_BIND_SERVICE; choose a port from 1024, e.g. "
          "--listen " +
              address.host + ":9402");
    throw core::DeviceError(
        "cannot listen on " + shown + ": " + why,
        bind_errno == EADDRINUSE
            ? "choose a free port with --listen ADDR:PORT, or stop whatever holds this one"
            : "check the address with `ip addr`, or use --listen 127.0.0.1:9402");
  }
  core::set_nonblocking(listen_fd_.get());
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  getsockname(listen_fd_.get(), reinterpret_cast<sockaddr*>(&bound), &len);
  char host[INET6_ADDRSTRLEN] = {};
  if (bound.ss_family == AF_INET6) {
    auto* a6 = reinterpret_cast<sockaddr_in6*>(&bound);
    inet_ntop(AF_INET6, &a6->sin6_addr, host, sizeof host);
    port_ = ntohs(a6->sin6_port);
    bound_ = "[" + std::string(host) + "]:" + std::to_string(port_);
  } else {
    auto* a4 = reinterpret_cast<sockaddr_in*>(&bound);
    inet_ntop(AF_INET, &a4->sin_addr, host, sizeof host);
    port_ = ntohs(a4->sin_port);
    bound_ = std::string(host) + ":" + std::to_string(port_);
  }
  try {
    wake_ = core::make_pipe("the metrics server");
  } catch (const core::Error& e) {
    throw core::DeviceError(e.cause(), e.fix());
  }
  core::set_nonblocking(wake_.write.get());
  reserve_descriptors(listen_fd_.get());
  const int count = std::max(1, threads);
  threads_.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) threads_.emplace_back([this] { serve(); });
}

MetricsServer::~MetricsServer() {
  if (wake_.write) {
    const char c = 'x';
    [[maybe_unused]] auto n = ::write(wake_.write.get(), &c, 1);
  }
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
}

void MetricsServer::respond_if_whole(Connection& c) {
  const auto head_end = c.in.find("\r\n\r\n");
  HttpReply reply;
  bool head_only = false;
  // A head is held to the limit whether it is still arriving or was read in its last chunk
  // (docs/agent.md#metrics).
  const bool too_large =
      head_end != std::string::npos ? head_end + 4 > kMaxRequestBytes : c.in.size() > kMaxRequestBytes;
  if (too_large) {
    reply = {431, "", "request too large\n"};
  } else if (head_end == std::string::npos) {
    return;  // more to come
  } else {
    const std::string head = c.in.substr(0, head_end + 2);
    const std::string request_line = head.substr(0, head.find("\r\n"));
    const auto sp1 = request_line.find(' ');
    const auto sp2 = request_line.find(' ', sp1 == std::string::npos ? 0 : sp1 + 1);
    if (sp1 == std::string::npos || sp2 == std::string::npos) {
      reply = {400, "", "bad request line\n"};
    } else {
      const std::string method = request_line.substr(0, sp1);
      std::string target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
      target = target.substr(0, target.find('?'));
      head_only = method == "HEAD";
      if (method == "POST" && post_ && target == "/capture") {
        const std::lock_guard post_lock(post_mutex_);
        HttpPost post;
        post.target = target;
        const auto q = request_line.find('?', sp1 + 1);
        if (q != std::string::npos && q < sp2) post.query = request_line.substr(q + 1, sp2 - q - 1);
        post.authorization = header_value(head, "Authorization");
        post.peer_loopback = peer_is_loopback(c.fd.get());
        try {
          reply = post_(post);
        } catch (const std::exception& e) {
          reply = {503, "", std::string("capture unavailable: ") + e.what() + "\n"};
        }
      } else if (method != "GET" && method != "HEAD") {
        reply = {405, "", "only GET and HEAD\n"};
      } else if (target == "/metrics") {
        try {
          reply = handler_(header_value(head, "Accept"));
        } catch (const std::exception& e) {
          reply = {503, "", std::string("metrics unavailable: ") + e.what() + "\n"};
        }
      } else if (target == "/") {
        reply = {200, "text/plain; charset=utf-8", "diescope agent: metrics at /metrics\n"};
      } else {
        reply = {404, "", "not found; metrics are at /metrics\n"};
      }
    }
  }
  c.responding = true;
  make_response(std::move(reply), head_only, c);
  served_.fetch_add(1);
}

bool MetricsServer::advance(Connection& c) {
  while (!c.responding) {
    char buf[2048];
    const ssize_t n = ::recv(c.fd.get(), buf, sizeof buf, 0);
    if (n == 0) return true;  // the peer closed before its request was whole
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno != EAGAIN && errno != EWOULDBLOCK;  // EAGAIN: wait for the rest
    }
    c.in.append(buf, static_cast<std::size_t>(n));
    respond_if_whole(c);
  }
  return send_some(c);
}

void MetricsServer::serve() {
  // Each serving thread waits in an epoll set of its own: the stop pipe, the shared listening socket
  // (exclusive, so that a connection wakes one thread rather than all of them) and the connections it
  // accepted. A new connection is read and answered in the wake that accepts it when its request is
  // already there, so an answer costs no extra wait (docs/agent.md#metrics-under-load).
  const core::UniqueFd ep(::epoll_create1(EPOLL_CLOEXEC));
  if (!ep) return;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = wake_.read.get();
  if (::epoll_ctl(ep.get(), EPOLL_CTL_ADD, wake_.read.get(), &ev) != 0) return;
  ev.events = EPOLLIN | EPOLLEXCLUSIVE;
  ev.data.fd = listen_fd_.get();
  if (::epoll_ctl(ep.get(), EPOLL_CTL_ADD, listen_fd_.get(), &ev) != 0) {
    ev.events = EPOLLIN;  // a kernel without EPOLLEXCLUSIVE: every thread wakes, one accept succeeds
    if (::epoll_ctl(ep.get(), EPOLL_CTL_ADD, listen_fd_.get(), &ev) != 0) return;
  }
  std::unordered_map<int, Connection> conns;
  const auto drop = [&](int fd) {
    ::epoll_ctl(ep.get(), EPOLL_CTL_DEL, fd, nullptr);
    conns.erase(fd);
    open_.fetch_sub(1);
  };
  // After a step: a finished connection is closed; one still reading waits for its socket to be
  // readable, one still sending for it to be writable.
  const auto settle = [&](Connection& c, bool done) {
    const int fd = c.fd.get();
    if (done) {
      drop(fd);
      return;
    }
    const std::uint32_t want = c.responding ? EPOLLOUT : EPOLLIN;
    if (want == c.waiting_for) return;
    epoll_event e{};
    e.events = want;
    e.data.fd = fd;
    if (::epoll_ctl(ep.get(), c.waiting_for == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &e) != 0) {
      drop(fd);
      return;
    }
    c.waiting_for = want;
  };
  std::vector<epoll_event> events(64);
  for (;;) {
    std::int64_t next_deadline = now_ms() + 60'000;
    for (const auto& [fd, c] : conns) next_deadline = std::min(next_deadline, c.deadline_ms);
    const int timeout = static_cast<int>(std::max<std::int64_t>(0, next_deadline - now_ms()));
    const int ready = ::epoll_wait(ep.get(), events.data(), static_cast<int>(events.size()), timeout);
    if (ready < 0 && errno != EINTR) return;
    const std::int64_t now = now_ms();
    bool accept_ready = false;
    for (int i = 0; i < ready; ++i) {
      const int fd = events[static_cast<std::size_t>(i)].data.fd;
      if (fd == wake_.read.get()) {  // asked to stop
        open_.fetch_sub(static_cast<long>(conns.size()));
        return;
      }
      if (fd == listen_fd_.get()) {
        accept_ready = true;
        continue;
      }
      if (auto it = conns.find(fd); it != conns.end()) settle(it->second, advance(it->second));
    }
    // New connections, a burst at a time so the other threads take their share.
    if (accept_ready) {
      for (int burst = 0; burst < kAcceptBurst; ++burst) {
        core::UniqueFd fd(::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
        if (!fd) break;
        if (open_.load() >= kMaxConnections) continue;  // refused: closed at once
        open_.fetch_add(1);
        const int one = 1;
        setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        const int key = fd.get();
        Connection& c = conns[key];
        c.fd = std::move(fd);
        c.deadline_ms = now + kRequestTimeoutMs;
        settle(c, advance(c));
      }
    }
    // Connections past their time (a client too slow to send its request or read the answer):
    // dropped, so they hold no slot.
    std::vector<int> late;
    for (const auto& [fd, c] : conns)
      if (now >= c.deadline_ms) late.push_back(fd);
    for (int fd : late) drop(fd);
  }
}

namespace {

HttpResponse http_request(const std::string& method, const std::string& host, int port,
                          const std::string& path, const std::string& extra_headers, int timeout_ms) {
  HttpResponse r;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0 || !found) {
    r.error = "cannot resolve " + host;
    return r;
  }
  const core::UniqueFd socket_fd(
      ::socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, found->ai_protocol));
  const int fd = socket_fd.get();
  if (fd < 0) {
    freeaddrinfo(found);
    r.error = "socket failed";
    return r;
  }
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (::connect(fd, found->ai_addr, found->ai_addrlen) != 0) {
    r.error = std::string("connect failed: ") + std::strerror(errno);
    freeaddrinfo(found);
    return r;
  }
  freeaddrinfo(found);
  std::string request = method + " " + path + " HTTP/1.1\r\nHost: " + host + "\r\n" + extra_headers;
  if (method == "POST") request += "Content-Length: 0\r\n";
  request += "Connection: close\r\n\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
    r.error = "send failed";
    return r;
  }
  std::string all;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) {
      all.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0) r.error = std::string("recv failed: ") + std::strerror(errno);
    break;
  }
  const auto head_end = all.find("\r\n\r\n");
  if (head_end == std::string::npos) {
    if (r.error.empty()) r.error = "no complete response";
    return r;
  }
  r.headers = all.substr(0, head_end);
  r.body = all.substr(head_end + 4);
  if (r.headers.rfind("HTTP/1.", 0) == 0 && r.headers.size() > 12)
    r.status = std::atoi(r.headers.c_str() + 9);
  r.error.clear();
  return r;
}

}  // namespace

HttpResponse http_get(const std::string& host, int port, const std::string& path, const std::string& accept,
                      int timeout_ms) {
  return http_request("GET", host, port, path, accept.empty() ? "" : "Accept: " + accept + "\r\n",
                      timeout_ms);
}

HttpResponse http_post(const std::string& host, int port, const std::string& path,
                       const std::string& authorization, int timeout_ms) {
  return http_request("POST", host, port, path,
                      authorization.empty() ? "" : "Authorization: " + authorization + "\r\n", timeout_ms);
}

}  // namespace diescope::agent
