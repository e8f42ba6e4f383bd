#include "diescope/recording/host_streams.hpp"

#include <unordered_map>

namespace diescope::recording {

const HostSeries* HostData::find(std::string_view name, const metrics::Scope& scope) const {
  for (const HostSeries& s : series)
    if (s.descriptor.scope == scope && s.descriptor.full_name() == name) return &s;
  return nullptr;
}

std::vector<const HostSeries*> HostData::all_of(std::string_view name) const {
  std::vector<const HostSeries*> out;
  for (const HostSeries& s : series)
    if (s.descriptor.full_name() == name) out.push_back(&s);
  return out;
}

const HostTask* HostData::task(std::int64_t pid) const {
  // The latest: a pid's name changes when it execs.
  for (std::size_t i = tasks.size(); i-- > 0;)
    if (tasks[i].pid == pid) return &tasks[i];
  return nullptr;
}

std::string HostData::scope_label(const metrics::Scope& scope) const {
  if (scope.kind == metrics::Scope::Kind::process) {
    if (const HostTask* t = task(scope.id); t != nullptr && !t->name.empty())
      return t->name + " (pid " + std::to_string(scope.id) + ")";
  }
  return scope.label();
}

HostData load_host_data(const Recording& source, TimeNs from_ns, TimeNs to_ns) {
  HostData data;
  data.interval_ms = source.meta().host_interval_ms;
  data.tasks = source.side().host_tasks;
  std::unordered_map<std::int64_t, std::size_t> index;
  for (const HostStream& h : source.side().host_streams) {
    index.emplace(h.id, data.series.size());
    data.series.push_back(HostSeries{h.id, h.descriptor, {}});
  }
  if (data.series.empty()) return data;
  auto cursor = source.stream<HostSample>();
  HostSample sample;
  while (cursor->next(sample)) {
    if (sample.ts_ns < from_ns) continue;
    if (sample.ts_ns >= to_ns) break;
    for (const HostValue& v : sample.values) {
      const auto it = index.find(v.id);
      if (it != index.end()) data.series[it->second].points.push_back(metrics::Point{sample.ts_ns, v.value});
    }
  }
  return data;
}

}  // namespace diescope::recording
