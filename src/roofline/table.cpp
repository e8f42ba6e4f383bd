#include "diescope/roofline/table.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "diescope/core/error.hpp"
#include "internal.hpp"

namespace diescope::roofline {

namespace {
using detail::kNaN;

// NaN + x stays NaN only when both are NaN: a metric one launch lacks does not hide the others'.
double add_available(double a, double b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  return a + b;
}
}  // namespace

std::string_view precision_name(Precision p) {
  switch (p) {
    case Precision::fp16:
      return "fp16";
    case Precision::fp32:
      return "fp32";
    case Precision::fp64:
      return "fp64";
    case Precision::tensor_fp16:
      return "tensor fp16";
    case Precision::tensor_bf16:
      return "tensor bf16";
    case Precision::tensor_tf32:
      return "tensor tf32";
    case Precision::tensor_fp8:
      return "tensor fp8";
    case Precision::tensor_int8:
      return "tensor int8";
    case Precision::tensor_fp64:
      return "tensor fp64";
  }
  return "?";
}

std::string_view precision_unit(Precision p) {
  return p == Precision::tensor_int8 ? "OP" : "FLOP";
}

bool is_tensor(Precision p) {
  return index(p) >= index(Precision::tensor_fp16);
}

std::string_view level_name(Level l) {
  switch (l) {
    case Level::dram:
      return "dram";
    case Level::l2:
      return "l2";
    case Level::l1:
      return "l1";
  }
  return "?";
}

PerPrecision nan_per_precision() {
  PerPrecision a{};
  a.fill(kNaN);
  return a;
}

PerLevel nan_per_level() {
  PerLevel a{};
  a.fill(kNaN);
  return a;
}

double counter_peak_flop_per_s(const Row& r, Precision p) {
  return r.peak_flop_per_cycle[index(p)] * r.sm_hz;
}

double counter_peak_bytes_per_s(const Row& r, Level l) {
  return r.peak_bytes_per_cycle[index(l)] * r.level_hz[index(l)];
}

std::optional<Precision> dominant_precision(const Row& r) {
  std::optional<Precision> best;
  double most = 0;
  for (Precision p : kAllPrecisions) {
    const double f = r.flop[index(p)];
    if (std::isfinite(f) && f > most) {
      most = f;
      best = p;
    }
  }
  return best;
}

double dominant_flop(const Row& r) {
  const auto p = dominant_precision(r);
  return p ? r.flop[index(*p)] : 0.0;
}

double intensity(const Row& r, Level l) {
  const double b = r.bytes[index(l)];
  if (!std::isfinite(b) || b <= 0) return kNaN;
  return dominant_flop(r) / b;
}

double performance(const Row& r) {
  if (!(r.duration_s > 0)) return kNaN;
  return dominant_flop(r) / r.duration_s;
}

namespace {
// The measured ceiling when the calibration gave one, else the counter peak.
std::pair<double, bool> compute_ceiling(const Row& r, Precision p) {
  const double m = r.measured_flop_per_s[index(p)];
  if (std::isfinite(m) && m > 0) return {m, true};
  return {counter_peak_flop_per_s(r, p), false};
}
std::pair<double, bool> bandwidth_ceiling(const Row& r, Level l) {
  const double m = r.measured_bytes_per_s[index(l)];
  if (std::isfinite(m) && m > 0) return {m, true};
  return {counter_peak_bytes_per_s(r, l), false};
}
}  // namespace

Roof binding_roof(const Row& r) {
  Roof roof{kNaN, "", false};
  const auto p = dominant_precision(r);
  if (!p) return roof;
  const auto [compute, measured] = compute_ceiling(r, *p);
  if (std::isfinite(compute) && compute > 0) roof = Roof{compute, std::string(precision_name(*p)), measured};
  for (Level l : kAllLevels) {
    const double ai = intensity(r, l);
    const auto [bw, bw_measured] = bandwidth_ceiling(r, l);
    if (!std::isfinite(ai) || !std::isfinite(bw) || bw <= 0) continue;
    const double cap = ai * bw;
    if (std::isnan(roof.flop_per_s) || cap < roof.flop_per_s)
      roof = Roof{cap, std::string(level_name(l)), bw_measured};
  }
  return roof;
}

std::vector<std::size_t> borrow_counter_peaks(std::vector<Row>& rows) {
  auto has_peaks = [](const Row& r) {
    for (double v : r.peak_flop_per_cycle)
      if (std::isfinite(v)) return true;
    for (double v : r.peak_bytes_per_cycle)
      if (std::isfinite(v)) return true;
    return false;
  };
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (has_peaks(rows[i]) || rows[i].gpu.empty()) continue;
    for (const Row& donor : rows)
      if (donor.gpu == rows[i].gpu && has_peaks(donor)) {
        rows[i].peak_flop_per_cycle = donor.peak_flop_per_cycle;
        rows[i].peak_bytes_per_cycle = donor.peak_bytes_per_cycle;
        out.push_back(i);
        break;
      }
  }
  return out;
}

