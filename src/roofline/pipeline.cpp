// docs/roofline.md: the roofline commands' pipeline. Each target is profiled by its backend (ncu
// one launch per row, the range profiler and the sampled backend one NVTX region per row), the rows
// get the measured ceilings, and the table, the SVG and the HTML page are written.
#include "diescope/roofline/pipeline.hpp"

#include <fcntl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>

#include "diescope/collect/nvml.hpp"
#include "diescope/collect/run.hpp"
#include "diescope/core/atomic_file.hpp"
#include "diescope/core/child_process.hpp"
#include "diescope/core/error.hpp"
#include "diescope/core/unique_fd.hpp"
#include "diescope/recording/reader.hpp"
#include "diescope/roofline/csv.hpp"
#include "diescope/roofline/half_lanes.hpp"
#include "diescope/roofline/ncu.hpp"
#include "diescope/roofline/plot.hpp"
#include "diescope/roofline/profile.hpp"
#include "diescope/roofline/range.hpp"
#include "diescope/roofline/sampled.hpp"
#include "diescope/roofline/table.hpp"

namespace diescope::roofline {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw core::Error("cannot read " + path.string(), "check that the file exists and is readable",
                      core::kExitInput);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void warn(const std::string& what) {
  std::cerr << "diescope roofline: warning: " << what << "\n";
}

// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  ..." -> "580.159.04"; empty without a driver.
std::string driver_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(in, line)) return "";
  static const std::regex kVersion(R"(Kernel Module\s+(?:for\s+\S+\s+)?([0-9]+(?:\.[0-9]+)+))");
  std::smatch m;
  return std::regex_search(line, m, kVersion) ? m[1].str() : "";
}

fs::path caches_file(const fs::path& base) {
  fs::path p = base;
  p += ".caches";
  return p;
}

// The cache setting a report was made with; empty (not recorded) for a report made without the file.
std::string read_caches(const fs::path& path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || (word != kCachesFlushed && word != kCachesUnflushed)) return "";
  return word;
}

std::string machine_name() {
  utsname u{};
  return ::uname(&u) == 0 ? std::string(u.machine) : std::string("x86_64");
}

// The calibration's ceilings for the GPU and driver of the rows (docs/roofline.md#ceilings).
void apply_measured_ceilings(std::vector<Row>& rows, const std::string& calibration) {
  if (rows.empty()) return;
  const std::optional<fs::path> explicit_path =
      calibration.empty() ? std::nullopt : std::optional<fs::path>(calibration);
  const MeasuredCeilings c = find_measured_ceilings(rows.front().gpu, rows.front().driver, explicit_path);
  if (!c.found && rows.front().driver.empty())
    // No driver here to say which one the exports were made under: the lookup cannot match one.
    warn("no measured ceilings (" + c.source +
         "): only counter peaks are drawn; this machine has no NVIDIA driver to say which driver the "
         "profiles were made under: pass --driver VERSION (as `nvidia-smi` showed it there)");
  else if (!c.found)
    warn("no measured ceilings (" + c.source + "): only counter peaks are drawn; " +
         (calibration.empty() ? "run `diescope calibrate` on this GPU, or pass --calibration PATH"
                              : "pass a calibration made on this GPU and driver"));
  apply_ceilings(rows, c);
}

