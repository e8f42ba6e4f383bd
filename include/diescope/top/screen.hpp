// What `diescope top` draws, as plain data (Frame), and the pure function that lays it out for a
// terminal of a given size (docs/top.md#the-screen). No terminal I/O here: the layout is tested as
// text, and the terminal code only writes the lines it returns.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diescope/top/view_feed.hpp"

namespace diescope::top {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// The sparklines' length: one point per second of the last minute.
inline constexpr int kHistorySeconds = 60;

enum class SortKey { index, die_util, gpu_util, gap };
SortKey next_sort_key(SortKey key);
std::string to_string(SortKey key);  // "index", "DIE-Util", "GPU-Util", "gap"
// A chip source as the GPU's title names it: "PM sampling", "GPM".
std::string_view chip_source_words(collect::ChipSource source);

// Where the GPU's chip figures come from right now (docs/top.md#sources).
enum class ChipStatus {
  chip,       // chip samples arrive (PM sampling, or the source's own chip source)
  starting,   // the counters were asked for and no sample has come yet
  nvml_only,  // none: GPU-Util only, from NVML (the reason says why)
};

struct UnitBar {
  std::string label;
  double pct = kNaN;  // NaN: not available over the window
};

struct GpuFrame {
  int index = -1;
  std::string model;
  std::string chip;
  ChipStatus chip_status = ChipStatus::nvml_only;
  collect::ChipSource chip_source = collect::ChipSource::pm;
  double interval_ms = kNaN;  // the chip sample interval
  std::string status_reason;  // nvml_only: why (a sampler note), may be empty
  bool replay = false;        // figures come from a recording
  bool replay_over = false;   // ... which has ended: the figures are those of its end

  double gpu_util_pct = kNaN;
  double die_util_pct = kNaN;
  std::string limiting_unit;  // label; empty when there is none
  bool all_idle = false;      // every unit under the idle threshold: no limiting unit
  std::vector<UnitBar> units;
  // One value per second, oldest first, kHistorySeconds long at most; NaN where nothing covered it.
  std::vector<double> gpu_util_history;
  std::vector<double> die_util_history;

  double sm_mhz = kNaN;
  double mem_mhz = kNaN;
  double power_w = kNaN;
  double power_limit_w = kNaN;
  std::optional<std::uint64_t> throttle_mask;         // nullopt: NVML could not say, or nothing read yet
  bool throttle_read = false;                         // a reading arrived (its mask may still be nullopt)
  std::optional<std::vector<ProcessInfo>> processes;  // pids and names, where the source reads them
  int compute_processes = -1;                         // counts from the records; -1 unknown
  int graphics_processes = -1;

  // The gap in points: GPU-Util - DIE-Util, NaN when either is.
  double gap_points() const { return gpu_util_pct - die_util_pct; }
};

struct Frame {
  std::string source;       // "live", "replay ffma66.dsrec at 1x"
  std::string time_of_day;  // "13:45:02 UTC": the source time of the frame
  double drain_ms = 1000;   // refresh
  bool paused = false;
  bool ended = false;  // a replay is over
  SortKey sort = SortKey::index;
  std::vector<GpuFrame> gpus;  // in display order (sorted)
  std::string message;         // one line for the bottom (e.g. a refused key); may be empty
};

// Lays out `frame` for a terminal `width` columns by `height` rows: at most `height` lines, none
// wider than `width` columns (every character the layout uses is one column wide). A narrow
// terminal drops the bars, then the sparklines; a short one drops unit rows, then whole GPUs (and
// says how many). `keys` adds the key line at the bottom (the interactive screen; not --once).
std::vector<std::string> layout(const Frame& frame, int width, int height, bool keys);

// The number of columns a line of layout() takes (UTF-8 code points; every one is one column).
int display_width(const std::string& text);

// Sorts GPUs for the frame: by index, or by the key's value, largest first, NaN last, index breaking ties.
void sort_gpus(std::vector<GpuFrame>& gpus, SortKey key);

}  // namespace diescope::top
