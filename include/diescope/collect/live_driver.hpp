// The live driver: the one wait of a live read (docs/live-collection.md#the-driver). A reader
// (`agent`, `top`, `run`) is a policy, which says before each wait when it is next due and which of
// its own descriptors to watch, and a sink, which handles what woke the driver. The driver sleeps in one
// ::poll until the earliest of the reader's due time, the feed's next_due_ns(), a readable feed
// descriptor (wait_fds()) or a readable descriptor of the reader's own, and wakes for nothing else
// (docs/agent.md#wake-ups).
#pragma once

#include <algorithm>
#include <functional>
#include <vector>

#include <poll.h>

#include "diescope/collect/feed.hpp"
#include "diescope/recording/records.hpp"

namespace diescope::collect {

// What one wait watches, on the monotonic clock; -1: no due time. A reader without a feed (`run`,
// which reads its sampler children itself) leaves the feed's part empty.
struct DriverWait {
  recording::TimeNs due_mono = -1;       // the reader's next due time
  recording::TimeNs feed_due_mono = -1;  // the feed's next_due_ns()
  std::vector<int> feed_fds;             // the feed's wait_fds()
  std::vector<int> own_fds;              // the reader's own (a stop pipe, a socket, a terminal)

  // The reader is also due at `mono`: its due time becomes the earlier of the two.
  void due_by(recording::TimeNs mono) { due_mono = due_mono < 0 ? mono : std::min(due_mono, mono); }
};

// A reader's due time that repeats every `period_ns` on the monotonic clock (`run`'s NVML tick, GPM
// sample and host probe): after it is served it moves one period on, or, where that has already
// passed, one period from the time it was served: missed ones are not caught up
// (docs/live-collection.md#the-driver).
struct DriverTimer {
  recording::TimeNs next_mono = 0;
  recording::TimeNs period_ns = 0;

  bool due(recording::TimeNs mono) const { return mono >= next_mono; }
  // Served at `mono`: the next due time.
  void served(recording::TimeNs mono) {
    next_mono += period_ns;
    if (next_mono < mono) next_mono = mono + period_ns;
  }
};

// The feed's part of a wait: its descriptors, and its next due time moved from the feed's timeline
// (`feed_now` there is `mono` here) onto the monotonic clock at the feed's speed; a due time already
// passed is due now.
void watch_feed(const Feed& feed, recording::TimeNs feed_now, recording::TimeNs mono, DriverWait& wait);

// What woke the driver.
struct DriverWake {
  recording::TimeNs mono = 0;  // the monotonic clock when the wait ended
  bool due = false;            // the reader's due time has come
  bool feed_due = false;       // the feed's due time has come
  bool interrupted = false;    // a signal cut the wait short (EINTR)
  int error = 0;               // ::poll failed with this errno (not EINTR); nothing else is set
  std::vector<pollfd> fds;     // every descriptor watched, own ones first; revents 0 unless it woke

  // Whether `fd` is readable or closed (POLLIN or POLLHUP).
  bool readable(int fd) const;
  // Whether `fd` woke the driver at all (any revents, errors included).
  bool woke(int fd) const;
  // Whether any descriptor woke it; whether one of the feed's did.
  bool any_fd() const;
  bool feed_fd() const { return feed_fd_; }

 private:
  friend class LiveDriver;
  bool feed_fd_ = false;
};

// A reader of the driver: its policy (the wait before each sleep) and its sink (what to do with a
// wake; false ends the drive).
struct DriverReader {
  std::function<DriverWait()> policy;
  std::function<bool(const DriverWake&)> sink;
};

class LiveDriver {
 public:
  // `monotonic` reads the monotonic clock (tests may shift it); core::monotonic_ns by default.
  explicit LiveDriver(std::function<recording::TimeNs()> monotonic = {});

  // Asks the policy, waits, hands the wake to the sink; again until the sink returns false.
  void drive(const DriverReader& reader);
  // One wait: sleeps until the earliest due time (rounded up to the next millisecond, so it never
  // wakes just short of one) or a watched descriptor, and says what woke it.
  DriverWake wait(const DriverWait& wait);
  // The ::poll timeout of a wait begun at `mono`: up to the earliest due time, rounded up to the next
  // millisecond; 0 when one has passed; -1 (no timeout) when there is none.
  static int timeout_ms(const DriverWait& wait, recording::TimeNs mono);

 private:
  std::function<recording::TimeNs()> monotonic_;
};

}  // namespace diescope::collect