// Region filter and aggregation; then the table, the SVG and the HTML page.
int finish_table(std::vector<Row> rows, const TableRequest& o) {
  const Aggregate how = parse_aggregate(o.aggregate);
  const ColorBy color_by = parse_color_by(o.color_by);
  auto regex = [](const std::string& flag, const std::string& text) {
    try {
      return std::regex(text);
    } catch (const std::regex_error& e) {
      throw core::UsageError(flag + " " + text + " is not a regular expression (" + e.what() + ")",
                             "give an ECMAScript regular expression, e.g. " + flag + " 'forward|backward'");
    }
  };
  std::optional<std::regex> keep;
  if (!o.region.empty()) keep = regex("--region", o.region);
  if (!o.kernel.empty()) rows = filter_kernels(std::move(rows), regex("--kernel", o.kernel));
  std::vector<std::string> warnings;
  rows = filter_regions(std::move(rows), keep, warnings);
  for (const auto& w : warnings) warn(w);
  rows = aggregate(rows, how);
  if (const auto w = mixed_caches_warning(rows)) warn(*w);
  const fs::path dir(o.output);
  fs::create_directories(dir);
  PlotOptions plot;
  plot.color_by = color_by;
  plot.title = fmt::format("Roofline: {} rows{}", rows.size(),
                           how == Aggregate::none ? "" : fmt::format(" (aggregate {})", o.aggregate));
  core::write_file_atomically(dir / "roofline.csv", table_csv(rows));
  core::write_file_atomically(dir / "roofline.svg", render_svg(rows, plot));
  core::write_file_atomically(dir / "roofline.html", render_html(rows, plot));
  fmt::print("{:<8} {:<22} {:<12} {:<44} {:<12} {:>12} {:>16} {:>8}\n", "backend", "executable", "region",
             "kernel", "precision", "performance", "roof", "of roof");
  for (const Row& r : rows) {
    const auto p = dominant_precision(r);
    const Roof roof = binding_roof(r);
    std::string kernel = r.kernel.size() > 44 ? r.kernel.substr(0, 43) + "~" : r.kernel;
    fmt::print("{:<8} {:<22} {:<12} {:<44} {:<12} {:>12} {:>16} {:>7.1f}%\n", profiler_name(r.profiler),
               r.executable, r.region, kernel, p ? precision_name(*p) : "-", si(performance(r), "FLOP/s"),
               roof.which.empty() ? "-" : roof.which + (roof.measured ? " meas." : " peak"), pct_of_roof(r));
  }
  fmt::print("wrote {}, roofline.svg, roofline.html\n", (dir / "roofline.csv").string());
  return 0;
}

// libdiescope-range.so: --lib PATH, else beside the diescope binary (the build puts both in bin/).
fs::path range_library(const NcuSettings& settings) {
  fs::path lib = settings.lib;
  if (lib.empty()) {
    std::error_code ec;
    lib = fs::read_symlink("/proc/self/exe", ec).parent_path() / "libdiescope-range.so";
  }
  if (!fs::is_regular_file(lib))
    throw core::Error(
        (settings.lib.empty() ? "libdiescope-range.so is not beside the diescope binary (" : "--lib ") +
            lib.string() + (settings.lib.empty() ? ")" : " is not a file"),
        "build it (cmake --build BUILD --target diescope-range; CUPTI is needed) or pass --lib PATH", 127);
  return fs::absolute(lib);
}

// docs/roofline.md#the-range-profiler: the program once per pass group, each run under the
// injection library; the runs' regions merged into rows. Throws core::Error for the target.
std::vector<Row> profile_range(const Target& t, const NcuSettings& settings, const fs::path& dir,
                               const std::string& machine, double timeout_s) {
  const fs::path lib = range_library(settings);
  std::string metrics;
  for (const auto& m : range_metrics()) metrics += (metrics.empty() ? "" : ",") + m;
  std::vector<std::string> argv;
  if (!settings.aslr) argv = {"setarch", machine, "-R"};
  argv.insert(argv.end(), t.argv.begin(), t.argv.end());
  std::vector<RangeRun> runs;
  int groups = 1;
  for (int g = 0; g < groups; ++g) {
    const fs::path out = dir / fmt::format("{}.range.{}.txt", t.name, g);
    const fs::path log = dir / fmt::format("{}.range.{}.log", t.name, g);
    std::error_code ec;
    fs::remove(out, ec);
    std::cerr << fmt::format("diescope roofline: profiling {} (range profiler, pass group {}{})\n", t.name,
                             g + 1, g == 0 ? "" : fmt::format(" of {}", groups));
    const ProfileOutcome run = run_target(argv,
                                          {{"CUDA_INJECTION64_PATH", lib.string()},
                                           {"NVTX_INJECTION64_PATH", lib.string()},
                                           {"DIESCOPE_RANGE_OUTPUT", fs::absolute(out).string()},
                                           {"DIESCOPE_RANGE_MODE", "counters"},
                                           {"DIESCOPE_RANGE_METRICS", metrics},
                                           {"DIESCOPE_RANGE_GROUP", std::to_string(g)}},
                                          log, std::chrono::duration<double>(timeout_s));
    if (!fs::exists(out)) {
      if (!run.ok) throw core::Error(run.cause, run.fix, core::kExitInput);
      throw core::Error("the program never initialised CUDA with the injection library (" + out.string() +
                            " was not written)",
                        "check that it uses the GPU, and that it does not set CUDA_INJECTION64_PATH itself",
                        core::kExitInput);
    }
    RangeRun parsed = parse_range_output(read_text(out), out.string());
    // A crash keeps the rows of the regions closed before it (docs/roofline.md#bad-input); the file
    // says where it ended, and rows_from_range words it once for all groups.
    if (!run.ok && parsed.ended)
      warn(t.name + ": " + run.cause + " in pass group " + std::to_string(g + 1) + "; " + run.fix);
    if (g == 0 && parsed.groups > 0) groups = parsed.groups;
    std::cerr << fmt::format("diescope roofline: {} pass group {} took {:.1f} s\n", t.name, g + 1,
                             run.seconds);
    runs.push_back(std::move(parsed));
  }
  std::vector<std::string> warnings;
  std::vector<Row> rows = rows_from_range(runs, t.name, warnings);
  for (const auto& w : warnings) warn(w);
  return rows;
}