double pct_of_roof(const Row& r) {
  const Roof roof = binding_roof(r);
  return performance(r) / roof.flop_per_s * 100.0;
}

double joules_per_tflop(const Row& r) {
  // docs/roofline.md#energy
  const double flop = dominant_flop(r);
  if (!(std::isfinite(r.energy_j) && r.energy_j >= 0) || !(std::isfinite(flop) && flop > 0))
    return std::numeric_limits<double>::quiet_NaN();
  return r.energy_j / (flop / 1e12);
}

std::string joules_per_tflop_missing(const Row& r) {
  if (std::isfinite(joules_per_tflop(r))) return {};
  if (!std::isfinite(r.energy_j)) {
    switch (r.profiler) {
      case Profiler::ncu:
        return "no energy: ncu replays each launch once per pass, so NVML's counter read around the run is "
               "not the launch's";
      case Profiler::range:
        return "no energy: the range profiler does not read NVML's energy counter";
      case Profiler::sampled:
        return "no energy: the recording holds neither NVML's energy counter nor the power draw over the "
               "row's kernel windows";
    }
  }
  return "no FLOPs";
}

std::vector<Row> filter_regions(std::vector<Row> rows, const std::optional<std::regex>& keep,
                                std::vector<std::string>& warnings) {
  // docs/roofline.md#regions
  // Each backend's rows of an executable are judged apart: one backend may see regions another lacks.
  auto source = [](const Row& r) { return std::string(profiler_name(r.profiler)) + '\t' + r.executable; };
  std::set<std::string> with_regions, seen;
  std::vector<std::pair<std::string, std::string>> order;  // source, executable
  for (const Row& r : rows) {
    if (seen.insert(source(r)).second) order.emplace_back(source(r), r.executable);
    if (!r.region.empty()) with_regions.insert(source(r));
  }
  for (const auto& [src, exe] : order) {
    // The range backend says so itself when a program marks no region (docs/roofline.md#the-range-profiler).
    if (with_regions.count(src) == 0 && src.rfind("ncu\t", 0) == 0)
      warnings.push_back(
          exe +
          ": no launch is inside an NVTX region, so every launch is kept (Nsight Compute names a "
          "region only for launches inside an NVTX range; mark the code you want with "
          "nvtxRangePush/Pop or nvtxRangeStart/End to keep only that)");
  }
  std::vector<Row> out;
  out.reserve(rows.size());
  for (Row& r : rows) {
    const bool has_regions = with_regions.count(source(r)) > 0;
    if (has_regions && r.region.empty()) continue;
    if (keep && !std::regex_search(r.region, *keep)) continue;
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<Row> filter_kernels(std::vector<Row> rows, const std::regex& kernel) {
  rows.erase(std::remove_if(rows.begin(), rows.end(),
                            [&](const Row& r) { return !std::regex_search(r.kernel, kernel); }),
             rows.end());
  return rows;
}

std::string_view profiler_name(Profiler profiler) {
  switch (profiler) {
    case Profiler::ncu:
      return "ncu";
    case Profiler::range:
      return "range";
    case Profiler::sampled:
      return "sampled";
  }
  return "ncu";
}

std::optional<Profiler> profiler_from_name(std::string_view name) {
  for (Profiler p : {Profiler::ncu, Profiler::range, Profiler::sampled})
    if (profiler_name(p) == name) return p;
  return std::nullopt;
}

Aggregate parse_aggregate(std::string_view text) {
  if (text == "none") return Aggregate::none;
  if (text == "sum") return Aggregate::sum;
  if (text == "dominant") return Aggregate::dominant;
  throw core::UsageError("--aggregate " + std::string(text) + " is not one of sum, dominant, none",
                         "give --aggregate sum, --aggregate dominant or --aggregate none");
}

namespace {

// Adds `b` into `a`: work, bytes and time add; clocks are time-weighted means; peaks per cycle and
// measured ceilings are the GPU's and stay (docs/roofline.md#aggregation).
void accumulate(Row& a, const Row& b) {
  const double ta = a.duration_s, tb = b.duration_s, t = ta + tb;
  auto mean = [&](double x, double y) {
    if (std::isnan(x)) return y;
    if (std::isnan(y)) return x;
    return t > 0 ? (x * ta + y * tb) / t : x;
  };
  a.sm_hz = mean(a.sm_hz, b.sm_hz);
  for (Level l : kAllLevels) {
    a.level_hz[index(l)] = mean(a.level_hz[index(l)], b.level_hz[index(l)]);
    a.bytes[index(l)] = add_available(a.bytes[index(l)], b.bytes[index(l)]);
  }
  // docs/roofline.md#packed-half-precision: a range stays a range; a known part adds to both ends.
  const double fp16_a = a.flop[index(Precision::fp16)], fp16_b = b.flop[index(Precision::fp16)];
  if (!std::isnan(a.fp16_flop_high) || !std::isnan(b.fp16_flop_high)) {
    a.fp16_flop_high = add_available(std::isnan(a.fp16_flop_high) ? fp16_a : a.fp16_flop_high,
                                     std::isnan(b.fp16_flop_high) ? fp16_b : b.fp16_flop_high);
    if (a.fp16_why.empty()) a.fp16_why = b.fp16_why;
  }
  for (std::size_t i = 0; i < a.fp16_inst.size(); ++i)
    a.fp16_inst[i] = add_available(a.fp16_inst[i], b.fp16_inst[i]);
  for (Precision p : kAllPrecisions) a.flop[index(p)] = add_available(a.flop[index(p)], b.flop[index(p)]);
  a.tensor_inst += b.tensor_inst;
  a.duration_s = t;
  a.launches += b.launches;
  a.launch = std::min(a.launch, b.launch);
  if (a.grid != b.grid) a.grid.clear();
  if (a.block != b.block) a.block.clear();
  if (a.caches != b.caches) a.caches.clear();  // a group measured both ways: not one setting
  // docs/roofline.md#energy: joules add up only when every row of the group has them.
  a.energy_j = a.energy_j + b.energy_j;
  if (a.energy_source != b.energy_source) a.energy_source = kEnergyPowerDraw;  // the weaker one
  if (std::isnan(a.energy_j)) a.energy_source.clear();
}

}  // namespace

std::vector<Row> aggregate(const std::vector<Row>& rows, Aggregate how) {
  if (how == Aggregate::none) return rows;
  using Key = std::tuple<std::string, std::string, std::string>;  // backend, executable, region
  std::map<Key, std::size_t> group_of;
  std::vector<Key> order;
  std::vector<Row> sums;
  // dominant: per group, per kernel name, the kernel's launches added
  std::vector<std::map<std::string, Row>> per_kernel;
  for (const Row& r : rows) {
    const Key key{std::string(profiler_name(r.profiler)), r.executable, r.region};
    auto [it, fresh] = group_of.emplace(key, sums.size());
    if (fresh) {
      order.push_back(key);
      sums.push_back(r);
      per_kernel.emplace_back();
      per_kernel.back().emplace(r.kernel, r);
      continue;
    }
    accumulate(sums[it->second], r);
    auto& kernels = per_kernel[it->second];
    auto [k, new_kernel] = kernels.emplace(r.kernel, r);
    if (!new_kernel) accumulate(k->second, r);
  }
  std::vector<Row> out;
  for (std::size_t g = 0; g < sums.size(); ++g) {
    const auto& kernels = per_kernel[g];
    const auto best = std::max_element(kernels.begin(), kernels.end(), [](const auto& x, const auto& y) {
      return x.second.duration_s < y.second.duration_s;
    });
    if (how == Aggregate::sum) {
      Row s = sums[g];
      s.kernel = fmt::format("{} kernels; most time: {}", kernels.size(), best->first);
      out.push_back(std::move(s));
    } else {
      out.push_back(best->second);
    }
  }
  return out;
}

std::optional<std::string> mixed_caches_warning(const std::vector<Row>& rows) {
  // docs/roofline.md#dram-bytes-and-the-cache-flush
  struct Kind {
    const char* value;
    const char* what;
    std::size_t rows = 0;
    std::set<std::string> backends;
  };
  std::array<Kind, 3> kinds = {
      {{kCachesFlushed, "from caches flushed before every kernel (ncu's default)", 0, {}},
       {kCachesUnflushed, "from the caches ncu's previous replay pass left", 0, {}},
       {kCachesProgram, "from the caches the program left", 0, {}}}};
  for (const Row& r : rows)
    for (Kind& k : kinds)
      if (r.caches == k.value) {
        ++k.rows;
        k.backends.insert(std::string(profiler_name(r.profiler)));
      }
  std::string parts;
  int present = 0;
  for (const Kind& k : kinds) {
    if (k.rows == 0) continue;
    ++present;
    std::string names;
    for (const auto& n : k.backends) names += (names.empty() ? "" : ", ") + n;
    parts += fmt::format("{}{} row(s) ({}) {}", parts.empty() ? "" : "; ", k.rows, names, k.what);
  }
  if (present < 2) return std::nullopt;
  return "the rows were measured from caches in different states: " + parts +
         ". Their DRAM bytes are not comparable (on an H200, ResNet-50's backward pass moved 10.8% more as "
         "the "
         "program ran than ncu's default counts, and ncu without the flush counted 6.9% more again), so "
         "compare DRAM intensities only between rows of one kind: the range or sampled backend for the "
         "program as it runs, ncu's default for each kernel alone from a cold cache "
         "(docs/roofline.md#dram-bytes-and-the-cache-flush)";
}

std::vector<Row> concatenate(const std::vector<std::vector<Row>>& tables) {
  std::set<std::tuple<std::string, std::string, std::string, std::int64_t>> seen;
  std::vector<Row> out;
  for (const auto& t : tables)
    for (const Row& r : t)
      if (seen.emplace(std::string(profiler_name(r.profiler)), r.executable, r.region, r.launch).second)
        out.push_back(r);
  return out;
}

}  // namespace diescope::roofline
