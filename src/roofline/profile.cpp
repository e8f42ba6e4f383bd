#include "diescope/roofline/profile.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "diescope/core/child_process.hpp"
#include "diescope/core/error.hpp"
#include "diescope/core/unique_fd.hpp"
#include "diescope/roofline/ncu.hpp"
#include "diescope/roofline/table.hpp"

namespace diescope::roofline {

namespace {

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

bool takes(const BackendSetting& setting, Profiler profiler) {
  return std::find(setting.backends.begin(), setting.backends.end(), profiler) != setting.backends.end();
}

// The flags of `profiler`, as --help lists them: "--lib, --aslr".
std::string flags_of(Profiler profiler) {
  std::vector<std::string> names;
  for (const BackendSetting& s : backend_settings())
    if (takes(s, profiler)) names.push_back("--" + s.name);
  return joined(names);
}

// How the user wrote a setting: "--iterations 3" as a flag, "-O iterations=3" in the old spelling.
struct Given {
  std::string name, value;
  bool flag = false;
  std::string spelled() const { return flag ? "--" + name + " " + value : "-O " + name + "=" + value; }
  std::string spelled_name() const { return flag ? "--" + name : "-O " + name; }
};

}  // namespace

const std::vector<BackendSetting>& backend_settings() {
  // docs/roofline.md#backend-settings; the sampled constants' ranges: docs/roofline.md#sampled-constants.
  static const std::vector<BackendSetting> settings = {
      {"ncu", "PATH", {Profiler::ncu}, "the ncu to run (default: ncu on PATH)"},
      {"metrics",
       "A,B",
       {Profiler::ncu},
       "metrics added to the table's own, separated by commas; repeatable",
       true},
      {"ncu-arg",
       "ARG",
       {Profiler::ncu},
       "an argument for ncu, before the target (--ncu-arg=ARG when ARG starts with -); repeatable",
       true},
      {"aslr",
       "on|off",
       {Profiler::ncu, Profiler::range},
       "on: leave address-space randomisation on (default off: setarch -R)"},
      {"lib",
       "PATH",
       {Profiler::range, Profiler::sampled},
       "the injection library libdiescope-range.so (default: beside the diescope binary)"},
      {"iterations",
       "N",
       {Profiler::sampled},
       "N > 1: run with N iterations and once with 1, and take the difference (default 1), 1 to 1000000"},
      {"interval-ms", "X", {Profiler::sampled}, "the PM sample interval in ms, 0.1 to 10 (default 0.5)"},
      {"threshold",
       "PCT",
       {Profiler::sampled},
       "SM active % at which a sample is in a kernel, 0 to 100 (default 1)"},
      {"gap-ms",
       "X",
       {Profiler::sampled},
       "active samples closer than this are one window, 0 to 1000 ms (default 0.25)"},
      {"min-window-ms", "X", {Profiler::sampled}, "shorter windows are dropped, 0 to 1000 ms (default 1)"},
      {"activity-ratio",
       "F",
       {Profiler::sampled},
       "under this fraction of the busiest window's activity: data movement, 0 to 1 (default 0.7)"},
  };
  return settings;
}

std::vector<std::string> profiler_names() {
  std::vector<std::string> names;
  for (Profiler p : {Profiler::ncu, Profiler::range, Profiler::sampled}) names.emplace_back(profiler_name(p));
  return names;
}

std::string backend_group(const BackendSetting& setting) {
  std::string group;
  for (std::size_t i = 0; i < setting.backends.size(); ++i)
    group += (i == 0                             ? ""
              : i + 1 == setting.backends.size() ? " and "
                                                 : ", ") +
             std::string(profiler_name(setting.backends[i]));
  return group + (setting.backends.size() == 1 ? " backend" : " backends");
}

NcuSettings parse_backend_settings(const std::string& profiler, const std::vector<std::string>& settings) {
  const std::optional<Profiler> backend = profiler_from_name(profiler);
  if (!backend)
    throw core::UsageError("--profiler " + profiler + " is not a profiler diescope drives",
                           "give --profiler " + joined(profiler_names()));
  NcuSettings s;
  for (const std::string& item : settings) {
    const bool flag = item.rfind("--", 0) == 0;
    const std::string text = flag ? item.substr(2) : item;
    const std::size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0)
      throw core::UsageError("-O " + item + " is not NAME=VALUE",
                             "give --NAME VALUE; the " + profiler + " backend takes " + flags_of(*backend));
    const Given g{text.substr(0, eq), text.substr(eq + 1), flag};
    const auto& all = backend_settings();
    const auto known =
        std::find_if(all.begin(), all.end(), [&](const BackendSetting& b) { return b.name == g.name; });
    if (known == all.end() || !takes(*known, *backend))
      throw core::UsageError(
          known == all.end()
              ? fmt::format("{} is not a setting of the {} backend", g.spelled_name(), profiler)
              : fmt::format("{} belongs to the {}, not {}", g.spelled_name(), backend_group(*known),
                            profiler),
          fmt::format("the {} backend takes {} (docs/roofline.md#backend-settings)", profiler,
                      flags_of(*backend)));
    const std::string& name = g.name;
    const std::string& value = g.value;
    if (name == "ncu") {
      s.ncu = value;
    } else if (name == "metrics") {
      for (auto& m : split_commas(value)) s.metrics.push_back(m);
    } else if (name == "lib") {
      s.lib = value;
    } else if (name == "ncu-arg") {
      s.ncu_args.push_back(value);
    } else if (name == "iterations") {
      std::size_t used = 0;
      long n = 0;
      try {
        n = std::stol(value, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != value.size() || n < 1 || n > 1'000'000)
        throw core::UsageError(g.spelled() + " is not a whole number from 1 to 1000000",
                               "give --iterations N (N > 1: a one-iteration .ref run is subtracted; "
                               "docs/roofline.md#the-two-point-measurement)");
      s.iterations = static_cast<int>(n);
    } else if (name == "interval-ms" || name == "threshold" || name == "gap-ms" || name == "min-window-ms" ||
               name == "activity-ratio") {
      std::size_t used = 0;
      double v = 0;
      try {
        v = std::stod(value, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      struct Range {
        double lo, hi;
        double* field;
      };
      const std::map<std::string, Range> ranges = {
          {"interval-ms", {0.1, 10, &s.sampled.interval_ms}},
          {"threshold", {0, 100, &s.sampled.activity_threshold_pct}},
          {"gap-ms", {0, 1000, &s.sampled.gap_ms}},
          {"min-window-ms", {0, 1000, &s.sampled.min_window_ms}},
          {"activity-ratio", {0, 1, &s.sampled.activity_ratio}},
      };
      const Range& r = ranges.at(name);
      if (used == 0 || used != value.size() || !(v >= r.lo && v <= r.hi))
        throw core::UsageError(fmt::format("{} is not a number from {:g} to {:g}", g.spelled(), r.lo, r.hi),
                               fmt::format("give --{} X with X from {:g} to {:g} "
                                           "(docs/roofline.md#sampled-constants)",
                                           name, r.lo, r.hi));
      *r.field = v;
    } else if (name == "aslr") {
      if (value != "on" && value != "off")
        throw core::UsageError(g.spelled() + " is not on or off", "give --aslr on or --aslr off");
      s.aslr = value == "on";
    }
  }
  return s;
}

bool is_google_benchmark(const std::filesystem::path& executable) {
  std::ifstream in(executable, std::ios::binary);
  if (!in) return false;
  static const std::string kMarker = "benchmark_out_format";
  std::string carry;
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got == 0) break;
    std::string chunk = carry + std::string(buf.data(), got);
    if (chunk.find(kMarker) != std::string::npos) return true;
    carry = chunk.substr(chunk.size() > kMarker.size() ? chunk.size() - kMarker.size() : 0);
  }
  return false;
}

std::vector<Target> make_targets(const std::vector<std::string>& executables,
                                 const std::vector<std::string>& command) {
  std::vector<std::vector<std::string>> argvs;
  if (!command.empty()) argvs.push_back(command);
  for (const auto& e : executables) argvs.push_back({e});
  std::map<std::string, int> used;
  std::vector<Target> targets;
  for (auto& argv : argvs) {
    std::string base = std::filesystem::path(argv.front()).filename().string();
    // A script run by an interpreter is named for the script: "python3 train.py" -> train.py.
    if ((base.rfind("python", 0) == 0 || base == "bash" || base == "sh") && argv.size() > 1 &&
        argv[1].rfind('-', 0) != 0)
      base = std::filesystem::path(argv[1]).filename().string();
    const int n = ++used[base];
    Target t;
    t.name = n == 1 ? base : fmt::format("{}-{}", base, n);
    const std::string resolved = core::find_executable(argv.front());
    t.google_benchmark = !resolved.empty() && is_google_benchmark(resolved);
    t.argv = std::move(argv);
    targets.push_back(std::move(t));
  }
  return targets;
}

std::string ncu_caches(const NcuSettings& s) {
  // docs/roofline.md#dram-bytes-and-the-cache-flush
  std::string mode = "all";  // ncu's default
  for (std::size_t i = 0; i < s.ncu_args.size(); ++i) {
    const std::string& a = s.ncu_args[i];
    if (a.rfind("--cache-control=", 0) == 0)
      mode = a.substr(std::string("--cache-control=").size());
    else if (a == "--cache-control" && i + 1 < s.ncu_args.size())
      mode = s.ncu_args[++i];
  }
  return mode == "none" ? kCachesUnflushed : kCachesFlushed;
}

std::vector<std::string> ncu_command(const std::string& ncu, const NcuSettings& s, const Target& t,
                                     const std::filesystem::path& report_base, const std::string& machine) {
  std::string metrics;
  for (const auto& m : ncu_metrics()) metrics += (metrics.empty() ? "" : ",") + m;
  for (const auto& m : s.metrics) metrics += "," + m;
  // docs/roofline.md#profiling: clocks as found (the calibration measured them so), NVTX on.
  std::vector<std::string> argv = {ncu,        "--clock-control",    "none",
                                   "--nvtx",   "--metrics",          metrics,
                                   "--export", report_base.string(), "--force-overwrite"};
  if (!s.gpus.empty()) argv.insert(argv.end(), {"--devices", s.gpus});
  argv.insert(argv.end(), s.ncu_args.begin(), s.ncu_args.end());
  if (!s.aslr) argv.insert(argv.end(), {"setarch", machine, "-R"});
  argv.insert(argv.end(), t.argv.begin(), t.argv.end());
  if (t.google_benchmark) {
    std::filesystem::path json = report_base;
    json += ".benchmark.json";
    argv.push_back("--benchmark_out=" + json.string());
    argv.emplace_back("--benchmark_out_format=json");
  }
  return argv;
}

namespace {

// Runs argv in its own process group (so a timeout stops a profiler and its target together), its
// output to `log`. Returns how it ended, or nullopt when it outran `timeout` and was stopped (then
// out says so, with `timeout_fix`); out.seconds is set either way.
std::optional<core::ExitStatus> run_logged(const std::vector<std::string>& argv,
                                           const std::vector<std::pair<std::string, std::string>>& env,
                                           const std::filesystem::path& log,
                                           std::chrono::duration<double> timeout,
                                           const std::string& timeout_fix, ProfileOutcome& out) {
  const auto start = std::chrono::steady_clock::now();
  core::UniqueFd log_fd(::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!log_fd)
    throw core::Error("cannot write " + log.string(), "check that the output folder is writable",
                      core::kExitInput);
  core::ChildSpec spec;
  spec.argv = argv;
  spec.set_env = env;
  spec.in = core::Stdio::null();
  spec.out = core::Stdio::from_fd(log_fd.get());
  spec.err = core::Stdio::from_fd(log_fd.get());
  spec.own_process_group = true;
  spec.parent_death_signal = SIGTERM;
  core::ChildProcess child(spec);
  std::optional<core::ExitStatus> status;
  while (!(status = child.try_wait())) {
    if (std::chrono::steady_clock::now() - start > timeout) {
      ::kill(-child.pid(), SIGTERM);
      std::this_thread::sleep_for(std::chrono::seconds(2));
      ::kill(-child.pid(), SIGKILL);
      child.stop(std::chrono::milliseconds(1000));
      out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      out.cause = fmt::format("timed out after {:g} s and was stopped", timeout.count());
      out.fix = timeout_fix;
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return status;
}

}  // namespace

ProfileOutcome run_profiler(const std::vector<std::string>& argv, const std::filesystem::path& log,
                            std::chrono::duration<double> timeout) {
  ProfileOutcome out;
  const std::optional<core::ExitStatus> status =
      run_logged(argv, {}, log, timeout,
                 "give it more time with --timeout S, or make the run shorter (fewer steps or launches: "
                 "-O ncu-arg=--launch-count=N profiles only the first N launches)",
                 out);
  if (!status) return out;
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  const std::string cause = ncu_failure_cause(text.str());
  if (status->exited() && status->code() == 0 && cause.empty()) {
    out.ok = true;
    return out;
  }
  out.cause = cause.empty() ? "ncu " + status->describe() : cause + " (ncu " + status->describe() + ")";
  out.fix = "see " + log.string() + " for the whole output";
  return out;
}

ProfileOutcome run_target(const std::vector<std::string>& argv,
                          const std::vector<std::pair<std::string, std::string>>& env,
                          const std::filesystem::path& log, std::chrono::duration<double> timeout) {
  ProfileOutcome out;
  const std::optional<core::ExitStatus> status =
      run_logged(argv, env, log, timeout, "give it more time with --timeout S, or make the run shorter", out);
  if (!status) return out;
  if (status->exited() && status->code() == 0) {
    out.ok = true;
    return out;
  }
  out.cause = "the program " + status->describe();
  out.fix = "see " + log.string() + " for its output";
  return out;
}

std::string ncu_failure_cause(const std::string& log_text) {
  std::istringstream in(log_text);
  std::string line, first_error;
  bool no_kernels = false, crashed = false;
  while (std::getline(in, line)) {
    if (line.rfind("==ERROR==", 0) == 0 && first_error.empty()) first_error = line.substr(10);
    if (line.find("No kernels were profiled") != std::string::npos) no_kernels = true;
    if (line.find("terminated") != std::string::npos && line.rfind("==", 0) == 0) crashed = true;
  }
  if (!first_error.empty()) {
    const std::string unknown = "Failed to find metric";
    if (first_error.find(unknown) != std::string::npos)
      return "ncu does not know a metric asked for: " + first_error;
    return "ncu: " + first_error;
  }
  if (crashed) return "the target ended abnormally under ncu";
  if (no_kernels) return "ncu profiled no kernel: the target launched none (or none the filters kept)";
  return "";
}

}  // namespace diescope::roofline
