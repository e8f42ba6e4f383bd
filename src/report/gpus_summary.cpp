// docs/method.md#several-gpus: the comparison of the GPUs one run measured.
#include "diescope/report/gpus_summary.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace diescope::report {
namespace {

using nlohmann::json;

double number_or_nan(const json& object, const char* key) {
  if (!object.is_object()) return std::nan("");
  const auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : std::nan("");
}

std::string text_or_empty(const json& object, const char* key) {
  if (!object.is_object()) return {};
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Figures in tenths of a point, so that differences of one-decimal figures are exact.
long tenths(double pct) {
  return std::lround(pct * 10.0);
}

std::string pct_text(double pct) {
  return std::isfinite(pct) ? fmt::format("{:.1f}%", pct) : std::string("n/a");
}

std::string rate_text(double bytes_per_s) {
  return fmt::format("{:.2f} GB/s", bytes_per_s / 1e9);
}

std::string index_list(const std::vector<int>& indexes) {
  std::string out;
  for (std::size_t i = 0; i < indexes.size(); ++i) {
    if (i > 0) out += i + 1 == indexes.size() ? " and " : ", ";
    out += std::to_string(indexes[i]);
  }
  return out;
}

void put_or_null(json& o, const char* key, double value, const std::string& reason) {
  if (std::isfinite(value)) {
    o[key] = value;
  } else {
    o[key] = nullptr;
    o[std::string(key) + "_reason"] = reason;
  }
}

}  // namespace

GpuFigures gpu_figures(const json& report, const std::string& report_path) {
  GpuFigures g;
  const json& gpu = report.at("gpu");
  g.index = gpu.value("index", -1);
  g.uuid = text_or_empty(gpu, "uuid");
  g.model = text_or_empty(gpu, "model");
  g.report = report_path;
  // The span the headline stands for: the steady window when one was found, else the run.
  const json& window = report.at("window");
  const bool use_window = window.value("found", false) && window.contains("results");
  g.span = use_window ? "window" : "run";
  const json& results = use_window ? window.at("results") : report.at("results");
  const json& headline = results.contains("headline") ? results.at("headline") : json::object();
  g.gpu_util_pct = number_or_nan(headline, "gpu_util_pct");
  g.die_util_pct = number_or_nan(headline, "die_util_pct");
  g.limiting_unit = text_or_empty(results, "limiting_unit_label");
  const json rates = results.value("rates_per_s", json::object());
  if (!rates.contains("nvlink_tx_bytes") && !rates.contains("nvlink_rx_bytes")) {
    g.nvlink_reason = "the recording's unit table counts no NVLink bytes (GPM's does: --source gpm)";
  } else {
    g.nvlink_tx_bytes_per_s = number_or_nan(rates, "nvlink_tx_bytes");
    g.nvlink_rx_bytes_per_s = number_or_nan(rates, "nvlink_rx_bytes");
    if (!std::isfinite(g.nvlink_tx_bytes_per_s) || !std::isfinite(g.nvlink_rx_bytes_per_s)) {
      g.nvlink_reason = text_or_empty(rates, "nvlink_tx_bytes_reason");
      if (g.nvlink_reason.empty()) g.nvlink_reason = text_or_empty(rates, "nvlink_rx_bytes_reason");
      if (g.nvlink_reason.empty()) g.nvlink_reason = "no NVLink count in the usable samples";
    }
  }
  return g;
}

GpusSummary summarise_gpus(std::vector<GpuFigures> gpus) {
  GpusSummary s;
  std::sort(gpus.begin(), gpus.end(),
            [](const GpuFigures& a, const GpuFigures& b) { return a.index < b.index; });
  s.gpus = std::move(gpus);

  const GpuFigures* least = nullptr;
  const GpuFigures* most = nullptr;
  int with_die_util = 0;
  for (const GpuFigures& g : s.gpus) {
    if (!std::isfinite(g.die_util_pct)) continue;
    ++with_die_util;
    // Strict comparisons keep the lowest index on a tie (the list is by index).
    if (least == nullptr || tenths(g.die_util_pct) < tenths(least->die_util_pct)) least = &g;
    if (most == nullptr || tenths(g.die_util_pct) > tenths(most->die_util_pct)) most = &g;
  }
  if (s.gpus.size() < 2) {
    s.least_used_reason = "one GPU was measured";
  } else if (with_die_util < 2) {
    s.least_used_reason = fmt::format("{} of {} GPUs have a DIE-Util", with_die_util, s.gpus.size());
  } else {
    s.least_used = least->index;
    s.most_used = most->index;
    s.gap_points = static_cast<double>(tenths(most->die_util_pct) - tenths(least->die_util_pct)) / 10.0;
  }

  for (const GpuFigures& g : s.gpus) {
    const double busy_by = std::isfinite(g.gpu_util_pct) ? g.gpu_util_pct : g.die_util_pct;
    if (!std::isfinite(busy_by)) {
      s.unknown.push_back(g.index);
    } else if (busy_by >= kBusyMinPct) {
      s.busy.push_back(g.index);
    } else {
      s.idle.push_back(g.index);
    }
  }
  const std::string rule = fmt::format("GPU-Util at least {:g}%", kBusyMinPct);
  if (s.busy.empty()) {
    s.busy_wording = s.unknown.size() == s.gpus.size()
                         ? "no GPU has a GPU-Util or DIE-Util to tell if it was busy"
                         : fmt::format("no GPU was busy ({})", rule);
  } else if (s.busy.size() == s.gpus.size()) {
    s.busy_wording = fmt::format("every GPU was busy ({})", rule);
  } else if (s.busy.size() == 1) {
    s.busy_wording = fmt::format("only GPU {} was busy ({}); GPU {} {} idle", s.busy.front(), rule,
                                 index_list(s.idle), s.idle.size() == 1 ? "was" : "were");
  } else {
    s.busy_wording = fmt::format("GPUs {} were busy ({}); GPU {} {} idle", index_list(s.busy), rule,
                                 index_list(s.idle), s.idle.size() == 1 ? "was" : "were");
  }
  if (!s.unknown.empty() && !s.busy.empty())
    s.busy_wording += fmt::format("; GPU {} cannot be told (no GPU-Util or DIE-Util)", index_list(s.unknown));
  return s;
}

json gpus_summary_json(const GpusSummary& s) {
  json o;
  o["schema"] = 1;
  json gpus = json::array();
  for (const GpuFigures& g : s.gpus) {
    json e;
    e["index"] = g.index;
    e["uuid"] = g.uuid;
    e["model"] = g.model;
    e["span"] = g.span;
    e["report"] = g.report;
    put_or_null(e, "gpu_util_pct", g.gpu_util_pct, "the headline has no GPU-Util");
    put_or_null(e, "die_util_pct", g.die_util_pct, "the headline has no DIE-Util");
    if (g.limiting_unit.empty()) {
      e["limiting_unit"] = nullptr;
    } else {
      e["limiting_unit"] = g.limiting_unit;
    }
    const bool busy = std::find(s.busy.begin(), s.busy.end(), g.index) != s.busy.end();
    const bool idle = std::find(s.idle.begin(), s.idle.end(), g.index) != s.idle.end();
    if (busy || idle) {
      e["busy"] = busy;
    } else {
      e["busy"] = nullptr;
    }
    put_or_null(e, "nvlink_tx_bytes_per_s", g.nvlink_tx_bytes_per_s, g.nvlink_reason);
    put_or_null(e, "nvlink_rx_bytes_per_s", g.nvlink_rx_bytes_per_s, g.nvlink_reason);
    gpus.push_back(std::move(e));
  }
  o["gpus"] = gpus;
  if (s.least_used) {
    o["least_used_gpu"] = *s.least_used;
    o["most_used_gpu"] = *s.most_used;
    o["gap_points"] = s.gap_points;
  } else {
    o["least_used_gpu"] = nullptr;
    o["most_used_gpu"] = nullptr;
    o["gap_points"] = nullptr;
    o["least_used_gpu_reason"] = s.least_used_reason;
    o["gap_points_reason"] = s.least_used_reason;
  }
  o["busy_gpus"] = s.busy;
  o["idle_gpus"] = s.idle;
  o["unknown_gpus"] = s.unknown;
  o["busy_wording"] = s.busy_wording;
  o["rules"] = {{"busy_min_pct", kBusyMinPct},
                {"busy_by", "GPU-Util over the span, DIE-Util where there is no GPU-Util"},
                {"least_used_by", "DIE-Util over the span; ties go to the lowest index"}};
  return o;
}

std::string gpus_summary_text(const GpusSummary& s) {
  std::string out = fmt::format("\nAll {} GPUs", s.gpus.size());
  const bool same_span = std::all_of(s.gpus.begin(), s.gpus.end(),
                                     [&](const GpuFigures& g) { return g.span == s.gpus.front().span; });
  if (!s.gpus.empty() && same_span)
    out += s.gpus.front().span == "window" ? ", over each GPU's steady window" : ", over the run";
  out += ":\n";
  for (const GpuFigures& g : s.gpus) {
    out += fmt::format("  GPU {}  GPU-Util {:>6}  DIE-Util {:>6}  limiting {}", g.index,
                       pct_text(g.gpu_util_pct), pct_text(g.die_util_pct),
                       g.limiting_unit.empty() ? "none" : g.limiting_unit);
    if (!same_span) out += fmt::format("  (over the {})", g.span == "window" ? "steady window" : "run");
    out += "\n";
  }
  if (s.least_used) {
    const auto of = [&](int index) {
      return *std::find_if(s.gpus.begin(), s.gpus.end(),
                           [&](const GpuFigures& g) { return g.index == index; });
    };
    if (tenths(s.gap_points) == 0) {
      // Every compared GPU has the same DIE-Util: the rule still names the lowest index.
      out += fmt::format("least used: GPU {} (DIE-Util {}), level with every other GPU (gap 0.0 points)\n",
                         *s.least_used, pct_text(of(*s.least_used).die_util_pct));
    } else {
      out += fmt::format("least used: GPU {} (DIE-Util {}), {:.1f} points below GPU {} ({})\n", *s.least_used,
                         pct_text(of(*s.least_used).die_util_pct), s.gap_points, *s.most_used,
                         pct_text(of(*s.most_used).die_util_pct));
    }
  } else {
    out += "least used: none (" + s.least_used_reason + ")\n";
  }
  out += "busy: " + s.busy_wording + "\n";
  bool any_nvlink = false;
  for (const GpuFigures& g : s.gpus) any_nvlink = any_nvlink || std::isfinite(g.nvlink_tx_bytes_per_s);
  if (any_nvlink) {
    for (const GpuFigures& g : s.gpus) {
      if (std::isfinite(g.nvlink_tx_bytes_per_s) && std::isfinite(g.nvlink_rx_bytes_per_s)) {
        out += fmt::format("NVLink GPU {}: sent {}, received {}\n", g.index,
                           rate_text(g.nvlink_tx_bytes_per_s), rate_text(g.nvlink_rx_bytes_per_s));
      } else {
        out += fmt::format("NVLink GPU {}: n/a ({})\n", g.index, g.nvlink_reason);
      }
    }
  } else if (!s.gpus.empty()) {
    out += "NVLink: n/a (" + s.gpus.front().nvlink_reason + ")\n";
  }
  return out;
}

}  // namespace diescope::report
