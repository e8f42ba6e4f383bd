// `diescope top`: a live terminal view of every GPU, GPU-Util beside DIE-Util (docs/top.md).
#include <unistd.h>

#include <csignal>
#include <fmt/core.h>
#include <memory>

#include "command.hpp"
#include "options.hpp"
#include "diescope/collect/run.hpp"
#include "diescope/core/error.hpp"
#include "diescope/core/signals.hpp"
#include "diescope/top/top.hpp"

namespace diescope::cli {
namespace {

struct TopArgs {
  std::vector<std::string> replay;
  double replay_speed = 1.0;
  bool replay_loop = false;
  std::string at;          // --at: "steady" or seconds into the replay
  double interval_ms = 0;  // the defaults come from the rules (options.hpp)
  double drain_ms = 0;
  bool once = false;
  std::string sort = "index";
  std::vector<int> gpus;
  std::string sampler;
  std::vector<std::string> sampler_args;
  std::string source = "auto";
};

top::SortKey parse_sort(const std::string& text) {
  if (text == "index") return top::SortKey::index;
  if (text == "die") return top::SortKey::die_util;
  if (text == "gpu") return top::SortKey::gpu_util;
  if (text == "gap") return top::SortKey::gap;
  throw core::UsageError(
      "--sort " + text + " is not a sort key" + did_you_mean(text, {"index", "die", "gpu", "gap"}),
      "give --sort index, die (DIE-Util), gpu (GPU-Util) or gap");
}

int run(const TopArgs& a) {
  check_range(kIntervalMs, a.interval_ms);
  top::TopOptions options;
  options.drain_ms = a.drain_ms;
  options.once = a.once;
  options.sort = parse_sort(a.sort);
  if (!a.replay.empty() &&
      (!a.sampler.empty() || !a.sampler_args.empty() || !a.gpus.empty() || a.source != "auto")) {
    throw core::UsageError("--sampler, --sampler-arg, --gpus and --source are for live GPUs, not --replay",
                           "drop them, or drop --replay to watch this host's GPUs");
  }
  if (a.replay.empty() && (a.replay_loop || a.replay_speed != 1.0 || !a.at.empty()))
    throw core::UsageError("--replay-speed, --replay-loop and --at need --replay FILE", "add --replay FILE");
  if (!a.at.empty() && !a.once)
    throw core::UsageError("--at picks the moment of --once's frame", "add --once, or drop --at");
  if (!a.replay.empty() && !a.replay_loop && (a.once || ::isatty(STDOUT_FILENO) == 0)) {
    // One frame of a replay shows the steady window, or the moment asked for (docs/top.md#options).
    std::optional<double> seconds;
    if (!a.at.empty() && a.at != "steady") seconds = parse_number("--at", a.at, "--at 12.5 or --at steady");
    options.at_ns = top::replay_moment(a.replay.front(), seconds);
  }

  // Ctrl-C, SIGTERM and a closed terminal end the loop, which restores the terminal; a resize redraws.
  core::SignalSelfPipe stop_signals({SIGINT, SIGTERM, SIGHUP}, {SIGPIPE});
  core::SignalSelfPipe resize({SIGWINCH});
  options.stop_fd = stop_signals.fd();
  options.resize_fd = resize.fd();
  options.drain_stop = [&stop_signals] {
    const auto caught = stop_signals.next();
    return caught ? 128 + caught->number : 1;
  };
  options.drain_resize = [&resize] {
    while (resize.next()) {}
  };

  std::unique_ptr<top::ViewFeed> source;
  if (!a.replay.empty()) {
    top::ReplayOptions replay;
    replay.files = a.replay;
    replay.speed = a.replay_speed;
    replay.loop = a.replay_loop;
    source = top::make_replay_feed(replay);
  } else {
    top::LiveOptions live;
    live.interval_ms = a.interval_ms;
    live.drain_ms = a.drain_ms;
    live.gpus = a.gpus;
    live.sampler_executable = a.sampler;
    live.sampler_extra_args = a.sampler_args;
    live.chip =
        collect::chip_source_setting_from_name(a.source).value_or(collect::ChipSourceSetting::automatic);
    source = top::make_live_feed(live);
  }
  return top::run_top(*source, options);
}

std::function<int()> setup_top(Args sub) {
  auto args = std::make_shared<TopArgs>();
  sub.gpu_list(args->gpus, "watch only these GPU indexes, as nvidia-smi numbers them (default: every GPU)");
  sub.number(kIntervalMs, args->interval_ms);
  sub.option("--source", args->source,
             "where chip samples come from: pm (CUPTI PM sampling), gpm (NVML GPM, every 100 ms), auto "
             "(PM sampling, and GPM while another profiler runs or holds the counters; default)")
      .choices({"pm", "gpm", "auto"});
  sub.number(
      kDrainMs, args->drain_ms,
      "read NVML, decode the counters and redraw every this many ms (default {default}; 100 to 60000)");
  sub.flag("--once", args->once,
           "print one frame as plain text and exit (also when stdout is not a terminal)");
  Opt sort = sub.text("--sort", args->sort, "order GPUs by index, die, gpu or gap (default index; key s)");
  sort.type_name("KEY");
  sub.option("--replay", args->replay, "play this recording instead of reading GPUs (repeat: one per GPU)");
  sub.number("--replay-speed", args->replay_speed, "recording seconds per second (default 1: its own pace)");
  sub.flag("--replay-loop", args->replay_loop, "start the recording over when it ends");
  Opt at = sub.text("--at", args->at,
                    "with --once --replay: the moment shown, seconds from the recording's start, or steady "
                    "(the end of its steady window; the default)");
  at.type_name("S|steady");
  sub.option("--sampler", args->sampler,
             "counter sampler executable (default: diescope-cupti beside diescope)");
  sub.option("--sampler-arg", args->sampler_args, "extra argument for the sampler (repeat)");
  return [args] { return run(*args); };
}

const CommandRegistrar registrar{
    Command{"top", 65, setup_top,
            "watch every GPU live: GPU-Util beside DIE-Util, units, clocks, power, "
            "processes (keys: q quit, p pause, s sort)"}};

}  // namespace
}  // namespace diescope::cli
