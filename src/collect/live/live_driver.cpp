#include "diescope/collect/live_driver.hpp"

#include <algorithm>
#include <cerrno>
#include <limits>

#include "diescope/core/clock.hpp"

namespace diescope::collect {

void watch_feed(const Feed& feed, recording::TimeNs feed_now, recording::TimeNs mono, DriverWait& wait) {
  wait.feed_fds = feed.wait_fds();
  const recording::TimeNs due = feed.next_due_ns();
  if (due == std::numeric_limits<recording::TimeNs>::max()) {
    wait.feed_due_mono = -1;
    return;
  }
  const double until = static_cast<double>(due - feed_now) / feed.speed();
  wait.feed_due_mono = mono + std::max<recording::TimeNs>(static_cast<recording::TimeNs>(until), 0);
}

bool DriverWake::readable(int fd) const {
  return std::any_of(fds.begin(), fds.end(),
                     [fd](const pollfd& p) { return p.fd == fd && (p.revents & (POLLIN | POLLHUP)) != 0; });
}

bool DriverWake::woke(int fd) const {
  return std::any_of(fds.begin(), fds.end(), [fd](const pollfd& p) { return p.fd == fd && p.revents != 0; });
}

bool DriverWake::any_fd() const {
  return std::any_of(fds.begin(), fds.end(), [](const pollfd& p) { return p.revents != 0; });
}

LiveDriver::LiveDriver(std::function<recording::TimeNs()> monotonic)
    : monotonic_(monotonic ? std::move(monotonic) : std::function<recording::TimeNs()>(core::monotonic_ns)) {}

int LiveDriver::timeout_ms(const DriverWait& wait, recording::TimeNs mono) {
  // The earliest due time; -1: none, so the wait ends only for a descriptor.
  recording::TimeNs due = wait.due_mono;
  if (wait.feed_due_mono >= 0) due = due < 0 ? wait.feed_due_mono : std::min(due, wait.feed_due_mono);
  if (due < 0) return -1;
  const recording::TimeNs wait_ns = std::max<recording::TimeNs>(due - mono, 0);
  // Rounded up to the next millisecond so the driver never spins just short of a due time.
  return static_cast<int>(std::min<recording::TimeNs>(
      (wait_ns + recording::kNsPerMs - 1) / recording::kNsPerMs, std::numeric_limits<int>::max()));
}

DriverWake LiveDriver::wait(const DriverWait& wait) {
  DriverWake wake;
  for (int fd : wait.own_fds) wake.fds.push_back({fd, POLLIN, 0});
  for (int fd : wait.feed_fds) wake.fds.push_back({fd, POLLIN, 0});
  const int ready = ::poll(wake.fds.data(), wake.fds.size(), timeout_ms(wait, monotonic_()));
  wake.mono = monotonic_();
  if (ready < 0) {
    for (pollfd& p : wake.fds) p.revents = 0;
    if (errno == EINTR) {
      wake.interrupted = true;
    } else {
      wake.error = errno;
      return wake;
    }
  }
  wake.due = wait.due_mono >= 0 && wake.mono >= wait.due_mono;
  wake.feed_due = wait.feed_due_mono >= 0 && wake.mono >= wait.feed_due_mono;
  for (std::size_t i = wait.own_fds.size(); i < wake.fds.size(); ++i)
    if (wake.fds[i].revents != 0) wake.feed_fd_ = true;
  return wake;
}

void LiveDriver::drive(const DriverReader& reader) {
  for (;;) {
    const DriverWake wake = wait(reader.policy());
    if (!reader.sink(wake)) return;
  }
}

}  // namespace diescope::collect
