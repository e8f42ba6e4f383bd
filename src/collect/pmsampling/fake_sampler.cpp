// A sampler child with no GPU: the same protocol and pacing as the CUPTI one, synthetic values.
// It lets the CPU tests drive the parent through crashes, errors and gaps.
#include <algorithm>
#include <cmath>
#include <csignal>
#include <unistd.h>

#include "child_io.hpp"
#include "diescope/collect/sampler.hpp"
#include "diescope/core/clock.hpp"
#include "diescope/core/error.hpp"

namespace diescope::collect {

namespace m = sampler_msg;

int fake_sampler_main(int argc, char** argv) {
  child::Emitter out;
  out.emit(m::Hello{kSamplerProtocolVersion, static_cast<long>(getpid()), "fake"});
  std::string why;
  auto parsed = child::parse_args(argc, argv, why);
  if (!parsed) {
    out.emit(m::Error{m::ErrorKind::usage, 0, why});
    out.flush();
    return core::kExitUsage;
  }
  const child::Args& args = *parsed;
  if (!args.fail_with.empty()) {
    out.emit(m::Error{*error_kind_from_name(args.fail_with), 0, "fake sampler asked to fail"});
    out.flush();
    return 3;
  }
  child::StopWatcher stop;
  const std::int64_t setup_start = core::realtime_ns();
  out.emit(m::Device{args.device, 90, 132, "GPU-fake-" + std::to_string(args.device), args.fake_chip,
                     "diescope fake GPU"});
  out.emit(m::Metrics{args.metrics});
  out.emit(m::Clock{0, 0, "fake: samples are timed on the host clock"});

  const auto interval_ns = static_cast<std::int64_t>(args.interval_ms * 1e6);
  const std::int64_t t0 = core::realtime_ns();
  out.emit(m::On{t0});
  out.flush();

  child::Continuity continuity(interval_ns);
  long k = 0;  // samples made so far
  std::int64_t next_start = setup_start;
  std::int64_t next_end = t0 + interval_ns;  // the first sample spans the setup
  long drains = 0;
  auto emit_ready = [&](std::int64_t now) {
    long drained = 0, blanked = 0;
    while (next_end <= now) {
      if (args.max_samples >= 0 && k >= args.max_samples) break;
      m::Sample s{next_start, next_end, {}};
      const auto level = args.fake_levels.find(args.device);
      for (std::size_t j = 0; j < args.metrics.size(); ++j)
        s.values.push_back(level != args.fake_levels.end() ? level->second
                                                           : 10.0 * double(j + 1) + double(k % 10));
      if (args.blank_each_drain && drains > 0 && drained == 0) {
        for (double& v : s.values) v = std::nan("");
        ++blanked;
      }
      if (auto gap = continuity.check(s.start_ns, s.end_ns)) out.emit(*gap);
      out.emit(s);
      ++k;
      ++drained;
      next_start = next_end;
      if (k == args.gap_at) next_start += interval_ns;  // lose one sample's time
      next_end = next_start + interval_ns;
      if (args.crash_after >= 0 && k >= args.crash_after) {
        out.flush();
        std::signal(SIGSEGV, SIG_DFL);
        std::raise(SIGSEGV);
      }
    }
    out.emit(m::Drain{now, drained, 0, blanked});
    if (drained > 0) ++drains;
    return out.flush();
  };

  std::string reason;
  while (!stop.wait(static_cast<std::int64_t>(args.drain_ms))) {
    if (!emit_ready(core::realtime_ns())) break;
    if (args.max_samples >= 0 && k >= args.max_samples) {
      reason = "reached --max-samples";
      break;
    }
  }
  if (stop.stop_requested()) emit_ready(core::realtime_ns());
  if (reason.empty()) reason = stop.stop_requested() ? "" : "the parent stopped reading";
  out.emit(m::Off{core::realtime_ns(), reason});
  out.emit(m::Bye{out.samples()});
  out.flush();
  return 0;
}

}  // namespace diescope::collect
