// Who holds a GPU (docs/attribution.md#who-holds-a-gpu): a Kubernetes pod, a Slurm job, a container
// or a bare process, with the facts each was named from and the labels the user gave. Plain data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace diescope::attribution {

// The most specific name found for a process, in this order of preference.
enum class HolderKind { pod, slurm_job, container, process };
std::string_view to_string(HolderKind kind);
std::optional<HolderKind> holder_kind_from_name(std::string_view name);

enum class CgroupVersion { unknown, v1, v2 };
std::string_view to_string(CgroupVersion version);

// Which container runtime's cgroup layout a path follows (docs/attribution.md#cgroup-layouts).
enum class ContainerRuntime { none, docker, containerd, cri_o, podman };
std::string_view to_string(ContainerRuntime runtime);

struct Label {
  std::string key;
  std::string value;
  bool operator==(const Label&) const = default;
};

struct Holder {
  HolderKind kind = HolderKind::process;
  // Stable across polls: "pod/<uid>" ("pod/<namespace>/<name>" without a UID), "slurm/<job>/<step>",
  // "container/<id>", "process/<pid>".
  std::string key;
  // Kubernetes: from the kubelet, or only the pod UID from the cgroup path when it did not answer.
  std::string pod;
  std::string pod_namespace;
  std::string container;
  std::string pod_uid;
  // A container, with or without Kubernetes.
  ContainerRuntime runtime = ContainerRuntime::none;
  std::string container_id;  // 64 hex digits as the runtime names it
  // Slurm.
  std::string slurm_job;
  std::string slurm_step;
  std::string slurm_user;  // a user name from SLURM_JOB_USER, else "uid_<n>"
  // The processes it holds the GPU with, ascending, and their command names.
  std::vector<unsigned> pids;
  std::vector<std::string> commands;
  std::vector<Label> labels;       // the user's, already made safe (labels.hpp)
  std::vector<std::string> notes;  // why a name is missing or only partly known
  bool operator==(const Holder&) const = default;
};

// One line for a person: "pod ml/train-7 (container trainer)", "Slurm job 4242 step 0 (alice)",
// "docker container 3f2a1b0c9d8e", "process 4711 (python3)".
std::string describe(const Holder& holder);
// The holder's labels as dcgm-exporter names them where it has one (pod, namespace, container), then
// Slurm's (slurm_job, slurm_step, slurm_user), container_id, then the user's; empty values left out.
std::vector<Label> holder_labels(const Holder& holder);

}  // namespace diescope::attribution
