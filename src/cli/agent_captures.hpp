// The agent's triggered captures on the command line (docs/agent.md#triggered-captures): `--rules FILE`
// read before anything is switched on, the capture manager built on the agent, SIGUSR1 and
// POST /capture wired to it, and the job records linked to its folders.
#pragma once

#include <memory>
#include <string>

#include "diescope/agent/capture.hpp"
#include "diescope/agent/runner.hpp"
#include "diescope/core/signals.hpp"

namespace diescope::attribution {
class AgentAttribution;
}

namespace diescope::cli {

struct AgentCaptures {
  std::unique_ptr<agent::CaptureManager> manager;
  std::unique_ptr<core::SignalSelfPipe>
      usr1;  // only with a sigusr1 rule: otherwise SIGUSR1 keeps its default
};

// Refuses rules that watch a GPU the feed does not have (before the agent switches anything on).
void check_captures(const agent::CaptureRules& rules, const collect::Feed& feed);

// Sends each batch to the captures once they exist (AgentSettings::on_batch).
void tee_batches(AgentCaptures& captures, agent::AgentSettings& settings);

// Builds the manager and wires it into the runner's options. `attrib` may be null (no job names, no
// links); `live` false (a replay) runs no host probes in captures.
void attach_captures(AgentCaptures& captures, agent::CaptureRules rules, agent::Agent& agent,
                     attribution::AgentAttribution* attrib, bool live, agent::RunnerOptions& options);

}  // namespace diescope::cli
