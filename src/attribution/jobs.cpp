// docs/attribution.md#job-records: how each figure of a job record is made.
#include "diescope/attribution/jobs.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "diescope/collect/unit_tables.hpp"

namespace diescope::attribution {
namespace {

constexpr std::size_t kRecordsKept = 4096;  // per GPU: 68 hours of one-minute records

std::string slot_key(int gpu, std::optional<unsigned> instance) {
  return instance ? fmt::format("gpu{}/gi{}", gpu, *instance) : fmt::format("gpu{}", gpu);
}

void merge_holder(Holder& into, const Holder& from) {
  for (std::size_t i = 0; i < from.pids.size(); ++i) {
    if (std::find(into.pids.begin(), into.pids.end(), from.pids[i]) != into.pids.end()) continue;
    into.pids.push_back(from.pids[i]);
    into.commands.push_back(i < from.commands.size() ? from.commands[i] : std::string());
  }
  for (const std::string& n : from.notes)
    if (std::find(into.notes.begin(), into.notes.end(), n) == into.notes.end()) into.notes.push_back(n);
  // A later poll may name what an earlier one could not (the kubelet answered meanwhile).
  if (into.pod.empty() && !from.pod.empty()) {
    into.pod = from.pod;
    into.pod_namespace = from.pod_namespace;
    into.container = from.container;
  }
}

}  // namespace

std::string_view to_string(ChipSourceSeen source) {
  switch (source) {
    case ChipSourceSeen::none:
      return "none";
    case ChipSourceSeen::pm:
      return "pm";
    case ChipSourceSeen::gpm:
      return "gpm";
    case ChipSourceSeen::both:
      return "pm+gpm";
  }
  return "none";
}

JobTracker::JobTracker(recording::TimeNs wait_for_records_ns) : wait_ns_(wait_for_records_ns) {}

void JobTracker::observe(int gpu_index, const std::string& gpu_uuid, std::optional<unsigned> gpu_instance,
                         const std::string& instance_profile, recording::TimeNs now_ns,
                         const std::vector<HolderShare>& holders, double energy_mj,
                         const std::string& energy_reason) {
  Slot& slot = slots_[slot_key(gpu_index, gpu_instance)];
  const bool have_previous = slot.polled && now_ns > slot.last_poll_ns;
  const double dt_s = have_previous ? static_cast<double>(now_ns - slot.last_poll_ns) / 1e9 : 0;
  double delta_j = kNaN;
  if (std::isfinite(energy_mj) && std::isfinite(slot.last_energy_mj) && energy_mj >= slot.last_energy_mj)
    delta_j = (energy_mj - slot.last_energy_mj) / 1000.0;
  const bool shared_now = holders.size() > 1;

  std::set<std::string> present;
  for (const HolderShare& hs : holders) {
    present.insert(hs.holder.key);
    auto it = slot.open.find(hs.holder.key);
    if (it == slot.open.end()) {
      Open o;
      o.job.holder = hs.holder;
      o.job.gpu_index = gpu_index;
      o.job.gpu_uuid = gpu_uuid;
      o.job.gpu_instance_id = gpu_instance;
      o.job.gpu_instance_profile = instance_profile;
      o.job.start_ns = now_ns;
      o.job.energy_j = std::isfinite(energy_mj) ? 0.0 : kNaN;
      if (!std::isfinite(energy_mj)) o.job.energy_reason = energy_reason;
      o.job.shared = shared_now;
      o.last_seen_ns = now_ns;
      slot.open.emplace(hs.holder.key, std::move(o));
      continue;
    }
    Open& o = it->second;
    merge_holder(o.job.holder, hs.holder);
    // The interval since the previous poll is credited to a holder listed at both ends.
    if (have_previous && o.last_seen_ns == slot.last_poll_ns) {
      o.held_s += dt_s;
      o.job.gpu_seconds += hs.share * dt_s;
      if (std::isfinite(o.job.energy_j)) {
        if (std::isfinite(delta_j)) {
          o.job.energy_j += hs.share * delta_j;
        } else {
          o.job.energy_j = kNaN;
          o.job.energy_reason = std::isfinite(energy_mj) || energy_reason.empty()
                                    ? "NVML's energy counter could not be read at a poll during the job"
                                    : energy_reason;
        }
      }
    }
    o.job.shared = o.job.shared || shared_now;
    o.last_seen_ns = now_ns;
  }
  for (auto it = slot.open.begin(); it != slot.open.end();) {
    if (present.count(it->first)) {
      ++it;
      continue;
    }
    Open& o = it->second;
    o.job.end_ns = o.last_seen_ns;
    o.job.mean_share = o.held_s > 0 ? o.job.gpu_seconds / o.held_s : 1.0;
    ended_.emplace_back(o.last_seen_ns, std::move(o.job));
    it = slot.open.erase(it);
  }
  slot.polled = true;
  slot.last_poll_ns = now_ns;
  slot.last_energy_mj = energy_mj;
}

void JobTracker::add_record(const agent::AgentRecord& record) {
  auto& list = records_[record.gpu_index];
  list.push_back(record);
  while (list.size() > kRecordsKept) list.pop_front();
}

std::size_t JobTracker::open_jobs() const {
  std::size_t n = 0;
  for (const auto& [key, slot] : slots_) n += slot.open.size();
  return n;
}

void JobTracker::finish_figures(JobRecord& job) const {
  if (job.shared)
    job.notes.emplace_back(
        "other holders shared this GPU: GPU-seconds, energy and GPU-seconds stranded are split by NVML's "
        "per-process utilisation samples, which is approximate (docs/attribution.md#shared-gpus)");
  if (job.gpu_instance_id) {
    job.notes.emplace_back(
        "under MIG the agent's chip figures and GPU-Util are the whole GPU's, so they are left out of a GPU "
        "instance's job (docs/attribution.md#mig)");
    return;
  }
  const auto found = records_.find(job.gpu_index);
  if (found == records_.end()) {
    job.notes.emplace_back("no agent record covers the job's time: it has no figures");
    return;
  }
  const double duration_s = static_cast<double>(job.end_ns - job.start_ns) / 1e9;
  double g_w = 0, g_sum = 0, d_w = 0, d_sum = 0, gap_w = 0, gap_sum = 0, stranded = 0, stranded_j = 0;
  bool any_stranded = false, any_stranded_j = false, pm = false, gpm = false;
  std::map<std::string, double> limiting;
  const std::string gpm_table = collect::gpm_unit_table().name;
  recording::TimeNs covered_ns = 0;  // summed in whole ns, so full coverage is exactly 100%
  for (const agent::AgentRecord& r : found->second) {
    double w = 0;
    recording::TimeNs w_ns = 0;
    if (duration_s > 0) {
      const recording::TimeNs a = std::max(r.period_start_ns, job.start_ns);
      const recording::TimeNs b = std::min(r.period_end_ns, job.end_ns);
      if (b <= a) continue;
      w_ns = b - a;
      w = static_cast<double>(w_ns) / 1e9;
    } else {
      // A job seen at one poll only takes the record its moment falls in, whole.
      if (job.start_ns < r.period_start_ns || job.start_ns > r.period_end_ns) continue;
      w = 1;
    }
    if (std::isfinite(r.gpu_util_pct)) {
      g_w += w;
      g_sum += w * r.gpu_util_pct;
    }
    if (std::isfinite(r.die_util_pct)) {
      d_w += w;
      covered_ns += w_ns;
      d_sum += w * r.die_util_pct;
      (r.unit_table == gpm_table ? gpm : pm) = true;
      if (r.limiting_unit) limiting[*r.limiting_unit] += w;
    }
    if (std::isfinite(r.gap_pct)) {
      gap_w += w;
      gap_sum += w * r.gap_pct;
    }
    if (std::isfinite(r.stranded_pct) && duration_s > 0) {
      any_stranded = true;
      stranded += w * job.mean_share * r.stranded_pct / 100.0;
    }
    // docs/energy.md#in-job-records: the overlap at the record's mean power, its share, and the part of
    // the record's chip-sampled energy that was stranded.
    if (std::isfinite(r.mean_power_w) && std::isfinite(r.stranded_energy_pct) && duration_s > 0) {
      any_stranded_j = true;
      stranded_j += w * job.mean_share * r.mean_power_w * r.stranded_energy_pct / 100.0;
    }
  }
  job.gpu_util_pct = g_w > 0 ? g_sum / g_w : kNaN;
  job.die_util_pct = d_w > 0 ? d_sum / d_w : kNaN;
  job.gap_pct = gap_w > 0 ? gap_sum / gap_w : kNaN;
  job.stranded_gpu_seconds = any_stranded ? stranded : (duration_s > 0 ? kNaN : 0.0);
  job.stranded_energy_j = any_stranded_j ? stranded_j : (duration_s > 0 ? kNaN : 0.0);
  job.coverage_pct = duration_s > 0 ? std::min(100.0, 100.0 * static_cast<double>(covered_ns) /
                                                          static_cast<double>(job.end_ns - job.start_ns))
                                    : (d_w > 0 ? 100.0 : 0.0);
  job.chip_source = pm && gpm ? ChipSourceSeen::both
                    : pm      ? ChipSourceSeen::pm
                    : gpm     ? ChipSourceSeen::gpm
                              : ChipSourceSeen::none;
  double best = 0;
  for (const auto& [unit, w] : limiting) {
    if (w > best) {
      best = w;
      job.limiting_unit = unit;
    }
  }
  if (d_w == 0) job.notes.emplace_back("no agent record with a chip figure covers the job's time");
}

void JobTracker::link_capture(int gpu_index, recording::TimeNs start_ns, const std::string& folder) {
  for (auto& [key, slot] : slots_)
    for (auto& [hk, o] : slot.open)
      if (o.job.gpu_index == gpu_index) o.job.captures.push_back(folder);
  for (auto& [ended_at, job] : ended_)
    if (job.gpu_index == gpu_index && job.end_ns >= start_ns) job.captures.push_back(folder);
}

std::vector<JobRecord> JobTracker::take_finished(recording::TimeNs now_ns, bool all) {
  if (all) {
    for (auto& [key, slot] : slots_) {
      for (auto& [hk, o] : slot.open) {
        o.job.end_ns = o.last_seen_ns;
        o.job.mean_share = o.held_s > 0 ? o.job.gpu_seconds / o.held_s : 1.0;
        o.job.notes.emplace_back("still on the GPU when diescope stopped: the job ends at the last poll");
        ended_.emplace_back(o.last_seen_ns, std::move(o.job));
      }
      slot.open.clear();
    }
  }
  std::vector<JobRecord> out;
  for (auto it = ended_.begin(); it != ended_.end();) {
    const JobRecord& job = it->second;
    bool covered = false;
    if (auto r = records_.find(job.gpu_index); r != records_.end())
      covered = std::any_of(r->second.begin(), r->second.end(),
                            [&job](const agent::AgentRecord& a) { return a.period_end_ns >= job.end_ns; });
    if (all || covered || job.gpu_instance_id || now_ns - it->first > wait_ns_) {
      JobRecord done = std::move(it->second);
      if (!covered && !done.gpu_instance_id)
        done.notes.emplace_back(
            "written before an agent record covered its end: its figures cover part of it");
      finish_figures(done);
      out.push_back(std::move(done));
      it = ended_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

void sort_most_wasteful(std::vector<JobRecord>& jobs) {
  std::stable_sort(jobs.begin(), jobs.end(), [](const JobRecord& a, const JobRecord& b) {
    const bool fa = std::isfinite(a.stranded_gpu_seconds), fb = std::isfinite(b.stranded_gpu_seconds);
    if (fa != fb) return fa;
    if (fa && a.stranded_gpu_seconds != b.stranded_gpu_seconds)
      return a.stranded_gpu_seconds > b.stranded_gpu_seconds;
    return a.end_ns > b.end_ns;
  });
}

}  // namespace diescope::attribution
