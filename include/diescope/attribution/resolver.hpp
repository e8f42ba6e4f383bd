// Names the holders of a GPU from its process list (docs/attribution.md#who-holds-a-gpu): each pid's
// /proc facts (cached per pid and start time, so only a new process is read), the kubelet's latest
// answer, and the user's labels. Pure given its inputs: tests drive it on fixture /proc trees.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "diescope/attribution/holder.hpp"
#include "diescope/attribution/kubelet.hpp"
#include "diescope/attribution/process.hpp"

namespace diescope::attribution {

struct Resolved {
  std::vector<Holder> holders;  // by key
  // A process the kubelet's answer should name but does not (ask it again).
  bool kubelet_stale = false;
};

class Resolver {
 public:
  Resolver(std::filesystem::path proc_root, std::vector<Label> labels);
  // `gpu_ids`: the GPU's UUID (and, under MIG, the instance's MIG UUID) as the kubelet lists devices.
  // `pods`: the kubelet's latest answer, or nullptr.
  Resolved resolve(const std::vector<unsigned>& pids, const std::vector<std::string>& gpu_ids,
                   const PodResources* pods);
  // Forgets cached processes that are not in `alive` (called once per poll with every GPU's pids).
  void forget_except(const std::vector<unsigned>& alive);
  long reads() const { return reads_; }  // /proc reads of a new process, for the cache's test

 private:
  const ProcessFacts& facts(unsigned pid);
  std::filesystem::path proc_root_;
  std::vector<Label> labels_;
  std::map<unsigned, ProcessFacts> cache_;
  long reads_ = 0;
};

// The holder one process is named as (without pids, commands or labels): pod from the kubelet, else
// pod UID from the cgroup, else Slurm job, else container, else the process.
Holder holder_of(const ProcessFacts& facts, const std::vector<std::string>& gpu_ids, const PodResources* pods,
                 bool& kubelet_stale);

}  // namespace diescope::attribution
