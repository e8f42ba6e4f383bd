// docs/attribution.md#how-it-runs
#include "diescope/attribution/watcher.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "diescope/collect/live_collection.hpp"
#include "diescope/core/clock.hpp"

namespace diescope::attribution {
namespace {

constexpr std::size_t kHistoryKept = 7200;  // polls kept for annotate(): two hours at one a second
constexpr int kMigCheckEvery = 60;          // polls between MIG mode checks

void merge_into(std::vector<GpuHolders>& seen, const GpuHolders& now) {
  auto it = std::find_if(seen.begin(), seen.end(), [&now](const GpuHolders& g) {
    return g.gpu_index == now.gpu_index && g.gpu_instance_id == now.gpu_instance_id;
  });
  if (it == seen.end()) {
    seen.push_back(now);
    return;
  }
  it->split_approximate = it->split_approximate || now.split_approximate;
  for (const HolderShare& hs : now.holders) {
    auto h = std::find_if(it->holders.begin(), it->holders.end(),
                          [&hs](const HolderShare& e) { return e.holder.key == hs.holder.key; });
    if (h == it->holders.end()) {
      it->holders.push_back(hs);
      continue;
    }
    for (unsigned pid : hs.holder.pids)
      if (std::find(h->holder.pids.begin(), h->holder.pids.end(), pid) == h->holder.pids.end())
        h->holder.pids.push_back(pid);
    if (h->holder.pod.empty()) h->holder = hs.holder;
  }
}

}  // namespace

struct Watcher::Device {
  const collect::NvmlDevice* device;  // the telemetry's (docs/live-collection.md#who-reads-it)
  std::string uuid;
  std::uint64_t last_util_us = 0;
  collect::MigState mig;
  int polls_since_mig_check = kMigCheckEvery;
  std::map<unsigned, std::unique_ptr<collect::GpmSampler>> instance_gpm;  // per GPU instance
  std::map<unsigned, std::string> instance_gpm_why;
};

nlohmann::json holders_json(const std::vector<GpuHolders>& seen, int gpu_index,
                            const std::vector<std::string>& notes) {
  nlohmann::json entries = nlohmann::json::array();
  bool approximate = false;
  for (const GpuHolders& g : seen) {
    if (g.gpu_index != gpu_index) continue;
    approximate = approximate || g.split_approximate;
    for (const HolderShare& hs : g.holders) {
      nlohmann::json labels = nlohmann::json::object();
      for (const Label& l : holder_labels(hs.holder)) labels[l.key] = l.value;
      nlohmann::json entry = {{"kind", std::string(to_string(hs.holder.kind))},
                              {"key", hs.holder.key},
                              {"name", describe(hs.holder)},
                              {"labels", labels},
                              {"pids", hs.holder.pids},
                              {"commands", hs.holder.commands},
                              {"notes", hs.holder.notes},
                              {"gpu_instance_id", g.gpu_instance_id ? nlohmann::json(*g.gpu_instance_id)
                                                                    : nlohmann::json(nullptr)},
                              {"gpu_instance_profile", g.gpu_instance_profile}};
      if (!g.gpu_instance_id) entry["gpu_instance_id_reason"] = "MIG is off on this GPU";
      entries.push_back(std::move(entry));
    }
  }
  return {{"entries", entries}, {"split_approximate", approximate}, {"notes", notes}};
}

std::string holders_line(const std::vector<GpuHolders>& seen, int gpu_index) {
  std::string names;
  std::size_t n = 0;
  for (const GpuHolders& g : seen) {
    if (g.gpu_index != gpu_index) continue;
    for (const HolderShare& hs : g.holders) {
      ++n;
      if (n > 4) continue;  // a line, not a list: the report holds them all
      std::string name = describe(hs.holder);
      for (char& c : name)
        if (static_cast<unsigned char>(c) < 0x20) c = ' ';
      names += (names.empty() ? "" : ", ") + name;
    }
  }
  if (n == 0) return "held by: no process NVML listed\n";
  if (n > 4) names += fmt::format(" and {} more", n - 4);
  return "held by: " + names + "\n";
}

Watcher::Watcher(std::shared_ptr<const collect::Nvml> nvml, WatchSettings settings)
    : nvml_(std::move(nvml)),
      settings_(std::move(settings)),
      resolver_(settings_.proc_root, settings_.labels),
      tracker_(settings_.job_wait_ns) {
  std::vector<int> gpus = settings_.gpus;
  if (gpus.empty())
    for (int i = 0; i < nvml_->device_count(); ++i) gpus.push_back(i);
  for (int index : gpus) {
    // An index NVML does not list is left to the command's own GPU check, which names it with its fix.
    if (index < 0 || index >= nvml_->device_count()) continue;
    // The watcher reads no GPU-Util samples: their start is never used.
    own_.push_back(std::make_unique<collect::NvmlTelemetry>(nvml_, index, 0));
    add_device(*own_.back());
  }
  notes_ = settings_.label_notes;
  if (settings_.kubelet)
    kubelet_ = std::make_unique<KubeletWatch>(settings_.kubelet_socket, settings_.kubelet_timeout,
                                              settings_.kubelet_refresh);
}

Watcher::Watcher(const std::vector<const collect::GpuTelemetry*>& gpus, WatchSettings settings)
    : settings_(std::move(settings)),
      resolver_(settings_.proc_root, settings_.labels),
      tracker_(settings_.job_wait_ns) {
  for (const collect::GpuTelemetry* telemetry : gpus)
    if (telemetry != nullptr) add_device(*telemetry);
  notes_ = settings_.label_notes;
  if (settings_.kubelet)
    kubelet_ = std::make_unique<KubeletWatch>(settings_.kubelet_socket, settings_.kubelet_timeout,
                                              settings_.kubelet_refresh);
}

void Watcher::add_device(const collect::GpuTelemetry& telemetry) {
  const collect::NvmlDevice* device = telemetry.nvml_device();
  if (device == nullptr) return;
  devices_.push_back(Device{device, telemetry.identity().uuid, 0, {}, kMigCheckEvery, {}, {}});
}

Watcher::~Watcher() {
  stop();
}

void Watcher::start() {
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] {
    const auto step = std::chrono::nanoseconds(static_cast<long long>(settings_.poll_ms * 1e6));
    auto next = std::chrono::steady_clock::now();
    while (!stop_) {
      poll(core::realtime_ns());
      next += step;
      const auto now = std::chrono::steady_clock::now();
      if (next < now) next = now;  // behind: skip, never burst
      // One wake a poll: the thread sleeps until the next poll is due or stop() wakes it
      // (docs/agent.md#wake-ups).
      std::unique_lock lock(sleep_mutex_);
      sleep_cv_.wait_until(lock, next, [this] { return stop_.load(); });
    }
  });
}

