#include "diescope/roofline/sampled.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include "diescope/analysis/energy.hpp"
#include "diescope/core/error.hpp"
#include "internal.hpp"

namespace diescope::roofline {

namespace {

using detail::kNaN;

double seconds(std::int64_t ns) {
  return static_cast<double>(ns) * 1e-9;
}

// The samples that overlap [from, to], as indexes into `samples` (in time order).
std::pair<std::size_t, std::size_t> overlapping(const std::vector<ActivitySample>& samples, std::int64_t from,
                                                std::int64_t to) {
  std::size_t first = 0;
  while (first < samples.size() && samples[first].end_ns <= from) ++first;
  std::size_t last = first;
  while (last < samples.size() && samples[last].start_ns < to) ++last;
  return {first, last};  // [first, last)
}

// docs/roofline.md#kernel-windows: a window's figures from its samples [a, b].
Window measure_window(const std::vector<ActivitySample>& s, std::size_t a, std::size_t b) {
  Window w;
  w.start_ns = s[a].start_ns;
  w.end_ns = s[b].end_ns;
  double act_time = 0, act_sum = 0, known_bytes = 0, known_time = 0, unread_time = 0;
  for (std::size_t i = a; i <= b; ++i) {
    const double len = seconds(s[i].end_ns - s[i].start_ns);
    if (!std::isnan(s[i].activity_pct)) {
      act_sum += s[i].activity_pct * len;
      act_time += len;
    }
    if (std::isnan(s[i].dram_bytes)) {
      unread_time += len;
      ++w.unread_samples;
    } else {
      known_bytes += s[i].dram_bytes;
      known_time += len;
    }
  }
  w.mean_activity_pct = act_time > 0 ? act_sum / act_time : kNaN;
  // A sample without values inside a window moved bytes at the window's known rate.
  w.dram_bytes =
      known_bytes + (unread_time > 0 && known_time > 0 ? known_bytes / known_time * unread_time : 0);
  if (known_time == 0) w.dram_bytes = kNaN;
  // The edges: a kernel that starts or ends inside a sample leaves it partly active. The first and last
  // samples count by their activity over the window's plateau (the mean of the samples between them;
  // with none between, the busier edge), capped at 1; every other sample counts whole.
  double plateau = 0, inner_time = 0, inner_sum = 0;
  for (std::size_t i = a + 1; i < b; ++i) {
    if (std::isnan(s[i].activity_pct)) continue;
    const double len = seconds(s[i].end_ns - s[i].start_ns);
    inner_sum += s[i].activity_pct * len;
    inner_time += len;
  }
  plateau = inner_time > 0 ? inner_sum / inner_time : std::max(s[a].activity_pct, s[b].activity_pct);
  auto share = [&](const ActivitySample& x) {
    if (!(plateau > 0) || std::isnan(x.activity_pct)) return 1.0;
    return std::min(1.0, x.activity_pct / plateau);
  };
  double active = 0;
  for (std::size_t i = a; i <= b; ++i) {
    const double len = seconds(s[i].end_ns - s[i].start_ns);
    active += (i == a || i == b) ? len * share(s[i]) : len;
  }
  // Samples need not touch (a hole the sampler could not fill): the time between them is in the window.
  double holes = 0;
  for (std::size_t i = a + 1; i <= b; ++i)
    if (s[i].start_ns > s[i - 1].end_ns) holes += seconds(s[i].start_ns - s[i - 1].end_ns);
  w.active_s = active + holes;
  return w;
}

std::string occurrence_name(const std::string& name, long number) {
  return fmt::format("{}#{}", name, number);
}

}  // namespace

std::string_view window_kind_name(WindowKind k) {
  switch (k) {
    case WindowKind::kernel:
      return "kernel";
    case WindowKind::data_movement:
      return "data movement";
    case WindowKind::too_short:
      return "too short";
  }
  return "?";
}

std::vector<Window> find_windows(const std::vector<ActivitySample>& samples, std::int64_t from_ns,
                                 std::int64_t to_ns, const SampledConstants& c) {
  const auto [first, last] = overlapping(samples, from_ns, to_ns);
  const auto gap_ns = static_cast<std::int64_t>(std::llround(c.gap_ms * 1e6));
  const auto min_ns = static_cast<std::int64_t>(std::llround(c.min_window_ms * 1e6));
  // Active samples closer than the gap are one window (docs/roofline.md#kernel-windows); a sample
  // without a value is neither active nor idle.
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  for (std::size_t i = first; i < last; ++i) {
    const ActivitySample& x = samples[i];
    if (std::isnan(x.activity_pct) || x.activity_pct < c.activity_threshold_pct) continue;
    if (!spans.empty() && x.start_ns - samples[spans.back().second].end_ns < gap_ns)
      spans.back().second = i;
    else
      spans.emplace_back(i, i);
  }
  std::vector<Window> windows;
  double busiest = 0;
  for (const auto& [a, b] : spans) {
    Window w = measure_window(samples, a, b);
    if (w.end_ns - w.start_ns < min_ns)
      w.kind = WindowKind::too_short;
    else if (w.mean_activity_pct > busiest)
      busiest = w.mean_activity_pct;
    windows.push_back(w);
  }
  for (Window& w : windows)
    if (w.kind == WindowKind::kernel && w.mean_activity_pct < c.activity_ratio * busiest)
      w.kind = WindowKind::data_movement;
  return windows;
}

std::vector<SampledRegion> measure_regions(const std::vector<ActivitySample>& samples, const RangeRun& run,
                                           std::int64_t run_end_ns, const SampledConstants& c,
                                           const std::string& executable,
                                           std::vector<std::string>& warnings) {
  if (!run.have_clock)
    throw core::InputError(executable, 0,
                           "the library's file has no clock line, so its region times cannot be put on the "
                           "samples' clock",
                           "use the libdiescope-range.so of the same build as this diescope");
  // docs/roofline.md#the-sampled-backend: the library's times are CLOCK_MONOTONIC, the samples'
  // CLOCK_REALTIME; the library's clock pair converts one to the other.
  auto real = [&](std::uint64_t mono) {
    return static_cast<std::int64_t>(mono) + run.realtime_minus_monotonic_ns;
  };
  std::vector<SampledRegion> out;
  std::set<std::string> has_row;
  bool named = false;
  for (const auto& r : run.regions)
    if (!r.name.empty()) named = true;
  for (const auto& r : run.regions) {
    has_row.insert(occurrence_name(r.name, r.number));
    if (r.name.empty() && named) continue;  // docs/roofline.md#regions: work outside the regions is dropped
    SampledRegion g;
    g.name = r.name;
    g.number = r.number;
    g.closed = r.closed;
    g.launches = r.launches;
    g.from_ns = real(r.opened_ns);
    g.to_ns = r.closed ? real(r.closed_ns) : std::max(real(r.closed_ns), run_end_ns);
    if (!r.closed)
      warnings.push_back(fmt::format(
          "{}: region {} (occurrence {}) was never closed: its row runs until the program ended; close it "
          "with nvtxRangePop or nvtxRangeEnd",
          executable, r.name, r.number));
    out.push_back(std::move(g));
  }
  // A crash: the regions open then have an open line and no row; the samples still show their work.
  if (!run.ended) {
    std::string open;
    for (std::size_t i = 0; i < run.opened.size(); ++i) {
      if (has_row.count(run.opened[i])) continue;
      const std::string& key = run.opened[i];
      const std::size_t hash = key.rfind('#');
      SampledRegion g;
      g.name = key.substr(0, hash);
      g.number = std::stol(key.substr(hash + 1));
      g.closed = false;
      g.from_ns = i < run.opened_at_ns.size() ? real(run.opened_at_ns[i]) : run_end_ns;
      g.to_ns = run_end_ns;
      named = true;
      open += (open.empty() ? "" : ", ") + key;
      out.push_back(std::move(g));
    }
    warnings.push_back(fmt::format(
        "{}: the program ended without its exit handlers (it crashed or was killed){}; the regions it closed "
        "before are kept",
        executable, open.empty() ? "" : " inside " + open + ", whose rows run until it ended"));
  }
  if (!named && !out.empty())
    warnings.push_back(executable +
                       ": the program marks no NVTX region, so its whole run is one row; mark regions with "
                       "nvtxRangePush/Pop (torch.cuda.nvtx.range_push/pop) for one row each");
  for (SampledRegion& g : out) {
    g.windows = find_windows(samples, g.from_ns, g.to_ns, c);
    for (const Window& w : g.windows) {
      if (w.kind == WindowKind::kernel) {
        ++g.kernel_windows;
        g.duration_s += w.active_s;
        g.dram_bytes += w.dram_bytes;
      } else if (w.kind == WindowKind::data_movement) {
        ++g.movement_windows;
      }
    }
    if (g.kernel_windows == 0)
      warnings.push_back(fmt::format(
          "{}: region {} (occurrence {}) shows no compute activity at or above {:g}% SM active for {:g} ms "
          "or more: it has no row (a region must synchronise before it ends for its kernels to fall "
          "inside it)",
          executable, g.name.empty() ? "(whole run)" : g.name, g.number, c.activity_threshold_pct,
          c.min_window_ms));
  }
  return out;
}

FlopRule parse_flop_rule(const std::string& text) {
  const std::size_t eq = text.rfind('=');
  const std::string fix =
      "give --flop 'REGEX=VALUE' or 'REGEX=VALUE@PRECISION', e.g. --flop 'gemm=2.2e13@tensor-bf16' "
      "(docs/roofline.md#analytic-flops)";
  if (eq == std::string::npos || eq == 0)
    throw core::UsageError("--flop " + text + " is not REGEX=VALUE", fix);
  FlopRule r;
  r.text = text;
  try {
    r.pattern = std::regex(text.substr(0, eq));
  } catch (const std::regex_error& e) {
    throw core::UsageError(
        "--flop " + text + ": " + text.substr(0, eq) + " is not a regular expression (" + e.what() + ")",
        fix);
  }
  std::string value = text.substr(eq + 1);
  const std::size_t at = value.find('@');
  if (at != std::string::npos) {
    std::string name = value.substr(at + 1);
    std::replace(name.begin(), name.end(), '-', ' ');
    std::replace(name.begin(), name.end(), '_', ' ');
    bool found = false;
    for (Precision p : kAllPrecisions)
      if (precision_name(p) == name) {
        r.precision = p;
        found = true;
      }
    if (!found) {
      std::string names;
      for (Precision p : kAllPrecisions) {
        std::string n(precision_name(p));
        std::replace(n.begin(), n.end(), ' ', '-');
        names += (names.empty() ? "" : ", ") + n;
      }
      throw core::UsageError("--flop " + text + ": " + value.substr(at + 1) + " is not a precision",
                             "give one of " + names);
    }
    value = value.substr(0, at);
  }
  std::size_t used = 0;
  try {
    r.value = std::stod(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size() || !(r.value >= 0) || std::isinf(r.value))
    throw core::UsageError("--flop " + text + ": " + value + " is not a number of FLOPs", fix);
  return r;
}

std::optional<std::size_t> match_flop_rule(const std::vector<FlopRule>& rules, const std::string& name) {
  for (std::size_t i = 0; i < rules.size(); ++i)
    if (std::regex_search(name, rules[i].pattern)) return i;
  return std::nullopt;
}

void add_window_energy(std::vector<SampledRegion>& regions,
                       const std::vector<recording::PowerLimitReading>& power) {
  // docs/roofline.md#energy: the sums of docs/energy.md#the-rules over each kernel window; a region
  // whose windows are not all between two readings has none.
  for (SampledRegion& g : regions) {
    analysis::EnergySums sums;
    std::int64_t length = 0;
    for (const Window& w : g.windows) {
      if (w.kind != WindowKind::kernel) continue;
      length += w.end_ns - w.start_ns;
      for (std::size_t i = 1; i < power.size(); ++i) {
        const recording::PowerLimitReading& p = power[i - 1];
        const recording::PowerLimitReading& q = power[i];
        if (q.ts_ns <= w.start_ns) continue;
        if (p.ts_ns >= w.end_ns) break;
        sums.add(p, q, std::max(p.ts_ns, w.start_ns), std::min(q.ts_ns, w.end_ns));
      }
    }
    g.energy_j = kNaN;
    g.energy_source.clear();
    if (length == 0 || sums.covered_ns < length) continue;
    if (!sums.counter_absent && !sums.counter_went_back) {
      g.energy_j = sums.counter_j;
      g.energy_source = kEnergyCounter;
    } else if (!sums.draw_absent) {
      g.energy_j = sums.draw_j;
      g.energy_source = kEnergyPowerDraw;
    }
  }
}

std::vector<Row> rows_from_sampled(const std::vector<SampledRegion>& main,
                                   const std::vector<SampledRegion>* ref, int iterations,
                                   const std::string& executable, const std::string& gpu,
                                   const std::vector<FlopRule>& rules, std::vector<std::string>& warnings) {
  std::vector<Row> rows;
  auto base_row = [&](const std::string& region) {
    Row r;
    r.profiler = Profiler::sampled;
    r.caches = kCachesProgram;  // docs/roofline.md#dram-bytes-and-the-cache-flush
    r.executable = executable;
    r.region = region;
    r.gpu = gpu;
    r.sm_hz = kNaN;  // the sampler reads no clock per region; the counter peaks stay unknown
    return r;
  };
  if (ref == nullptr) {
    for (const SampledRegion& g : main) {
      if (g.kernel_windows == 0) continue;
      Row r = base_row(g.name);
      r.launch = g.number;
      r.launches = g.launches;
      r.duration_s = g.duration_s;
      r.bytes[index(Level::dram)] = g.dram_bytes;
      r.energy_j = g.energy_j;
      r.energy_source = g.energy_source;
      r.kernel =
          fmt::format("{} kernel window{}{}", g.kernel_windows, g.kernel_windows == 1 ? "" : "s",
                      g.movement_windows > 0 ? fmt::format(", {} data movement", g.movement_windows) : "");
      rows.push_back(std::move(r));
    }
  } else {
    // docs/roofline.md#the-two-point-measurement: per region name, the occurrences added in each run.
    struct Sum {
      double duration = 0, bytes = 0, energy = 0;
      std::string energy_source = kEnergyCounter;  // the weaker source of any occurrence
      long windows = 0, occurrences = 0, launches = 0;
      void add_energy(const SampledRegion& g) {
        energy += g.energy_j;
        if (g.energy_source != kEnergyCounter) energy_source = g.energy_source;
      }
    };
    std::vector<std::string> order;
    std::map<std::string, Sum> m, r1;
    for (const SampledRegion& g : main) {
      auto [it, fresh] = m.try_emplace(g.name);
      if (fresh) order.push_back(g.name);
      it->second.duration += g.duration_s;
      it->second.bytes += g.dram_bytes;
      it->second.add_energy(g);
      it->second.windows += g.kernel_windows;
      it->second.launches += g.launches;
      ++it->second.occurrences;
    }
    for (const SampledRegion& g : *ref) {
      Sum& s = r1[g.name];
      s.duration += g.duration_s;
      s.bytes += g.dram_bytes;
      s.add_energy(g);
      s.windows += g.kernel_windows;
      s.launches += g.launches;
      ++s.occurrences;
    }
    const double n = iterations - 1;
    for (const std::string& name : order) {
      const Sum& a = m.at(name);
      if (a.windows == 0) continue;
      const auto it = r1.find(name);
      if (it == r1.end()) {
        warnings.push_back(fmt::format(
            "{}: region {} is in the {}-iteration run but not in the one-iteration (.ref) run: it has no "
            "row; the program must run its regions in both (docs/roofline.md#the-two-point-measurement)",
            executable, name, iterations));
        continue;
      }
      const Sum& b = it->second;
      Row r = base_row(name);
      r.launch = 1;
      r.launches = std::max(1L, std::lround(static_cast<double>(a.launches - b.launches) / n));
      r.duration_s = (a.duration - b.duration) / n;
      r.bytes[index(Level::dram)] = (a.bytes - b.bytes) / n;
      // docs/roofline.md#energy: the same difference; a negative one is noise, left empty.
      r.energy_j = (a.energy - b.energy) / n;
      r.energy_source = a.energy_source == kEnergyCounter ? b.energy_source : a.energy_source;
      if (!(r.energy_j >= 0) || r.energy_source.empty()) {
        r.energy_j = kNaN;
        r.energy_source.clear();
      }
      if (!(r.duration_s > 0)) {
        warnings.push_back(fmt::format(
            "{}: region {}: the {}-iteration run's kernel time ({:.6g} s) is not above the one-iteration "
            "run's "
            "({:.6g} s), so the two-point difference is not a time: its duration is left empty; check that "
            "the program reads its iteration count (DIESCOPE_ITERATIONS or {{iterations}})",
            executable, name, iterations, a.duration, b.duration));
        r.duration_s = kNaN;
      }
      if (!(r.bytes[index(Level::dram)] >= 0)) r.bytes[index(Level::dram)] = kNaN;
      r.kernel = fmt::format("two-point: {} kernel windows in {} iterations, {} in 1", a.windows, iterations,
                             b.windows);
      rows.push_back(std::move(r));
    }
  }
  // docs/roofline.md#analytic-flops: the first rule matching executable[region].
  std::vector<bool> used(rules.size(), false);
  for (Row& r : rows) {
    const std::string name = executable + "[" + r.region + "]";
    const auto rule = match_flop_rule(rules, name);
    if (!rule) {
      if (!rules.empty())
        warnings.push_back(
            fmt::format("{}: no --flop rule matches {}: it has no FLOPs and is not drawn", executable, name));
      continue;
    }
    used[*rule] = true;
    r.flop[index(rules[*rule].precision)] = rules[*rule].value;
  }
  std::string names;
  for (const Row& r : rows) names += (names.empty() ? "" : ", ") + executable + "[" + r.region + "]";
  for (std::size_t i = 0; i < rules.size(); ++i)
    if (!used[i])
      warnings.push_back(fmt::format(
          "{}: --flop '{}' matches no row{} (first match wins: an earlier rule may have taken it); fix the "
          "regular expression",
          executable, rules[i].text, names.empty() ? "" : " (the rows are " + names + ")"));
  if (rules.empty() && !rows.empty())
    warnings.push_back(
        executable +
        ": no --flop rule: the sampled backend counts no FLOPs, so its rows have none and are not "
        "drawn; give --flop 'REGEX=VALUE' per region (docs/roofline.md#analytic-flops)");
  return rows;
}

std::vector<std::string> substitute_iterations(const std::vector<std::string>& argv, int n) {
  static const std::string kToken = "{iterations}";
  std::vector<std::string> out;
  for (std::string a : argv) {
    for (std::size_t at = a.find(kToken); at != std::string::npos; at = a.find(kToken, at))
      a.replace(at, kToken.size(), std::to_string(n));
    out.push_back(std::move(a));
  }
  return out;
}

SamplingCheck check_sampling(const std::vector<ActivitySample>& samples, double interval_ms) {
  SamplingCheck c;
  c.samples = static_cast<long>(samples.size());
  if (samples.empty()) return c;
  std::vector<std::int64_t> lengths;
  std::int64_t covered = 0;
  const auto half = static_cast<std::int64_t>(interval_ms * 0.5e6);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const ActivitySample& s = samples[i];
    lengths.push_back(s.end_ns - s.start_ns);
    covered += s.end_ns - s.start_ns;
    if (std::isnan(s.activity_pct)) ++c.unread;
    if (i > 0) {
      const std::int64_t hole = s.start_ns - samples[i - 1].end_ns;
      if (hole > half) {
        ++c.holes;
        c.longest_hole_ms = std::max(c.longest_hole_ms, static_cast<double>(hole) * 1e-6);
      }
    }
  }
  std::nth_element(lengths.begin(), lengths.begin() + static_cast<std::ptrdiff_t>(lengths.size() / 2),
                   lengths.end());
  c.median_interval_ms = static_cast<double>(lengths[lengths.size() / 2]) * 1e-6;
  const std::int64_t span = samples.back().end_ns - samples.front().start_ns;
  c.covered_pct = span > 0 ? 100.0 * static_cast<double>(covered) / static_cast<double>(span) : 0;
  return c;
}

}  // namespace diescope::roofline
