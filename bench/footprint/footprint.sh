#!/usr/bin/env bash
# diescope's own footprint on a GPU machine, each figure beside its peer in the same run: the agent
# at its defaults (CPU, RSS, its sampler child, /metrics latency with 1 and 100 scrapers) beside a
# bare CUDA program, nvidia-smi dmon, nvidia-smi --query-gpu -lms 100 and a minimal NVML poller;
# the same peers alone (peers), with where a bare CUDA program's memory goes and what each NVML read
# costs; `diescope run` idle at 10 and 1 ms, and at 10 ms without host probes (CPU and RSS of run
# and its sampler child, the probes' own CPU, where their memory goes); the held-out checks (FFMA on
# 132/66/33 SMs, STREAM copy, an L2-resident copy) at 10, 1 and 0.1 ms, 0.1 ms sustained for over
# 60 s, with samples lost and the child's stage times; CUPTI alone (pm_minimal, the child's buffer
# and evaluation) at 0.1, 1 and 10 ms: its CPU and memory. The analysis section (any machine) is
# `diescope report`'s speed per output beside `wc -l` on the same file (bench/analysis/report_speed.sh,
# HOURS="24" unless set). The margin section runs the agent of BEFORE_BIN's build and of this one in
# turn (before, after, before, after), 62 s each at its defaults: its CPU both ways in one run; the
# scrape section times /metrics with 100 scrapers at once from a few epoll threads
# (bench/footprint/metrics_scrape.cpp) against the agent and a minimal server. Docs: docs/footprint.md.
#
#   bench/footprint/footprint.sh OUT_DIR [SECTION ...]
#       SECTION: agent peers idle heldout minimal analysis margin scrape (default agent idle heldout
#       minimal; `all` is every one but margin and scrape)
#   BUILD=build/release (diescope, diescope-cupti, diescope-workload, pm_minimal, nvml_poll, bare_cuda,
#   metrics_load and, when there, metrics_peer and nvml_call_cost in $BUILD/bin; or BIN=folder). WORK=folder for raw
#   outputs (default a new temporary folder). The agent section alone runs on a machine without a GPU
#   with the stand-in NVML and the fake sampler: LD_LIBRARY_PATH=<stand-in libnvidia-ml.so.1's folder>
#   AGENT_ARGS="--sampler FAKE" (bench/results/agent/2026-12-03-cpu-agent-cost/README.md has the
#   command); BEFORE_BIN=folder measures another build's agent the same way after it.
#
# Writes OUT_DIR/env.txt and the section tables (peers.tsv, peers_smaps.tsv, nvml_calls.txt,
# agent.tsv, memory.tsv, nvml_poll.txt, idle.tsv, idle_smaps.tsv, heldout_means.tsv, heldout_cost.tsv,
# heldout_own.tsv, loss.tsv, stages.tsv, minimal.txt, minimal_smaps.tsv; report-speed.txt for analysis). Reads
# clocks and limits, never sets them.
set -euo pipefail
out_dir=${1:?usage: bench/footprint/footprint.sh OUT_DIR [agent|peers|idle|heldout|minimal|analysis|all ...]}
shift
sections=("$@")
((${#sections[@]})) || sections=(agent idle heldout minimal)
[ "${sections[*]}" = all ] && sections=(agent peers idle heldout minimal analysis)
gpu_sections=()
analysis=0
for s in "${sections[@]}"; do
  case $s in
    analysis) analysis=1 ;;
    agent | peers | idle | heldout | minimal | margin | scrape) gpu_sections+=("$s") ;;
    *) echo "footprint.sh: no section '$s'; the sections are agent peers idle heldout minimal analysis margin scrape (or all)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out_dir"
out=$(cd "$out_dir" && pwd)
cd "$(dirname "$0")/../.."
bin=${BIN:-${BUILD:-build/release}/bin}
bin=$(cd "$bin" && pwd)
need="diescope"
((analysis)) && need="$need diescope-make-recording"
for s in "${gpu_sections[@]}"; do
  case $s in
    agent) need="$need nvml_poll metrics_load" ;;
    margin)
      [ -x "${BEFORE_BIN:-}/diescope" ] || { echo "footprint.sh: the margin section needs BEFORE_BIN=folder with the other build's diescope" >&2; exit 2; } ;;
    scrape) need="$need metrics_scrape metrics_peer metrics_load" ;;
    *) need="$need nvml_poll diescope-cupti diescope-workload pm_minimal bare_cuda" ;;
  esac
done
for f in $need; do
  [ -x "$bin/$f" ] || { echo "footprint.sh: no $bin/$f; build the target $f first (cmake --build --preset release --target $f)" >&2; exit 2; }
done
work=${WORK:-$(mktemp -d)}
mkdir -p "$work"
{
  date -u '+date %Y-%m-%d %H:%M:%S UTC'
  echo "host $(hostname), $(nproc) CPU cores, $(uname -sr)"
  grep -m1 'model name' /proc/cpuinfo || true
  nvidia-smi --query-gpu=name,pci.bus_id,driver_version,power.limit,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,persistence_mode \
    --format=csv 2> /dev/null || echo "nvidia-smi: not available"
  echo "clocks left as found"
} > "$out/env.txt"
if ((${#gpu_sections[@]})); then
  BIN=$bin python3 bench/footprint/footprint.py "$out" "$work" "${gpu_sections[@]}"
fi
if ((analysis)); then
  # report_speed.sh finds diescope-make-recording under $BUILD/bin.
  BUILD=$(dirname "$bin") HOURS=${HOURS:-24} bash bench/analysis/report_speed.sh "$out" "$bin/diescope"
fi
echo "footprint.sh: tables in $out; raw outputs in $work" >&2