void Watcher::stop() {
  {
    const std::lock_guard lock(sleep_mutex_);
    stop_ = true;
  }
  sleep_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Watcher::note_once(const std::string& text) {
  if (std::find(notes_.begin(), notes_.end(), text) == notes_.end()) notes_.push_back(text);
}

void Watcher::poll(recording::TimeNs now) {
  const std::shared_ptr<const PodResources> pods = kubelet_ ? kubelet_->snapshot() : nullptr;
  WatchSnapshot snap;
  snap.at_ns = now;
  std::vector<unsigned> alive;
  bool any_pod = false;
  struct Observation {
    GpuHolders holders;
    double energy_mj;
    std::string energy_reason;
  };
  std::vector<Observation> observations;
  for (Device& d : devices_) {
    if (++d.polls_since_mig_check >= kMigCheckEvery) {
      d.mig = d.device->mig();
      d.polls_since_mig_check = 0;
    }
    const auto list = d.device->process_list();
    if (!list) {
      GpuHolders g;
      g.gpu_index = d.device->index();
      g.uuid = d.uuid;
      g.note = "NVML could not list the processes on this GPU: no holders this poll";
      snap.gpus.push_back(g);
      continue;
    }
    struct Group {
      std::optional<unsigned> instance;
      std::string profile;
      std::vector<std::string> ids;
      std::vector<unsigned> pids;
    };
    std::vector<Group> groups;
    if (d.mig.mode == collect::MigState::Mode::enabled) {
      for (const collect::MigInstance& m : d.mig.instances)
        groups.push_back({m.gpu_instance_id, m.profile, {d.uuid, m.uuid}, {}});
      for (const collect::NvmlProcess& p : *list)
        for (Group& g : groups)
          if (g.instance == p.gpu_instance_id) g.pids.push_back(p.pid);
      note_once(
          "MIG is on: PM sampling is device-wide, so run, agent and top give the whole GPU's chip figures; "
          "each "
          "GPU instance has its own row from GPM's MIG sampling and its holders, but no GPU-Util or energy "
          "of "
          "its own (docs/attribution.md#mig)");
    } else {
      Group g;
      g.ids = {d.uuid};
      for (const collect::NvmlProcess& p : *list) g.pids.push_back(p.pid);
      groups.push_back(std::move(g));
    }
    std::size_t most_pids = 0;
    for (Group& g : groups) {
      if (settings_.skip_own) {
        const auto self = static_cast<unsigned>(::getpid());
        std::erase_if(g.pids, [&](unsigned pid) {
          return pid == self || read_command(settings_.proc_root, pid) == kSamplerCommand;
        });
      }
      std::sort(g.pids.begin(), g.pids.end());
      g.pids.erase(std::unique(g.pids.begin(), g.pids.end()), g.pids.end());
      most_pids = std::max(most_pids, g.pids.size());
    }
    // NVML's two dear reads, only where a figure uses them (docs/attribution.md#how-it-runs): the
    // energy counter (3.4 to 3.8 ms of CPU a read on the H200) only while some process holds the GPU,
    // since a job's energy is the counter's rise between two polls that both list it; the
    // per-process utilisation only where two or more processes could share the GPU, since one holder
    // takes it all. A poll that skips it moves the mark to its own time, so the next read still
    // covers the time since the previous poll.
    const collect::NvmlReading energy =
        most_pids > 0 ? d.device->total_energy_mj() : collect::NvmlReading{kNaN, "no process held the GPU"};
    // Per-process SM utilisation since the previous poll, to split a shared GPU.
    std::map<unsigned, double> sm_by_pid;
    if (most_pids > 1) {
      const collect::ProcessUtilRead util = d.device->process_utilization(d.last_util_us);
      if (util.status == collect::ProcessUtilRead::Status::ok) {
        for (const auto& s : util.samples) sm_by_pid[s.pid] += s.sm_pct;
        d.last_util_us = util.newest_us;
      }
    } else {
      d.last_util_us = static_cast<std::uint64_t>(std::max<recording::TimeNs>(0, now) / 1000);
    }
    for (Group& g : groups) {
      alive.insert(alive.end(), g.pids.begin(), g.pids.end());
      Resolved r = resolver_.resolve(g.pids, g.ids, pods.get());
      if (r.kubelet_stale && kubelet_) kubelet_->refresh_soon();
      GpuHolders gh;
      gh.gpu_index = d.device->index();
      gh.uuid = d.uuid;
      gh.gpu_instance_id = g.instance;
      gh.gpu_instance_profile = g.profile;
      double total = 0;
      std::vector<double> sm(r.holders.size(), 0);
      for (std::size_t i = 0; i < r.holders.size(); ++i) {
        for (unsigned pid : r.holders[i].pids)
          if (auto it = sm_by_pid.find(pid); it != sm_by_pid.end()) sm[i] += it->second;
        total += sm[i];
        any_pod = any_pod || r.holders[i].kind == HolderKind::pod;
      }
      if (r.holders.size() > 1) {
        gh.split_approximate = true;
        if (!(total > 0))
          gh.note = "no per-process utilisation samples since the previous poll: the GPU is split evenly";
      }
      for (std::size_t i = 0; i < r.holders.size(); ++i) {
        const double share = r.holders.size() == 1 ? 1.0
                             : total > 0           ? sm[i] / total
                                                   : 1.0 / static_cast<double>(r.holders.size());
        gh.holders.push_back(HolderShare{std::move(r.holders[i]), share});
      }
      // Under MIG each GPU instance gets its own GPM row (nvmlGpmMigSampleGet).
      if (g.instance) {
        auto& sampler = d.instance_gpm[*g.instance];
        if (!sampler && !d.instance_gpm_why.count(*g.instance)) {
          try {
            sampler = collect::open_gpm(*d.device, now, g.instance);
          } catch (const std::exception& e) {
            d.instance_gpm_why[*g.instance] = e.what();
          }
        }
        if (sampler) {
          if (auto s = sampler->sample(now)) gh.instance_units = s->units;
        } else {
          gh.note = "GPM cannot read this GPU instance: " + d.instance_gpm_why[*g.instance];
        }
      }
      const bool instance = g.instance.has_value();
      observations.push_back(Observation{
          gh, instance ? kNaN : energy.value,
          instance ? "NVML's energy counter is the whole GPU's: under MIG it is not split by GPU instance"
                   : "NVML's energy counter could not be read: " + energy.why});
      snap.gpus.push_back(std::move(gh));
    }
  }
  resolver_.forget_except(alive);
  if (any_pod && pods && pods->status != PodResources::Status::ok && !pods->note.empty())
    snap.notes.push_back(pods->note);

  std::lock_guard lock(mutex_);
  for (const Observation& o : observations)
    tracker_.observe(o.holders.gpu_index, o.holders.uuid, o.holders.gpu_instance_id,
                     o.holders.gpu_instance_profile, now, o.holders.holders, o.energy_mj, o.energy_reason);
  for (const GpuHolders& g : snap.gpus) merge_into(seen_, g);
  snap.notes.insert(snap.notes.begin(), notes_.begin(), notes_.end());
  snapshot_ = snap;
  history_.emplace_back(now, std::move(snap));
  if (history_.size() > kHistoryKept)
    history_.erase(history_.begin(), history_.begin() + (history_.size() - kHistoryKept));
  ++polls_;
}

WatchSnapshot Watcher::snapshot() const {
  std::lock_guard lock(mutex_);
  return snapshot_;
}

std::vector<GpuHolders> Watcher::seen() const {
  std::lock_guard lock(mutex_);
  return seen_;
}

void Watcher::annotate(std::vector<agent::AgentRecord>& records) {
  std::lock_guard lock(mutex_);
  for (agent::AgentRecord& r : records) {
    std::vector<GpuHolders> during;
    for (const auto& [at, snap] : history_) {
      if (at < r.period_start_ns || at > r.period_end_ns) continue;
      for (const GpuHolders& g : snap.gpus)
        if (g.gpu_index == r.gpu_index) merge_into(during, g);
    }
    r.holders.clear();
    for (const GpuHolders& g : during) {
      for (const HolderShare& hs : g.holders) {
        agent::RecordHolder rh;
        rh.kind = std::string(to_string(hs.holder.kind));
        rh.key = hs.holder.key;
        rh.name = describe(hs.holder);
        for (const Label& l : holder_labels(hs.holder)) rh.labels.emplace_back(l.key, l.value);
        if (g.gpu_instance_id) {
          rh.labels.emplace_back("GPU_I_ID", std::to_string(*g.gpu_instance_id));
          rh.labels.emplace_back("GPU_I_PROFILE", g.gpu_instance_profile);
        }
        rh.pids = hs.holder.pids;
        r.holders.push_back(std::move(rh));
      }
    }
    tracker_.add_record(r);
  }
}

void Watcher::link_capture(int gpu_index, recording::TimeNs start_ns, const std::string& folder) {
  std::lock_guard lock(mutex_);
  tracker_.link_capture(gpu_index, start_ns, folder);
}

std::vector<JobRecord> Watcher::take_finished(recording::TimeNs now, bool all) {
  std::lock_guard lock(mutex_);
  return tracker_.take_finished(now, all);
}

}  // namespace diescope::attribution
