// `diescope report PATH`: re-analyses a recording, or re-renders a report.json.
// From a recording it prints the headline and writes report.json and samples.csv into --output
// (default: <recording's file name>.report/ in the current folder, docs/report.md); report.html and
// trace.json on request. From a report.json it prints the headline again (or writes it again with
// --format json).
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "command.hpp"
#include "diescope/calibrate/lookup.hpp"
#include "diescope/report/report_command.hpp"

namespace diescope::cli {
namespace {

namespace fs = std::filesystem;

struct ReportOptions {
  report::ReportRequest request;
  std::string calibration;
};

std::function<int()> setup_report(Args sub) {
  auto opt = std::make_shared<ReportOptions>();
  sub.option("PATH", opt->request.input, "a recording (.dsrec) to analyse, or a report.json to print again")
      .required();
  sub.text("--output", opt->request.out,
           "folder for report.json and samples.csv (default: <recording's file name>.report/ in the current "
           "folder)",
           {"--out", "--report"})
      .type_name("DIR");
  sub.option("--format", opt->request.formats,
             "what to produce: terminal (the headline), json (report.json), csv (samples.csv), html "
             "(report.html, a self-contained page with a timeline), trace (trace.json for Perfetto) or all; "
             "repeat or separate with commas (default: terminal,json,csv)")
      .list(',')
      .type_name("LIST")
      .check([](const std::string& name) -> std::string {
        const std::set<std::string>& formats = report::report_formats();
        if (formats.count(name)) return {};
        return "'" + name + "' is not a format" +
               did_you_mean(name, std::vector<std::string>(formats.begin(), formats.end())) +
               " (terminal, json, csv, html, trace, all)";
      });
  sub.option("--calibration", opt->calibration,
             "a calibration file or folder from `diescope calibrate` (default: the calibrations folder under "
             "$XDG_DATA_HOME/diescope or ~/.local/share/diescope)")
      .type_name("PATH");
  sub.number(
         "--smooth", opt->request.smooth_ms,
         "smooth report.html, trace.json and samples.csv with a boxcar of MS milliseconds (default: none; "
         "report.json and the headline are never smoothed)")
      .type_name("MS");
  sub.flag("--no-window", opt->request.no_window,
           "summarise the whole run only, even when the recording has window markers");
  return [opt]() {
    // The calibration that fits the recording's GPU model, driver, method and unit recipes.
    const std::optional<fs::path> calibration =
        opt->calibration.empty() ? std::nullopt : std::optional<fs::path>(opt->calibration);
    report::ReportRequest request = opt->request;
    request.calibration = [calibration](const analysis::Analysis& analysis) {
      return calibrate::calibration_block_json(
          calibrate::find_calibration(analysis.meta, analysis.method, calibration));
    };
    return report::report_command(request);
  };
}

const CommandRegistrar registrar{
    Command{"report", 20, setup_report,
            "analyse a recording or re-render a report: headline, report.json, samples.csv, HTML, trace"}};

}  // namespace
}  // namespace diescope::cli
