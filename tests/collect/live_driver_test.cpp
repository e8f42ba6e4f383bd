// The live driver (docs/live-collection.md#the-driver): one ::poll until the earliest of the
// reader's due time, the feed's next_due_ns(), a readable feed descriptor or one of the reader's own.
#include <gtest/gtest.h>

#include <unistd.h>

#include <array>
#include <deque>
#include <limits>
#include <string>
#include <vector>

#include "diescope/collect/live_driver.hpp"
#include "diescope/core/clock.hpp"

namespace diescope::collect {
namespace {

constexpr recording::TimeNs kMs = recording::kNsPerMs;

// A feed with timers on its own timeline (next_due_ns: the first not yet taken) and a pipe as its
// sampler child's output (wait_fds).
class TimerFeed : public Feed {
 public:
  explicit TimerFeed(double speed = 1.0) : speed_(speed) { EXPECT_EQ(::pipe(pipe_.data()), 0); }
  ~TimerFeed() override {
    ::close(pipe_[0]);
    ::close(pipe_[1]);
  }
  TimerFeed(const TimerFeed&) = delete;
  TimerFeed& operator=(const TimerFeed&) = delete;

  std::string kind() const override { return "live"; }
  std::size_t gpu_count() const override { return 0; }
  const recording::RecordingMeta& meta(std::size_t /*gpu*/) const override { return meta_; }
  recording::TimeNs now_ns(const core::ClockReadings& clocks) override { return clocks.realtime_ns; }
  double speed() const override { return speed_; }
  void collect(recording::TimeNs /*now*/, std::vector<GpuBatch>& /*out*/) override {}
  void set_counters(std::size_t /*gpu*/, bool /*on*/, recording::TimeNs /*now*/) override {}
  void shutdown(recording::TimeNs /*now*/, std::vector<GpuBatch>& /*out*/) override {}
  bool counters_on(std::size_t /*gpu*/) const override { return false; }
  std::vector<int> wait_fds() const override { return {pipe_[0]}; }
  recording::TimeNs next_due_ns() const override {
    return timers.empty() ? std::numeric_limits<recording::TimeNs>::max() : timers.front();
  }

  void write_byte() const { ASSERT_EQ(::write(pipe_[1], "x", 1), 1); }
  void read_byte() const {
    char c = 0;
    ASSERT_EQ(::read(pipe_[0], &c, 1), 1);
  }
  int fd() const { return pipe_[0]; }

  std::deque<recording::TimeNs> timers;

