// The host probes in the agent, through metrics::Pipeline (docs/agent.md#host-metrics).
#include "diescope/agent/host_metrics.hpp"

#include <cmath>
#include <limits>

#include "diescope/metrics/postprocess.hpp"

namespace diescope::agent {

HostMetrics::HostMetrics(collect::HostProbeOptions options) : probes_(std::move(options)) {}

void HostMetrics::set_proc_root(std::filesystem::path proc) {
  probes_.set_proc_root(std::move(proc));
}

void HostMetrics::read(recording::TimeNs now_ns, recording::TimeNs mono_ns) {
  // No process tree: the agent measures the whole host, not a command (root pid 0).
  const collect::HostBatch batch = probes_.read(now_ns, mono_ns, 0);
  for (const recording::HostStream& s : batch.streams) streams_[s.id] = s.descriptor;
  for (const recording::HostValue& v : batch.sample.values) {
    const auto d = streams_.find(v.id);
    if (d == streams_.end()) continue;
    if (metrics::value_covers_interval(d->second)) {
      // A rate covers the time since its stream's previous read; without one (a stream new in this
      // read) it is a point, as the report takes it.
      const auto prev = previous_.find(v.id);
      if (prev != previous_.end() && prev->second < now_ns)
        pending_.push_back({v.id, prev->second, now_ns, v.value});
      else
        pending_.push_back({v.id, now_ns, now_ns, v.value});
    } else {
      pending_.push_back({v.id, now_ns, now_ns, v.value});
    }
    previous_[v.id] = now_ns;
  }
  if (published_to_ == 0) published_to_ = now_ns;
}

const std::vector<HostFigure>& HostMetrics::publish(recording::TimeNs now_ns) {
  if (pending_.empty() || now_ns <= published_to_) return figures_;
  // One bin over the span since the last publish (a span that reaches back before it counts its
  // overlap only, as the report's bins do).
  // The bin ends 1 ns after now, so a level read at now counts in it; the next publish starts there.
  metrics::Grid grid;
  grid.origin_ns = published_to_;
  grid.step_ns = now_ns + 1 - published_to_;
  grid.bins = 1;
  const metrics::Expected<metrics::Pipeline> made = metrics::Pipeline::make(grid);
  if (!made) return figures_;
  metrics::Pipeline pipeline = *made;
  std::map<std::int64_t, std::size_t> id_in_pipeline;
  std::vector<std::int64_t> stream_of;
  for (const Pending& p : pending_) {
    if (id_in_pipeline.count(p.id) != 0) continue;
    const metrics::Expected<std::size_t> id = pipeline.add(streams_.at(p.id));
    if (!id) continue;
    id_in_pipeline[p.id] = *id;
    stream_of.push_back(p.id);
  }
  for (const Pending& p : pending_) {
    const auto it = id_in_pipeline.find(p.id);
    if (it == id_in_pipeline.end()) continue;
    if (p.t1 > p.t0)
      pipeline.span(it->second, std::max(p.t0, published_to_), p.t1, p.value);
    else
      pipeline.point(it->second, p.t0, p.value);
  }
  const std::vector<metrics::EnvelopeSeries> out = pipeline.finish();
  for (std::size_t i = 0; i < out.size() && i < stream_of.size(); ++i) {
    const metrics::Envelope& e = out[i].envelope;
    if (e.mean.empty() || std::isnan(e.mean[0])) continue;
    HostFigure f{out[i].descriptor, e.min[0], e.mean[0], e.max[0]};
    const auto at = figure_of_.find(stream_of[i]);
    if (at == figure_of_.end()) {
      figure_of_[stream_of[i]] = figures_.size();
      figures_.push_back(std::move(f));
    } else {
      figures_[at->second] = std::move(f);
    }
  }
  pending_.clear();
  published_to_ = now_ns + 1;
  return figures_;
}

}  // namespace diescope::agent
