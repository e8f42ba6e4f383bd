#include "diescope/calibrate/device_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/core.h>

#include "internal.hpp"

namespace diescope::calibrate {
namespace {

using detail::kNaN;
using detail::positive_finite;

bool is_power_of_two(std::uint64_t x) {
  return x != 0 && (x & (x - 1)) == 0;
}

std::string mib(double bytes) {
  return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024.0));
}

}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) return kNaN;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

// ---- STREAM ----

StreamFit fit_stream(const std::vector<StreamTiming>& timings, std::int64_t l2_bytes) {
  StreamFit fit;
  fit.bandwidth_bytes_per_s = kNaN;
  if (l2_bytes <= 0)
    fit.note = "the L2 size is unknown, so whether the vectors were past the cache was not checked";
  for (const StreamTiming& t : timings) {
    StreamKernelRate rate;
    rate.kernel = t.kernel;
    rate.bytes = stream_bytes(t.kernel, t.elements);
    rate.best_seconds = kNaN;
    rate.bytes_per_s = kNaN;
    for (double s : t.seconds) {
      if (!positive_finite(s)) continue;
      ++rate.repeats;
      if (std::isnan(rate.best_seconds) || s < rate.best_seconds) rate.best_seconds = s;
    }
    const std::string name(stream_kernel_name(t.kernel));
    if (!is_power_of_two(t.elements)) {
      rate.reason = fmt::format(
          "{} elements is not a power of two: the kernel needs a range guard, so its "
          "byte count is not exact",
          t.elements);
    } else if (rate.repeats == 0) {
      rate.reason = fmt::format("no repeat of {} has a positive, finite time", name);
    } else if (l2_bytes > 0 &&
               static_cast<double>(rate.bytes) < kStreamMinL2Multiple * static_cast<double>(l2_bytes)) {
      rate.reason = fmt::format("{} touches {} per launch, less than {:g} x the {} L2: not a DRAM rate", name,
                                mib(static_cast<double>(rate.bytes)), kStreamMinL2Multiple,
                                mib(static_cast<double>(l2_bytes)));
    } else {
      rate.bytes_per_s = static_cast<double>(rate.bytes) / rate.best_seconds;
      if (std::isnan(fit.bandwidth_bytes_per_s) || rate.bytes_per_s > fit.bandwidth_bytes_per_s) {
        fit.bandwidth_bytes_per_s = rate.bytes_per_s;
        fit.best_kernel = name;
      }
    }
    fit.kernels.push_back(std::move(rate));
  }
  if (fit.kernels.empty())
    fit.reason = "no STREAM kernel was timed";
  else if (std::isnan(fit.bandwidth_bytes_per_s))
    fit.reason = "no STREAM kernel gave a DRAM rate: " + fit.kernels.front().reason;
  return fit;
}

// ---- Working-set sweep ----

double requested_rate(const WorkingSetPoint& point) {
  if (!positive_finite(point.seconds)) return kNaN;
  return static_cast<double>(point.requested_bytes) / point.seconds;
}

