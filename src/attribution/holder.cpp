#include "diescope/attribution/holder.hpp"

#include <fmt/format.h>

namespace diescope::attribution {

std::string_view to_string(HolderKind kind) {
  switch (kind) {
    case HolderKind::pod:
      return "pod";
    case HolderKind::slurm_job:
      return "slurm_job";
    case HolderKind::container:
      return "container";
    case HolderKind::process:
      return "process";
  }
  return "process";
}

std::optional<HolderKind> holder_kind_from_name(std::string_view name) {
  for (HolderKind k : {HolderKind::pod, HolderKind::slurm_job, HolderKind::container, HolderKind::process})
    if (to_string(k) == name) return k;
  return std::nullopt;
}

std::string_view to_string(CgroupVersion version) {
  switch (version) {
    case CgroupVersion::v1:
      return "v1";
    case CgroupVersion::v2:
      return "v2";
    case CgroupVersion::unknown:
      return "unknown";
  }
  return "unknown";
}

std::string_view to_string(ContainerRuntime runtime) {
  switch (runtime) {
    case ContainerRuntime::none:
      return "none";
    case ContainerRuntime::docker:
      return "docker";
    case ContainerRuntime::containerd:
      return "containerd";
    case ContainerRuntime::cri_o:
      return "cri-o";
    case ContainerRuntime::podman:
      return "podman";
  }
  return "none";
}

std::string describe(const Holder& h) {
  const std::string short_id = h.container_id.substr(0, 12);
  switch (h.kind) {
    case HolderKind::pod:
      if (!h.pod.empty())
        return fmt::format("pod {}/{}{}", h.pod_namespace, h.pod,
                           h.container.empty() ? "" : fmt::format(" (container {})", h.container));
      return fmt::format("pod UID {}", h.pod_uid);
    case HolderKind::slurm_job:
      return fmt::format("Slurm job {}{}{}", h.slurm_job, h.slurm_step.empty() ? "" : " step " + h.slurm_step,
                         h.slurm_user.empty() ? "" : " (" + h.slurm_user + ")");
    case HolderKind::container:
      return fmt::format("{} container {}", to_string(h.runtime), short_id);
    case HolderKind::process:
      break;
  }
  if (h.pids.empty()) return "a process";
  return fmt::format("process {}{}", h.pids.front(),
                     h.commands.empty() ? "" : " (" + h.commands.front() + ")");
}

std::vector<Label> holder_labels(const Holder& h) {
  std::vector<Label> out;
  auto add = [&out](const char* key, const std::string& value) {
    if (!value.empty()) out.push_back(Label{key, value});
  };
  add("pod", h.pod);
  add("namespace", h.pod_namespace);
  add("container", h.container);
  add("pod_uid", h.pod_uid);
  add("slurm_job", h.slurm_job);
  add("slurm_step", h.slurm_step);
  add("slurm_user", h.slurm_user);
  if (h.runtime != ContainerRuntime::none) add("container_runtime", std::string(to_string(h.runtime)));
  add("container_id", h.container_id);
  for (const Label& l : h.labels) out.push_back(l);
  return out;
}

}  // namespace diescope::attribution
