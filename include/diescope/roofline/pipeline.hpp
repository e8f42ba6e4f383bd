// `diescope roofline profile` and `diescope roofline plot` as library calls: each target profiled by
// its backend, the rows aggregated, the table, the SVG and the HTML page written (docs/roofline.md).
// Messages and warnings go to stderr, the table to stdout, as the command prints them.
#pragma once

#include <string>
#include <vector>

namespace diescope::roofline {

// What both commands do with the rows (docs/roofline.md#regions, #aggregation, #the-plot).
struct TableRequest {
  std::string output;                   // the folder for roofline.csv, .svg and .html
  std::string region;                   // keep NVTX regions matching this ECMAScript regex ("" all)
  std::string kernel;                   // keep kernels matching this regex ("" all)
  std::string aggregate = "none";       // none, sum or dominant
  std::string color_by = "executable";  // executable or region
  std::string calibration;              // a calibration file or folder ("" the default folder)
};

struct ProfileRequest {
  TableRequest table;
  std::string profiler = "ncu";       // ncu, range or sampled
  std::vector<std::string> settings;  // backend settings, NAME=VALUE (parse_backend_settings)
  std::vector<std::string> flops;     // sampled: REGEX=VALUE[@PRECISION]
  std::string gpus;                   // ncu --devices LIST; sampled: one index
  double timeout_s = 600;             // per target
  bool force = false;                 // profile again where a report is there
  bool skip_profile = false;          // use the reports already there
  std::vector<std::string> targets;   // executables, or one command with its arguments
  bool one_command = false;           // targets is one command (it followed `--`)
};
// Profiles every target; a target that fails is named and skipped. Returns 0 when every target was
// profiled, 1 when some were not; throws core::Error when none was, or when no target can run (the
// backend missing, the counters not to be had), and UsageError for settings that contradict.
int profile(const ProfileRequest& request);

struct PlotRequest {
  TableRequest table;
  std::vector<std::string> csvs;     // roofline.csv tables
  std::vector<std::string> exports;  // NAME=FILE: `ncu --import --csv --page raw` exports
  std::string driver;                // the exports' driver ("" this machine's)
};
// Plots tables again: concatenated, filtered, aggregated. Returns 0.
int plot(const PlotRequest& request);

}  // namespace diescope::roofline