// One run of the sampled backend: the region times and the samples, on one clock.
struct SampledRun {
  RangeRun stamps;
  std::vector<ActivitySample> samples;
  std::vector<recording::PowerLimitReading> power;  // docs/roofline.md#energy
  std::string gpu;
  std::int64_t end_ns = 0;  // the program's end (CLOCK_REALTIME)
  int exit_code = 0;
};

// Reads a recording's chip samples: SM active (the diagnostic sm_active) and the DRAM bytes count.
SampledRun read_sampled_recording(const fs::path& path) {
  SampledRun run;
  std::unique_ptr<recording::Recording> source = recording::open_recording(path);
  const recording::RecordingMeta& meta = source->meta();
  auto column = [&](const std::vector<recording::ColumnDef>& cols, const std::string& key) -> long {
    for (std::size_t i = 0; i < cols.size(); ++i)
      if (cols[i].key == key) return static_cast<long>(i);
    return -1;
  };
  const long active = column(meta.diagnostics, "sm_active");
  const long bytes = column(meta.counts, "dram_bytes");
  if (active < 0 || bytes < 0)
    throw core::Error(fmt::format("{}: its unit table ({}) has no {} column, which the sampled backend reads",
                                  path.string(), meta.unit_table, active < 0 ? "SM active" : "DRAM bytes"),
                      "the sampled backend needs a GPU whose unit table samples sm__cycles_active and "
                      "dram__bytes.sum (docs/roofline.md#the-sampled-backend); use --profiler range or ncu",
                      core::kExitInput);
  run.gpu = meta.gpu.model;
  auto stream = source->stream<recording::ChipSample>();
  recording::ChipSample c;
  while (stream->next(c))
    run.samples.push_back({c.start_ns, c.end_ns, c.diagnostics[static_cast<std::size_t>(active)],
                           c.counts[static_cast<std::size_t>(bytes)]});
  if (auto readings = source->stream<recording::PowerLimitReading>()) {
    recording::PowerLimitReading p;
    while (readings->next(p)) run.power.push_back(p);
  }
  const auto& side = source->side();
  run.end_ns = side.end ? side.end->ts_ns : side.last_ts_ns;
  return run;
}

