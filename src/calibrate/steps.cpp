#include "diescope/calibrate/steps.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/core.h>

#include "diescope/core/error.hpp"
#include "diescope/core/version.hpp"

#include "internal.hpp"

namespace diescope::calibrate {
namespace {

using detail::kNaN;

std::vector<std::int64_t> powers_of_two(std::int64_t from, std::int64_t to) {
  std::vector<std::int64_t> out;
  for (std::int64_t k = from; k <= to; k *= 2) out.push_back(k);
  return out;
}

std::string step_name(StepWorkload w, int loaded, int sm_count) {
  return fmt::format("{} {}/{} SMs", step_workload_name(w), loaded, sm_count);
}

// The DRAM peak the counter implies, from the DRAM unit's check: the median over its counted judged
// steps, which agree within 3% when the unit passes.
void set_dram_implied_peak(StreamFit& stream, const UnitCheck& dram) {
  std::vector<double> peaks;
  for (const StepCheck& c : dram.steps)
    if (c.role == StepRole::judged && c.counted && std::isfinite(c.implied_peak))
      peaks.push_back(c.implied_peak);
  if (peaks.empty()) return;
  stream.dram_implied_peak_bytes_per_s = median(std::move(peaks));
  stream.dram_peak_reason.clear();
}

}  // namespace

std::string_view step_workload_name(StepWorkload workload) {
  switch (workload) {
    case StepWorkload::ffma:
      return "ffma";
    case StepWorkload::imad:
      return "imad";
    case StepWorkload::ffma_imad:
      return "ffma+imad";
    case StepWorkload::stream:
      return "stream-triad";
    case StepWorkload::bf16_mma:
      return "bf16-mma";
    case StepWorkload::bf16_wgmma:
      return "bf16-wgmma";
    case StepWorkload::dfma:
      return "dfma";
    case StepWorkload::l1_load:
      return "l1-load";
    case StepWorkload::l2_read:
      return "l2-read";
  }
  return "unknown";
}

std::optional<StepWorkload> judged_workload(std::string_view unit, int compute_capability) {
  if (unit == "fp32") return StepWorkload::ffma;
  if (unit == "dram") return StepWorkload::stream;
  if (unit == "tensor") {
    if (compute_capability == 90) return StepWorkload::bf16_wgmma;
    if (compute_capability >= 80) return StepWorkload::bf16_mma;
    return std::nullopt;  // unavailable_check says why
  }
  if (unit == "fp64") return StepWorkload::dfma;
  if (unit == "ldst") return StepWorkload::l1_load;
  if (unit == "l2") return StepWorkload::l2_read;
  return std::nullopt;
}

std::string unavailable_check(std::string_view unit, int compute_capability) {
  if (unit == "tensor" && compute_capability < 80)
    return fmt::format(
        "the tensor check is unavailable on compute capability {}.{}: its bf16 mma.sync needs 8.0 or "
        "later (docs/calibration.md#steps)",
        compute_capability / 10, compute_capability % 10);
  return {};
}

std::string LaunchGeometry::name() const {
  return fmt::format("{}x{}x{}/{}x{}", bm, bn, bk, tm, tn);
}

std::vector<int> load_ladder(int sm_count, bool quick) {
  std::vector<int> loads;
  if (sm_count <= 0) return loads;
  const std::vector<int> candidates = quick ? std::vector<int>{sm_count, sm_count / 4}
                                            : std::vector<int>{sm_count, sm_count / 2, sm_count / 4, 1};
  for (int l : candidates)
    if (l >= 1 && std::find(loads.begin(), loads.end(), l) == loads.end()) loads.push_back(l);
  return loads;
}

const std::vector<LaunchGeometry>& tiled_contraction_leaves() {
  // The instantiations launch_tiled_contraction dispatches to (src/workloads/gpu/calibrate_kernels.cu).
  static const std::vector<LaunchGeometry> leaves = {LaunchGeometry{32, 32, 8, 4, 4},
                                                     LaunchGeometry{64, 64, 8, 4, 4}};
  return leaves;
}

std::string not_a_leaf(const LaunchGeometry& g, std::int64_t size) {
  const auto& leaves = tiled_contraction_leaves();
  const bool known = std::any_of(leaves.begin(), leaves.end(), [&](const LaunchGeometry& l) {
    return l.bm == g.bm && l.bn == g.bn && l.bk == g.bk && l.tm == g.tm && l.tn == g.tn;
  });
  if (!known) {
    std::string names;
    for (const LaunchGeometry& l : leaves) names += (names.empty() ? "" : ", ") + l.name();
    return fmt::format(
        "launch geometry {} is not a leaf of the tiled contraction at size {}: the family has "
        "kernels for {} only",
        g.name(), size, names);
  }
  if (size <= 0 || size % g.bm != 0 || size % g.bn != 0)
    return fmt::format(
        "launch geometry {} is not a leaf of the tiled contraction at size {}: its {}x{} block "
        "tile does not divide a {}x{} output, and the kernel has no range guards",
        g.name(), size, g.bm, g.bn, size, size);
  return {};
}

void settle_launch_sizes(LaunchPlan& plan) {
  plan.sizes_of.clear();
  for (const LaunchGeometry& g : plan.geometries) {
    std::vector<std::int64_t> sizes;
    for (std::int64_t size : plan.sizes)
      if (size > 0 && size % g.bm == 0 && size % g.bn == 0) sizes.push_back(size);
    if (sizes.empty())
      throw core::UsageError(
          fmt::format("launch geometry {} tiles none of the launch sweep's sizes", g.name()),
          "give the sweep sizes that are multiples of the geometry's block tile");
    for (std::int64_t size : sizes)
      if (const std::string why = not_a_leaf(g, size); !why.empty())
        throw core::UsageError(
            why,
            "time only the tiled contraction's leaves (32x32x8/4x4, 64x64x8/4x4), or add "
            "the geometry's kernel to calibrate_kernels.cu and to tiled_contraction_leaves()");
    plan.sizes_of.push_back(std::move(sizes));
  }
}

CalibrationPlan plan_calibration(const DeviceFacts& facts, bool quick) {
  CalibrationPlan plan;
  plan.quick = quick;
  const int sms = facts.gpu.sm_count;
  const double seconds = quick ? kQuickStepSeconds : kFullStepSeconds;
  for (const recording::ColumnDef& unit : facts.units) {
    const std::optional<StepWorkload> w = judged_workload(unit.key, facts.gpu.compute_capability);
    if (unit_rule(unit.key) == nullptr) continue;
    if (!w) {
      if (std::string why = unavailable_check(unit.key, facts.gpu.compute_capability); !why.empty())
        plan.unavailable.push_back(UnavailableCheck{unit.key, std::move(why)});
      continue;
    }
    for (int load : load_ladder(sms, quick))
      plan.steps.push_back(StepPlan{unit.key, step_name(*w, load, sms), *w, StepRole::judged, load, seconds});
    if (unit.key == "fp32")
      for (StepWorkload extra : {StepWorkload::imad, StepWorkload::ffma_imad})
        plan.steps.push_back(
            StepPlan{unit.key, step_name(extra, sms, sms), extra, StepRole::reported, sms, seconds});
  }
  plan.stream.repeats = quick ? 3 : kStreamDefaultRepeats;
  plan.working_set.ks = powers_of_two(256, 65536);
  plan.issue.ks = powers_of_two(256, 32768);
  plan.launch.geometries = {LaunchGeometry{32, 32, 8, 4, 4}, LaunchGeometry{64, 64, 8, 4, 4}};
  // Up to 4096: on an H200 no point up to 1024 filled the device (the first run left the fit unfittable).
  plan.launch.sizes = powers_of_two(32, 4096);
  settle_launch_sizes(plan.launch);
  // A quick setup check reads the counters against known work; the sweeps are a calibration's.
  plan.run_working_set = plan.run_issue = plan.run_launch = !quick;
  plan.stream_seconds = quick ? 2 : 5;
  return plan;
}

DeviceModel fit_device_model(DeviceModel m, const recording::GpuIdentity& gpu) {
  if (!m.stream_timings.empty()) m.stream = fit_stream(m.stream_timings, gpu.l2_bytes);
  std::optional<double> dram;
  if (m.stream && std::isfinite(m.stream->bandwidth_bytes_per_s)) dram = m.stream->bandwidth_bytes_per_s;
  if (!m.working_set.empty()) m.cache = fit_capacity(m.working_set, dram);
  if (!m.reread.empty()) m.cache_reread = fit_capacity(m.reread, dram);
  if (!m.launch_points.empty()) m.fill = fit_fill(m.launch_points, gpu.sm_count);
  if (!m.issue_points.empty()) {
    std::optional<FillModel> fill;
    if (m.fill)
      if (const auto* f = std::get_if<FillFit>(&*m.fill))
        fill = FillModel{f->cores, f->saturation, FillForm::capped};
    m.issue = fit_issue_rate(m.issue_points, fill);
  }
  // Each point against the fitted model: its model time and its distinct-byte bound.
  for (auto* sweep : {&m.working_set, &m.reread}) {
    const std::optional<CapacityFit>& capacity = sweep == &m.working_set ? m.cache : m.cache_reread;
    for (WorkingSetPoint& p : *sweep) {
      if (capacity) p.rank_ms = working_set_rank_ms(p, *capacity, dram);
      p.bound_ms = distinct_bound_ms(p.distinct_bytes, dram);
    }
  }
  std::optional<FillModel> fill;
  if (m.fill)
    if (const auto* f = std::get_if<FillFit>(&*m.fill))
      fill = FillModel{f->cores, f->saturation, FillForm::capped};
  for (IssuePoint& p : m.issue_points) {
    if (m.issue)
      if (const auto* f = std::get_if<IssueFit>(&*m.issue)) p.rank_ms = issue_rank_ms(p, *f, fill);
    p.bound_ms = distinct_bound_ms(p.distinct_bytes, dram);
  }
  return m;
}

std::vector<MeasuredStep> steps_in_plan_order(const CalibrationPlan& plan,
                                              std::vector<MeasuredStep> answers) {
  std::vector<MeasuredStep> ordered;
  for (const StepPlan& step : plan.steps) {
    const auto it = std::find_if(answers.begin(), answers.end(),
                                 [&step](const MeasuredStep& s) { return s.name == step.name; });
    if (it == answers.end()) {
      MeasuredStep missing;
      missing.unit = step.unit;
      missing.name = step.name;
      missing.role = step.role;
      missing.loaded_sms = step.loaded_sms;
      missing.work = kNaN;
      missing.reading_pct = kNaN;
      missing.counted_bytes = kNaN;
      missing.sm_clock_mhz = missing.mem_clock_min_mhz = missing.mem_clock_max_mhz = kNaN;
      ordered.push_back(std::move(missing));
      continue;
    }
    MeasuredStep answered = std::move(*it);
    answers.erase(it);
    answered.role = step.role;
    ordered.push_back(std::move(answered));
  }
  return ordered;
}

CalibrationFile build_calibration(const DeviceFacts& facts, const CalibrationPlan& plan,
                                  const DeviceAnswers& answers, const RunInfo& info) {
  const std::vector<MeasuredStep> measured = steps_in_plan_order(plan, answers.steps);
  // A sweep the plan left out is not fitted, whatever was answered for it.
  DeviceModel model;
  model.stream_timings = answers.stream;
  if (plan.run_working_set) model.working_set = answers.working_set;
  model.reread = answers.reread;
  if (plan.run_launch) model.launch_points = answers.launch;
  if (plan.run_issue) model.issue_points = answers.issue;
  model = fit_device_model(std::move(model), facts.gpu);

  CalibrationFile file;
  file.schema = kCalibrationSchemaVersion;
  file.method = core::kMethodVersion;
  file.tool_version = core::kToolVersion;
  file.commit = info.commit;
  file.date = info.date;
  file.quick = plan.quick;
  file.gpu = CalibrationGpu{
      facts.gpu.model,    facts.gpu.driver,  facts.gpu.chip, facts.gpu.uuid, facts.gpu.compute_capability,
      facts.gpu.sm_count, facts.gpu.l2_bytes};
  file.unit_table = facts.unit_table;
  for (const recording::ColumnDef& unit : facts.units) {
    const UnitRule* rule = unit_rule(unit.key);
    if (rule == nullptr) continue;
    const auto unavailable = std::find_if(plan.unavailable.begin(), plan.unavailable.end(),
                                          [&unit](const UnavailableCheck& u) { return u.unit == unit.key; });
    if (unavailable != plan.unavailable.end()) {
      UnitCheck none;
      none.unit = unit.key;
      none.verdict = Verdict::no_check;
      none.reason = unavailable->reason;
      none.ceiling_pct = std::numeric_limits<double>::quiet_NaN();
      none.ceiling_reason = unavailable->reason;
      file.units.push_back(calibrated_unit(unit, *rule, none));
      continue;
    }
    const bool has_steps = std::any_of(measured.begin(), measured.end(),
                                       [&unit](const MeasuredStep& s) { return s.unit == unit.key; });
    if (!has_steps) continue;
    const UnitCheck check = check_unit(*rule, measured);
    if (unit.key == "dram" && model.stream) set_dram_implied_peak(*model.stream, check);
    file.units.push_back(calibrated_unit(unit, *rule, check));
  }
  file.device_model = device_model_json(model);
  return file;
}

}  // namespace diescope::calibrate
