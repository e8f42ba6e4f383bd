// `diescope report PATH` as a library call (docs/report.md): from a recording, the headline and
// report.json and samples.csv in the output folder (report.html and trace.json on request); from a
// report.json, the headline again (or report.json written again with --format json).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "diescope/report/recording_report.hpp"

namespace diescope::report {

struct ReportRequest {
  std::string input;                 // a recording (.dsrec) or a report.json
  std::string out;                   // the output folder ("" <file name>.report/ in the current folder)
  std::vector<std::string> formats;  // terminal, json, csv, html, trace, all (empty: the default)
  bool no_window = false;            // summarise the whole run only
  double smooth_ms = 0;              // boxcar for report.html, trace.json, samples.csv; 0 none
  CalibrationLookup calibration;     // the report's calibration block
};

// The words --format takes.
const std::set<std::string>& report_formats();

// Writes and prints what the request asks; returns 0. Throws UsageError for contradicting options and
// InputError or Error for a file that cannot be read or written (the headline is printed first).
int report_command(const ReportRequest& request);

}  // namespace diescope::report
