// docs/attribution.md#who-holds-a-gpu: names on the fixture /proc tree.
#include <gtest/gtest.h>

#include "diescope/attribution/resolver.hpp"

namespace diescope::attribution {
namespace {

const std::filesystem::path kProc =
    std::filesystem::path(DIESCOPE_SOURCE_DIR) / "tests/attribution/fixtures/proc";
const std::string kGpu = "GPU-00000000-1111-2222-3333-444444444444";

PodResources two_pods_sharing() {
  PodResources p;
  p.status = PodResources::Status::ok;
  // Time-slicing: the device plugin lists replicas "<UUID>::<n>".
  p.containers.push_back({"train-7", "ml", "trainer", "nvidia.com/gpu", {kGpu + "::0"}});
  p.containers.push_back({"infer-2", "serve", "server", "nvidia.com/gpu", {kGpu + "::1"}});
  p.containers.push_back(
      {"other", "ml", "x", "nvidia.com/gpu", {"GPU-ffffffff-1111-2222-3333-444444444444"}});
  return p;
}

TEST(Resolver, PodsNamedByTheKubeletAndHostname) {
  Resolver r(kProc, {{"team", "vision"}});
  const PodResources pods = two_pods_sharing();
  const Resolved got = r.resolve({1003, 1004}, {kGpu}, &pods);
  ASSERT_EQ(got.holders.size(), 2U);
  // Sorted by key: pod/ml/train-7 before pod/serve/infer-2.
  const Holder& train = got.holders[0];
  EXPECT_EQ(got.holders[1].key, "pod/9e8d7c6b-5a4f-4e3d-9c2b-1a0f9e8d7c6b");
  EXPECT_EQ(got.holders[1].container, "server");
  EXPECT_EQ(train.kind, HolderKind::pod);
  EXPECT_EQ(train.key, "pod/3b1f2a9c-5d4e-4f6a-8b7c-9d0e1f2a3b4c");
  EXPECT_EQ(train.pod_namespace, "ml");
  EXPECT_EQ(train.container, "trainer");
  EXPECT_EQ(train.pod_uid, "3b1f2a9c-5d4e-4f6a-8b7c-9d0e1f2a3b4c");
  EXPECT_EQ(train.pids, std::vector<unsigned>{1003});
  EXPECT_EQ(train.labels, (std::vector<Label>{{"team", "vision"}}));
  EXPECT_FALSE(got.kubelet_stale);
  EXPECT_EQ(describe(train), "pod ml/train-7 (container trainer)");
}

TEST(Resolver, OnePodOnTheGpuNeedsNoHostname) {
  PodResources pods;
  pods.status = PodResources::Status::ok;
  pods.containers.push_back({"job-a", "batch", "main", "nvidia.com/gpu", {kGpu}});
  Resolver r(kProc, {});
  const Resolved got = r.resolve({1011}, {kGpu}, &pods);  // no environment readable
  ASSERT_EQ(got.holders.size(), 1U);
  EXPECT_EQ(got.holders[0].key, "pod/5c4b3a29-1807-4f6e-8d5c-4b3a29180766");
}

TEST(Resolver, WithoutTheKubeletThePodUidFromTheCgroup) {
  Resolver r(kProc, {});
  PodResources none;
  none.status = PodResources::Status::no_socket;
  const Resolved got = r.resolve({1003}, {kGpu}, &none);
  ASSERT_EQ(got.holders.size(), 1U);
  EXPECT_EQ(got.holders[0].kind, HolderKind::pod);
  EXPECT_EQ(got.holders[0].key, "pod/3b1f2a9c-5d4e-4f6a-8b7c-9d0e1f2a3b4c");
  EXPECT_EQ(describe(got.holders[0]), "pod UID 3b1f2a9c-5d4e-4f6a-8b7c-9d0e1f2a3b4c");
  // When the kubelet answers later, the holder keeps its key: one holder, one job, now named.
  const PodResources pods = two_pods_sharing();
  const Resolved named = r.resolve({1003}, {kGpu}, &pods);
  EXPECT_EQ(named.holders[0].key, got.holders[0].key);
  EXPECT_EQ(named.holders[0].pod, "train-7");
}

TEST(Resolver, KubeletNotAskedOrWithoutSocketIsAskedAgainSoon) {
  Resolver r(kProc, {});
  PodResources pods;  // not asked yet
  EXPECT_TRUE(r.resolve({1003}, {kGpu}, &pods).kubelet_stale);
  pods.status = PodResources::Status::no_socket;
  EXPECT_TRUE(r.resolve({1003}, {kGpu}, &pods).kubelet_stale);
  pods.status = PodResources::Status::timeout;  // a slow kubelet is not asked again at once
  EXPECT_FALSE(r.resolve({1003}, {kGpu}, &pods).kubelet_stale);
  EXPECT_FALSE(r.resolve({1008}, {kGpu}, nullptr).kubelet_stale);  // not in a pod
}

TEST(Resolver, KubeletThatDoesNotNameTheGpuIsStale) {
  Resolver r(kProc, {});
  PodResources pods;
  pods.status = PodResources::Status::ok;
  const Resolved got = r.resolve({1003}, {kGpu}, &pods);
  EXPECT_TRUE(got.kubelet_stale);
  EXPECT_EQ(got.holders[0].key, "pod/3b1f2a9c-5d4e-4f6a-8b7c-9d0e1f2a3b4c");
}

TEST(Resolver, SlurmFromCgroupAndFromEnvironment) {
  Resolver r(kProc, {});
  const Resolved got = r.resolve({1006, 1007, 1012}, {kGpu}, nullptr);
  ASSERT_EQ(got.holders.size(), 3U);
  EXPECT_EQ(got.holders[0].key, "slurm/4242/0");
  EXPECT_EQ(got.holders[0].slurm_user, "alice");  // SLURM_JOB_USER beats uid_1000
  EXPECT_EQ(got.holders[1].key, "slurm/4243/batch");
  EXPECT_EQ(got.holders[1].slurm_user, "uid_1001");  // v2 path has no uid; environ unreadable: status's Uid
  EXPECT_EQ(got.holders[2].key, "slurm/77/2");
  EXPECT_EQ(got.holders[2].slurm_user, "bob");
  EXPECT_EQ(describe(got.holders[0]), "Slurm job 4242 step 0 (alice)");
}

TEST(Resolver, ContainersAndProcesses) {
  Resolver r(kProc, {});
  const Resolved got = r.resolve({1001, 1005, 1008}, {kGpu}, nullptr);
  ASSERT_EQ(got.holders.size(), 3U);
  EXPECT_EQ(got.holders[0].kind, HolderKind::container);
  EXPECT_EQ(got.holders[0].runtime, ContainerRuntime::docker);
  EXPECT_EQ(describe(got.holders[0]), "docker container 3f2a1b0c9d8e");
  EXPECT_EQ(got.holders[1].runtime, ContainerRuntime::podman);
  EXPECT_EQ(got.holders[2].kind, HolderKind::process);
  EXPECT_EQ(describe(got.holders[2]), "process 1008 (bench)");
}

TEST(Resolver, UnknownLayoutAndGarbageAreNotedProcesses) {
  Resolver r(kProc, {});
  const Resolved got = r.resolve({1009, 1010}, {kGpu}, nullptr);
  ASSERT_EQ(got.holders.size(), 2U);
  for (const Holder& h : got.holders) {
    EXPECT_EQ(h.kind, HolderKind::process);
    ASSERT_EQ(h.notes.size(), 1U);
  }
  EXPECT_NE(got.holders[0].notes[0].find("follows no layout"), std::string::npos);
}

TEST(Resolver, PidGoneBeforeTheReadIsAProcessWithANote) {
  Resolver r(kProc, {});
  const Resolved got = r.resolve({4040}, {kGpu}, nullptr);
  ASSERT_EQ(got.holders.size(), 1U);
  EXPECT_EQ(got.holders[0].key, "process/4040");
  ASSERT_EQ(got.holders[0].notes.size(), 1U);
  EXPECT_NE(got.holders[0].notes[0].find("ended after NVML listed it"), std::string::npos);
}

TEST(Resolver, CachedPerPidAndStartTime) {
  Resolver r(kProc, {});
  r.resolve({1001, 1006}, {kGpu}, nullptr);
  EXPECT_EQ(r.reads(), 2);
  r.resolve({1001, 1006}, {kGpu}, nullptr);
  EXPECT_EQ(r.reads(), 2);  // same start times: nothing read again
  r.forget_except({1006});
  r.resolve({1001, 1006}, {kGpu}, nullptr);
  EXPECT_EQ(r.reads(), 3);  // 1001 was forgotten
}

TEST(Resolver, ProcessesOfOneJobMerge) {
  Resolver r(kProc, {});
  // Two pids whose cgroups both name Slurm job 4242 step 0 would merge; here one pid twice in two
  // lists stands for it (graphics and compute), and a second GPU listing does not double it.
  const Resolved got = r.resolve({1006}, {kGpu}, nullptr);
  EXPECT_EQ(got.holders[0].commands, std::vector<std::string>{"python"});
}

}  // namespace
}  // namespace diescope::attribution
