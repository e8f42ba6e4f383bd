#!/usr/bin/env bash
# Where the live path lives (docs/live-collection.md): the lines of each file on it, the include graph of its
# headers (which file includes which), and the places that build the sampler child, take a GPU's NVML
# device or borrow the session's, open NVML GPM, watch for other profilers, wait in ::poll, hold a live
# session or a GPU's parts of one, step the duty schedule and start a live collection. Reads the
# sources only; any machine.
#   bench/build/live_path_lines.sh [OUT]   prints to stdout, and writes OUT/live_path.txt when given
# The line table per part is bench/build's job elsewhere; this script covers the live path alone.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-}

report() {
  echo "# live path files: lines"
  for f in src/collect/run/run.cpp src/collect/live/live_collection.cpp src/collect/live/profiler_watch.cpp \
    src/collect/live/chip_source.cpp src/collect/live/gpm_source.cpp src/collect/live/live_driver.cpp include/diescope/collect/chip_source.hpp include/diescope/collect/gpm_source.hpp include/diescope/collect/live_collection.hpp include/diescope/collect/live_driver.hpp include/diescope/collect/feed.hpp include/diescope/collect/duty.hpp \
    include/diescope/collect/profiler_watch.hpp src/agent/agent.cpp src/agent/runner.cpp src/agent/replay_feed.cpp \
    src/top/view_feeds.cpp src/top/top.cpp; do
    if [[ -f $f ]]; then printf '%6d  %s\n' "$(wc -l <"$f")" "$f"; else printf '%6s  %s\n' "-" "$f (absent)"; fi
  done
  echo
  echo "# include graph: file -> live-path header it includes"
  local headers='diescope/collect/(live_collection|live_driver|chip_source|gpm_source|feed|duty|profiler_watch|sampler|gpm|run|host_probes)\.hpp'
  grep -rEo "#include \"${headers}\"" src include tests bench --include='*.cpp' --include='*.hpp' |
    sed -E 's/:#include "diescope\/collect\/(.*)"/ -> \1/' | sort
  echo
  # A sampler child is built where a SamplerProcess is constructed; GPM is opened where a GpmSampler
  # is; the tests and the classes' own definitions are left out.
  echo "# where the sampler child is built (a SamplerProcess constructed)"
  grep -rnE 'make_unique<(collect::)?SamplerProcess>|SamplerProcess [a-z_]+\(' src --include='*.cpp' || echo "(none)"
  echo
  # Who holds a sampler child at all: every file that names SamplerProcess outside the sampler's own
  # part (its definition in src/collect/pmsampling and include/diescope/collect/sampler.hpp).
  echo "# who holds, drains and reaps a sampler child (names SamplerProcess)"
  grep -rnE 'SamplerProcess' src include --include='*.cpp' --include='*.hpp' |
    grep -vE '^(src/collect/pmsampling/|include/diescope/collect/sampler\.hpp)' || echo "(none)"
  echo
  echo "# where NVML GPM is opened as a chip source (a GpmSampler constructed)"
  grep -rnE 'make_unique<(collect::)?GpmSampler>|GpmSampler [a-z_]+\(' src --include='*.cpp' || echo "(none)"
  echo
  # Every live reader opens GPM through collect::open_gpm: a telemetry's open_gpm, or the function itself.
  echo "# who opens GPM (open_gpm called)"
  grep -rnE '(open_gpm|->open_gpm|\.open_gpm)\(' src --include='*.cpp' | grep -vE ':(std::unique_ptr<collect::GpmSampler>|  virtual)' || echo "(none)"
  echo
  # Each Nvml::load() initialises NVML once more in the process (nvmlInit, and its own device handles).
  echo "# where NVML is loaded (Nvml::load)"
  grep -rnE 'Nvml::load\(\)' src --include='*.cpp' | grep -v '^src/collect/nvml/' || echo "(none)"
  echo
  # A live reader reads NVML where it takes a GPU's NvmlDevice from the library (Nvml::device).
  echo "# where a GPU's NVML device is taken (Nvml::device), and where a live reader reads NVML through the session's"
  grep -rnE '(nvml|nvml_)(\.|->)device\(' src --include='*.cpp' || echo "(none)"
  grep -rnE 'make_unique<(collect::)?NvmlTelemetry>' src --include='*.cpp' || echo "(none)"
  echo
  # A reader beside the session borrows its telemetry (LiveSession::telemetry) and, for NVML calls of
  # its own on another thread, the telemetry's device (GpuTelemetry::nvml_device).
  echo "# who reads NVML through the session's telemetry (LiveSession::telemetry, GpuTelemetry::nvml_device)"
  grep -rnE '(->|\.)telemetry\([a-z_]*\)|nvml_device\(\)' src --include='*.cpp' || echo "(none)"
  echo
  echo "# where the switch between PM sampling and GPM is decided (the rule), and who asks it"
  grep -rnE '^bool gpm_wanted\(' src --include='*.cpp' || echo "(none)"
  grep -rnE '[^a-z_]gpm_wanted\(' src --include='*.cpp' | grep -v ':bool gpm_wanted(' || echo "(none)"
  echo
  echo "# where a switch is carried out (GPM opened, PM sampling stopped or started again)"
  grep -rnE '::(to_gpm|to_pm|start_gpm|want_gpm)\(' src --include='*.cpp' || echo "(none)"
  echo "# ... the one class that carries it out (GpmChipSource), and its callers; who calls open_gpm"
  grep -rnE '^[a-zA-Z:_<> ]*GpmChipSource::(open|close|columns|start)\(' src --include='*.cpp' || echo "(none)"
  grep -rnE '(\.|[^a-z_])gpm\.(open|close|columns|start)\(' src --include='*.cpp' || echo "(none)"
  grep -rnE '(->|\.)open_gpm\(' src --include='*.cpp' || echo "(none)"
  echo
  echo "# where the sampler child's samples are checked (out of order, value count, infinity)"
  grep -rnE 'ChipSampleCheck::admit\(|\.admit\(' src --include='*.cpp' || echo "(none)"
  echo
  echo "# where other profilers are watched (a ProfilerWatch constructed or scanned)"
  grep -rnE 'watch_\.scan\(\)|ProfilerWatch [a-z_]+\(' src --include='*.cpp' || echo "(none)"
  echo
  # A live reader waits in ::poll; the driver's wait is the one the agent and top share.
  echo "# where a live reader waits (a ::poll call on the live path)"
  grep -rnE '::poll\(' src/collect/run src/collect/live src/agent/runner.cpp src/top --include='*.cpp' || echo "(none)"
  echo
  echo "# who reads the live session through the driver (LiveDriver)"
  grep -rnE 'LiveDriver( [a-z_]+|\(\))' src --include='*.cpp' || echo "(none)"
  echo
  # The session owns each GPU's parts; a reader that kept a supervisor, a telemetry or a GPM source of
  # its own per GPU would hold one as a member here.
  echo "# who holds a live session (a LiveSession built)"
  grep -rnE 'make_unique<(collect::)?LiveSession>|LiveSession [a-z_]+\(' src --include='*.cpp' || echo "(none)"
  echo
  echo "# who keeps a GPU's parts of a live collection (a SamplerSupervisor, GpuTelemetry or GpmChipSource member or build)"
  grep -rnE 'unique_ptr<(collect::)?(SamplerSupervisor|NvmlTelemetry|GpuTelemetry)> [a-z_]+;|make_unique<(collect::)?SamplerSupervisor>|^ *(collect::)?GpmChipSource [a-z_]+;' \
    src include --include='*.cpp' --include='*.hpp' || echo "(none)"
  echo
  echo "# where the duty schedule switches a sampler child (DutyCycle::phase_at asked)"
  grep -rnE '(\.|->)phase_at\(' src --include='*.cpp' || echo "(none)"
  echo
  echo "# who starts a live collection"
  grep -rnE '(collect::)?(record_run|open_live_session)\(' src --include='*.cpp' | grep -v '^src/collect/run/run.cpp:.*RunOutcome record_run' |
    grep -v '^src/collect/live/live_collection.cpp:.*open_live_session(const' || echo "(none)"
}

if [[ -n $out ]]; then
  mkdir -p "$out"
  report | tee "$out/live_path.txt"
else
  report
fi
