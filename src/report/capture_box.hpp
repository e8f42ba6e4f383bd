// The box a capture's report.html opens with (docs/agent.md#what-a-capture-holds): the trigger, the
// job's labels, the idle explanation's verdict and the energy, from report.json's `capture` block.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace diescope::report::detail {

// Empty when the report has no `capture` block (every report but a capture's).
std::string capture_box_html(const nlohmann::json& report);

}  // namespace diescope::report::detail
