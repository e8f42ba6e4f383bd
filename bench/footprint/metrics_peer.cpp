// The floor for /metrics under load: a minimal HTTP server with nothing of diescope, answering every
// request with a fixed body of --bytes bytes ("Connection: close", as the agent answers). It is built
// as a fast server would be: --threads threads (4, as the agent's pool), each waiting in an epoll set
// of its own over the shared listening socket (exclusive, so a connection wakes one thread) and the
// connections it accepted, non-blocking sockets, a connection read and answered in the wake that
// accepts it, and the file descriptor table grown for 1,152 descriptors before the threads start, as
// the agent's is. The same metrics_load timed against it and against the agent, in one run, separates
// what the machine's network stack costs from what the agent adds (docs/footprint.md#the-agents-own-cost).
//
//   metrics_peer [--port 0] [--bytes 25354] [--threads 4] [--seconds 60]
// Prints "serving on PORT" and serves for --seconds (or until SIGTERM).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace {

struct Conn {
  std::string in;
  std::size_t sent = 0;
  bool answering = false;
};

void serve(int listen_fd, const std::string& response, std::chrono::steady_clock::time_point until) {
  const int ep = ::epoll_create1(EPOLL_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLEXCLUSIVE;
  ev.data.fd = listen_fd;
  if (::epoll_ctl(ep, EPOLL_CTL_ADD, listen_fd, &ev) != 0) {
    ev.events = EPOLLIN;
    ::epoll_ctl(ep, EPOLL_CTL_ADD, listen_fd, &ev);
  }
  std::unordered_map<int, Conn> conns;
  // Reads the request, sends the answer; true when the connection is done.
  auto step = [&](int fd, Conn& c) {
    while (!c.answering) {
      char buf[2048];
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n == 0) return true;
      if (n < 0) return errno != EAGAIN && errno != EINTR;
      c.in.append(buf, static_cast<std::size_t>(n));
      c.answering = c.in.find("\r\n\r\n") != std::string::npos;
    }
    while (c.sent < response.size()) {
      const ssize_t n = ::send(fd, response.data() + c.sent, response.size() - c.sent, MSG_NOSIGNAL);
      if (n > 0) {
        c.sent += static_cast<std::size_t>(n);
        continue;
      }
      return !(n < 0 && (errno == EAGAIN || errno == EINTR));
    }
    return true;
  };
  auto settle = [&](int fd, bool done, bool registered) {
    if (done) {
      if (registered) ::epoll_ctl(ep, EPOLL_CTL_DEL, fd, nullptr);
      conns.erase(fd);
      ::close(fd);
      return;
    }
    epoll_event e{};
    e.events = conns[fd].answering ? EPOLLOUT : EPOLLIN;
    e.data.fd = fd;
    ::epoll_ctl(ep, registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &e);
  };
  std::vector<epoll_event> events(64);
  while (std::chrono::steady_clock::now() < until) {
    const int ready = ::epoll_wait(ep, events.data(), static_cast<int>(events.size()), 200);
    for (int i = 0; i < ready; ++i) {
      const int fd = events[static_cast<std::size_t>(i)].data.fd;
      if (fd == listen_fd) {
        for (int burst = 0; burst < 16; ++burst) {
          const int c = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
          if (c < 0) break;
          const int one = 1;
          setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          settle(c, step(c, conns[c]), false);
        }
        continue;
      }
      auto it = conns.find(fd);
      if (it != conns.end()) settle(fd, step(fd, it->second), true);
    }
  }
  ::close(ep);
}

}  // namespace

int main(int argc, char** argv) {
  int port = 0, threads = 4;
  long bytes = 25354;
  double seconds = 60;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    if (key == "--port")
      port = std::atoi(argv[i + 1]);
    else if (key == "--bytes")
      bytes = std::atol(argv[i + 1]);
    else if (key == "--threads")
      threads = std::atoi(argv[i + 1]);
    else if (key == "--seconds")
      seconds = std::atof(argv[i + 1]);
  }
  if (port < 0 || bytes < 0 || threads <= 0 || !(seconds > 0)) {
    std::fprintf(stderr,
                 "metrics_peer: give --port N >= 0, --bytes N >= 0, --threads N > 0, --seconds S > 0\n");
    return 2;
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 1024) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::fprintf(stderr, "metrics_peer: cannot listen on 127.0.0.1:%d: %s\n", port, std::strerror(errno));
    return 1;
  }
  const std::string response =
      "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
      "Content-Length: " +
      std::to_string(bytes) + "\r\nConnection: close\r\n\r\n" +
      std::string(static_cast<std::size_t>(bytes), 'x');
  std::printf("serving on %d\n", ntohs(addr.sin_port));
  std::fflush(stdout);
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                            std::chrono::duration<double>(seconds));
  // As the agent does (src/agent/http_server.cpp): no burst waits for the table to grow.
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur > 1) {
    const int top =
        ::fcntl(fd, F_DUPFD_CLOEXEC, static_cast<int>(std::min<rlim_t>(limit.rlim_cur, 1152) - 1));
    if (top >= 0) ::close(top);
  }
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(serve, fd, std::cref(response), until);
  for (std::thread& t : pool) t.join();
  return 0;
}
