#!/usr/bin/env bash
# Whether each unit table fits one counter pass, and what the tables could not take, counted by
# CUPTI's profiler host API on every chip a table lists (no GPU needed: runs on any CPU machine with
# the CUDA toolkit's CUPTI). Writes OUT_DIR/pm-passes.txt (`diescope units --check-passes`: every
# table's counters together) and OUT_DIR/pm-alternatives.txt (counter sets beside each table, with
# their pass counts). The unit notes in src/collect/units/unit_tables.cpp cite these counts.
#
#   bench/units/one_pass_tables.sh OUT_DIR     BUILD=build/release (a build with diescope and diescope-cupti)
set -euo pipefail
out_dir=${1:?usage: bench/units/one_pass_tables.sh OUT_DIR   (BUILD=build folder, default build/release)}
build=${BUILD:-build/release}
diescope="$build/bin/diescope"
cupti="$build/bin/diescope-cupti"
for bin in "$diescope" "$cupti"; do
  [ -x "$bin" ] || { echo "one_pass_tables: no $bin; build the diescope and diescope-cupti targets first" >&2; exit 2; }
done
mkdir -p "$out_dir"
P=.avg.pct_of_peak_sustained_elapsed
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# case TITLE CHIP FILE: counts the passes of the metrics in FILE on CHIP.
case_() {
  local title=$1 chip=$2 file=$3
  echo "## $title"
  echo "\$ diescope-cupti passes --chip $chip --metrics-file <$(wc -l < "$file") counters>"
  sed 's/^/    /' "$file"
  "$cupti" passes --chip "$chip" --metrics-file "$file" 2>&1 | grep -E '^(passes|rejected|diescope-cupti)' || true
  echo
}
table() { "$diescope" units --counters "$1" > "$tmp/$1"; }
plus() { { cat "$tmp/$1"; shift; printf '%s\n' "$@"; } > "$tmp/case"; echo "$tmp/case"; }
swap() { sed "s|^$2\$|$3|" "$tmp/$1" > "$tmp/case"; echo "$tmp/case"; }
only() { printf '%s\n' "$@" > "$tmp/case"; echo "$tmp/case"; }

{
  echo "# $(date -u +%Y-%m-%d), tables as of commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown); command: diescope units --check-passes"
  "$diescope" units --check-passes
} > "$out_dir/pm-passes.txt"

{
  echo "# Counter sets the unit tables could not take, counted by CUPTI's profiler host API."
  echo "# $(date -u +%Y-%m-%d), $("$cupti" version), host only (no counter availability image)."
  echo

  for t in hopper-gh100 blackwell-gb20x ada-ad10x ampere-ga10x turing-tu10x; do table $t; done

  echo "# ---- Hopper, GH100 ----"
  case_ "the table as it is" GH100 "$tmp/hopper-gh100"
  case_ "FP32 from the plain whole-pipe counter instead of its group-qualified form" GH100 \
    "$(swap hopper-gh100 "TPC.TriageCompute.sm__inst_executed_pipe_fma_realtime$P" "sm__inst_executed_pipe_fma$P")"
  case_ "the plain-name set (FMA, tensor, DRAM % and sum, GR active, L2)" GH100 \
    "$(only sm__inst_executed_pipe_fma$P sm__pipe_tensor_cycles_active_realtime$P dram__bytes.sum.pct_of_peak_sustained_elapsed dram__bytes.sum gr__cycles_active$P lts__t_bytes$P)"
  case_ "the plain FP64 counter alone" GH100 "$(only sm__pipe_fp64_cycles_active$P)"
  case_ "FP64 from the plain counter instead of its group-qualified form" GH100 \
    "$(swap hopper-gh100 "TPC.TriageCompute.sm__pipe_fp64_cycles_active_realtime$P" "sm__pipe_fp64_cycles_active$P")"
  case_ "the table plus L1's composite throughput" GH100 "$(plus hopper-gh100 l1tex__throughput$P)"
  case_ "the table plus L2's composite throughput" GH100 "$(plus hopper-gh100 lts__throughput$P)"
  case_ "the table plus the LSU instruction counter" GH100 "$(plus hopper-gh100 sm__inst_executed_pipe_lsu$P)"
  case_ "the table plus the FP64 tensor (DMMA) sub-pipe" GH100 \
    "$(plus hopper-gh100 SM_C.TriageCompute.smsp__pipe_tensor_op_dmma_cycles_active$P)"
  case_ "L1 fill under its plain name" GH100 "$(only l1tex__m_xbar2l1tex_read_sectors_realtime$P)"

  echo "# ---- Blackwell, GB205 (every GB20x chip gives the same counts: pm-passes.txt) ----"
  case_ "the table as it is" GB205 "$tmp/blackwell-gb20x"
  case_ "the method's FP32 counter (whole FMA pipe, realtime) alone" GB205 "$(only sm__inst_executed_pipe_fma_realtime$P)"
  case_ "the realtime tensor counter beside the FMA halves" GB205 \
    "$(only sm__pipe_tensor_cycles_active_realtime$P sm__inst_executed_pipe_fmaheavy_realtime$P sm__inst_executed_pipe_fmalite_realtime$P)"
  case_ "the table plus FP64 (instructions)" GB205 "$(plus blackwell-gb20x sm__inst_executed_pipe_fp64$P)"
  case_ "the table plus FP64 (active cycles)" GB205 "$(plus blackwell-gb20x sm__pipe_fp64_cycles_active$P)"

  echo "# ---- Ada, AD104, and Ampere, GA104 ----"
  case_ "Ada: the table plus FP64 (active cycles)" AD104 "$(plus ada-ad10x sm__pipe_fp64_cycles_active$P)"
  case_ "Ampere: the table plus FP64 (active cycles)" GA104 "$(plus ampere-ga10x sm__pipe_fp64_cycles_active$P)"
  case_ "Ampere: L1 fill (not in the GA10x catalog)" GA104 "$(only l1tex__m_xbar2l1tex_read_sectors_realtime$P)"

  echo "# ---- Turing, TU104 ----"
  case_ "the table as it is" TU104 "$tmp/turing-tu10x"
  case_ "the table plus DRAM bytes as a percent of peak" TU104 "$(plus turing-tu10x dram__bytes.sum.pct_of_peak_sustained_elapsed)"
  case_ "the table plus dram__throughput" TU104 "$(plus turing-tu10x dram__throughput$P)"
} > "$out_dir/pm-alternatives.txt"
cat "$out_dir/pm-passes.txt"
