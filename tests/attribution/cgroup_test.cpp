// docs/attribution.md#cgroup-layouts: each layout on a fixture (tests/attribution/fixtures/README.md).
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

#include "diescope/attribution/cgroup.hpp"

namespace diescope::attribution {
namespace {

std::string fixture(unsigned pid) {
  std::ifstream in(std::string(DIESCOPE_SOURCE_DIR) + "/tests/attribution/fixtures/proc/" +
                   std::to_string(pid) + "/cgroup");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Cgroup, DockerSystemdV2) {
  const CgroupFacts f = parse_cgroup(fixture(1001));
  EXPECT_EQ(f.version, CgroupVersion::v2);
  EXPECT_EQ(f.runtime, ContainerRuntime::docker);
  EXPECT_EQ(f.container_id, "3f2a1b0c9d8e7f603f2a1b0c9d8e7f603f2a1b0c9d8e7f603f2a1b0c9d8e7f60");
  EXPECT_TRUE(f.known_layout);
  EXPECT_TRUE(f.pod_uid.empty());
}

TEST(Cgroup, DockerCgroupfsV1) {
  const CgroupFacts f = parse_cgroup(fixture(1002));
  EXPECT_EQ(f.version, CgroupVersion::v1);
  EXPECT_EQ(f.runtime, ContainerRuntime::docker);
  EXPECT_EQ(f.container_id.substr(0, 8), "a1b2c3d4");
  EXPECT_EQ(f.path, "/docker/" + f.container_id);
}

TEST(Cgroup, KubernetesContainerdSystemdBurstable) {
  const CgroupFacts f = parse_cgroup(fixture(1003));
  EXPECT_EQ(f.runtime, ContainerRuntime::containerd);
  // The systemd driver writes the UID's dashes as underscores; the API server's form has dashes.
  EXPECT_EQ(f.pod_uid, "3b1f2a9c-5d4e-4f6a-8b7c-9d0e1f2a3b4c");
  EXPECT_EQ(f.qos, "burstable");
  EXPECT_EQ(f.container_id.substr(0, 8), "c0ffee00");
}

TEST(Cgroup, KubernetesCriOBestEffort) {
  const CgroupFacts f = parse_cgroup(fixture(1004));
  EXPECT_EQ(f.runtime, ContainerRuntime::cri_o);
  EXPECT_EQ(f.pod_uid, "9e8d7c6b-5a4f-4e3d-9c2b-1a0f9e8d7c6b");
  EXPECT_EQ(f.qos, "besteffort");
}

TEST(Cgroup, KubernetesCgroupfsGuaranteedV1) {
  const CgroupFacts f = parse_cgroup(fixture(1011));
  EXPECT_EQ(f.version, CgroupVersion::v1);
  EXPECT_EQ(f.pod_uid, "5c4b3a29-1807-4f6e-8d5c-4b3a29180766");
  EXPECT_EQ(f.qos, "guaranteed");
  EXPECT_EQ(f.runtime, ContainerRuntime::containerd);
  EXPECT_EQ(f.container_id.substr(0, 8), "feed9876");
}

TEST(Cgroup, PodmanRootless) {
  const CgroupFacts f = parse_cgroup(fixture(1005));
  EXPECT_EQ(f.runtime, ContainerRuntime::podman);
  EXPECT_EQ(f.container_id.substr(0, 8), "d00d4567");
}

TEST(Cgroup, SlurmV1) {
  const CgroupFacts f = parse_cgroup(fixture(1006));
  EXPECT_EQ(f.version, CgroupVersion::v1);
  EXPECT_EQ(f.slurm.job, "4242");
  EXPECT_EQ(f.slurm.step, "0");
  EXPECT_EQ(f.slurm.uid, "1000");
  EXPECT_EQ(f.runtime, ContainerRuntime::none);
}

TEST(Cgroup, SlurmV2) {
  const CgroupFacts f = parse_cgroup(fixture(1007));
  EXPECT_EQ(f.version, CgroupVersion::v2);
  EXPECT_EQ(f.slurm.job, "4243");
  EXPECT_EQ(f.slurm.step, "batch");
  EXPECT_TRUE(f.slurm.uid.empty());
}

TEST(Cgroup, SessionScopeIsKnownAndNamesNothing) {
  const CgroupFacts f = parse_cgroup(fixture(1008));
  EXPECT_TRUE(f.known_layout);
  EXPECT_TRUE(f.note.empty());
  EXPECT_EQ(f.runtime, ContainerRuntime::none);
  EXPECT_TRUE(f.slurm.job.empty());
}

TEST(Cgroup, UnknownLayoutIsNotedWithItsPath) {
  const CgroupFacts f = parse_cgroup(fixture(1009));  // this build machine's own file
  EXPECT_FALSE(f.known_layout);
  EXPECT_EQ(f.path, "/process_api/82284036ac7e113b2eeb31bc8d8f1f45");
  EXPECT_NE(f.note.find("follows no layout diescope knows"), std::string::npos) << f.note;
}

TEST(Cgroup, UnknownV2LayoutOfTheGpuMachine) {
  const CgroupFacts f = parse_cgroup(fixture(1013));
  EXPECT_EQ(f.version, CgroupVersion::v2);
  EXPECT_FALSE(f.known_layout);
  EXPECT_EQ(f.path, "/process_api/83f4b0d2e2655111212d9e8d951b1e30");
}

TEST(Cgroup, NotACgroupFile) {
  const CgroupFacts f = parse_cgroup(fixture(1010));
  EXPECT_FALSE(f.known_layout);
  EXPECT_EQ(f.version, CgroupVersion::unknown);
  EXPECT_NE(f.note.find("hierarchy:controllers:path"), std::string::npos) << f.note;
  EXPECT_FALSE(parse_cgroup("").known_layout);
  EXPECT_EQ(parse_cgroup("").note, "/proc/PID/cgroup is empty");
}

TEST(Cgroup, ContainerdInsideItsServiceAndConmonLeftOut) {
  const std::string id(64, 'a');
  CgroupFacts f = parse_cgroup(
      "0::/system.slice/containerd.service/kubepods-besteffort-pod0f3c6a52_8e3b_4c0e_9d2a_"
      "6f1b2c3d4e5f.slice:cri-containerd:" +
      id + "\n");
  EXPECT_EQ(f.runtime, ContainerRuntime::containerd);
  EXPECT_EQ(f.container_id, id);
  // A 63-digit id is no container id: the path names nothing and is a known systemd layout.
  f = parse_cgroup("0::/system.slice/docker-" + std::string(63, 'b') + ".scope\n");
  EXPECT_TRUE(f.container_id.empty());
  EXPECT_EQ(f.runtime, ContainerRuntime::none);
}

}  // namespace
}  // namespace diescope::attribution
