#include "diescope/report/samples_csv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "diescope/analysis/analyze.hpp"
#include "diescope/core/error.hpp"
#include "diescope/report/wording.hpp"

namespace diescope::report {

namespace {

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

void append_number(std::string& line, double v) {
  line += ',';
  if (std::isnan(v))
    line += "NaN";
  else if (std::isinf(v))
    line += v > 0 ? "inf" : "-inf";
  else
    fmt::format_to(std::back_inserter(line), "{}", v);  // shortest form that reads back exactly
}

const char* use_name(SampleUse use) {
  switch (use) {
    case SampleUse::used:
      return "used";
    case SampleUse::dropped_first:
      return "dropped_first";
    case SampleUse::dropped_broken:
      return "dropped_broken";
    case SampleUse::outside_run:
      return "outside_run";
  }
  return "unknown";
}

}  // namespace

std::function<void(const analysis::ObservedSample&)> sample_walker(
    const recording::Recording& source, bool in_analysis, std::function<void(const WalkedSample&)> visit) {
  struct Walk {
    const recording::RecordingMeta& meta;
    bool in_analysis;
    std::function<void(const WalkedSample&)> visit;
    std::vector<double> unmatched;
    WalkedSample w;
  };
  auto walk = std::make_shared<Walk>(Walk{source.meta(),
                                          in_analysis,
                                          std::move(visit),
                                          std::vector<double>(source.meta().engines.size(), analysis::kNaN),
                                          {}});
  return [walk](const analysis::ObservedSample& o) {
    WalkedSample& w = walk->w;
    w.index = o.index;
    w.sample = o.sample;
    w.engines = walk->unmatched;
    w.die_util_pct = o.die_util_pct;
    if (walk->in_analysis && !o.in_run) {
      w.verdict = {SampleUse::outside_run, "outside the run"};
      w.die_util_pct = analysis::die_util_of_sample(o.sample->units, {});
    } else if (o.drop == analysis::SampleDrop::first) {
      w.verdict = {SampleUse::dropped_first, drop_words(o.drop, o.broken, walk->meta)};
    } else if (o.drop == analysis::SampleDrop::broken) {
      w.verdict = {SampleUse::dropped_broken, drop_words(o.drop, o.broken, walk->meta)};
    } else {
      w.verdict.use = SampleUse::used;
      w.verdict.reason.clear();
      if (!o.engines.empty()) w.engines = o.engines;
    }
    walk->visit(w);
  };
}

void walk_samples(const recording::Recording& source, const analysis::Analysis* analysis,
                  const std::function<void(const WalkedSample&)>& visit) {
  analysis::AnalysisOptions options;
  options.window = analysis::WindowMode::none;  // the verdicts are the run's; the window changes none of them
  options.observe_sample = sample_walker(source, analysis != nullptr, visit);
  analyze(source, options);
}

SamplesCsvWriter::SamplesCsvWriter(const recording::RecordingMeta& meta, const analysis::Analysis* analysis,
                                   std::function<void(std::string_view)> sink, double smooth_s)
    : sink_(std::move(sink)) {
  if (smooth_s != 0) {
    const std::size_t columns =
        meta.units.size() + meta.diagnostics.size() + meta.counts.size() + meta.engines.size() + 1;
    auto window = metrics::BoxcarWindow::make(smooth_s, columns);
    if (!window)
      throw core::UsageError("--smooth: " + window.reason(),
                             "give the smoothing kernel in milliseconds, above 0 (--smooth 100)");
    smooth_.emplace(*window);
    unused_.assign(columns, analysis::kNaN);
  }
  std::string header = "index,start_ns,end_ns,duration_ms";
  for (const recording::ColumnDef& c : meta.units) header += "," + csv_field("unit." + c.key);
  for (const recording::ColumnDef& c : meta.diagnostics) header += "," + csv_field("diag." + c.key);
  for (const recording::ColumnDef& c : meta.counts) header += "," + csv_field("count." + c.key);
  for (const recording::ColumnDef& c : meta.engines) header += "," + csv_field("engine." + c.key);
  header += ",die_util_pct,use,drop_reason,window_share\n";
  sink_(header);
  window_ = analysis && analysis->window.found;
  if (window_) {
    window_start_ = analysis->window.results.start_ns;
    window_end_ = analysis->window.results.end_ns;
  }
}

void SamplesCsvWriter::row(const WalkedSample& w) {
  const recording::ChipSample& s = *w.sample;
  values_.clear();
  values_.insert(values_.end(), s.units.begin(), s.units.end());
  values_.insert(values_.end(), s.diagnostics.begin(), s.diagnostics.end());
  values_.insert(values_.end(), s.counts.begin(), s.counts.end());
  values_.insert(values_.end(), w.engines.begin(), w.engines.end());
  values_.push_back(w.die_util_pct);
  Pending row{w.index, s.start_ns, s.end_ns, w.verdict, {}};
  if (!smooth_) {
    write_row(row, values_);
  } else {
    row.values = values_;
    const bool used = w.verdict.use == SampleUse::used;
    pending_.push_back(std::move(row));
    // Rows come out in the order they went in: the front of pending_ is the one being emitted.
    smooth_->push(
        s.start_ns, used && values_.size() == unused_.size() ? std::span<const double>(values_) : unused_, 0,
        [this](std::uint64_t, std::int64_t, std::span<const double> smoothed) {
          const Pending& p = pending_.front();
          write_row(p, p.verdict.use == SampleUse::used ? smoothed : std::span<const double>(p.values));
          pending_.pop_front();
        });
  }

  ++stats_.rows;
  switch (w.verdict.use) {
    case SampleUse::used:
      ++stats_.used;
      break;
    case SampleUse::dropped_first:
      ++stats_.dropped_first;
      break;
    case SampleUse::dropped_broken:
      ++stats_.dropped_broken;
      break;
    case SampleUse::outside_run:
      ++stats_.outside_run;
      break;
  }
}

void SamplesCsvWriter::write_row(const Pending& p, std::span<const double> values) {
  line_.clear();
  fmt::format_to(std::back_inserter(line_), "{},{},{}", p.index, p.start_ns, p.end_ns);
  append_number(line_, static_cast<double>(p.end_ns - p.start_ns) / 1e6);
  for (double v : values) append_number(line_, v);
  line_ += ',';
  line_ += use_name(p.verdict.use);
  line_ += ',' + csv_field(p.verdict.reason);
  double share = analysis::kNaN;
  if (window_ && p.end_ns > p.start_ns) {
    recording::TimeNs overlap = std::min(p.end_ns, window_end_) - std::max(p.start_ns, window_start_);
    share = overlap > 0 ? static_cast<double>(overlap) / static_cast<double>(p.end_ns - p.start_ns) : 0.0;
  }
  append_number(line_, share);
  line_ += '\n';
  out_ += line_;
  if (out_.size() > (1 << 16)) {
    sink_(out_);
    out_.clear();
  }
}

SamplesCsvStats SamplesCsvWriter::finish() {
  if (smooth_) {
    smooth_->finish([this](std::uint64_t, std::int64_t, std::span<const double> smoothed) {
      const Pending& p = pending_.front();
      write_row(p, p.verdict.use == SampleUse::used ? smoothed : std::span<const double>(p.values));
      pending_.pop_front();
    });
  }
  if (!out_.empty()) sink_(out_);
  out_.clear();
  return stats_;
}

SamplesCsvStats write_samples_csv(const recording::Recording& source, const analysis::Analysis* analysis,
                                  const std::function<void(std::string_view)>& sink) {
  SamplesCsvWriter csv(source.meta(), analysis, sink);
  walk_samples(source, analysis, [&csv](const WalkedSample& w) { csv.row(w); });
  return csv.finish();
}

}  // namespace diescope::report