// docs/roofline.md#the-sampled-backend: the program under the PM sampler (diescope run's collector)
// with the library in timestamps mode. `tag`: "" or ".ref".
SampledRun run_sampled(const Target& t, const NcuSettings& settings, const fs::path& dir,
                       const std::string& tag, int iterations, const std::string& gpus, double timeout_s,
                       bool skip_profile) {
  const fs::path stamps = dir / (t.name + tag + ".sampled.txt");
  const fs::path rec_dir = dir / (t.name + tag + ".sampled");
  const fs::path log = dir / (t.name + tag + ".sampled.log");
  int gpu = 0;
  if (!gpus.empty()) {
    std::size_t used = 0;
    try {
      gpu = std::stoi(gpus, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != gpus.size())
      throw core::UsageError("--gpus " + gpus + ": the sampled backend measures one GPU",
                             "give --gpus N (one index, as nvidia-smi numbers them)");
  }
  int exit_code = 0;
  if (!skip_profile) {
    const fs::path lib = range_library(settings);
    std::error_code ec;
    fs::remove(stamps, ec);
    fs::remove_all(rec_dir, ec);
    collect::RunOptions options;
    // coreutils' timeout stops a program that hangs (exit 124); env hands the library its settings
    // without diescope's own environment (the sampler must not load the library).
    options.command = {"timeout",
                       "-k",
                       "2",
                       fmt::format("{:g}", timeout_s),
                       "env",
                       "CUDA_INJECTION64_PATH=" + lib.string(),
                       "NVTX_INJECTION64_PATH=" + lib.string(),
                       "DIESCOPE_RANGE_OUTPUT=" + fs::absolute(stamps).string(),
                       "DIESCOPE_RANGE_MODE=timestamps",
                       "DIESCOPE_ITERATIONS=" + std::to_string(iterations)};
    const std::vector<std::string> argv = substitute_iterations(t.argv, iterations);
    options.command.insert(options.command.end(), argv.begin(), argv.end());
    options.interval_ms = settings.sampled.interval_ms;
    options.source = collect::ChipSourceSetting::pm;
    options.gpus = std::vector<int>{gpu};
    options.output_dir = rec_dir;
    options.host_interval_ms = 0;
    options.end_wait_ms = 0;
    core::UniqueFd out(::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!out)
      throw core::Error("cannot write " + log.string(), "choose another --output folder", core::kExitInput);
    options.stdout_fd = out.get();
    std::cerr << fmt::format("diescope roofline: profiling {} (sampled, {} iteration{}, {:g} ms samples)\n",
                             t.name, iterations, iterations == 1 ? "" : "s", options.interval_ms);
    const auto started = std::chrono::steady_clock::now();
    std::unique_ptr<collect::Nvml> nvml = collect::Nvml::load();
    const collect::RunOutcome outcome = collect::record_run(options, *nvml);
    if (outcome.recordings.empty() || !outcome.recordings.front().counters)
      throw core::Error(
          "the PM sampler recorded no samples" + (outcome.recordings.empty()
                                                      ? std::string()
                                                      : " (" + outcome.recordings.front().counters_why + ")"),
          "the sampled backend needs the GPU's counters: stop any other profiler (ncu, nsys, DCGM profiling) "
          "and check `diescope run -- CMD` on this GPU",
          core::kExitDevice);
    // After the check: without counters, `run`'s own warning says the same with run's fixes.
    for (const auto& w : outcome.warnings) warn(fmt::format("{}{}: {}", t.name, tag, w));
    exit_code = outcome.exit_code;
    if (exit_code == 124)
      warn(fmt::format("{}{}: stopped at --timeout {:g} s", t.name, tag, timeout_s));
    else if (exit_code != 0)
      warn(fmt::format("{}{}: the program exited with {} ({})", t.name, tag, exit_code,
                       exit_code > 128 ? fmt::format("signal {}", exit_code - 128) : "an error"));
    std::cerr << fmt::format(
        "diescope roofline: {}{} ran in {:.1f} s\n", t.name, tag,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
  const fs::path rec = rec_dir / fmt::format("gpu{}.dsrec", gpu);
  if (!fs::exists(stamps))
    throw core::Error(
        skip_profile ? "--skip-profile, and there is no " + stamps.string()
                     : "the program never initialised CUDA with the injection library (" + stamps.string() +
                           " was not written)",
        skip_profile ? "profile it first (leave out --skip-profile)"
                     : "check that it uses the GPU, and that it does not set CUDA_INJECTION64_PATH itself",
        core::kExitInput);
  if (!fs::exists(rec))
    throw core::Error(
        "there is no recording " + rec.string(),
        "profile it again (leave out --skip-profile); --gpus must name the GPU it was profiled on",
        core::kExitInput);
  SampledRun run = read_sampled_recording(rec);
  run.stamps = parse_range_output(read_text(stamps), stamps.string());
  run.exit_code = exit_code;
  const SamplingCheck c = check_sampling(run.samples, settings.sampled.interval_ms);
  std::cerr << fmt::format(
      "diescope roofline: {}{}: {} samples, median {:.3f} ms (asked {:g}), {:.2f}% of the run covered, {} "
      "hole{} longer than half an interval (longest {:.2f} ms), {} without values\n",
      t.name, tag, c.samples, c.median_interval_ms, settings.sampled.interval_ms, c.covered_pct, c.holes,
      c.holes == 1 ? "" : "s", c.longest_hole_ms, c.unread);
  if (c.samples > 0 && c.covered_pct < 99.0)
    warn(fmt::format(
        "{}{}: the samples cover {:.2f}% of the run: the sampler did not keep {:g} ms; give a longer "
        "--interval-ms (docs/roofline.md#sampled-constants)",
        t.name, tag, c.covered_pct, settings.sampled.interval_ms));
  return run;
}

// The windows of every region, for people checking the constants (docs/roofline.md#sampled-constants).
std::string windows_table(const std::vector<SampledRegion>& regions,
                          const std::vector<ActivitySample>& samples, const SampledConstants& c) {
  std::string out = fmt::format(
      "# threshold {:g}% SM active, gap {:g} ms, minimum window {:g} ms, activity ratio {:g}, interval {:g} "
      "ms\n"
      "region\toccurrence\twindow_start_ms\twindow_ms\tactive_ms\tmean_sm_active_pct\tdram_bytes\tkind\t"
      "region_ms\tidle_max_sm_active_pct\twindow_start_ns\twindow_end_ns\n",
      c.activity_threshold_pct, c.gap_ms, c.min_window_ms, c.activity_ratio, c.interval_ms);
  for (const SampledRegion& g : regions) {
    // The busiest sample of the region outside every window: how far idle sits below the threshold.
    double idle = 0;
    for (const ActivitySample& s : samples) {
      if (s.end_ns <= g.from_ns || s.start_ns >= g.to_ns || std::isnan(s.activity_pct)) continue;
      bool inside = false;
      for (const Window& w : g.windows)
        if (s.start_ns >= w.start_ns && s.end_ns <= w.end_ns) inside = true;
      if (!inside) idle = std::max(idle, s.activity_pct);
    }
    for (const Window& w : g.windows)
      out += fmt::format("{}\t{}\t{:.3f}\t{:.3f}\t{:.3f}\t{:.2f}\t{:.6g}\t{}\t{:.3f}\t{:.2f}\t{}\t{}\n",
                         g.name, g.number, static_cast<double>(w.start_ns - g.from_ns) * 1e-6,
                         static_cast<double>(w.end_ns - w.start_ns) * 1e-6, w.active_s * 1e3,
                         w.mean_activity_pct, w.dram_bytes, window_kind_name(w.kind),
                         static_cast<double>(g.to_ns - g.from_ns) * 1e-6, idle, w.start_ns, w.end_ns);
    if (g.windows.empty())
      out += fmt::format("{}\t{}\t\t\t\t\t\tnone\t{:.3f}\t{:.2f}\n", g.name, g.number,
                         static_cast<double>(g.to_ns - g.from_ns) * 1e-6, idle);
  }
  return out;
}

// docs/roofline.md#the-sampled-backend: one run (or, with --iterations N, a one-iteration .ref run and
// an N-iteration run); the regions measured on the samples; the rows.
std::vector<Row> profile_sampled(const Target& t, const NcuSettings& settings,
                                 const std::vector<FlopRule>& rules, const fs::path& dir,
                                 const std::string& gpus, double timeout_s, bool skip_profile) {
  std::vector<std::string> warnings;
  auto measure = [&](const std::string& tag, int n) {
    SampledRun run = run_sampled(t, settings, dir, tag, n, gpus, timeout_s, skip_profile);
    std::vector<SampledRegion> regions =
        measure_regions(run.samples, run.stamps, run.end_ns, settings.sampled, t.name + tag, warnings);
    add_window_energy(regions, run.power);
    core::write_file_atomically(dir / (t.name + tag + ".sampled-windows.tsv"),
                                windows_table(regions, run.samples, settings.sampled));
    return std::make_pair(std::move(run), std::move(regions));
  };
  std::optional<std::pair<SampledRun, std::vector<SampledRegion>>> ref;
  if (settings.iterations > 1) ref = measure(".ref", 1);
  auto main = measure("", settings.iterations);
  std::vector<Row> rows = rows_from_sampled(main.second, ref ? &ref->second : nullptr, settings.iterations,
                                            t.name, main.first.gpu, rules, warnings);
  if (!rows.empty())
    warnings.push_back(
        t.name +
        ": the sampler reads no counter peaks, so the sampled rows' compute roofs are drawn only "
        "beside another backend's table of this GPU: `diescope roofline plot --from-csv NCU.csv "
        "SAMPLED.csv` (docs/roofline.md#the-sampled-backend)");
  for (const auto& w : warnings) warn(w);
  return rows;
}

}  // namespace

int profile(const ProfileRequest& o) {
  const auto started = std::chrono::steady_clock::now();
  if (o.force && o.skip_profile)
    throw core::UsageError(
        "--force and --skip-profile ask for opposite things",
        "give --force to profile again, or --skip-profile to use the reports already there");
  NcuSettings settings = parse_backend_settings(o.profiler, o.settings);
  const Profiler backend = *profiler_from_name(o.profiler);  // parse_backend_settings refused any other
  settings.gpus = o.gpus;
  if (o.targets.empty())
    throw core::UsageError("no target to profile",
                           "give executables, or -- CMD ARGS (one command with its arguments)");
  if (!o.flops.empty() && backend != Profiler::sampled)
    throw core::UsageError(
        "--flop gives the sampled backend its FLOPs; the " + o.profiler + " backend counts them",
        "leave out --flop, or give --profiler sampled");
  std::vector<FlopRule> rules;
  for (const auto& f : o.flops) rules.push_back(parse_flop_rule(f));
  if (backend == Profiler::range && o.skip_profile)
    throw core::UsageError("--skip-profile reads ncu reports; the range backend keeps none",
                           "leave out --skip-profile (or give --profiler ncu)");
  // ncu also exports reports, so --skip-profile needs it too.
  const std::string ncu = backend == Profiler::ncu
                              ? core::find_executable(settings.ncu.empty() ? "ncu" : settings.ncu)
                              : std::string("-");
  if (ncu.empty())
    throw core::Error(
        settings.ncu.empty() ? "ncu (Nsight Compute's command line) is not on PATH"
                             : "--ncu " + settings.ncu + " is not an executable file",
        "install Nsight Compute (the CUDA toolkit has it: /usr/local/cuda/bin/ncu) and put it on PATH, "
        "or pass --ncu PATH",
        127);
  const std::vector<Target> targets =
      o.one_command ? make_targets({}, o.targets) : make_targets(o.targets, {});
  const fs::path dir(o.table.output);
  fs::create_directories(dir);
  const std::string machine = machine_name();
  std::vector<Row> rows;
  int failed = 0;
  for (const Target& t : targets) {
    if (backend != Profiler::range && backend != Profiler::sampled) break;
    try {
      std::vector<Row> got =
          backend == Profiler::range
              ? profile_range(t, settings, dir, machine, o.timeout_s)
              : profile_sampled(t, settings, rules, dir, o.gpus, o.timeout_s, o.skip_profile);
      if (got.empty()) {
        ++failed;
        std::cerr << "diescope roofline: " << t.name
                  << (backend == Profiler::range
                          ? ": skipped: no region launched a kernel"
                          : ": skipped: no region showed a kernel window in the samples")
                  << "\n  fix: check that the target launches kernels on this GPU\n";
        continue;
      }
      rows.insert(rows.end(), got.begin(), got.end());
    } catch (const core::Error& e) {
      // The library missing, or the counters not to be had: no target can run.
      if (e.exit_code() == 127 || e.exit_code() == core::kExitDevice) throw;
      ++failed;
      std::cerr << "diescope roofline: " << t.name << ": skipped: " << e.cause() << "\n  fix: " << e.fix()
                << "\n";
    }
  }
  for (const Target& t : targets) {
    if (backend == Profiler::range || backend == Profiler::sampled) break;
    const fs::path base = dir / t.name;
    fs::path report = base;
    report += ".ncu-rep";
    auto skip = [&](const std::string& cause, const std::string& fix) {
      ++failed;
      std::cerr << "diescope roofline: " << t.name << ": skipped: " << cause << "\n  fix: " << fix << "\n";
    };
    if (!o.skip_profile) {
      if (fs::exists(report) && !o.force) {
        skip(report.string() + " is there already",
             "give --force to profile again, or --skip-profile to use it as it is");
        continue;
      }
      fs::path log = base;
      log += ".ncu.log";
      std::cerr << "diescope roofline: profiling " << t.name
                << (t.google_benchmark ? " (Google Benchmark)" : "") << "\n";
      const ProfileOutcome out = run_profiler(ncu_command(ncu, settings, t, base, machine), log,
                                              std::chrono::duration<double>(o.timeout_s));
      if (!out.ok) {
        skip(out.cause, out.fix);
        continue;
      }
      std::cerr << fmt::format("diescope roofline: {} profiled in {:.1f} s\n", t.name, out.seconds);
      // The cache setting beside the report, for --skip-profile
      // (docs/roofline.md#dram-bytes-and-the-cache-flush).
      core::write_file_atomically(caches_file(base), ncu_caches(settings) + "\n");
    } else if (!fs::exists(report)) {
      skip("--skip-profile, and there is no " + report.string(),
           "profile it first (leave out --skip-profile)");
      continue;
    }
    fs::path raw = base;
    raw += ".raw.csv";
    const ProfileOutcome exported =
        run_profiler({ncu, "--import", report.string(), "--csv", "--page", "raw", "--print-units", "base"},
                     raw, std::chrono::seconds(300));
    if (!exported.ok) {
      skip("exporting " + report.string() + " failed: " + exported.cause, exported.fix);
      continue;
    }
    try {
      const RawExport parsed = parse_raw_export(read_text(raw), raw.string());
      for (const std::string& m : missing_metrics(parsed, settings.metrics))
        warn(t.name + ": ncu does not know the metric " + m +
             " (its export has no such column; ncu leaves an unknown metric out without failing): check the "
             "name with `ncu --query-metrics` (a metric needs its suffix, e.g. .sum or .avg.per_second)");
      std::vector<Row> got = rows_from_export(parsed, t.name, raw.string());
      const std::string caches = read_caches(caches_file(base));
      for (Row& r : got) r.caches = caches;
      if (got.empty()) {
        skip("the report holds no kernel launch", "check that the target launches kernels on this GPU");
        continue;
      }
      rows.insert(rows.end(), got.begin(), got.end());
    } catch (const core::Error& e) {
      skip(e.cause(), e.fix());
    }
  }
  for (const auto& w : apply_half_lanes(rows, target_executables(targets), dir))
    warn(w);  // docs/roofline.md#packed-half-precision
  const std::string driver = driver_version();
  for (Row& r : rows) r.driver = driver;
  TableRequest table = o.table;
  table.output = dir.string();
  if (!rows.empty()) {
    apply_measured_ceilings(rows, table.calibration);
    core::write_file_atomically(dir / "roofline-launches.csv", table_csv(rows));
    finish_table(std::move(rows), table);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cerr << fmt::format("diescope roofline: {} of {} targets profiled in {:.1f} s\n",
                           targets.size() - failed, targets.size(), seconds);
  if (failed > 0 && static_cast<std::size_t>(failed) == targets.size())
    throw core::Error("no target could be profiled", "see the messages above, one per target",
                      core::kExitInput);
  return failed > 0 ? 1 : 0;
}

int plot(const PlotRequest& o) {
  const auto started = std::chrono::steady_clock::now();
  if (o.csvs.empty() && o.exports.empty())
    throw core::UsageError("nothing to plot",
                           "give --from-csv TABLE.csv ... or --from-export NAME=R.raw.csv ...");
  std::vector<std::vector<Row>> tables;
  for (const auto& path : o.csvs) tables.push_back(parse_table_csv(read_text(path), path));
  for (const auto& item : o.exports) {
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw core::UsageError("--from-export " + item + " is not NAME=FILE",
                             "give --from-export NAME=R.raw.csv");
    const std::string path = item.substr(eq + 1);
    tables.push_back(rows_from_export(parse_raw_export(read_text(path), path), item.substr(0, eq), path));
    // An export does not record the driver; the calibration lookup matches it (docs/roofline.md#ceilings).
    const std::string driver = o.driver.empty() ? driver_version() : o.driver;
    for (Row& r : tables.back()) r.driver = driver;
  }
  TableRequest table = o.table;
  if (table.output.empty()) table.output = "roofline";
  std::vector<Row> rows = concatenate(tables);
  // A table keeps the ceilings it was written with unless --calibration names others; an export has none.
  if (!o.exports.empty() || !o.table.calibration.empty()) {
    borrow_counter_peaks(rows);
    apply_measured_ceilings(rows, o.table.calibration);
  } else {
    // docs/roofline.md#the-sampled-backend: sampled rows take the GPU's peaks per cycle from another
    // backend's rows, and their measured compute ceilings with them.
    const std::vector<std::size_t> borrowed = borrow_counter_peaks(rows);
    if (!borrowed.empty()) {
      std::vector<Row> some;
      some.reserve(borrowed.size());
      for (std::size_t i : borrowed) some.push_back(rows[i]);
      apply_measured_ceilings(some, "");
      for (std::size_t k = 0; k < borrowed.size(); ++k) rows[borrowed[k]] = std::move(some[k]);
    }
  }
  const int rc = finish_table(std::move(rows), table);
  std::cerr << fmt::format("diescope roofline: plotted in {:.3f} s\n",
                           std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  return rc;
}

}  // namespace diescope::roofline
