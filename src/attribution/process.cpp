// docs/attribution.md#who-holds-a-gpu
#include "diescope/attribution/process.hpp"

#include <fstream>
#include <optional>
#include <iterator>
#include <sstream>

namespace diescope::attribution {
namespace {

// A whole small file; nullopt when it cannot be opened. /proc files report size 0, so read by stream.
std::optional<std::string> slurp(const std::filesystem::path& path, std::size_t limit = 1 << 20) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text;
  text.resize(limit);
  in.read(text.data(), static_cast<std::streamsize>(limit));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

}  // namespace

std::string read_command(const std::filesystem::path& proc_root, unsigned pid) {
  std::string c = slurp(proc_root / std::to_string(pid) / "comm", 256).value_or("");
  while (!c.empty() && (c.back() == '\n' || c.back() == '\0')) c.pop_back();
  return c;
}

unsigned read_parent_pid(const std::filesystem::path& proc_root, unsigned pid) {
  const auto stat = slurp(proc_root / std::to_string(pid) / "stat", 4096);
  if (!stat) return 0;
  const auto close = stat->rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat->substr(close + 1));
  std::string state;
  unsigned ppid = 0;
  rest >> state >> ppid;
  return ppid;
}

std::uint64_t read_start_ticks(const std::filesystem::path& proc_root, unsigned pid) {
  const auto stat = slurp(proc_root / std::to_string(pid) / "stat", 4096);
  if (!stat) return 0;
  // The command sits in parentheses and may hold spaces and ')': fields count from the last ')'.
  const auto close = stat->rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat->substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22; ++i) {
    if (!(rest >> field)) return 0;
  }
  try {
    return std::stoull(field);
  } catch (...) {
    return 0;
  }
}

ProcessFacts read_process(const std::filesystem::path& proc_root, unsigned pid) {
  ProcessFacts f;
  f.pid = pid;
  const std::filesystem::path dir = proc_root / std::to_string(pid);
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) {
    f.read = ProcessFacts::Read::gone;
    f.notes.push_back("process " + std::to_string(pid) +
                      " is not in /proc: it ended after NVML listed it, or runs in another pid namespace");
    return f;
  }
  const auto cgroup = slurp(dir / "cgroup");
  const auto comm = slurp(dir / "comm", 256);
  f.start_ticks = read_start_ticks(proc_root, pid);
  if (!cgroup || !comm) {
    // It may have ended between the two reads.
    f.read = std::filesystem::exists(dir, ec) ? ProcessFacts::Read::denied : ProcessFacts::Read::gone;
    f.notes.push_back("process " + std::to_string(pid) +
                      (f.read == ProcessFacts::Read::gone
                           ? " ended while it was being read"
                           : ": /proc/" + std::to_string(pid) + "/cgroup could not be read"));
    return f;
  }
  f.read = ProcessFacts::Read::ok;
  f.command = *comm;
  while (!f.command.empty() && (f.command.back() == '\n' || f.command.back() == '\0')) f.command.pop_back();
  f.cgroup = parse_cgroup(*cgroup);
  if (!f.cgroup.note.empty()) f.notes.push_back("process " + std::to_string(pid) + ": " + f.cgroup.note);
  if (const auto status = slurp(dir / "status", 64 * 1024)) {
    std::istringstream lines(*status);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.rfind("Uid:", 0) == 0) {
        std::istringstream uid(line.substr(4));
        uid >> f.uid;
        break;
      }
    }
  }
  if (const auto env = slurp(dir / "environ")) {
    f.environ_read = true;
    std::size_t at = 0;
    while (at < env->size()) {
      std::size_t end = env->find('\0', at);
      if (end == std::string::npos) end = env->size();
      const std::string_view entry(env->data() + at, end - at);
      auto value_of = [&entry](std::string_view key) -> std::optional<std::string> {
        if (entry.size() > key.size() && entry.substr(0, key.size()) == key && entry[key.size()] == '=')
          return std::string(entry.substr(key.size() + 1));
        return std::nullopt;
      };
      if (auto v = value_of("SLURM_JOB_ID")) f.slurm_job_id = *v;
      if (auto v = value_of("SLURM_STEP_ID")) f.slurm_step_id = *v;
      if (auto v = value_of("SLURM_JOB_USER")) f.slurm_job_user = *v;
      if (auto v = value_of("HOSTNAME")) f.hostname = *v;
      if (value_of("KUBERNETES_SERVICE_HOST")) f.in_kubernetes = true;
      at = end + 1;
    }
  }
  return f;
}

}  // namespace diescope::attribution
