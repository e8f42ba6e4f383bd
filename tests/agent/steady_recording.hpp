// A synthetic recording with one steady phase, whose figures the tests work out by hand.
#pragma once

#include <memory>

#include "diescope/recording/synthetic.hpp"

namespace diescope::agent::testing {

// Units fp32 60, tensor 5, dram 30, l2 20 (% of peak); GPU-Util 90; SM clock 1980 MHz, memory
// 2619 MHz; 10 ms samples with no setup sample; GPU-Util every 200 ms; `seconds` long.
inline recording::SyntheticSpec steady_spec(double seconds = 10) {
  recording::SyntheticSpec s;
  s.meta = recording::synthetic_hopper_meta();
  s.setup_ns = 0;
  s.phases = {recording::SyntheticPhase{"steady", seconds, {60, 5, 30, 20}, {95, 97}, {1.44e12}, 90}};
  s.sm_mhz = 1980;
  s.mem_mhz = 2619;
  s.significant_digits = 0;
  return s;
}

inline std::unique_ptr<recording::MemoryRecording> steady_recording(double seconds = 10) {
  return make_synthetic_recording(steady_spec(seconds));
}

}  // namespace diescope::agent::testing
