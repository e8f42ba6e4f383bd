// The cgroup layouts of docs/attribution.md#cgroup-layouts. Each path is read component by component,
// so a layout is recognised by the names its runtime gives, wherever the runtime's parent lies.
#include "diescope/attribution/cgroup.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <vector>

namespace diescope::attribution {
namespace {

std::vector<std::string> split(std::string_view text, char by) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t next = text.find(by, at);
    const std::size_t end = next == std::string_view::npos ? text.size() : next;
    out.emplace_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

bool is_hex_id(std::string_view s) {
  return s.size() == 64 &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

bool is_digits(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

// "<prefix><64 hex>.scope" -> the id; empty otherwise.
std::string scoped_id(std::string_view component, std::string_view prefix) {
  if (!starts_with(component, prefix) || !ends_with(component, ".scope")) return {};
  const std::string_view id = component.substr(prefix.size(), component.size() - prefix.size() - 6);
  return is_hex_id(id) ? std::string(id) : std::string();
}

// A pod UID as the API server writes it (8-4-4-4-12 hex), from the systemd form with underscores.
bool is_pod_uid(std::string_view s) {
  if (s.size() != 36) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

struct PathFacts {
  bool known = false;
  bool says_something = false;  // a container, a pod or a Slurm job
  ContainerRuntime runtime = ContainerRuntime::none;
  std::string container_id;
  std::string pod_uid;
  std::string qos;
  SlurmFromCgroup slurm;
};

PathFacts read_path(std::string_view path) {
  PathFacts f;
  if (path.empty() || path[0] != '/') return f;
  if (path == "/") {
    f.known = true;
    return f;
  }
  const std::vector<std::string> parts = split(path.substr(1), '/');
  bool kubepods = false, slurm_root = false, systemd_only = true;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& c = parts[i];
    // Kubernetes: kubepods.slice/kubepods-<qos>.slice/kubepods-<qos>-pod<uid_>.slice (systemd driver),
    // kubepods/<qos>/pod<uid> (cgroupfs driver).
    if (c == "kubepods" || c == "kubepods.slice") kubepods = true;
    if (kubepods) {
      if (c == "burstable" || c == "besteffort") f.qos = c;
      for (const char* q : {"burstable", "besteffort"})
        if (starts_with(c, std::string("kubepods-") + q)) f.qos = q;
      std::string uid;
      if (const auto at = c.find("-pod");
          starts_with(c, "kubepods") && at != std::string::npos && ends_with(c, ".slice")) {
        uid = c.substr(at + 4, c.size() - at - 4 - 6);
        std::replace(uid.begin(), uid.end(), '_', '-');
      } else if (starts_with(c, "pod")) {
        uid = c.substr(3);
      }
      if (is_pod_uid(uid)) f.pod_uid = uid;
    }
    // Slurm: /slurm[_<node>]/uid_<u>/job_<j>/step_<s>/ (v1), .../slurmstepd.scope/job_<j>/step_<s>/ (v2).
    if (c == "slurmstepd.scope" || starts_with(c, "slurm")) slurm_root = true;
    if (slurm_root) {
      if (starts_with(c, "uid_") && is_digits(c.substr(4))) f.slurm.uid = c.substr(4);
      if (starts_with(c, "job_") && is_digits(c.substr(4))) f.slurm.job = c.substr(4);
      if (starts_with(c, "step_") && c.size() > 5 && !f.slurm.job.empty()) f.slurm.step = c.substr(5);
    }
    // Containers: the runtime's own name for the container's scope or folder.
    std::string id;
    if (!(id = scoped_id(c, "docker-")).empty()) {
      f.runtime = ContainerRuntime::docker;
    } else if (!(id = scoped_id(c, "cri-containerd-")).empty()) {
      f.runtime = ContainerRuntime::containerd;
    } else if (!(id = scoped_id(c, "crio-")).empty()) {
      f.runtime = ContainerRuntime::cri_o;
    } else if (!(id = scoped_id(c, "libpod-payload-")).empty() || !(id = scoped_id(c, "libpod-")).empty()) {
      f.runtime = ContainerRuntime::podman;
    } else if (const auto at = c.rfind(":cri-containerd:");
               at != std::string::npos && is_hex_id(c.substr(at + 16))) {
      id = c.substr(at + 16);  // containerd's systemd driver inside containerd.service
      f.runtime = ContainerRuntime::containerd;
    } else if (is_hex_id(c) && i > 0) {
      const std::string& parent = parts[i - 1];
      if (parent == "docker")
        f.runtime = ContainerRuntime::docker;
      else if (starts_with(parent, "libpod"))
        f.runtime = ContainerRuntime::podman;
      else if (starts_with(parent, "pod") && kubepods)
        f.runtime = ContainerRuntime::containerd;
      if (f.runtime != ContainerRuntime::none) id = c;
    }
    if (!id.empty()) f.container_id = id;
    const bool systemd_name = ends_with(c, ".slice") || ends_with(c, ".scope") || ends_with(c, ".service");
    if (!systemd_name) systemd_only = false;
  }
  f.says_something = !f.container_id.empty() || !f.pod_uid.empty() || !f.slurm.job.empty();
  if (kubepods && f.qos.empty() && !f.pod_uid.empty()) f.qos = "guaranteed";
  // A path of systemd units alone (user sessions, services) is a known layout that names no container.
  f.known = f.says_something || systemd_only;
  return f;
}

}  // namespace

CgroupFacts parse_cgroup(std::string_view text) {
  CgroupFacts out;
  std::vector<std::string> paths;
  bool v1 = false, v2 = false;
  for (const std::string& line : split(text, '\n')) {
    if (line.empty()) continue;
    const auto first = line.find(':');
    const auto second = first == std::string::npos ? std::string::npos : line.find(':', first + 1);
    if (second == std::string::npos || !is_digits(line.substr(0, first))) {
      out.note =
          "a line of /proc/PID/cgroup is not \"hierarchy:controllers:path\": \"" + line.substr(0, 80) + "\"";
      return out;
    }
    const std::string controllers = line.substr(first + 1, second - first - 1);
    if (line.substr(0, first) == "0" && controllers.empty())
      v2 = true;
    else
      v1 = true;
    paths.push_back(line.substr(second + 1));
  }
  if (paths.empty()) {
    out.note = "/proc/PID/cgroup is empty";
    return out;
  }
  out.version = v1 ? CgroupVersion::v1 : (v2 ? CgroupVersion::v2 : CgroupVersion::unknown);
  // The first path that names something; else the first non-root path of a known layout; else unknown.
  std::optional<PathFacts> chosen;
  std::string chosen_path, unknown_path;
  for (const std::string& p : paths) {
    const PathFacts f = read_path(p);
    if (f.says_something) {
      chosen = f;
      chosen_path = p;
      break;
    }
    if (!f.known && unknown_path.empty()) unknown_path = p;
  }
  if (!chosen) {
    out.path = unknown_path.empty() ? paths.front() : unknown_path;
    out.known_layout = unknown_path.empty();
    if (!out.known_layout)
      out.note = "its cgroup path " + unknown_path.substr(0, 200) +
                 " follows no layout diescope knows (docs/attribution.md#cgroup-layouts): named as a process";
    return out;
  }
  out.known_layout = true;
  out.path = chosen_path;
  out.runtime = chosen->runtime;
  out.container_id = chosen->container_id;
  out.pod_uid = chosen->pod_uid;
  out.qos = chosen->qos;
  out.slurm = chosen->slurm;
  return out;
}

}  // namespace diescope::attribution