CapacityFit fit_capacity(const std::vector<WorkingSetPoint>& points, std::optional<double> dram_rate) {
  struct Rated {
    std::int64_t ws;
    double rate;
  };
  std::vector<Rated> valid;
  for (const WorkingSetPoint& p : points) {
    const double rate = requested_rate(p);
    if (p.working_set_bytes > 0 && p.requested_bytes > 0 && positive_finite(rate))
      valid.push_back({p.working_set_bytes, rate});
  }
  if (valid.size() < 2)
    return CapacityTooFewPoints{fmt::format(
        "{} point(s) with a positive working set, bytes and time; the fit needs 2", valid.size())};

  const auto fastest_it = std::max_element(valid.begin(), valid.end(),
                                           [](const Rated& a, const Rated& b) { return a.rate < b.rate; });
  const Rated fastest = *fastest_it;
  // Shorter kernels than the fastest one read slow because they do not amortise their launch.
  std::vector<Rated> kept;
  for (const Rated& r : valid)
    if (r.ws >= fastest.ws) kept.push_back(r);
  if (kept.size() < 2)
    return CapacityTooFewPoints{
        fmt::format("the fastest point has the largest working set ({} bytes), so no point lies past it: "
                    "extend the sweep "
                    "to larger working sets",
                    fastest.ws)};

  double threshold = 0;
  if (dram_rate && positive_finite(*dram_rate)) {
    threshold = std::sqrt(fastest.rate * *dram_rate);
  } else {
    const double slowest = std::min_element(kept.begin(), kept.end(), [](const Rated& a, const Rated& b) {
                             return a.rate < b.rate;
                           })->rate;
    const double contrast = fastest.rate / slowest;
    if (contrast < kMinCapacityContrast) return CapacityNoTransition{contrast};
    threshold = std::sqrt(fastest.rate * slowest);
  }

  std::vector<double> cached_rates;
  std::int64_t cached_ws = 0;                                          // the largest cached working set
  std::int64_t spilled_ws = std::numeric_limits<std::int64_t>::max();  // the smallest spilled one
  std::int64_t largest_ws = 0, smallest_ws = std::numeric_limits<std::int64_t>::max();
  bool any_spilled = false;
  for (const Rated& r : kept) {
    largest_ws = std::max(largest_ws, r.ws);
    smallest_ws = std::min(smallest_ws, r.ws);
    if (r.rate >= threshold) {
      cached_rates.push_back(r.rate);
      cached_ws = std::max(cached_ws, r.ws);
    } else {
      any_spilled = true;
      spilled_ws = std::min(spilled_ws, r.ws);
    }
  }
  if (cached_rates.empty()) return CapacityAllSpilled{smallest_ws};
  if (!any_spilled) return CapacityAllCached{largest_ws, median(cached_rates)};
  CapacityTransition t;
  t.cached_ws = cached_ws;
  t.spilled_ws = spilled_ws;
  t.capacity = std::llround(std::sqrt(static_cast<double>(cached_ws) * static_cast<double>(spilled_ws)));
  t.monotone = cached_ws < spilled_ws;
  t.cache_rate = median(cached_rates);
  return t;
}

// ---- Launch fill ----

double context_fill(const LaunchContext& c, int multiprocessors, int fill_threads, FillForm form) {
  if (multiprocessors <= 0 || fill_threads <= 0 || c.blocks <= 0 || c.threads_per_block <= 0) return kNaN;
  const double t = fill_threads;
  const double threads = form == FillForm::capped ? std::min(static_cast<double>(c.threads_per_block), t)
                                                  : static_cast<double>(c.threads_per_block);
  return std::min(1.0, static_cast<double>(c.blocks) * threads / (multiprocessors * t));
}

double effective_ops(const std::vector<LaunchContext>& contexts, int multiprocessors, int fill_threads,
                     FillForm form) {
  double total = 0;
  for (const LaunchContext& c : contexts) {
    if (c.scalar_ops == 0) continue;
    total += c.scalar_ops / context_fill(c, multiprocessors, fill_threads, form);
  }
  return total;
}

double kernel_fill(const std::vector<LaunchContext>& contexts, int multiprocessors, int fill_threads,
                   FillForm form) {
  double ops = 0;
  for (const LaunchContext& c : contexts) ops += c.scalar_ops;
  if (!(ops > 0)) return kNaN;
  return ops / effective_ops(contexts, multiprocessors, fill_threads, form);
}

// ---- Issue rate ----

IssueRateFit fit_issue_rate(const std::vector<IssuePoint>& points, std::optional<FillModel> fill) {
  std::vector<double> xs, ys;
  for (const IssuePoint& p : points) {
    if (!positive_finite(p.scalar_ops) || !positive_finite(p.seconds)) continue;
    double ops = p.scalar_ops;
    if (fill) {
      if (p.contexts.empty())
        return IssueUnfittable{
            fmt::format("the point at k={} has no launch contexts, so its fill is unknown", p.k)};
      const double f = kernel_fill(p.contexts, fill->multiprocessors, fill->fill_threads, fill->form);
      if (!positive_finite(f))
        return IssueUnfittable{fmt::format("the point at k={} has no finite launch fill", p.k)};
      ops /= f;
    }
    xs.push_back(ops);
    ys.push_back(p.seconds);
  }
  if (xs.size() < 2)
    return IssueUnfittable{
        fmt::format("too few points: {} with operations and a positive time, the line needs 2", xs.size())};
  const double n = static_cast<double>(xs.size());
  double x_mean = 0, y_mean = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    x_mean += xs[i] / n;
    y_mean += ys[i] / n;
  }
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    sxx += (xs[i] - x_mean) * (xs[i] - x_mean);
    sxy += (xs[i] - x_mean) * (ys[i] - y_mean);
  }
  if (!(sxx > 0)) return IssueUnfittable{"no growth: every point has the same operation count"};
  const double slope = sxy / sxx;
  if (!positive_finite(slope))
    return IssueUnfittable{fmt::format(
        "no growth: the time does not rise with the operations (slope {:g} s per operation)", slope)};
  IssueFit fit;
  fit.rate = 1 / slope;
  fit.latency_s = y_mean - slope * x_mean;
  fit.points = static_cast<int>(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i)
    fit.max_residual = std::max(fit.max_residual, std::abs(fit.latency_s + slope * xs[i] - ys[i]) / ys[i]);
  return fit;
}

