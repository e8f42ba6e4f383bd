// The measuring half of the C API (docs/python.md#measure): `diescope run`'s own collector
// (collect::record_run) attached to this process, on a thread of its own, and NVML's energy counter
// read beside it; then each recording's report as `run` writes it.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <condition_variable>
#include <exception>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "capi_internal.hpp"
#include "diescope/calibrate/lookup.hpp"
#include "diescope/capi/diescope_c.h"
#include "diescope/collect/nvml.hpp"
#include "diescope/collect/run.hpp"
#include "diescope/core/atomic_file.hpp"
#include "diescope/core/clock.hpp"
#include "diescope/core/unique_fd.hpp"
#include "diescope/recording/reader.hpp"
#include "diescope/report/gpus_summary.hpp"
#include "diescope/report/recording_report.hpp"
#include "diescope/report/report.hpp"

namespace fs = std::filesystem;

namespace diescope::capi {
namespace {

// NVML's energy counter is read this often beside the run (docs/python.md#energy).
constexpr auto kEnergyPeriod = std::chrono::milliseconds(20);

struct EnergySeries {
  int index = -1;
  std::vector<std::int64_t> ts_ns;
  std::vector<double> mj;  // millijoules since the driver loaded
  std::string why;         // why there are no readings
};

collect::ChipSourceSetting source_of(const std::string& name) {
  const auto source = collect::chip_source_setting_from_name(name);
  if (!source)
    throw core::UsageError("source '" + name + "' is not a chip source",
                           "give pm, gpm or auto (the default)");
  return *source;
}

}  // namespace

// One measurement: the collector on its thread, the write end of its pipe, the energy reader.
struct Measure {
  collect::RunOptions options;
  std::unique_ptr<collect::Nvml> nvml;
  core::UniqueFd marks;  // the write end: marker lines in, closed to end the run
  std::thread runner;
  std::optional<collect::RunOutcome> outcome;
  std::exception_ptr failure;

  std::thread energy_thread;
  std::mutex energy_mutex;
  std::condition_variable energy_wake;
  bool energy_stop = false;
  std::vector<EnergySeries> energy;

  ~Measure() {
    marks.reset();
    if (runner.joinable()) runner.join();
    stop_energy();
  }

  void stop_energy() {
    {
      std::lock_guard<std::mutex> lock(energy_mutex);
      energy_stop = true;
    }
    energy_wake.notify_all();
    if (energy_thread.joinable()) energy_thread.join();
  }

  void start_energy(const std::vector<int>& indexes) {
    for (int i : indexes) energy.push_back(EnergySeries{i, {}, {}, {}});
    energy_thread = std::thread([this] {
      std::vector<collect::NvmlDevice> devices;
      for (const auto& e : energy) devices.push_back(nvml->device(e.index));
      std::unique_lock<std::mutex> lock(energy_mutex);
      while (!energy_stop) {
        for (std::size_t g = 0; g < devices.size(); ++g) {
          const collect::NvmlReading r = devices[g].total_energy_mj();
          const std::int64_t now = core::realtime_ns();
          if (std::isfinite(r.value)) {
            energy[g].ts_ns.push_back(now);
            energy[g].mj.push_back(r.value);
          } else if (energy[g].why.empty()) {
            energy[g].why = r.why;
          }
        }
        energy_wake.wait_for(lock, kEnergyPeriod, [this] { return energy_stop; });
      }
    });
  }
};

}  // namespace diescope::capi

using namespace diescope;

