// The words for the codes the analysis and the run leave in their results (analysis/result.hpp,
// recording/records.hpp RunEnding): the one place that turns them into text. report.json, the
// terminal, the agent's records and `diescope bench` print these words; docs/report.md quotes them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "diescope/analysis/analyze.hpp"
#include "diescope/analysis/result.hpp"
#include "diescope/recording/records.hpp"

namespace diescope::report {

// How the steady window was found, or why it was not: "markers", "no markers", ...
std::string window_words(analysis::WindowFinding finding);

// Why one of a span's figures is missing; empty when it is there.
std::string die_util_missing_words(const analysis::SpanResults& span);
std::string limiting_unit_missing_words(const analysis::SpanResults& span);
std::string gpu_util_missing_words(const analysis::SpanResults& span);
std::string gap_missing_words(const analysis::SpanResults& span);
std::string split_missing_words(const analysis::SpanResults& span);

// "partial (counters covered 61% of the run)"; empty when the span passed its coverage gate.
std::string partial_words(const analysis::SpanResults& span);

// The chip coverage gate's verdict as the agent's records write it: "pass", "partial".
std::string_view coverage_gate_code(analysis::CoverageGate gate);
std::optional<analysis::CoverageGate> coverage_gate_from_code(std::string_view code);

// Where GPU-Util came from: "samples", "polled", "samples+polled"; empty when from neither.
std::string gpu_util_from_words(analysis::GpuUtilFrom from);

// What time a span's GPU-Util covers: "the time the counters cover", or "the whole run (no usable
// chip samples)" when it stands alone (docs/method.md#gpu-util-without-chip-samples); empty when
// there is no GPU-Util.
std::string gpu_util_covers_words(const analysis::SpanResults& span);

// When NVIDIA's process lists showed two or more processes holding the GPU at once, what that means
// for the chip figures (docs/method.md#shared-gpus-in-the-headline); empty otherwise.
std::string shared_gpu_words(const analysis::Hygiene& hygiene);

// Stranded idle explained (docs/method.md#stranded-idle-explained): the verdict's code as report.json
// writes it ("input_bound", ...; empty for not_explained), the sentence people read ("input-bound:
// while GPU 0 idled, the 4 worker processes (pt_data_worker) used 3.9 of 4 cores"), why there is no
// verdict, and what the host was doing ("the command used 3.9 cores; busiest ...; host CPU ...").
std::string idle_verdict_code(analysis::IdleVerdict verdict);
std::string idle_verdict_words(const analysis::IdleExplanation& x, int gpu_index);
std::string idle_not_explained_words(analysis::IdleNotExplained why);
std::string idle_host_words(const analysis::IdleExplanation& x);

// A finding of the analysis, as the text of its note.
std::string finding_words(const analysis::AnalysisFinding& finding);

// A clock jump, as the text of its hygiene note; `run_start_ns` is the recording's start.
std::string clock_jump_words(const recording::ClockJump& jump, recording::TimeNs run_start_ns);

// Why a chip sample was left out: "first sample after the counters started: ...", "unit fp32 is not a
// number", ...; empty for a sample that was used.
std::string drop_words(analysis::SampleDrop drop, const analysis::SampleBreak& broken,
                       const recording::RecordingMeta& meta);

// Energy (docs/energy.md): the source's code ("counter", "power_draw", "none"), why the counter was
// not used ("absent", "went_back"; empty when it was), why there is no energy, and one line for
// people: "412.3 kJ (NVML's energy counter), 593 W mean; 12.1 kJ stranded (...)".
std::string_view energy_source_code(analysis::EnergySource source);
std::string_view counter_unused_code(analysis::CounterUnused why);
std::string energy_missing_words(const analysis::EnergyFigures& e);
std::string energy_words(const analysis::EnergyFigures& e);
// Joules per TFLOP (docs/energy.md#joules-per-tflop): why the span has no FLOPs, why it has no figure,
// and the words the terminal's and the page's row print.
std::string flops_missing_words(const analysis::EnergyFigures& e);
std::string joules_per_tflop_missing_words(const analysis::EnergyFigures& e);
std::string joules_per_tflop_words(const analysis::EnergyFigures& e);

// How a run ended, for people: "exited with code 3", "ended by SIGINT".
std::string run_ending_words(const recording::RunEnding& ending, int exit_code);
// The same in a table's cell: the exit code, or the signal's name ("3", "SIGINT").
std::string run_ending_cell(const recording::RunEnding& ending, int exit_code);

}  // namespace diescope::report