// ---- Launch-fill fit ----

const std::vector<int>& default_fill_candidates() {
  static const std::vector<int> candidates = {64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048};
  return candidates;
}

namespace {

double scalar_ops_of(const LaunchPoint& p) {
  double ops = 0;
  for (const LaunchContext& c : p.contexts) ops += c.scalar_ops;
  return ops;
}

struct SeriesFit {
  double seconds_per_op = kNaN;  // 1 / rate
  double squared = 0;            // summed squared relative residuals
  double max_abs = 0;            // largest relative residual
};

// Proportional fit seconds = x * ops minimising sum ((x ops_i - s_i) / s_i)^2 = sum (x a_i - 1)^2 with
// a_i = ops_i / s_i: x = sum a_i / sum a_i^2.
SeriesFit proportional_fit(const std::vector<double>& ops, const std::vector<double>& seconds) {
  SeriesFit f;
  double sum_a = 0, sum_a2 = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const double a = ops[i] / seconds[i];
    sum_a += a;
    sum_a2 += a * a;
  }
  if (!(sum_a2 > 0) || !std::isfinite(sum_a2)) return f;
  f.seconds_per_op = sum_a / sum_a2;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const double r = f.seconds_per_op * ops[i] / seconds[i] - 1;
    f.squared += r * r;
    f.max_abs = std::max(f.max_abs, std::abs(r));
  }
  return f;
}

// Points grouped by geometry, in the order each geometry first appears.
struct Series {
  std::string geometry;
  std::vector<const LaunchPoint*> points;
};

struct CandidateFit {
  bool finite = false;
  double squared = 0;
  double max_abs = 0;
  double lead_rate = kNaN;
};

// Fits every series with the operations `ops_of` gives each point.
template <typename OpsOf>
CandidateFit fit_series(const std::vector<Series>& series, OpsOf ops_of) {
  CandidateFit c;
  c.finite = true;
  for (std::size_t g = 0; g < series.size(); ++g) {
    std::vector<double> ops, secs;
    for (const LaunchPoint* p : series[g].points) {
      ops.push_back(ops_of(*p));
      secs.push_back(p->seconds);
    }
    const SeriesFit f = proportional_fit(ops, secs);
    if (!positive_finite(f.seconds_per_op) || !std::isfinite(f.squared)) return CandidateFit{};
    c.squared += f.squared;
    c.max_abs = std::max(c.max_abs, f.max_abs);
    if (g == 0) c.lead_rate = 1 / f.seconds_per_op;
  }
  return c;
}

struct BestCandidate {
  int t = 0;
  CandidateFit fit;
};

std::optional<BestCandidate> best_candidate(const std::vector<Series>& series, int multiprocessors,
                                            const std::vector<int>& candidates, FillForm form) {
  std::optional<BestCandidate> best;
  for (int t : candidates) {
    const CandidateFit f = fit_series(
        series, [&](const LaunchPoint& p) { return effective_ops(p.contexts, multiprocessors, t, form); });
    if (!f.finite) continue;
    if (!best || f.squared < best->fit.squared) best = BestCandidate{t, f};
  }
  return best;
}

std::string point_name(const LaunchPoint& p) {
  return fmt::format("{} at {}x{}x{}", p.geometry, p.m, p.n, p.k);
}

}  // namespace