extern "C" {

ds_measure* ds_measure_start(const char* options_json) {
  return capi::guarded([&]() -> ds_measure* {
    const nlohmann::json o = nlohmann::json::parse(options_json ? options_json : "{}");
    auto m = std::make_unique<capi::Measure>();
    collect::RunOptions& opt = m->options;
    opt.interval_ms = o.value("interval_ms", 10.0);
    opt.drain_ms = o.value("drain_ms", 1000.0);
    opt.host_interval_ms = o.value("host_interval_ms", 100.0);
    opt.source = capi::source_of(o.value("source", std::string("auto")));
    opt.output_dir = o.value("output_dir", std::string());
    opt.sampler_executable = o.value("sampler", std::string());
    if (o.contains("gpus") && !o["gpus"].is_null()) opt.gpus = o["gpus"].get<std::vector<int>>();
    if (opt.output_dir.empty())
      throw core::UsageError("no folder for the recordings",
                             "give measure(output=DIR), or leave it to a temporary folder");

    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
      throw core::Error(std::string("cannot make a pipe: ") + std::strerror(errno),
                        "close some files and try again", core::kExitInternal);
    ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    opt.attach_fd = fds[0];
    m->marks = core::UniqueFd(fds[1]);

    m->nvml = collect::Nvml::load();  // throws DeviceError, with the fix, without a driver
    // The energy counter is read from before the start, so that the first step has a reading before it.
    std::vector<int> indexes;
    if (opt.gpus) {
      for (int i : *opt.gpus)
        if (i >= 0 && i < m->nvml->device_count()) indexes.push_back(i);  // run names a bad index itself
    } else {
      for (int i = 0; i < m->nvml->device_count(); ++i) indexes.push_back(i);
    }
    m->start_energy(indexes);
    std::promise<void> started;
    auto started_future = started.get_future();
    auto started_promise = std::make_shared<std::promise<void>>(std::move(started));
    opt.on_start = [started_promise](recording::TimeNs) { started_promise->set_value(); };
    capi::Measure* raw = m.get();
    m->runner = std::thread([raw, started_promise] {
      try {
        raw->outcome = collect::record_run(raw->options, *raw->nvml);
      } catch (...) {
        raw->failure = std::current_exception();
        // Failed before the start: the caller's wait ends with this failure.
        try {
          started_promise->set_exception(std::current_exception());
        } catch (const std::future_error&) {}
      }
    });
    try {
      started_future.get();
    } catch (...) {
      m->marks.reset();
      m->runner.join();
      m->stop_energy();
      throw;
    }
    return reinterpret_cast<ds_measure*>(m.release());
  });
}

int ds_measure_marker(ds_measure* handle, const char* line) {
  return capi::guarded([&]() -> int {
    auto* m = reinterpret_cast<capi::Measure*>(handle);
    if (!m || !m->marks) throw core::UsageError("the measurement has ended", "mark inside the `with` block");
    const std::string text = std::string(line ? line : "") + "\n";
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(m->marks.get(), text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        throw core::Error(std::string("cannot pass the marker on: ") + std::strerror(errno),
                          "the collector ended early; see the warnings at the end", core::kExitInternal);
      done += static_cast<std::size_t>(n);
    }
    return 0;
  });
}

char* ds_measure_stop(ds_measure* handle) {
  return capi::guarded([&]() -> char* {
    auto* m = reinterpret_cast<capi::Measure*>(handle);
    if (!m) throw core::UsageError("no measurement", "call ds_measure_start first");
    m->marks.reset();  // end of file: the run ends as when a command exits
    if (m->runner.joinable()) m->runner.join();
    m->stop_energy();
    if (m->failure) std::rethrow_exception(m->failure);
    nlohmann::json out;
    const collect::RunOutcome& r = *m->outcome;
    out["start_ns"] = r.start_ns;
    out["end_ns"] = r.end_ns;
    out["warnings"] = r.warnings;
    out["recordings"] = nlohmann::json::array();
    for (const auto& rec : r.recordings)
      out["recordings"].push_back(
          {{"index", rec.index},
           {"path", rec.path.string()},
           {"counters", rec.counters},
           {"chip_source", rec.chip_source ? std::string(collect::chip_source_name(*rec.chip_source)) : ""},
           {"counters_why", rec.counters_why},
           {"samples", rec.samples}});
    out["energy"] = nlohmann::json::array();
    for (const auto& e : m->energy)
      out["energy"].push_back({{"index", e.index}, {"ts_ns", e.ts_ns}, {"mj", e.mj}, {"why", e.why}});
    return capi::to_c(capi::dump(out));
  });
}

void ds_measure_free(ds_measure* handle) {
  delete reinterpret_cast<capi::Measure*>(handle);
}

char* ds_report_run(const char* recordings_json, const char* calibration, int use_window,
                    const char* gpus_json_path) {
  return capi::guarded([&]() -> char* {
    const nlohmann::json paths = nlohmann::json::parse(recordings_json ? recordings_json : "[]");
    const std::string cal = calibration ? calibration : "";
    if (!cal.empty()) calibrate::check_calibration_path(cal);
    nlohmann::json out;
    out["reports"] = nlohmann::json::array();
    std::vector<report::GpuFigures> figures;
    const report::CalibrationLookup lookup = capi::calibration_lookup(cal);
    for (const auto& p : paths) {
      // Each GPU's report as `run` writes it, the headline into a string for the caller to print.
      const fs::path path = p.at("path").get<std::string>();
      std::ostringstream headline;
      figures.push_back(report::report_run_recording(
          path, p.at("index").get<int>(),
          use_window != 0 ? analysis::WindowMode::markers : analysis::WindowMode::none, paths.size() > 1,
          lookup, headline));
      const fs::path report_path = fs::path(path.string() + ".report") / "report.json";
      out["reports"].push_back({{"recording", path.string()},
                                {"report_path", report_path.string()},
                                {"report", report::load_report(report_path)},
                                {"headline", headline.str()}});
    }
    // Several GPUs: the summary `run` prints and writes as gpus.json (docs/method.md#several-gpus).
    if (figures.size() > 1) {
      const report::GpusSummary summary = report::summarise_gpus(std::move(figures));
      out["gpus_text"] = report::gpus_summary_text(summary);
      out["gpus"] = report::gpus_summary_json(summary);
      if (gpus_json_path && *gpus_json_path)
        core::write_file_atomically(gpus_json_path, report::gpus_summary_json(summary).dump(2) + "\n");
    }
    return capi::to_c(capi::dump(out));
  });
}

}  // extern "C"
