// The unit tables. Every counter set below was chosen with CUPTI's profiler host API (CUDA 13.0) so
// that it fits one PM-sampling pass on every chip the table lists; the evidence is in
// bench/results/units/2026-11-29-cpu-one-pass-tables/: pm-passes.txt (the tables) and
// pm-alternatives.txt (what Hopper could not add). Notes say what a reader must know before
// trusting a number.
#include "diescope/collect/unit_tables.hpp"

#include <algorithm>
#include <map>

#include "diescope/core/error.hpp"
#include "diescope/recording/format.hpp"

namespace diescope::collect {
namespace {

constexpr std::string_view kPct = ".avg.pct_of_peak_sustained_elapsed";
constexpr std::string_view kGroupTpc = "TPC.TriageCompute.";
constexpr std::string_view kGroupSmA = "SM_A.TriageCompute.";

std::string pct(std::string_view base) {
  return std::string(base) + std::string(kPct);
}
std::string tpc_group(std::string_view base) {
  return std::string(kGroupTpc) + pct(base);
}
std::string sm_a_group(std::string_view base) {
  return std::string(kGroupSmA) + pct(base);
}

const std::string kDramPct = "dram__bytes.sum.pct_of_peak_sustained_elapsed";
const std::string kDramBytes = "dram__bytes.sum";

// Metric-model name of the FMA halves' mean: it is no single CUPTI counter, so it gets its own name
// in the model's grammar (docs/metrics.md).
const std::string kFmaHalvesMetric = "sm__pipe_fma_halves_mean.avg.pct_of_peak_sustained_elapsed";

recording::ColumnDef counter(std::string key, std::string label, std::string metric,
                             std::vector<recording::UnitFlag> flags, std::string note) {
  recording::ColumnDef c;
  c.key = std::move(key);
  c.label = std::move(label);
  c.metric = metric;
  c.recipe = recording::UnitRecipe{recording::UnitRecipe::Combine::counter, {std::move(metric)}};
  c.flags = std::move(flags);
  c.note = std::move(note);
  return c;
}

recording::ColumnDef mean_of(std::string key, std::string label, std::string metric, std::string a,
                             std::string b, std::vector<recording::UnitFlag> flags, std::string note) {
  recording::ColumnDef c;
  c.key = std::move(key);
  c.label = std::move(label);
  c.metric = std::move(metric);
  c.recipe = recording::UnitRecipe{recording::UnitRecipe::Combine::mean, {std::move(a), std::move(b)}};
  c.flags = std::move(flags);
  c.note = std::move(note);
  return c;
}

recording::ColumnDef bytes_count(std::string key, std::string label, std::string metric, std::string note) {
  recording::ColumnDef c = counter(std::move(key), std::move(label), std::move(metric), {}, std::move(note));
  c.unit = "bytes";
  return c;
}

// ---- Notes shared by several tables ----

const char* const kFmaHalvesNote =
    "Mean of the FMA pipe's two halves: the heavy half runs FP32, fp16 and integer multiply-add, the lite "
    "half FP32 and fp16. In this chip family's PM-sampling catalog the whole-pipe instruction counter has "
    "no realtime form, so the halves' mean stands in for it. If back-to-back integer and logic "
    "instructions land on the heavy half here as the method found on GB205, the mean counts them at half "
    "weight and reads above the FFMA work (on a GB205 llama.cpp generate recording the mean read 21.0% "
    "where the whole-pipe counter read 14.3%). Not checked on this architecture's hardware; compare FP32 "
    "across architectures with that in mind.";

const char* const kLoadStoreNote =
    "L1's data stage: the wavefronts it processed for local, global, shared and surface-store accesses, "
    "as a share of its peak. It stands in for the load/store unit (the LSU instruction counter paces "
    "issue, not data moved). The method's drain study on GB205 found its Load/store reading 7 to 9% low at "
    "100 ms drains and about 0.9% low at 1 s drains (a fit, not a measurement), because each drain of the "
    "counter buffer costs most of the sample spanning it; whether this counter loses the same has not been "
    "checked. No correction is applied.";

const char* const kL2Note =
    "Bytes requested at the L2 slices as a share of their peak, averaged over the slices. L2's composite "
    "throughput (the busiest L2 sub-unit, tag lookups included) does not fit in the same pass, so work "
    "limited by L2 tag lookups rather than bytes can read low.";

const char* const kDramNote =
    "Bytes moved to and from DRAM as a share of the peak bandwidth CUPTI defines (bytes moved, not "
    "dram__throughput's busy-ness). Fully DRAM-bound work still reads below 100%: DRAM has overhead it "
    "cannot avoid, and stranded capacity at DRAM includes it. Whether the peak follows the live memory "
    "clock is open.";

const char* const kDramBytesNote =
    "Raw bytes moved in each sample, as read. Reports count rates from it (bytes summed over the samples "
    "over the time they cover), never as a percent times a peak.";

const char* const kDramThroughputNote =
    "The higher of DRAM's active cycles and bytes moved, as a percent of peak: a busy-ness measure kept "
    "beside the byte share. Diagnostic, not part of DIE-Util.";

const char* const kSmActiveNote =
    "Cycles in which an SM had at least one warp resident, averaged over the SMs. Diagnostic.";

const char* const kOccupancyNote =
    "Resident warps as a share of the most the SMs can hold, over elapsed time (an idle SM counts as "
    "empty). Diagnostic.";

const char* const kFmaHeavyNote =
    "The FMA pipe's heavy half (FP32, fp16, integer multiply-add; integer and logic instructions can land "
    "here too). Code that runs only integer multiply-adds fills this half while FP32 reads about half. "
    "Diagnostic.";

const char* const kFp64InstNote =
    "Warp instructions on the FP64 pipe as a share of its peak issue rate. On these chips the FP64 pipe "
    "runs at a small fraction of the FP32 rate, so FP64 code can fill it while FP32 reads low. Not checked "
    "on this architecture's hardware.";

const char* const kFmaLiteNote = "The FMA pipe's lite half (FP32 and fp16 only). Diagnostic.";

std::vector<recording::ColumnDef> dram_counts() {
  return {bytes_count("dram_bytes", "DRAM bytes", kDramBytes, kDramBytesNote)};
}

// ---- Columns that read the same counter with the same note in several tables ----

recording::ColumnDef load_store_unit() {
  return counter("ldst", "Load/store", pct("l1tex__data_pipe_lsu_wavefronts"),
                 {recording::UnitFlag::stand_in_counter}, kLoadStoreNote);
}

recording::ColumnDef l2_unit() {
  return counter("l2", "L2", pct("lts__t_bytes"), {}, kL2Note);
}

recording::ColumnDef sm_active_diagnostic() {
  return counter("sm_active", "SM active", pct("sm__cycles_active"), {}, kSmActiveNote);
}

// `warps_counter`: the chip's resident-warps counter (per SM or per TPC).
recording::ColumnDef occupancy_diagnostic(std::string_view warps_counter = "sm__warps_active_realtime") {
  return counter("occupancy", "Occupancy", pct(warps_counter), {}, kOccupancyNote);
}

// The FMA pipe's heavy and lite halves, from their realtime counters.
recording::ColumnDef fma_heavy_diagnostic() {
  return counter("fma_heavy", "FMA heavy", pct("sm__inst_executed_pipe_fmaheavy_realtime"), {},
                 kFmaHeavyNote);
}
recording::ColumnDef fma_lite_diagnostic() {
  return counter("fma_lite", "FMA lite", pct("sm__inst_executed_pipe_fmalite_realtime"), {}, kFmaLiteNote);
}

recording::ColumnDef dram_throughput_diagnostic() {
  return counter("dram_throughput", "DRAM throughput", pct("dram__throughput"), {}, kDramThroughputNote);
}

// ---- Hopper (GH100): chosen and measured by diescope; no earlier table covered Hopper ----

UnitTable hopper_gh100() {
  // The group-qualified forms read what their plain counters read on the H200, so they carry no
  // stand-in flag (bench/results/units/2026-11-29-h200-every-unit/).
  const std::string group_note =
      " Read in its group-qualified form (CUPTI's TriageCompute counter group), which fits this table's "
      "one pass where the plain name does not. On the H200 the group form read what the plain counter "
      "reads: ";
  UnitTable t;
  t.name = "hopper-gh100";
  t.architecture = "Hopper";
  t.chips = {"GH100"};
  t.compute_capabilities = {90};
  t.source =
      "chosen for diescope with CUPTI's host API "
      "(bench/results/units/2026-11-29-cpu-one-pass-tables/pm-alternatives.txt); "
      "the method's original tables have none for Hopper";
  t.note =
      "What Hopper cannot see in this one pass, and why. PM sampling reads only what fits one pass of the "
      "chip's counter hardware, and CUPTI's host API says these do not fit beside the table: the plain "
      "whole-pipe FMA counter sm__inst_executed_pipe_fma (2 passes; it is the one the H200 probe matched to "
      "FFMA work, 84.97% against 84.8%, but it only fits smaller sets without L1 and FP64), so FP32 reads "
      "its group-qualified realtime form; the plain FP64 counter sm__pipe_fp64_cycles_active (2 passes on "
      "its own); L1's composite throughput l1tex__throughput (6 passes) and L2's lts__throughput (4), so L1 "
      "and L2 are each one byte or wavefront counter rather than the busiest sub-unit; the LSU instruction "
      "counter sm__inst_executed_pipe_lsu (2); and the FP64 tensor (DMMA) sub-pipe counter (2), so FP64 "
      "matrix work cannot be told apart within Tensor. CUPTI does not say which hardware limit a set hits; "
      "the pass counts are what its host API returns for GH100, and the H200's own counter-availability "
      "image gave the same counts (bench/results/units/2026-11-29-h200-one-pass-check/). Left out although "
      "they fit: the "
      "FMA halves (sm__inst_executed_pipe_fmaheavy and fmalite). Under a busy FMA load they "
      "made CUPTI's decoder spend 327 ms of CPU per 1 s drain (33% of a core with the two alone, "
      "71% with the table), while the table without them cost 1.0% "
      "(bench/results/sampler/2026-11-29-h200-cpu-cost-variants/).";
  t.units = {
      counter(
          "fp32", "FP32", tpc_group("sm__inst_executed_pipe_fma_realtime"), {},
          "Warp instructions on the whole FMA pipe (FP32, fp16 and integer multiply-add) as a share of its "
          "peak issue rate." +
              group_note +
              "98.78% against Nsight Compute's sm__inst_executed_pipe_fma 98.82% on FFMA, and calibrate "
              "matched the counted FFMAs within 0.001 point at 132, 66, 33 and 1 SMs "
              "(bench/results/calibrate/2026-11-29-h200-mma-sync/)."),
      counter(
          "tensor", "Tensor", pct("sm__pipe_tensor_cycles_active_realtime"), {},
          "Cycles the tensor pipe was busy, all precisions. In the H200 probe this counter read 5.3% during "
          "a plain FFMA kernel that issues no tensor instruction; the cause is unknown, so a few percent "
          "of Tensor beside busy FMA work is not evidence of tensor-core use. It measures busy time, not "
          "FLOPs: on bf16 wgmma known work calibrate matched the counted FLOPs at the dense rate (4096 per "
          "SM per cycle) within 0.003 point at 132, 66 and 33 SMs, while mma.sync kept it busy at 1.5 times "
          "its FLOPs at that rate (bench/results/calibrate/2026-11-29-h200-mma-sync/ and "
          "2026-11-29-h200-wgmma/)."),
      counter("fp64", "FP64", tpc_group("sm__pipe_fp64_cycles_active_realtime"), {},
              "Cycles the FP64 pipe was busy. The plain counter needs 2 passes on its own on GH100; whether "
              "FP64 matrix (DMMA) instructions count here or under Tensor has not been checked." +
                  group_note +
                  "97.96% against Nsight Compute's sm__pipe_fp64_cycles_active 97.82% on DFMA, and calibrate "
                  "matched the counted DFMAs within 0.002 point at 132, 66, 33 and 1 SMs."),
      // Not the other tables' whole-pipe counter: on Hopper that one also counts the tensor core's
      // wgmma operand reads from shared memory (bench/results/units/2026-11-29-h200-lsu-counters/).
      counter(
          "ldst", "Load/store", pct("l1tex__data_pipe_lsu_wavefronts_mem_lgds"),
          {recording::UnitFlag::stand_in_counter, recording::UnitFlag::different_measure},
          "L1's data stage: the wavefronts it processed for local, global and distributed-shared accesses "
          "(load/store instructions that reach memory beyond the SM), as a share of its peak. It stands in "
          "for the load/store unit. Hopper's whole-pipe counter l1tex__data_pipe_lsu_wavefronts, which the "
          "other tables read, also counts the reads the tensor core makes from shared memory for wgmma "
          "instructions: on the H200, Nsight Compute read it at 94.4% on a cuBLAS bf16 GEMM whose "
          "shared-memory load and store instructions made only 18.6% and whose global accesses 0.3%, so "
          "it named Load/store the limiting unit of every wgmma GEMM. Shared-memory load/store traffic "
          "is left out because no counter that holds it without the tensor core's reads fits this pass "
          "(2 passes with this table): a kernel limited by shared-memory instructions reads low here. On "
          "a STREAM copy this counter read 13.33% where the whole-pipe counter read 13.31%. The method's "
          "drain study on GB205 found Load/store reading 7 to 9% low at 100 ms drains and about 0.9% low at "
          "1 s drains (a fit, not a measurement), because each drain of the counter buffer costs most of the "
          "sample spanning it; whether this counter loses the same on the H200 has not been checked. No "
          "correction is applied."),
      counter(
          "l1_fill", "L1 fill", sm_a_group("l1tex__m_xbar2l1tex_read_sectors_realtime"), {},
          "Sectors the crossbar returned from L2 into L1, as a share of L1's receive peak: how busy the "
          "path that fills L1 is. The plain name is not in GH100's PM-sampling catalog." +
              group_note +
              "5.88% against Nsight Compute's l1tex__m_xbar2l1tex_read_sectors 5.97% on a STREAM copy, and "
              "32.79% against 32.62% on a cuBLAS GEMM. No calibrate step checks it against known work."),
      l2_unit(),
      counter("dram", "DRAM", kDramPct, {},
              std::string(kDramNote) +
                  " In the H200 probe a copy kernel that moved 3.94 TB/s by its own count read 81.9%, an "
                  "implied peak of 4.82 TB/s."),
  };
  // No FMA-halves diagnostics: they fit the pass, but they are what made the sampler expensive (see
  // the table note).
  t.diagnostics = {sm_active_diagnostic(), occupancy_diagnostic(), dram_throughput_diagnostic()};
  t.counts = dram_counts();
  return t;
}

// ---- Blackwell (GB20x) ----

UnitTable blackwell_gb20x() {
  UnitTable t;
  t.name = "blackwell-gb20x";
  t.architecture = "Blackwell";
  t.chips = {"GB202", "GB203", "GB205", "GB206", "GB207"};
  t.compute_capabilities = {120};
  t.source =
      "the method's original table (Blackwell, checked there on one GB205), adapted where CUDA 13.0's CUPTI "
      "counts more passes";
  t.note =
      "The method reads Blackwell's FP32 from the whole FMA pipe's instruction counter "
      "(sm__inst_executed_pipe_fma_realtime). With CUDA 13.0's CUPTI that counter needs 2 passes on its own "
      "on every GB20x chip, and the realtime tensor counter cannot join the FMA halves in one pass either, "
      "so this table reads FP32 as the halves' mean (flagged) and Tensor from the plain tensor counter. FP64 "
      "does not fit beside the table (2 passes with its instruction counter, 4 with its active cycles); "
      "GB20x's FP64 pipe runs at a small fraction of its FP32 rate.";
  t.units = {
      mean_of("fp32", "FP32", kFmaHalvesMetric, pct("sm__inst_executed_pipe_fmaheavy_realtime"),
              pct("sm__inst_executed_pipe_fmalite_realtime"), {recording::UnitFlag::stand_in_counter},
              std::string(kFmaHalvesNote) +
                  " On Blackwell the method's direct counter is the whole pipe's, which matched FFMA work in "
                  "every GB205 sweep row; it does not fit this pass with CUDA 13.0's CUPTI, hence the flag."),
      counter("tensor", "Tensor", pct("sm__pipe_tensor_cycles_active"), {},
              "Cycles the tensor pipe was busy, all precisions. The plain (not realtime) form: the realtime "
              "form needs a second pass beside the FMA halves on GB20x."),
      load_store_unit(),
      counter("l1_fill", "L1 fill", pct("l1tex__m_xbar2l1tex_read_sectors_realtime"), {},
              "Sectors the crossbar returned from L2 into L1, as a share of L1's receive peak: how busy the "
              "path that fills L1 is."),
      l2_unit(),
      counter("dram", "DRAM", kDramPct, {},
              std::string(kDramNote) +
                  " On GB205 the byte counter's total was 0.98 to 1.00 of the bytes the method's calibration "
                  "moved."),
  };
  t.diagnostics = {sm_active_diagnostic(), occupancy_diagnostic("tpc__warps_active_realtime"),
                   fma_heavy_diagnostic(), fma_lite_diagnostic(), dram_throughput_diagnostic()};
  t.counts = dram_counts();
  return t;
}

// ---- Ada (AD10x) and Ampere (GA10x): the halves' mean ----

UnitTable halves_table(std::string name, std::string architecture, std::vector<std::string> chips,
                       std::vector<int> ccs, const std::string& tensor_counter, std::string tensor_note) {
  UnitTable t;
  t.name = std::move(name);
  t.architecture = std::move(architecture);
  t.chips = std::move(chips);
  t.compute_capabilities = std::move(ccs);
  t.source = "the method's original table (Ampere and Ada read FP32 as the FMA halves' mean)";
  t.note =
      "FP64 is read from its instruction counter: its active-cycles counter would take the set to 4 passes. "
      "L1's crossbar fill counter is not in this family's PM-sampling catalog, and L1's and L2's composite "
      "throughputs (the busiest sub-unit) are not read.";
  t.units = {
      mean_of("fp32", "FP32", kFmaHalvesMetric, pct("sm__inst_executed_pipe_fmaheavy_realtime"),
              pct("sm__inst_executed_pipe_fmalite_realtime"), {}, kFmaHalvesNote),
      counter("tensor", "Tensor", pct(tensor_counter), {}, std::move(tensor_note)),
      counter("fp64", "FP64", pct("sm__inst_executed_pipe_fp64"), {}, kFp64InstNote),
      load_store_unit(),
      l2_unit(),
      counter("dram", "DRAM", kDramPct, {}, kDramNote),
  };
  t.diagnostics = {sm_active_diagnostic(), occupancy_diagnostic(), fma_heavy_diagnostic(),
                   fma_lite_diagnostic(), dram_throughput_diagnostic()};
  t.counts = dram_counts();
  return t;
}

UnitTable ada_ad10x() {
  return halves_table("ada-ad10x", "Ada", {"AD102", "AD103", "AD104", "AD106", "AD107"}, {89},
                      "sm__pipe_tensor_cycles_active_realtime_v2",
                      "Cycles the tensor pipe was busy, all precisions. CUPTI marks the older "
                      "sm__pipe_tensor_cycles_active_realtime deprecated on Ada in favour of this _v2 form.");
}

UnitTable ampere_ga10x() {
  return halves_table("ampere-ga10x", "Ampere", {"GA102", "GA103", "GA104", "GA106", "GA107"}, {86},
                      "sm__pipe_tensor_cycles_active_realtime",
                      "Cycles the tensor pipe was busy, all precisions.");
}

// ---- Ampere GA100 (A100): its catalog has the whole-pipe realtime counter but no halves ----

UnitTable ampere_ga100() {
  UnitTable t;
  t.name = "ampere-ga100";
  t.architecture = "Ampere";
  t.chips = {"GA100"};
  t.compute_capabilities = {80};
  t.source = "chosen for diescope with CUPTI's host API; the method's original tables have none for GA100";
  t.note =
      "GA100's PM-sampling catalog has no realtime counters for the FMA pipe's halves, so the halves' mean "
      "that GA10x uses is not available and the FMA heavy and lite diagnostics are absent; it does have the "
      "whole-pipe realtime counter, which is read instead. Nothing in this table has been checked on GA100 "
      "hardware.";
  t.units = {
      counter(
          "fp32", "FP32", pct("sm__inst_executed_pipe_fma_realtime"), {},
          "Warp instructions on the whole FMA pipe (FP32, fp16 and integer multiply-add) as a share of its "
          "peak issue rate. Not checked on GA100 hardware."),
      counter("tensor", "Tensor", pct("sm__pipe_tensor_cycles_active_realtime"), {},
              "Cycles the tensor pipe was busy, all precisions."),
      counter("fp64", "FP64", pct("sm__pipe_fp64_cycles_active"), {},
              "Cycles the FP64 pipe was busy. Whether FP64 matrix (DMMA) instructions count here or under "
              "Tensor has not been checked."),
      load_store_unit(),
      l2_unit(),
      counter("dram", "DRAM", kDramPct, {}, kDramNote),
  };
  t.diagnostics = {sm_active_diagnostic(), occupancy_diagnostic(), dram_throughput_diagnostic()};
  t.counts = dram_counts();
  return t;
}

// ---- Turing (TU10x, TU11x): the closest one-pass counters ----

UnitTable turing_tu10x() {
  UnitTable t;
  t.name = "turing-tu10x";
  t.architecture = "Turing";
  t.chips = {"TU102", "TU104", "TU106", "TU116", "TU117"};
  t.compute_capabilities = {75};
  t.source = "the method's original table (Turing: the closest one-pass counters)";
  t.note =
      "Neither DRAM's byte share nor dram__throughput fits one pass beside this table (2 passes each), so "
      "DRAM is the framebuffer partitions' throughput and there is no DRAM throughput diagnostic. The raw "
      "DRAM byte count does fit, so rates can still be counted.";
  t.units = {
      counter("fp32", "FP32", pct("sm__inst_executed_pipe_fma_realtime"), {},
              "The FMA pipe's instruction counter, as on Blackwell. Not checked on Turing hardware."),
      counter("tensor_fp16", "Tensor+FP16", pct("sm__pipe_shared_cycles_active_realtime"),
              {recording::UnitFlag::different_measure},
              "The pipe tensor cores share with fp16 math, so it reads above tensor work alone whenever fp16 "
              "math runs. TU116 and TU117 have no tensor cores: there it is fp16 math only."),
      counter("fp64", "FP64", pct("sm__inst_executed_pipe_fp64"), {}, kFp64InstNote),
      load_store_unit(),
      l2_unit(),
      counter("dram", "DRAM", pct("fbpa__throughput"), {recording::UnitFlag::different_measure},
              "Framebuffer partition throughput: how busy the memory controllers were, not a share of DRAM "
              "bandwidth. Neither DRAM bytes nor dram__throughput fits one pass here."),
  };
  t.diagnostics = {sm_active_diagnostic(), occupancy_diagnostic()};
  t.counts = {bytes_count(
      "dram_bytes", "DRAM bytes", kDramBytes,
      std::string(kDramBytesNote) +
          " The method's original table had no counted rate on Turing; with CUDA 13.0's CUPTI the "
          "raw count fits this pass (its percent of peak does not).")};
  return t;
}

std::vector<UnitTable> build_tables() {
  return {hopper_gh100(), blackwell_gb20x(), ada_ad10x(), ampere_ga100(), ampere_ga10x(), turing_tu10x()};
}

}  // namespace

const std::vector<UnitTable>& unit_tables() {
  static const std::vector<UnitTable> tables = build_tables();
  return tables;
}

const UnitTable* unit_table_for_chip(std::string_view chip) {
  for (const auto& table : unit_tables()) {
    if (std::find(table.chips.begin(), table.chips.end(), chip) != table.chips.end()) return &table;
  }
  return nullptr;
}

const UnitTable* unit_table_for_compute_capability(int compute_capability) {
  for (const auto& table : unit_tables()) {
    const auto& ccs = table.compute_capabilities;
    if (std::find(ccs.begin(), ccs.end(), compute_capability) != ccs.end()) return &table;
  }
  return nullptr;
}

std::string chip_for_compute_capability(int compute_capability) {
  const UnitTable* table = unit_table_for_compute_capability(compute_capability);
  return table != nullptr && table->chips.size() == 1 ? table->chips.front() : std::string();
}

const UnitTable* unit_table_by_name(std::string_view name) {
  for (const auto& table : unit_tables()) {
    if (table.name == name) return &table;
  }
  return nullptr;
}

namespace {

// ---- NVML GPM (Hopper and later): the driver's own performance monitors ----

recording::ColumnDef gpm_column(std::string key, std::string label, std::string metric_id, std::string note,
                                std::string unit = "pct") {
  recording::ColumnDef c =
      counter(std::move(key), std::move(label), std::move(metric_id), {}, std::move(note));
  c.source = recording::UnitSource::gpm;
  c.unit = std::move(unit);
  return c;
}

const char* const kGpmPairNote =
    " GPM gives each metric over the time between two of its samples; diescope takes one sample per "
    "interval and records the metric over each pair, as a percent of the unit's peak as NVML defines it.";

UnitTable build_gpm_table() {
  UnitTable t;
  t.name = "gpm";
  t.architecture = "Hopper and later";
  t.chips = {};
  t.compute_capabilities = {90, 100, 103, 120};
  t.source =
      "NVML's GPM metrics (nvmlGpmMetricsGet), read when PM sampling cannot run "
      "(docs/method.md#gpm-as-a-second-chip-source); cross-checked against PM sampling on the H200 "
      "(bench/results/run/2026-12-01-h200-gpm/)";
  t.note =
      "What GPM does not see: it has no metric for L1 (the L1 fill path), L2, or the load/store unit, so "
      "those units are not available from GPM and DIE-Util is the busiest of the units below; work "
      "limited by L1, L2 or load/store reads low. GPM's metrics are NVIDIA's own definitions of each "
      "unit's busy share, not the PM-sampling counters of the chip's table.";
  const std::string pair = kGpmPairNote;
  t.units = {
      gpm_column("fp32", "FP32", "NVML_GPM_METRIC_FP32_UTIL",
                 "The share of time the SMs were doing non-tensor FP32 math, as NVML defines it." + pair),
      gpm_column("tensor", "Tensor", "NVML_GPM_METRIC_ANY_TENSOR_UTIL",
                 "The share of time the SMs' tensor cores were busy with any precision." + pair),
      gpm_column("fp64", "FP64", "NVML_GPM_METRIC_FP64_UTIL",
                 "The share of time the SMs were doing non-tensor FP64 math." + pair),
      gpm_column("fp16", "FP16", "NVML_GPM_METRIC_FP16_UTIL",
                 "The share of time the SMs were doing non-tensor FP16 math. PM sampling's tables count "
                 "fp16 under FP32 (the FMA pipe); GPM reports it apart." +
                     pair),
      gpm_column("integer", "Integer", "NVML_GPM_METRIC_INTEGER_UTIL",
                 "The share of time the SMs were doing integer operations. PM sampling's tables have no "
                 "integer unit of their own." +
                     pair),
      gpm_column("dram", "DRAM", "NVML_GPM_METRIC_DRAM_BW_UTIL",
                 "DRAM bandwidth used as a share of the theoretical maximum, as NVML defines it." + pair),
  };
  t.diagnostics = {
      gpm_column("sm_active", "SM active", "NVML_GPM_METRIC_SM_UTIL",
                 "The share of SMs that were busy, averaged over the sample. Diagnostic." + pair),
      gpm_column("occupancy", "Occupancy", "NVML_GPM_METRIC_SM_OCCUPANCY",
                 "Active warps as a share of the most the SMs can hold. Diagnostic." + pair),
      gpm_column("gr_active", "GR active", "NVML_GPM_METRIC_GRAPHICS_UTIL",
                 "The share of time any compute or graphics work was active on the GPU. Diagnostic." + pair),
      gpm_column("tensor_hmma", "Tensor HMMA", "NVML_GPM_METRIC_HMMA_TENSOR_UTIL",
                 "Tensor cores busy with half-precision (HMMA) matrix work. Diagnostic." + pair),
      gpm_column("tensor_dfma", "Tensor DFMA", "NVML_GPM_METRIC_DFMA_TENSOR_UTIL",
                 "Tensor cores busy with FP64 (DMMA) matrix work. Diagnostic." + pair),
      gpm_column("tensor_imma", "Tensor IMMA", "NVML_GPM_METRIC_IMMA_TENSOR_UTIL",
                 "Tensor cores busy with integer (IMMA) matrix work. Diagnostic." + pair),
  };
  const std::string bytes_note =
      " NVML gives a rate in MiB/s over each pair of samples; diescope records the bytes it implies "
      "(rate x 2^20 x the sample's length). NaN where the GPU has no such link.";
  t.counts = {
      gpm_column("pcie_tx_bytes", "PCIe TX bytes", "NVML_GPM_METRIC_PCIE_TX_PER_SEC",
                 "Bytes the GPU sent over PCIe." + bytes_note, "bytes"),
      gpm_column("pcie_rx_bytes", "PCIe RX bytes", "NVML_GPM_METRIC_PCIE_RX_PER_SEC",
                 "Bytes the GPU received over PCIe." + bytes_note, "bytes"),
      gpm_column("nvlink_tx_bytes", "NVLink TX bytes", "NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC",
                 "Bytes the GPU sent over all its NVLinks." + bytes_note, "bytes"),
      gpm_column("nvlink_rx_bytes", "NVLink RX bytes", "NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC",
                 "Bytes the GPU received over all its NVLinks." + bytes_note, "bytes"),
  };
  return t;
}

}  // namespace

const UnitTable& gpm_unit_table() {
  static const UnitTable table = build_gpm_table();
  return table;
}

const std::vector<UnitGap>& gpm_unit_gaps() {
  static const std::vector<UnitGap> gaps = {
      {"ldst", "Load/store", "GPM has no load/store metric"},
      {"l1_fill", "L1 fill", "GPM has no L1 metric"},
      {"l2", "L2", "GPM has no L2 metric"},
  };
  return gaps;
}

UnitTable table_without_counters(const UnitTable& table, const std::vector<std::string>& counters,
                                 const std::string& why) {
  if (counters.empty()) return table;
  UnitTable out = table;
  std::vector<std::string> dropped;
  auto keep = [&](std::vector<recording::ColumnDef>& columns) {
    std::vector<recording::ColumnDef> kept;
    for (auto& column : columns) {
      bool reads_missing = false;
      for (const auto& name : column.recipe.counters)
        if (std::find(counters.begin(), counters.end(), name) != counters.end()) reads_missing = true;
      if (reads_missing)
        dropped.push_back(column.key);
      else
        kept.push_back(std::move(column));
    }
    columns = std::move(kept);
  };
  keep(out.units);
  keep(out.diagnostics);
  keep(out.counts);
  if (!dropped.empty()) {
    std::string keys;
    for (const auto& key : dropped) keys += (keys.empty() ? "" : ", ") + key;
    out.note += " Left out on this GPU: " + keys + " (" + why + ").";
  }
  return out;
}

std::vector<std::string> table_metrics(const UnitTable& table) {
  std::vector<std::string> metrics;
  auto add = [&](const std::vector<recording::ColumnDef>& columns) {
    for (const auto& column : columns) {
      for (const auto& name : column.recipe.counters) {
        if (std::find(metrics.begin(), metrics.end(), name) == metrics.end()) metrics.push_back(name);
      }
    }
  };
  add(table.units);
  add(table.diagnostics);
  add(table.counts);
  return metrics;
}

void apply_unit_table(const UnitTable& table, recording::RecordingMeta& meta) {
  meta.unit_table = table.name;
  meta.units = table.units;
  meta.diagnostics = table.diagnostics;
  meta.counts = table.counts;
}

ColumnEvaluator::ColumnEvaluator(const UnitTable& table) : ColumnEvaluator(table, table_metrics(table)) {}

ColumnEvaluator::ColumnEvaluator(const UnitTable& table, std::span<const std::string> metric_order)
    : metric_count_(metric_order.size()) {
  std::map<std::string_view, std::size_t> index;
  for (std::size_t i = 0; i < metric_order.size(); ++i) index.emplace(metric_order[i], i);
  auto position = [&](const std::string& name) {
    auto it = index.find(name);
    if (it == index.end()) {
      throw core::Error(
          "unit table " + table.name + " needs counter " + name + ", which the sample does not carry",
          "configure the sampler with table_metrics(table)", core::kExitInternal);
    }
    return it->second;
  };
  auto build = [&](const std::vector<recording::ColumnDef>& defs, std::vector<Column>& out) {
    for (const auto& def : defs) {
      const auto& counters = def.recipe.counters;
      const bool mean = def.recipe.combine == recording::UnitRecipe::Combine::mean;
      if (counters.size() != (mean ? 2u : 1u)) {
        throw core::Error("unit " + def.key + " of table " + table.name + " has " +
                              std::to_string(counters.size()) + " counters for a " +
                              std::string(recording::combine_text(def.recipe.combine)),
                          "fix the table: a counter takes one, a mean two", core::kExitInternal);
      }
      out.push_back(Column{mean, position(counters[0]), mean ? position(counters[1]) : 0});
    }
  };
  build(table.units, units_);
  build(table.diagnostics, diagnostics_);
  build(table.counts, counts_);
}

void ColumnEvaluator::evaluate(std::span<const double> metric_values, ColumnValues& out) const {
  if (metric_values.size() != metric_count_) {
    throw core::Error("a sample carries " + std::to_string(metric_values.size()) + " counter values where " +
                          std::to_string(metric_count_) + " were configured",
                      "this is a bug in the sampler: please report it", core::kExitInternal);
  }
  auto fill = [&](const std::vector<Column>& columns, std::vector<double>& values) {
    values.resize(columns.size());
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const Column& c = columns[i];
      // NaN propagates through the mean: half a unit is not a reading.
      values[i] = c.mean ? (metric_values[c.first] + metric_values[c.second]) / 2 : metric_values[c.first];
    }
  };
  fill(units_, out.units);
  fill(diagnostics_, out.diagnostics);
  fill(counts_, out.counts);
}

}  // namespace diescope::collect