LaunchFillFit fit_fill(const std::vector<LaunchPoint>& points, int multiprocessors,
                       const std::vector<int>& candidates, double starved) {
  if (multiprocessors <= 0)
    return FillUnfittable{fmt::format("{} multiprocessors: the fill needs at least 1", multiprocessors)};
  if (points.size() < 2)
    return FillUnfittable{fmt::format("too few points: {}, the fit needs 2", points.size())};
  for (const LaunchPoint& p : points) {
    if (p.contexts.empty()) return FillUnfittable{fmt::format("{} has no launch contexts", point_name(p))};
    for (const LaunchContext& c : p.contexts)
      if (c.mma_ops > 0)
        return FillUnfittable{
            fmt::format("{} has tile-MMA work, which the fill does not model", point_name(p))};
    if (!positive_finite(p.seconds))
      return FillUnfittable{fmt::format("{} has no positive, finite time", point_name(p))};
    if (!positive_finite(scalar_ops_of(p)))
      return FillUnfittable{fmt::format("{} has no scalar operations", point_name(p))};
  }

  // Leave out latency-starved points: below `starved` of their geometry's best raw throughput.
  std::map<std::string, double> best_throughput;
  for (const LaunchPoint& p : points) {
    double& best = best_throughput[p.geometry];
    best = std::max(best, scalar_ops_of(p) / p.seconds);
  }
  std::vector<Series> series;
  int starved_points = 0, kept = 0;
  for (const LaunchPoint& p : points) {
    if (scalar_ops_of(p) / p.seconds < starved * best_throughput[p.geometry]) {
      ++starved_points;
      continue;
    }
    auto it =
        std::find_if(series.begin(), series.end(), [&](const Series& s) { return s.geometry == p.geometry; });
    if (it == series.end()) {
      series.push_back(Series{p.geometry, {}});
      it = series.end() - 1;
    }
    it->points.push_back(&p);
    ++kept;
  }
  if (kept < 2)
    return FillUnfittable{fmt::format("too few points: {} left after {} latency-starved, the fit needs 2",
                                      kept, starved_points)};

  const std::optional<BestCandidate> best =
      best_candidate(series, multiprocessors, candidates, FillForm::capped);
  if (!best) return FillUnfittable{"no candidate saturation gives a finite fit"};

  const int t = best->t;
  int partial = 0;
  bool identified = false;
  for (const Series& s : series) {
    bool full = false, below = false;
    for (const LaunchPoint* p : s.points) {
      const double f = kernel_fill(p->contexts, multiprocessors, t);
      if (f >= 1)
        full = true;
      else
        below = true;
      if (f < kPartialFill) ++partial;
    }
    identified = identified || (full && below);
  }
  if (!identified)
    return FillUnfittable{fmt::format(
        "under the best saturation ({} threads) no geometry has points both at and below full fill, so each "
        "geometry's rate would absorb any saturation",
        t)};
  if (partial < 2)
    return FillUnfittable{
        fmt::format("under the best saturation ({} threads) only {} point(s) sit below {:g} fill; "
                    "identifying a saturation "
                    "needs 2",
                    t, partial, kPartialFill)};

  FillFit fit;
  fit.cores = multiprocessors;
  fit.saturation = t;
  fit.rate = best->fit.lead_rate;
  fit.max_residual = best->fit.max_abs;
  fit.partial_points = partial;
  fit.points = kept;
  fit.starved_points = starved_points;
  const CandidateFit raw = fit_series(series, [](const LaunchPoint& p) { return scalar_ops_of(p); });
  if (raw.finite) {
    fit.raw_rate = raw.lead_rate;
    fit.raw_residual = raw.max_abs;
  }
  if (const auto uncapped = best_candidate(series, multiprocessors, candidates, FillForm::uncapped))
    fit.uncapped = std::make_pair(uncapped->t, uncapped->fit.max_abs);
  return fit;
}

double working_set_rank_ms(const WorkingSetPoint& point, const CapacityFit& capacity,
                           std::optional<double> dram_rate) {
  double rate = kNaN;
  if (const auto* t = std::get_if<CapacityTransition>(&capacity)) {
    rate = point.working_set_bytes <= t->capacity ? t->cache_rate : dram_rate.value_or(kNaN);
  } else if (const auto* c = std::get_if<CapacityAllCached>(&capacity)) {
    rate = c->cache_rate;
  } else if (std::holds_alternative<CapacityAllSpilled>(capacity)) {
    rate = dram_rate.value_or(kNaN);
  }
  if (!(rate > 0) || !std::isfinite(rate) || point.requested_bytes <= 0) return kNaN;
  return static_cast<double>(point.requested_bytes) / rate * 1e3;
}

double issue_rank_ms(const IssuePoint& point, const IssueFit& fit, std::optional<FillModel> fill) {
  double ops = point.scalar_ops;
  if (fill) ops = effective_ops(point.contexts, fill->multiprocessors, fill->fill_threads, fill->form);
  if (!(fit.rate > 0) || !std::isfinite(ops)) return std::numeric_limits<double>::quiet_NaN();
  return (fit.latency_s + ops / fit.rate) * 1e3;
}

double distinct_bound_ms(std::int64_t distinct_bytes, std::optional<double> dram_rate) {
  if (distinct_bytes <= 0 || !dram_rate || !(*dram_rate > 0) || !std::isfinite(*dram_rate))
    return std::numeric_limits<double>::quiet_NaN();
  return static_cast<double>(distinct_bytes) / *dram_rate * 1e3;
}

}  // namespace diescope::calibrate
