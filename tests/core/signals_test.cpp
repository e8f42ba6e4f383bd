// SignalSelfPipe turns a caught signal into a readable record and puts back what it replaced.
#include <poll.h>

#include <csignal>

#include <gtest/gtest.h>

#include "diescope/core/signals.hpp"

namespace diescope {
namespace {

volatile std::sig_atomic_t g_old_handler_saw = 0;
void old_handler(int number) {
  g_old_handler_saw = number;
}

bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

TEST(SignalName, NamesSignalsTheWayTheShellDoes) {
  EXPECT_EQ(core::signal_name(SIGINT), "SIGINT");
  EXPECT_EQ(core::signal_name(SIGTERM), "SIGTERM");
  EXPECT_EQ(core::signal_name(9999), "signal 9999");
}

TEST(SignalSelfPipe, ACaughtSignalMakesTheFdReadable) {
  core::SignalSelfPipe signals({SIGUSR1});
  EXPECT_FALSE(readable(signals.fd()));
  EXPECT_FALSE(signals.next());
  ::raise(SIGUSR1);
  EXPECT_TRUE(readable(signals.fd()));
  const auto caught = signals.next();
  ASSERT_TRUE(caught);
  EXPECT_EQ(caught->number, SIGUSR1);
  EXPECT_FALSE(caught->from_kernel);  // raise() is a user signal (SI_TKILL), not the kernel's
  EXPECT_FALSE(signals.next());
  EXPECT_FALSE(readable(signals.fd()));
}

TEST(SignalSelfPipe, RestoresTheHandlerItReplaced) {
  std::signal(SIGUSR2, old_handler);
  g_old_handler_saw = 0;
  {
    core::SignalSelfPipe signals({SIGUSR2}, {SIGPIPE});
    ::raise(SIGUSR2);
    EXPECT_EQ(g_old_handler_saw, 0);
    EXPECT_TRUE(signals.next());
    struct sigaction pipe_action {};
    ::sigaction(SIGPIPE, nullptr, &pipe_action);
    EXPECT_EQ(pipe_action.sa_handler, SIG_IGN);
  }
  ::raise(SIGUSR2);
  EXPECT_EQ(g_old_handler_saw, SIGUSR2);
  struct sigaction pipe_action {};
  ::sigaction(SIGPIPE, nullptr, &pipe_action);
  EXPECT_EQ(pipe_action.sa_handler, SIG_DFL);
  std::signal(SIGUSR2, SIG_DFL);
}

TEST(SignalSelfPipe, NestedPipesHandSignalsBackOnDestruction) {
  core::SignalSelfPipe outer({SIGUSR1});
  {
    core::SignalSelfPipe inner({SIGUSR1});
    ::raise(SIGUSR1);
    EXPECT_TRUE(inner.next());
    EXPECT_FALSE(outer.next());
  }
  ::raise(SIGUSR1);
  const auto caught = outer.next();
  ASSERT_TRUE(caught);
  EXPECT_EQ(caught->number, SIGUSR1);
}

}  // namespace
}  // namespace diescope
