// UniqueFd closes its descriptor exactly once, whoever holds it last.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "diescope/core/unique_fd.hpp"

namespace diescope {
namespace {

bool is_open(int fd) {
  return ::fcntl(fd, F_GETFD) != -1;
}

TEST(UniqueFd, ClosesOnDestruction) {
  const core::Pipe pipe = core::make_pipe("the test");
  int fd = -1;
  {
    core::UniqueFd owner(::dup(pipe.write.get()));
    fd = owner.get();
    ASSERT_GE(fd, 0);
    EXPECT_TRUE(is_open(fd));
  }
  EXPECT_FALSE(is_open(fd));
}

TEST(UniqueFd, AMovedFromOneIsEmptyAndClosesNothing) {
  core::Pipe pipe = core::make_pipe("the test");
  const int fd = pipe.write.get();
  core::UniqueFd moved(std::move(pipe.write));
  EXPECT_EQ(pipe.write.get(), -1);
  EXPECT_FALSE(pipe.write);
  pipe.write.reset();  // an empty one closes nothing
  EXPECT_TRUE(is_open(fd));
  EXPECT_EQ(moved.get(), fd);

  core::UniqueFd assigned;
  assigned = std::move(moved);
  EXPECT_FALSE(moved);
  EXPECT_EQ(assigned.get(), fd);
  EXPECT_TRUE(is_open(fd));
  assigned.reset();
  EXPECT_FALSE(is_open(fd));
}

TEST(UniqueFd, ClosedExactlyOnce) {
  // The read end sees end of file once the only write end is closed, and not before.
  core::Pipe pipe = core::make_pipe("the test");
  core::set_nonblocking(pipe.read.get());
  core::UniqueFd second_owner(std::move(pipe.write));
  char byte = 0;
  EXPECT_EQ(::read(pipe.read.get(), &byte, 1), -1);  // EAGAIN: a writer is still open
  const int fd = second_owner.get();
  second_owner.reset();
  EXPECT_EQ(::read(pipe.read.get(), &byte, 1), 0);
  // The number is handed out again (the lowest free one); a second close by the stale owner would
  // close the new descriptor.
  core::UniqueFd reused(::dup(pipe.read.get()));
  second_owner.reset();
  EXPECT_TRUE(is_open(reused.get()));
  if (reused.get() != fd) GTEST_LOG_(INFO) << "the closed number was not reused; the check above is weaker";
}

TEST(UniqueFd, ReleaseGivesUpOwnership) {
  core::Pipe pipe = core::make_pipe("the test");
  const int fd = pipe.write.release();
  EXPECT_FALSE(pipe.write);
  EXPECT_TRUE(is_open(fd));
  ::close(fd);
}

}  // namespace
}  // namespace diescope
