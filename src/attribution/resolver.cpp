// docs/attribution.md#who-holds-a-gpu: the order names are taken in, and how a pod is matched.
#include "diescope/attribution/resolver.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace diescope::attribution {
namespace {

// The device plugin lists a GPU by its UUID; with time-slicing it lists replicas "<UUID>::<n>".
bool names_gpu(const std::string& device_id, const std::vector<std::string>& gpu_ids) {
  for (const std::string& id : gpu_ids) {
    if (id.empty()) continue;
    if (device_id == id) return true;
    if (device_id.size() > id.size() + 2 && device_id.compare(0, id.size(), id) == 0 &&
        device_id.compare(id.size(), 2, "::") == 0)
      return true;
  }
  return false;
}

}  // namespace

Holder holder_of(const ProcessFacts& p, const std::vector<std::string>& gpu_ids, const PodResources* pods,
                 bool& kubelet_stale) {
  Holder h;
  const CgroupFacts& cg = p.cgroup;
  h.runtime = cg.runtime;
  h.container_id = cg.container_id;
  const bool in_pod = !cg.pod_uid.empty() || p.in_kubernetes;
  if (in_pod) {
    h.kind = HolderKind::pod;
    h.pod_uid = cg.pod_uid;
    // Not asked yet, or no socket yet (a kubelet starting): ask again soon rather than in 30 s.
    if (pods &&
        (pods->status == PodResources::Status::not_asked || pods->status == PodResources::Status::no_socket))
      kubelet_stale = true;
    if (pods && pods->status == PodResources::Status::ok) {
      std::vector<const PodContainerDevices*> candidates;
      for (const PodContainerDevices& c : pods->containers)
        if (std::any_of(c.device_ids.begin(), c.device_ids.end(),
                        [&](const std::string& d) { return names_gpu(d, gpu_ids); }))
          candidates.push_back(&c);
      // Several pods share the GPU (time-slicing, MPS): the pod whose name is the process's hostname,
      // which Kubernetes sets to the pod's name.
      if (candidates.size() > 1 && !p.hostname.empty()) {
        std::vector<const PodContainerDevices*> named;
        for (const auto* c : candidates)
          if (c->pod == p.hostname) named.push_back(c);
        if (!named.empty()) candidates = named;
      }
      if (candidates.size() == 1 ||
          (candidates.size() > 1 && std::all_of(candidates.begin(), candidates.end(), [&](const auto* c) {
             return c->pod == candidates.front()->pod &&
                    c->pod_namespace == candidates.front()->pod_namespace;
           }))) {
        h.pod = candidates.front()->pod;
        h.pod_namespace = candidates.front()->pod_namespace;
        if (candidates.size() == 1)
          h.container = candidates.front()->container;
        else
          h.notes.emplace_back("several containers of the pod hold this GPU: the container is not named");
      } else if (candidates.empty()) {
        kubelet_stale = true;
        h.notes.push_back(
            fmt::format("the kubelet names no pod holding this GPU for process {}: named by its pod UID from "
                        "the cgroup path",
                        p.pid));
      } else {
        h.notes.push_back(fmt::format(
            "{} pods hold this GPU and none is named by process {}'s hostname: named by its pod UID",
            candidates.size(), p.pid));
      }
    }
    if (h.pod.empty() && h.pod_uid.empty()) {
      h.kind = h.container_id.empty() ? HolderKind::process : HolderKind::container;
      h.notes.push_back(fmt::format(
          "process {} runs in Kubernetes but neither the kubelet nor its cgroup names its pod", p.pid));
    }
  }
  // Slurm: the cgroup plugin's path, else the task's environment.
  h.slurm_job = !cg.slurm.job.empty() ? cg.slurm.job : p.slurm_job_id;
  h.slurm_step = !cg.slurm.job.empty() ? cg.slurm.step : p.slurm_step_id;
  if (!h.slurm_job.empty()) {
    h.slurm_user = !p.slurm_job_user.empty() ? p.slurm_job_user
                   : !cg.slurm.uid.empty()   ? "uid_" + cg.slurm.uid
                   : p.uid >= 0              ? "uid_" + std::to_string(p.uid)
                                             : std::string();
  }
  if (h.kind != HolderKind::pod) {
    if (!h.slurm_job.empty())
      h.kind = HolderKind::slurm_job;
    else if (!h.container_id.empty())
      h.kind = HolderKind::container;
    else
      h.kind = HolderKind::process;
  }
  switch (h.kind) {
    case HolderKind::pod:
      // The UID when the cgroup gives it: the key stays the same when the kubelet's answer comes later.
      h.key = !h.pod_uid.empty() ? "pod/" + h.pod_uid : "pod/" + h.pod_namespace + "/" + h.pod;
      break;
    case HolderKind::slurm_job:
      h.key = "slurm/" + h.slurm_job + (h.slurm_step.empty() ? "" : "/" + h.slurm_step);
      break;
    case HolderKind::container:
      h.key = "container/" + h.container_id;
      break;
    case HolderKind::process:
      h.key = "process/" + std::to_string(p.pid);
      break;
  }
  for (const std::string& n : p.notes) h.notes.push_back(n);
  return h;
}

Resolver::Resolver(std::filesystem::path proc_root, std::vector<Label> labels)
    : proc_root_(std::move(proc_root)), labels_(std::move(labels)) {}

const ProcessFacts& Resolver::facts(unsigned pid) {
  auto it = cache_.find(pid);
  if (it != cache_.end()) {
    // A pid reused by a new process has a new start time: read it again.
    const std::uint64_t start = read_start_ticks(proc_root_, pid);
    if (it->second.read == ProcessFacts::Read::ok && start == it->second.start_ticks) return it->second;
    if (it->second.read != ProcessFacts::Read::ok && start == 0) return it->second;
  }
  ++reads_;
  ProcessFacts f = read_process(proc_root_, pid);
  return cache_[pid] = std::move(f);
}

void Resolver::forget_except(const std::vector<unsigned>& alive) {
  std::erase_if(cache_, [&alive](const auto& entry) {
    return std::find(alive.begin(), alive.end(), entry.first) == alive.end();
  });
}

Resolved Resolver::resolve(const std::vector<unsigned>& pids, const std::vector<std::string>& gpu_ids,
                           const PodResources* pods) {
  Resolved out;
  for (unsigned pid : pids) {
    const ProcessFacts& f = facts(pid);
    Holder h = holder_of(f, gpu_ids, pods, out.kubelet_stale);
    auto it = std::find_if(out.holders.begin(), out.holders.end(),
                           [&h](const Holder& e) { return e.key == h.key; });
    if (it == out.holders.end()) {
      h.labels = labels_;
      out.holders.push_back(std::move(h));
      it = out.holders.end() - 1;
    } else {
      for (std::string& n : h.notes)
        if (std::find(it->notes.begin(), it->notes.end(), n) == it->notes.end())
          it->notes.push_back(std::move(n));
    }
    it->pids.push_back(pid);
    it->commands.push_back(f.command);
  }
  std::sort(out.holders.begin(), out.holders.end(),
            [](const Holder& a, const Holder& b) { return a.key < b.key; });
  return out;
}

}  // namespace diescope::attribution
