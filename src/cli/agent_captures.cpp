// docs/agent.md#triggered-captures: the capture manager wired into `diescope agent`.
#include "agent_captures.hpp"

#include <algorithm>
#include <csignal>

#include "diescope/attribution/agent_hook.hpp"
#include "diescope/attribution/holder.hpp"
#include "diescope/calibrate/lookup.hpp"

namespace diescope::cli {

void check_captures(const agent::CaptureRules& rules, const collect::Feed& feed) {
  std::vector<int> monitored;
  for (std::size_t i = 0; i < feed.gpu_count(); ++i) monitored.push_back(feed.meta(i).gpu.index);
  agent::check_rule_gpus(rules, monitored);
}

void tee_batches(AgentCaptures& captures, agent::AgentSettings& settings) {
  settings.on_batch = [&captures](std::size_t gpu, const collect::GpuBatch& batch) {
    if (captures.manager) captures.manager->on_batch(gpu, batch);
  };
}

void attach_captures(AgentCaptures& captures, agent::CaptureRules rules, agent::Agent& agent,
                     attribution::AgentAttribution* attrib, bool live, agent::RunnerOptions& options) {
  const bool sigusr1 = rules.has(agent::CaptureCondition::signal);
  const bool http = rules.has(agent::CaptureCondition::http);
  agent::CaptureHooks hooks;
  hooks.log = options.log;
  hooks.host_probes = live;
  // The calibration that fits the GPU, found as `diescope report` finds it.
  hooks.calibration = [](const analysis::Analysis& analysis) {
    return calibrate::calibration_block_json(
        calibrate::find_calibration(analysis.meta, analysis.method, std::nullopt));
  };
  if (attrib) {
    hooks.job = [attrib](int gpu_index) -> std::optional<agent::CaptureJob> {
      const attribution::WatchSnapshot snap = attrib->watcher().snapshot();
      for (const attribution::GpuHolders& g : snap.gpus) {
        if (g.gpu_index != gpu_index || g.gpu_instance_id || g.holders.empty()) continue;
        // The holder with the largest share of the GPU is the job the capture is about.
        const auto top =
            std::max_element(g.holders.begin(), g.holders.end(),
                             [](const attribution::HolderShare& a, const attribution::HolderShare& b) {
                               return a.share < b.share;
                             });
        agent::CaptureJob job;
        job.key = top->holder.key;
        job.name = attribution::describe(top->holder);
        for (const attribution::Label& l : attribution::holder_labels(top->holder))
          job.labels.emplace_back(l.key, l.value);
        if (!top->holder.pids.empty())
          job.root_pid = *std::min_element(top->holder.pids.begin(), top->holder.pids.end());
        return job;
      }
      return std::nullopt;
    };
    hooks.link = [attrib](int gpu_index, recording::TimeNs start_ns, const std::string& folder) {
      attrib->watcher().link_capture(gpu_index, start_ns, folder);
    };
  }
  captures.manager = std::make_unique<agent::CaptureManager>(std::move(rules), agent, std::move(hooks));
  agent::CaptureManager* m = captures.manager.get();
  if (sigusr1) captures.usr1 = std::make_unique<core::SignalSelfPipe>(std::initializer_list<int>{SIGUSR1});
  core::SignalSelfPipe* usr1 = captures.usr1.get();
  options.wake_fds.push_back(m->wake_fd());
  if (usr1) options.wake_fds.push_back(usr1->fd());
  options.after_step = [m, usr1] {
    if (usr1)
      while (usr1->next()) m->signal();
    m->after_step();
  };
  options.on_stop = [m](const std::string& why) { m->stop(why); };
  if (http)
    options.post = [m](const agent::HttpPost& post) {
      return m->http(agent::CaptureHttpRequest{post.query, post.authorization, post.peer_loopback});
    };
  auto previous = options.extra_metrics;
  options.extra_metrics = [previous, m](agent::ExpositionFormat format) {
    return (previous ? previous(format) : std::string()) + m->metrics(format);
  };
}

}  // namespace diescope::cli
