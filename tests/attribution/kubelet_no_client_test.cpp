// docs/attribution.md#kubernetes: without libdiescope-kubelet.so (its own test binary, since the client
// is loaded once per process) a kubelet that is there is not asked, and the note says why.
#include <cstring>
#include <filesystem>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "diescope/attribution/kubelet.hpp"

namespace diescope::attribution {
namespace {

TEST(KubeletNoClient, NotedWithTheFix) {
  ::setenv("DIESCOPE_KUBELET_CLIENT", "/nonexistent/libdiescope-kubelet.so", 1);
  // A socket must be there, or the missing socket is what gets noted.
  const std::string path =
      std::filesystem::temp_directory_path() / ("ds-noclient-" + std::to_string(::getpid()));
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const PodResources got = list_pod_resources(path, std::chrono::milliseconds(500));
  ::close(fd);
  ::unlink(path.c_str());
  EXPECT_EQ(got.status, PodResources::Status::no_client);
  EXPECT_NE(got.note.find("libdiescope-kubelet.so could not be loaded"), std::string::npos) << got.note;
  EXPECT_NE(got.note.find("install it beside diescope"), std::string::npos);
  EXPECT_FALSE(kubelet_client_library().why.empty());
}

}  // namespace
}  // namespace diescope::attribution
