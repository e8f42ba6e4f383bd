// What a process's cgroup path says about it (docs/attribution.md#cgroup-layouts): the container
// runtime and ID, the Kubernetes pod UID and QoS class, and the Slurm job, step and user. Pure text
// parsing, so every layout is tested on fixtures copied from real hosts.
#pragma once

#include <string>
#include <string_view>

#include "diescope/attribution/holder.hpp"

namespace diescope::attribution {

struct SlurmFromCgroup {
  std::string job;   // "4242"
  std::string step;  // "0", "batch", "extern", "interactive"
  std::string uid;   // cgroup v1 only ("1000"); empty under v2
};

struct CgroupFacts {
  CgroupVersion version = CgroupVersion::unknown;
  std::string path;  // the path the facts were read from
  ContainerRuntime runtime = ContainerRuntime::none;
  std::string container_id;
  std::string pod_uid;  // "0f3c...-..." with dashes, as the API server names it
  std::string qos;      // "guaranteed", "burstable", "besteffort"
  SlurmFromCgroup slurm;
  // False when no line could be read, or the path follows no layout docs/attribution.md lists.
  bool known_layout = false;
  std::string note;  // why the layout is unknown
};

// Parses the text of /proc/PID/cgroup (v2: "0::/path"; v1: "N:controllers:/path" per hierarchy).
CgroupFacts parse_cgroup(std::string_view text);

}  // namespace diescope::attribution
