// The sampler child's stop watcher: a wait with no time left still sees the parent's stop on stdin,
// so a child whose decodes fall behind (or whose decode period came out as zero) cannot miss it and
// sample on forever.
#include <gtest/gtest.h>

#include <cstring>
#include <unistd.h>

#include "../../src/collect/pmsampling/child_io.hpp"
#include "diescope/core/clock.hpp"

namespace diescope::collect {
namespace {

// Puts the read end of a fresh pipe on fd 0 for the test's length; the test writes or closes the
// other end.
class StdinPipe {
 public:
  StdinPipe() {
    saved_ = ::dup(0);
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    ::dup2(fds[0], 0);
    ::close(fds[0]);
    write_end_ = fds[1];
  }
  ~StdinPipe() {
    close_write();
    ::dup2(saved_, 0);
    ::close(saved_);
  }
  void say(const char* text) { EXPECT_GT(::write(write_end_, text, std::strlen(text)), 0); }
  void close_write() {
    if (write_end_ >= 0) ::close(write_end_);
    write_end_ = -1;
  }

 private:
  int saved_ = -1;
  int write_end_ = -1;
};

TEST(SamplerStopWatcher, AWaitWithNoTimeLeftSeesAClosedInput) {
  StdinPipe in;
  in.close_write();
  child::StopWatcher stop;
  EXPECT_TRUE(stop.wait(0));
  EXPECT_EQ(stop.reason(), "the parent closed the sampler's input");
}

TEST(SamplerStopWatcher, AWaitBehindItsTimeSeesAStopLine) {
  StdinPipe in;
  in.say("stop\n");
  child::StopWatcher stop;
  EXPECT_TRUE(stop.wait(-5));
  EXPECT_EQ(stop.reason(), "the parent asked the sampler to stop");
}

TEST(SamplerStopWatcher, WithoutAStopAShortWaitReturnsInTime) {
  StdinPipe in;
  child::StopWatcher stop;
  const std::int64_t before = core::monotonic_ns();
  EXPECT_FALSE(stop.wait(0));
  EXPECT_FALSE(stop.wait(20));
  const std::int64_t took_ms = (core::monotonic_ns() - before) / 1'000'000;
  EXPECT_GE(took_ms, 19);   // the 20 ms wait waited
  EXPECT_LT(took_ms, 500);  // and neither hung
}

}  // namespace
}  // namespace diescope::collect
