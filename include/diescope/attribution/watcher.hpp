// Attribution's live side (docs/attribution.md#how-it-runs): on its own thread, every poll, it lists
// each GPU's processes (and MIG instances), names their holders, reads the energy counter and the
// per-process utilisation, and keeps the job tracker. Whoever samples only reads its latest snapshot,
// so neither /proc nor a slow kubelet ever holds up sampling.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "diescope/agent/record.hpp"
#include "diescope/attribution/jobs.hpp"
#include "diescope/attribution/kubelet.hpp"
#include "diescope/attribution/resolver.hpp"
#include "diescope/collect/gpm.hpp"
#include "diescope/collect/nvml.hpp"

namespace diescope::collect {
class GpuTelemetry;  // live_collection.hpp
}  // namespace diescope::collect

namespace diescope::attribution {

struct WatchSettings {
  std::vector<int> gpus;  // empty: every GPU NVML lists
  std::filesystem::path proc_root = "/proc";
  bool kubelet = true;  // false: never ask the kubelet (pod UIDs from cgroups only)
  std::string kubelet_socket = kKubeletSocket;
  std::chrono::milliseconds kubelet_timeout = kKubeletTimeout;
  std::chrono::milliseconds kubelet_refresh = kKubeletRefresh;
  std::vector<Label> labels;
  std::vector<std::string> label_notes;
  double poll_ms = 1000;
  // diescope's own processes (this one and any diescope's counter sampler) hold the GPU too, but are
  // not anyone's work: left out (docs/attribution.md#who-holds-a-gpu). `run`'s command, its child, is.
  bool skip_own = true;
  recording::TimeNs job_wait_ns = 180 * recording::kNsPerSecond;
};

// The holders of one GPU, or of one GPU instance under MIG.
struct GpuHolders {
  int gpu_index = -1;
  std::string uuid;
  std::optional<unsigned> gpu_instance_id;
  std::string gpu_instance_profile;
  std::vector<HolderShare> holders;
  bool split_approximate = false;  // several holders: shares from per-process utilisation samples
  std::string note;                // why the list is missing or the split is even
  // MIG: this GPU instance's units from GPM's MIG sampling over the last poll (docs/attribution.md#mig).
  std::vector<collect::GpmUnitReading> instance_units;
};

struct WatchSnapshot {
  recording::TimeNs at_ns = 0;
  std::vector<GpuHolders> gpus;
  std::vector<std::string> notes;  // the kubelet's state, the labels' changes, MIG's limits
};

// The report.json "holders" block of one GPU from what a watch saw (docs/report.md#holders), and the
// line under the terminal headline ("held by: ...", docs/attribution.md#labels-everywhere).
nlohmann::json holders_json(const std::vector<GpuHolders>& seen, int gpu_index,
                            const std::vector<std::string>& notes);
std::string holders_line(const std::vector<GpuHolders>& seen, int gpu_index);

class Watcher {
 public:
  // Alone (`run`, which keeps no live session): each GPU of `settings.gpus` read through a telemetry
  // of its own, opened as the live session opens one (docs/live-collection.md#who-reads-it).
  Watcher(std::shared_ptr<const collect::Nvml> nvml, WatchSettings settings);
  // Beside a live session (the agent, `top`): its GPUs read through the session's telemetry, which
  // must outlive the watcher (`settings.gpus` is not read: the session's GPUs are the ones). A
  // telemetry without an NVML device (a stand-in) is left out.
  Watcher(const std::vector<const collect::GpuTelemetry*>& gpus, WatchSettings settings);
  ~Watcher();
  Watcher(const Watcher&) = delete;
  Watcher& operator=(const Watcher&) = delete;

  // One poll at `now` (the thread calls it every poll_ms; tests call it directly).
  void poll(recording::TimeNs now);
  // Starts and stops the polling thread (stop joins; the destructor stops).
  void start();
  void stop();

  WatchSnapshot snapshot() const;
  // Every holder seen since the start, per GPU (or instance), for `run`'s report.
  std::vector<GpuHolders> seen() const;
  // Adds who held each record's GPU over its period, and keeps the records for the job figures.
  void annotate(std::vector<agent::AgentRecord>& records);
  // Finished jobs (all open jobs too when `all`).
  std::vector<JobRecord> take_finished(recording::TimeNs now, bool all = false);
  // Links a capture folder to the jobs on a GPU (JobTracker::link_capture).
  void link_capture(int gpu_index, recording::TimeNs start_ns, const std::string& folder);
  long polls() const { return polls_; }

 private:
  struct Device;
  void add_device(const collect::GpuTelemetry& telemetry);
  void note_once(const std::string& text);
  std::shared_ptr<const collect::Nvml> nvml_;  // alone: the NVML its own telemetry reads; else null
  WatchSettings settings_;
  std::vector<std::unique_ptr<collect::GpuTelemetry>> own_;  // alone: each GPU's telemetry
  std::vector<Device> devices_;
  Resolver resolver_;
  std::unique_ptr<KubeletWatch> kubelet_;
  mutable std::mutex mutex_;  // guards everything below
  WatchSnapshot snapshot_;
  std::vector<GpuHolders> seen_;
  std::vector<std::pair<recording::TimeNs, WatchSnapshot>> history_;  // for annotate(), bounded
  JobTracker tracker_;
  std::vector<std::string> notes_;
  std::atomic<long> polls_{0};
  std::atomic<bool> stop_{false};
  // The poll thread sleeps on this until its next poll or stop() (docs/agent.md#wake-ups).
  std::mutex sleep_mutex_;
  std::condition_variable sleep_cv_;
  std::thread thread_;
};

}  // namespace diescope::attribution