 private:
  double speed_;
  std::array<int, 2> pipe_{};
  recording::RecordingMeta meta_;
};

TEST(LiveDriver, TimeoutIsTheEarliestDueRoundedUpToAMillisecond) {
  DriverWait w;
  EXPECT_EQ(LiveDriver::timeout_ms(w, 5 * kMs), -1);  // nothing due: only a descriptor ends the wait
  w.due_mono = 10 * kMs + 500'000;
  // 10.5 ms - 9.000001 ms = 1.499999 ms, rounded up: 2 ms.
  EXPECT_EQ(LiveDriver::timeout_ms(w, 9 * kMs + 1), 2);
  w.feed_due_mono = 9 * kMs + 200'000;  // the feed is due first: 0.199999 ms, rounded up: 1 ms
  EXPECT_EQ(LiveDriver::timeout_ms(w, 9 * kMs + 1), 1);
  w.due_mono = -1;  // the feed's alone
  EXPECT_EQ(LiveDriver::timeout_ms(w, 9 * kMs + 1), 1);
  EXPECT_EQ(LiveDriver::timeout_ms(w, 12 * kMs), 0);  // passed: due now
}

TEST(LiveDriver, AReaderIsDueAtTheEarliestOfItsTimes) {
  DriverWait w;
  w.due_by(50 * kMs);  // nothing due before: 50 ms
  EXPECT_EQ(w.due_mono, 50 * kMs);
  w.due_by(80 * kMs);  // later: still 50 ms
  EXPECT_EQ(w.due_mono, 50 * kMs);
  w.due_by(20 * kMs);  // earlier: 20 ms
  EXPECT_EQ(w.due_mono, 20 * kMs);
  EXPECT_EQ(w.feed_due_mono, -1);  // no feed
}

// A timer every 100 ms from 0, worked by hand: served at 10 ms, next at 100; served at 130 (30 ms
// late, within a period), next at 200; served at 450 (300 and 400 missed: 300 is passed), next at
// 450 + 100 = 550, not 300.
TEST(LiveDriver, ATimerMovesOnAPeriodAndDoesNotCatchUpMissedOnes) {
  DriverTimer t{0, 100 * kMs};
  EXPECT_TRUE(t.due(0));
  t.served(10 * kMs);
  EXPECT_EQ(t.next_mono, 100 * kMs);
  EXPECT_FALSE(t.due(99 * kMs));
  EXPECT_TRUE(t.due(100 * kMs));
  t.served(130 * kMs);
  EXPECT_EQ(t.next_mono, 200 * kMs);
  t.served(450 * kMs);
  EXPECT_EQ(t.next_mono, 550 * kMs);
  EXPECT_FALSE(t.due(549 * kMs));
  EXPECT_TRUE(t.due(550 * kMs));
}

TEST(LiveDriver, WatchFeedMovesTheFeedsDueOntoTheMonotonicClock) {
  TimerFeed feed(2.0);  // two feed seconds per monotonic second
  DriverWait w;
  watch_feed(feed, 1000 * kMs, 5000 * kMs, w);
  EXPECT_EQ(w.feed_due_mono, -1);  // no timer: nothing due
  ASSERT_EQ(w.feed_fds.size(), 1U);
  EXPECT_EQ(w.feed_fds[0], feed.fd());
  feed.timers = {1300 * kMs};
  watch_feed(feed, 1000 * kMs, 5000 * kMs, w);
  EXPECT_EQ(w.feed_due_mono, 5150 * kMs);  // 300 ms ahead at 2x: 150 ms after 5000 ms
  watch_feed(feed, 1400 * kMs, 5000 * kMs, w);
  EXPECT_EQ(w.feed_due_mono, 5000 * kMs);  // passed: due now
}

TEST(LiveDriver, WakesInTheOrderOfWhatIsDue) {
  // Worked out by hand: the feed's pipe holds a byte at the start, so the first wake is its
  // descriptor at once; then the feed's timer at +150 ms, the reader's due time at +300 ms, the
  // feed's second timer at +450 ms. The reader's own pipe is never written, so it never wakes.
  TimerFeed feed;
  std::array<int, 2> own{};
  ASSERT_EQ(::pipe(own.data()), 0);
  const recording::TimeNs start = core::monotonic_ns();
  // The feed's timeline is the monotonic clock shifted by an hour, at 1x.
  const recording::TimeNs shift = 3600 * recording::kNsPerSecond;
  feed.timers = {start + shift + 150 * kMs, start + shift + 450 * kMs};
  recording::TimeNs reader_due = start + 300 * kMs;
  feed.write_byte();

  std::vector<std::string> woke;
  std::vector<recording::TimeNs> due_at;  // each wake's due time; -1 for a descriptor
  DriverReader reader;
  reader.policy = [&] {
    DriverWait w;
    w.due_mono = reader_due;
    w.own_fds = {own[0]};
    const recording::TimeNs mono = core::monotonic_ns();
    watch_feed(feed, mono + shift, mono, w);
    return w;
  };
  reader.sink = [&](const DriverWake& wake) {
    EXPECT_EQ(wake.error, 0);
    EXPECT_FALSE(wake.readable(own[0]));
    if (wake.feed_fd()) {
      EXPECT_TRUE(wake.readable(feed.fd()));
      feed.read_byte();
      woke.emplace_back("feed fd");
      due_at.push_back(-1);
    }
    if (wake.feed_due) {
      woke.emplace_back("feed due");
      due_at.push_back(feed.timers.front() - shift);
      feed.timers.pop_front();
    }
    if (wake.due) {
      woke.emplace_back("reader due");
      due_at.push_back(reader_due);
      reader_due = -1;
    }
    if (!wake.any_fd() && !wake.feed_due && !wake.due && !wake.interrupted) woke.emplace_back("nothing");
    // Never early: a due wake comes at or after its due time.
    if (due_at.back() >= 0) {
      EXPECT_GE(wake.mono, due_at.back());
    }
    return !feed.timers.empty() || reader_due >= 0;
  };
  LiveDriver().drive(reader);
  EXPECT_EQ(woke, (std::vector<std::string>{"feed fd", "feed due", "reader due", "feed due"}));
  ::close(own[0]);
  ::close(own[1]);
}

// A reader without a feed (run's shape: docs/live-collection.md#the-driver), worked by hand: its pipe
// holds a byte at the start, so the first wake is that descriptor at once; then its timer, due at
// +100 ms and every 100 ms, wakes it at +100 and +200 ms, never early, and nothing else does. The
// sink reads the byte and serves the timer; it ends the drive after the second due wake.
TEST(LiveDriver, AReaderWithoutAFeedWakesForItsDescriptorsAndItsTimer) {
  std::array<int, 2> own{};
  ASSERT_EQ(::pipe(own.data()), 0);
  ASSERT_EQ(::write(own[1], "x", 1), 1);
  const recording::TimeNs start = core::monotonic_ns();
  DriverTimer timer{start + 100 * kMs, 100 * kMs};
  std::vector<std::string> woke;
  std::vector<recording::TimeNs> due_at;  // each due wake's due time, from the start
  recording::TimeNs served_first = 0;
  DriverReader reader;
  reader.policy = [&] {
    DriverWait w;
    w.own_fds = {own[0]};
    w.due_by(timer.next_mono);
    return w;
  };
  reader.sink = [&](const DriverWake& wake) {
    EXPECT_EQ(wake.error, 0);
    EXPECT_FALSE(wake.feed_due);
    EXPECT_FALSE(wake.feed_fd());
    if (wake.readable(own[0])) {
      char c = 0;
      EXPECT_EQ(::read(own[0], &c, 1), 1);
      woke.emplace_back("own fd");
    }
    if (wake.due) {
      EXPECT_TRUE(timer.due(wake.mono));
      EXPECT_GE(wake.mono, timer.next_mono);
      due_at.push_back(timer.next_mono - start);
      if (due_at.size() == 1) served_first = wake.mono - start;
      timer.served(wake.mono);
      woke.emplace_back("due");
    }
    return due_at.size() < 2;
  };
  LiveDriver().drive(reader);
  EXPECT_EQ(woke, (std::vector<std::string>{"own fd", "due", "due"}));
  ASSERT_EQ(due_at.size(), 2u);
  EXPECT_EQ(due_at[0], 100 * kMs);
  // 200 ms, unless a loaded machine served the first after 200 ms (then a period after it was served).
  EXPECT_EQ(due_at[1], served_first <= 200 * kMs ? 200 * kMs : served_first + 100 * kMs);
  ::close(own[0]);
  ::close(own[1]);
}

TEST(LiveDriver, TheReadersOwnDescriptorWakesItAlone) {
  TimerFeed feed;
  std::array<int, 2> own{};
  ASSERT_EQ(::pipe(own.data()), 0);
  ASSERT_EQ(::write(own[1], "q", 1), 1);
  DriverWait w;
  w.own_fds = {own[0]};
  watch_feed(feed, 0, core::monotonic_ns(), w);
  // Nothing is due: without the byte this wait would never end.
  const DriverWake wake = LiveDriver().wait(w);
  EXPECT_TRUE(wake.readable(own[0]));
  EXPECT_TRUE(wake.woke(own[0]));
  EXPECT_TRUE(wake.any_fd());
  EXPECT_FALSE(wake.feed_fd());
  EXPECT_FALSE(wake.readable(feed.fd()));
  EXPECT_FALSE(wake.due);
  EXPECT_FALSE(wake.feed_due);
  ::close(own[0]);
  ::close(own[1]);
}

TEST(LiveDriver, ADueTimeShiftedIntoThePastWakesAtOnce) {
  // The driver reads the monotonic clock through the function it is given: a clock an hour ahead
  // finds the reader's due time (the real clock plus a minute) passed, so the wait ends at once.
  const recording::TimeNs hour = 3600 * recording::kNsPerSecond;
  LiveDriver driver([hour] { return core::monotonic_ns() + hour; });
  DriverWait w;
  w.due_mono = core::monotonic_ns() + 60 * recording::kNsPerSecond;
  const recording::TimeNs before = core::monotonic_ns();
  const DriverWake wake = driver.wait(w);
  EXPECT_TRUE(wake.due);
  EXPECT_FALSE(wake.feed_due);
  EXPECT_FALSE(wake.any_fd());
  EXPECT_LT(core::monotonic_ns() - before, 30 * recording::kNsPerSecond);
}

}  // namespace
}  // namespace diescope::collect
