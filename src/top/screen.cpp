#include "diescope/top/screen.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "diescope/recording/format.hpp"

namespace diescope::top {

namespace {

// Eighths of a cell, for bars (U+258F..U+2588) and sparklines (U+2581..U+2588).
constexpr const char* kBarEighths[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉", "█"};
constexpr const char* kSparkLevels[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};

// Byte length of the first `columns` code points of `text`.
std::size_t prefix_bytes(const std::string& text, int columns) {
  std::size_t i = 0;
  int seen = 0;
  while (i < text.size()) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      if (seen == columns) break;
      ++seen;
    }
    ++i;
  }
  return i;
}

// `text` cut to `width` columns, the last one an ellipsis when something was cut.
std::string fit(const std::string& text, int width) {
  if (width <= 0) return {};
  if (display_width(text) <= width) return text;
  return text.substr(0, prefix_bytes(text, width - 1)) + "…";
}

std::string pad(const std::string& text, int width) {
  const int w = display_width(text);
  return w >= width ? fit(text, width) : text + std::string(static_cast<std::size_t>(width - w), ' ');
}

std::string pct_text(double pct) {
  return std::isfinite(pct) ? fmt::format("{:5.1f}%", pct) : std::string("   n/a");
}

std::string bar(double pct, int width) {
  if (width <= 0) return {};
  if (!std::isfinite(pct)) return std::string(static_cast<std::size_t>(width), ' ');
  const double cells = std::clamp(pct, 0.0, 100.0) / 100.0 * width;
  const int eighths = static_cast<int>(std::lround(cells * 8));
  std::string out;
  const int full = eighths / 8;
  for (int i = 0; i < full; ++i) out += kBarEighths[8];
  int used = full;
  if (eighths % 8 != 0 && used < width) {
    out += kBarEighths[eighths % 8];
    ++used;
  }
  out.append(static_cast<std::size_t>(width - used), ' ');
  return out;
}

// The newest `width` values of the history, right-aligned; blank where nothing covered a second.
std::string sparkline(const std::vector<double>& history, int width) {
  if (width <= 0) return {};
  std::string out;
  const int n = static_cast<int>(history.size());
  for (int i = n - width; i < n; ++i) {
    if (i < 0 || !std::isfinite(history[static_cast<std::size_t>(i)])) {
      out += ' ';
      continue;
    }
    const double v = std::clamp(history[static_cast<std::size_t>(i)], 0.0, 100.0);
    out += kSparkLevels[std::min(7, static_cast<int>(v / 100.0 * 8))];
  }
  return out;
}

std::string mhz_text(double mhz) {
  return std::isfinite(mhz) ? fmt::format("{:.0f} MHz", mhz) : std::string("n/a");
}

std::string title_line(const GpuFrame& g) {
  std::string chip_text;
  switch (g.chip_status) {
    case ChipStatus::chip:
      chip_text = std::isfinite(g.interval_ms)
                      ? fmt::format("{} every {:g} ms", chip_source_words(g.chip_source), g.interval_ms)
                      : std::string(chip_source_words(g.chip_source));
      if (g.replay) chip_text += ", recorded";
      break;
    case ChipStatus::starting:
      chip_text = fmt::format("{} starting", chip_source_words(g.chip_source));
      break;
    case ChipStatus::nvml_only:
      chip_text = "none: GPU-Util only, from NVML";
      break;
  }
  std::string name = g.model.empty() ? std::string("unknown GPU") : g.model;
  if (!g.chip.empty()) name += " (" + g.chip + ")";
  // docs/top.md#sources: the figures below are the recording's last; nothing more will come.
  if (g.replay_over) chip_text += " · replay over: last figures";
  return fmt::format("GPU {} · {} · chip figures: {}", g.index, name, chip_text);
}

std::string throttle_text(const GpuFrame& g) {
  if (!g.throttle_read) return "n/a";
  if (!g.throttle_mask) return "n/a (NVML could not say)";
  const std::vector<std::string> names = recording::throttle_reason_names(*g.throttle_mask);
  if (names.empty()) return "none";
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string power_text(const GpuFrame& g) {
  if (std::isfinite(g.power_w) && std::isfinite(g.power_limit_w))
    return fmt::format("power {:.0f} W of {:.0f} W", g.power_w, g.power_limit_w);
  if (std::isfinite(g.power_w)) return fmt::format("power {:.0f} W", g.power_w);
  if (std::isfinite(g.power_limit_w)) return fmt::format("power limit {:.0f} W", g.power_limit_w);
  return "power n/a";
}

std::string processes_text(const GpuFrame& g) {
  if (g.processes) {
    if (g.processes->empty()) return "processes: none";
    std::string out = "processes:";
    for (const ProcessInfo& p : *g.processes)
      out += fmt::format(" {} {}{},", p.pid, p.name.empty() ? std::string("?") : p.name,
                         p.holder.empty() ? std::string() : " [" + p.holder + "]");
    out.pop_back();
    return out;
  }
  if (g.compute_processes >= 0 || g.graphics_processes >= 0) {
    const auto count = [](int n) { return n >= 0 ? std::to_string(n) : std::string("n/a"); };
    return fmt::format("processes: {} compute, {} graphics (pids not recorded)", count(g.compute_processes),
                       count(g.graphics_processes));
  }
  return "processes: n/a";
}

// Two rows (GPU-Util, DIE-Util): label, figure, bar, sparkline of the last minute.
void util_rows(const GpuFrame& g, int width, std::vector<std::string>& out) {
  constexpr int kLabel = 12;  // "  GPU-Util  "
  constexpr int kFigure = 7;  // " 96.0% "
  const int room = width - kLabel - kFigure;
  // The sparkline takes the last minute when there is room, the bar what is left; a narrow
  // terminal drops the bar first, then shortens the sparkline.
  int spark = std::min(kHistorySeconds, std::max(0, room));
  int bar_width = room - spark - 2;
  if (bar_width < 10) {
    bar_width = 0;
    spark = std::min(kHistorySeconds, std::max(0, room));
  }
  const auto row = [&](const std::string& label, double pct, const std::vector<double>& history,
                       const std::string& instead) {
    std::string line = pad("  " + label, kLabel) + pct_text(pct) + " ";
    if (!instead.empty()) {
      line += instead;
    } else {
      if (bar_width > 0) line += bar(pct, bar_width) + "  ";
      line += sparkline(history, spark);
    }
    out.push_back(fit(line, width));
  };
  row("GPU-Util", g.gpu_util_pct, g.gpu_util_history, "");
  std::string instead;
  if (g.chip_status == ChipStatus::nvml_only)
    instead =
        g.status_reason.empty() ? std::string("no chip samples") : "no chip samples: " + g.status_reason;
  else if (g.chip_status == ChipStatus::starting)
    instead = "waiting for the first chip samples";
  row("DIE-Util", g.die_util_pct, g.die_util_history, instead);
}

std::string gap_line(const GpuFrame& g) {
  // Rounded to the tenth shown, so that a gap of -0.04 reads 0.0, not -0.0.
  double gap = std::round(g.gap_points() * 10) / 10;
  if (gap == 0) gap = 0;
  std::string line =
      std::isfinite(gap) ? fmt::format("  gap       {:5.1f} points", gap) : std::string("  gap          n/a");
  if (g.chip_status != ChipStatus::chip) return line;
  if (!g.limiting_unit.empty()) return line + " · limiting unit: " + g.limiting_unit;
  if (g.all_idle) return line + " · limiting unit: none (every unit idle)";
  return line + " · limiting unit: n/a";
}

std::vector<std::string> unit_rows(const GpuFrame& g, int width) {
  std::vector<std::string> rows;
  if (g.units.empty()) return rows;
  constexpr int kCellLabel = 14;  // "Video encoder "
  constexpr int kMinCell = 33;    // label, figure and a bar of at least 12
  const int usable = width - 2;
  const int columns = std::clamp(usable / (kMinCell + 2), 1, 4);
  const int cell = usable / columns - 2;
  const int mini = cell - kCellLabel - 7;  // "label" "  0.0% " bar
  std::string line;
  for (std::size_t i = 0; i < g.units.size(); ++i) {
    const UnitBar& u = g.units[i];
    std::string text = pad(u.label, kCellLabel - 1) + " " + pct_text(u.pct) + " ";
    if (mini >= 4) text += bar(u.pct, mini);
    line += "  " + pad(text, cell);
    if ((i + 1) % static_cast<std::size_t>(columns) == 0 || i + 1 == g.units.size()) {
      while (!line.empty() && line.back() == ' ') line.pop_back();
      rows.push_back(fit(line, width));
      line.clear();
    }
  }
  return rows;
}

std::vector<std::string> gpu_block(const GpuFrame& g, int width, bool compact) {
  std::vector<std::string> out;
  out.push_back(fit(title_line(g), width));
  util_rows(g, width, out);
  out.push_back(fit(gap_line(g), width));
  out.push_back(fit(fmt::format("  SM {} · memory {} · {} · throttle: {}", mhz_text(g.sm_mhz),
                                mhz_text(g.mem_mhz), power_text(g), throttle_text(g)),
                    width));
  if (compact) return out;
  for (std::string& row : unit_rows(g, width)) out.push_back(std::move(row));
  out.push_back(fit("  " + processes_text(g), width));
  return out;
}

double sort_value(const GpuFrame& g, SortKey key) {
  switch (key) {
    case SortKey::die_util:
      return g.die_util_pct;
    case SortKey::gpu_util:
      return g.gpu_util_pct;
    case SortKey::gap:
      return g.gap_points();
    case SortKey::index:
      break;
  }
  return kNaN;
}

}  // namespace

SortKey next_sort_key(SortKey key) {
  switch (key) {
    case SortKey::index:
      return SortKey::die_util;
    case SortKey::die_util:
      return SortKey::gpu_util;
    case SortKey::gpu_util:
      return SortKey::gap;
    case SortKey::gap:
      break;
  }
  return SortKey::index;
}

std::string to_string(SortKey key) {
  switch (key) {
    case SortKey::die_util:
      return "DIE-Util";
    case SortKey::gpu_util:
      return "GPU-Util";
    case SortKey::gap:
      return "gap";
    case SortKey::index:
      break;
  }
  return "index";
}

std::string_view chip_source_words(collect::ChipSource source) {
  switch (source) {
    case collect::ChipSource::pm:
      return "PM sampling";
    case collect::ChipSource::gpm:
      return "GPM";
  }
  return "PM sampling";
}

int display_width(const std::string& text) {
  int n = 0;
  for (const char c : text)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  return n;
}

void sort_gpus(std::vector<GpuFrame>& gpus, SortKey key) {
  std::stable_sort(gpus.begin(), gpus.end(), [key](const GpuFrame& a, const GpuFrame& b) {
    if (key != SortKey::index) {
      const double va = sort_value(a, key);
      const double vb = sort_value(b, key);
      const bool fa = std::isfinite(va);
      const bool fb = std::isfinite(vb);
      if (fa != fb) return fa;  // NaN last
      if (fa && va != vb) return va > vb;
    }
    return a.index < b.index;
  });
}

std::vector<std::string> layout(const Frame& frame, int width, int height, bool keys) {
  std::vector<std::string> lines;
  if (width <= 0 || height <= 0) return lines;
  std::string header = fmt::format("diescope top · {} · {} GPU{} · refresh {:g} ms · sort: {}", frame.source,
                                   frame.gpus.size(), frame.gpus.size() == 1 ? "" : "s", frame.drain_ms,
                                   to_string(frame.sort));
  if (frame.paused) header += " · PAUSED";
  if (frame.ended) header += " · replay over";
  const int room = width - display_width(header) - 2;
  if (room >= display_width(frame.time_of_day))
    header +=
        std::string(
            static_cast<std::size_t>(width - display_width(header) - display_width(frame.time_of_day)), ' ') +
        frame.time_of_day;
  lines.push_back(fit(header, width));

  std::string key_line;
  if (keys) key_line = "q quit · p pause · s sort (" + to_string(next_sort_key(frame.sort)) + " next)";
  if (!frame.message.empty()) key_line += (key_line.empty() ? "" : " · ") + frame.message;
  const int bottom = key_line.empty() ? 0 : 1;
  const int body = height - 1 - bottom;

  // Full blocks if they all fit, else compact ones (no unit rows, no processes), else as many
  // compact blocks as fit and a line saying how many more there are.
  std::vector<std::vector<std::string>> blocks;
  int needed = 0;
  for (const GpuFrame& g : frame.gpus) {
    blocks.push_back(gpu_block(g, width, false));
    needed += static_cast<int>(blocks.back().size()) + 1;
  }
  if (needed - 1 > body) {
    blocks.clear();
    for (const GpuFrame& g : frame.gpus) blocks.push_back(gpu_block(g, width, true));
  }
  if (frame.gpus.empty() && body > 0) lines.emplace_back("no GPU to show");
  // rest[i]: the lines blocks i.. take, with a blank line before each but the first shown.
  std::vector<int> rest(blocks.size() + 1, 0);
  for (std::size_t i = blocks.size(); i-- > 0;)
    rest[i] = rest[i + 1] + static_cast<int>(blocks[i].size()) + 1;
  int used = 0;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const int sep = i > 0 ? 1 : 0;
    const int size = static_cast<int>(blocks[i].size());
    const bool all_fit = used + rest[i] - (i > 0 ? 0 : 1) <= body;
    if (!all_fit && used + sep + size + 1 > body) {
      if (i == 0) {  // not even one GPU fits: as much of it as there is room for
        for (int k = 0; k < std::min(size, body); ++k)
          lines.push_back(blocks[0][static_cast<std::size_t>(k)]);
        break;
      }
      const std::size_t hidden = blocks.size() - i;
      lines.push_back(fit(fmt::format("… {} more GPU{} (a taller terminal, or --gpus, shows them)", hidden,
                                      hidden == 1 ? "" : "s"),
                          width));
      break;
    }
    if (sep) lines.emplace_back();
    for (std::string& l : blocks[i]) lines.push_back(std::move(l));
    used += sep + size;
  }
  // A block cut by a very short terminal: keep what fits.
  if (static_cast<int>(lines.size()) > height - bottom)
    lines.resize(static_cast<std::size_t>(std::max(0, height - bottom)));
  if (bottom) {
    if (static_cast<int>(lines.size()) >= height) lines.resize(static_cast<std::size_t>(height - 1));
    // The key line sits on the last row, as nvtop's does.
    while (static_cast<int>(lines.size()) < height - 1) lines.emplace_back();
    lines.push_back(fit(key_line, width));
  }
  return lines;
}

}  // namespace diescope::top
