// The measured cost table. Each row needs its raw rounds under bench/results/ and the command that
// made them; a row is never typed in from anywhere else.
#include "diescope/agent/cost_table.hpp"

#include <cmath>
#include <cstdio>

#include <fmt/format.h>

namespace diescope::agent {

const std::vector<CostEntry>& cost_table() {
  // H200 rows, ResNet-50 AMP training, bench/agent/cost_rounds.sh then bench/agent/cost_table.py:
  // - always on: 13 rounds of 15 s, pooled from two runs of the same design on 2026-11-29
  //   (ROUNDS=5 SETTINGS="off always nvml duty" and ROUNDS=8 SETTINGS="off always", OFF_S=ALWAYS_S=15,
  //   WARMUP_S=25); raw rounds and table in bench/results/agent/2026-11-29-h200-cost-always-nvml-duty/.
  // - the default duty cycle: 3 rounds of one whole 60 s period (ROUNDS=3 OFF_S=25 ALWAYS_S=25
  //   DUTY_S=60 WARMUP_S=30), bench/results/agent/2026-11-29-h200-cost-always-and-duty/. The later
  //   run's 30 s duty rounds (one 2 s window each, not a whole period) gave -4.1% to 8.8%, and the
  //   agent with its counters replaced by a fake sampler -2.4% to 8.5%: the 6-10% below is not the
  //   counters' alone.
  // Both intervals are as wide as the training loop's own throughput moves between 15-60 s stretches.
  // - FFMA, STREAM copy and a cuBLAS bf16 GEMM in one PyTorch process, timed by CUDA events over 0.3 s
  //   stretches, interleaved rounds with the counter child on and off (order alternated): PM sampling
  //   at 10 and 1 ms (diescope-cupti sample), and NVML GPM at 100 ms (gpm_probe serve).
  //   bench/agent/cost_events.py run by bench/run/gpm_device.sh on 2026-12-01; rows in
  //   bench/results/run/2026-12-01-h200-gpm/.
  // - The GEMM at n = 1024, the largest size bench/agent/gemm_power_probe.py found under the power
  //   limit (4096, 2048 and 1536 ran into it), replayed from a CUDA graph of 64 launches, with the
  //   same untimed lead-in before every stretch: 8 rounds per setting, every interval under 0.3 points
  //   wide; bench/results/run/2026-12-01-h200-gpm-cost-rerun/. It replaces the n = 8192 rows, whose
  //   1.8 to 3.5 point widths were the power-limited clocks' drift between stretches, not the counters.
  constexpr collect::ChipSource kPm = collect::ChipSource::pm;
  constexpr collect::ChipSource kGpm = collect::ChipSource::gpm;
  static const std::vector<CostEntry> table = {
      {"NVIDIA H200", 10, 0, 0, -1.141, 4.811, 13, 15,
       "ResNet-50 AMP training (PyTorch, batch 128, synthetic data)",
       "bench/results/agent/2026-11-29-h200-cost-always-nvml-duty/ (2026-11-29)"},
      {"NVIDIA H200", 10, 2000, 60000, 6.146, 9.969, 3, 60,
       "ResNet-50 AMP training (PyTorch, batch 128, synthetic data)",
       "bench/results/agent/2026-11-29-h200-cost-always-and-duty/ (2026-11-29)"},
      {"NVIDIA H200", 10, 0, 0, -0.0585, 0.0055, 6, 0.3, "FFMA (PyTorch jiterator, every SM)",
       "bench/results/run/2026-12-01-h200-gpm/ (2026-12-01)", kPm, CostTiming::cuda_events},
      {"NVIDIA H200", 10, 0, 0, -0.0489, 0.0288, 6, 0.3, "STREAM copy (1 GiB float vectors)",
       "bench/results/run/2026-12-01-h200-gpm/ (2026-12-01)", kPm, CostTiming::cuda_events},
      {"NVIDIA H200", 10, 0, 0, -0.2459, -0.1025, 8, 0.3, "cuBLAS bf16 GEMM 1024^3 (CUDA graph)",
       "bench/results/run/2026-12-01-h200-gpm-cost-rerun/ (2026-12-01)", kPm, CostTiming::cuda_events},
      {"NVIDIA H200", 1, 0, 0, -0.0361, 0.0079, 6, 0.3, "FFMA (PyTorch jiterator, every SM)",
       "bench/results/run/2026-12-01-h200-gpm/ (2026-12-01)", kPm, CostTiming::cuda_events},
      {"NVIDIA H200", 1, 0, 0, -0.05, 0.0219, 6, 0.3, "STREAM copy (1 GiB float vectors)",
       "bench/results/run/2026-12-01-h200-gpm/ (2026-12-01)", kPm, CostTiming::cuda_events},
      {"NVIDIA H200", 1, 0, 0, -0.5754, -0.2828, 8, 0.3, "cuBLAS bf16 GEMM 1024^3 (CUDA graph)",
       "bench/results/run/2026-12-01-h200-gpm-cost-rerun/ (2026-12-01)", kPm, CostTiming::cuda_events},
      {"NVIDIA H200", 100, 0, 0, -0.0044, 0.0095, 6, 0.3, "FFMA (PyTorch jiterator, every SM)",
       "bench/results/run/2026-12-01-h200-gpm/ (2026-12-01)", kGpm, CostTiming::cuda_events},
      {"NVIDIA H200", 100, 0, 0, -0.0413, 0.0168, 6, 0.3, "STREAM copy (1 GiB float vectors)",
       "bench/results/run/2026-12-01-h200-gpm/ (2026-12-01)", kGpm, CostTiming::cuda_events},
      {"NVIDIA H200", 100, 0, 0, -0.1079, 0.1077, 8, 0.3, "cuBLAS bf16 GEMM 1024^3 (CUDA graph)",
       "bench/results/run/2026-12-01-h200-gpm-cost-rerun/ (2026-12-01)", kGpm, CostTiming::cuda_events},
  };
  return table;
}

namespace {

bool always_on(double on_ms, double period_ms) {
  return (on_ms <= 0 && period_ms <= 0) || on_ms >= period_ms;
}

bool same_ms(double a, double b) {
  return std::fabs(a - b) < 1e-6;
}

std::string setting_text(double interval_ms, double on_ms, double period_ms) {
  if (always_on(on_ms, period_ms)) return fmt::format("counters always on at {:g} ms", interval_ms);
  return fmt::format("counters on {:g} ms of every {:g} ms at {:g} ms", on_ms, period_ms, interval_ms);
}

}  // namespace

CostVerdict cost_for(const std::string& gpu_model, double interval_ms, double duty_on_ms,
                     double duty_period_ms, PowerOverPeriod power, const std::vector<CostEntry>* table,
                     collect::ChipSource source) {
  const std::vector<CostEntry>& rows = table ? *table : cost_table();
  CostVerdict verdict;
  // Every row was measured on mains power (docs/method.md#measurement-cost).
  switch (power) {
    case PowerOverPeriod::mains:
      break;
    case PowerOverPeriod::battery:
      verdict.reason = "the host ran on battery; every cost figure was measured on mains power";
      return verdict;
    case PowerOverPeriod::changed:
      verdict.reason =
          "the host's power source changed during the record; every cost figure was measured on "
          "mains power throughout";
      return verdict;
    case PowerOverPeriod::unreadable:
      verdict.reason =
          "the host's power source could not be read; every cost figure was measured on mains power";
      return verdict;
  }
  if (rows.empty()) {
    verdict.reason = "no cost has been measured yet on any GPU model (the cost table is empty)";
    return verdict;
  }
  bool model_known = false;
  const bool on_always = always_on(duty_on_ms, duty_period_ms);
  for (const CostEntry& row : rows) {
    if (row.gpu_model != gpu_model) continue;
    model_known = true;
    if (!same_ms(row.interval_ms, interval_ms)) continue;
    const bool row_always = always_on(row.duty_on_ms, row.duty_period_ms);
    if (row_always != on_always) continue;
    if (!on_always && !(same_ms(row.duty_on_ms, duty_on_ms) && same_ms(row.duty_period_ms, duty_period_ms)))
      continue;
    if (row.source != source) continue;
    // docs/agent.md#cost-rows-a-record-cites: CUDA-event rows first, then the highest upper end.
    const auto rank = [](const CostEntry& e) { return e.timing == CostTiming::cuda_events ? 1 : 0; };
    if (!verdict.estimate || rank(row) > rank(*verdict.estimate) ||
        (rank(row) == rank(*verdict.estimate) && row.slowdown_hi_pct > verdict.estimate->slowdown_hi_pct))
      verdict.estimate = row;
  }
  if (verdict.estimate) return verdict;
  if (!model_known) {
    verdict.reason = "the cost table has no figures for " +
                     (gpu_model.empty() ? std::string("this GPU model") : gpu_model);
  } else {
    verdict.reason =
        "the cost table has no figure for " + setting_text(interval_ms, duty_on_ms, duty_period_ms) +
        (source == collect::ChipSource::pm ? std::string()
                                           : fmt::format(" from {}", collect::chip_source_name(source))) +
        " on " + gpu_model;
  }
  return verdict;
}

}  // namespace diescope::agent
