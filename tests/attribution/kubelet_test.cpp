// docs/attribution.md#kubernetes: the client against a test kubelet serving the v1 proto on a unix
// socket, and the bad kubelets (missing, slow, garbage).
#include <chrono>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <poll.h>
#include <thread>

#include "diescope/attribution/kubelet.hpp"
#include "diescope/core/child_process.hpp"

namespace diescope::attribution {
namespace {

using namespace std::chrono_literals;

std::filesystem::path scratch() {
  // Short: a unix socket path has a 108-byte limit.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ds-kubelet-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

// Starts the test kubelet and waits for its "listening" line.
core::ChildProcess start_kubelet(const std::vector<std::string>& args) {
  core::ChildSpec spec;
  spec.argv = {DIESCOPE_TEST_KUBELET};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.out = core::Stdio::pipe();
  core::ChildProcess child(spec);
  pollfd p{child.stdout_pipe().get(), POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 10'000), 1) << "the test kubelet did not start";
  char buf[64] = {};
  (void)!::read(child.stdout_pipe().get(), buf, sizeof buf - 1);
  EXPECT_NE(std::string(buf).find("listening"), std::string::npos);
  return child;
}

class Kubelet : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv("DIESCOPE_KUBELET_CLIENT", DIESCOPE_KUBELET_CLIENT, 1);
    dir_ = scratch();
    socket_ = (dir_ / "kubelet.sock").string();
    pods_ = (dir_ / "pods").string();
    std::ofstream(pods_) << "ml train-7 trainer GPU-aaaa::0\nserve infer-2 server GPU-aaaa::1,GPU-bbbb\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
  std::string socket_, pods_;
};

TEST_F(Kubelet, ListsPodsContainersAndDevices) {
  auto kubelet = start_kubelet({"--socket", socket_, "--pods", pods_});
  const PodResources got = list_pod_resources(socket_, 5000ms);
  ASSERT_EQ(got.status, PodResources::Status::ok) << got.note;
  ASSERT_EQ(got.containers.size(), 2U);
  EXPECT_EQ(got.containers[0].pod, "train-7");
  EXPECT_EQ(got.containers[0].pod_namespace, "ml");
  EXPECT_EQ(got.containers[0].container, "trainer");
  EXPECT_EQ(got.containers[0].resource, "nvidia.com/gpu");
  EXPECT_EQ(got.containers[1].device_ids, (std::vector<std::string>{"GPU-aaaa::1", "GPU-bbbb"}));
  EXPECT_TRUE(kubelet_client_library().why.empty());
}

TEST_F(Kubelet, MissingSocketIsNoted) {
  const PodResources got = list_pod_resources((dir_ / "absent.sock").string(), 1000ms);
  EXPECT_EQ(got.status, PodResources::Status::no_socket);
  EXPECT_NE(got.note.find("no kubelet pod-resources socket at"), std::string::npos) << got.note;
  EXPECT_NE(got.note.find("pod UID"), std::string::npos);
}

TEST_F(Kubelet, NotASocketIsNoted) {
  const PodResources got = list_pod_resources(pods_, 1000ms);
  EXPECT_EQ(got.status, PodResources::Status::failed);
  EXPECT_NE(got.note.find("is not a socket"), std::string::npos);
}

TEST_F(Kubelet, SlowKubeletTimesOut) {
  auto kubelet = start_kubelet({"--socket", socket_, "--pods", pods_, "--delay-ms", "3000"});
  const auto t0 = std::chrono::steady_clock::now();
  const PodResources got = list_pod_resources(socket_, 200ms);
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(got.status, PodResources::Status::timeout) << got.note;
  EXPECT_NE(got.note.find("did not answer within 200 ms"), std::string::npos) << got.note;
  EXPECT_LT(took, 2000ms);
}

TEST_F(Kubelet, GarbageIsNoted) {
  auto kubelet = start_kubelet({"--socket", socket_, "--garbage"});
  const PodResources got = list_pod_resources(socket_, 2000ms);
  EXPECT_EQ(got.status, PodResources::Status::failed) << got.note;
  EXPECT_NE(got.note.find("did not answer v1.PodResourcesLister/List"), std::string::npos) << got.note;
  EXPECT_TRUE(got.containers.empty());
}

TEST_F(Kubelet, WatchNeverBlocksItsReader) {
  auto kubelet = start_kubelet({"--socket", socket_, "--pods", pods_, "--delay-ms", "1500"});
  KubeletWatch watch(socket_, 5000ms, 60'000ms);
  // While the first call is in flight (1.5 s), a snapshot is there at once, not yet asked.
  const auto t0 = std::chrono::steady_clock::now();
  auto first = watch.snapshot();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 50ms);
  EXPECT_EQ(first->status, PodResources::Status::not_asked);
  for (int i = 0; i < 100 && watch.calls() == 0; ++i) std::this_thread::sleep_for(50ms);
  EXPECT_EQ(watch.snapshot()->status, PodResources::Status::ok);
  EXPECT_EQ(watch.snapshot()->containers.size(), 2U);
}

}  // namespace
}  // namespace diescope::attribution
