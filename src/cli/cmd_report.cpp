// `diescope report PATH`: re-analyses a recording, or re-renders a report.json.
// From a recording it prints the headline and writes report.json and samples.csv into --out
// (default: <recording>.report/ beside it); report.html and trace.json on request. From a
// report.json it prints the headline again (or writes it again with --format json).
#include <fmt/core.h>

#include <filesystem>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "command.hpp"
#include "diescope/analysis/analyze.hpp"
#include "diescope/calibrate/lookup.hpp"
#include "diescope/core/error.hpp"
#include "diescope/recording/reader.hpp"
#include "diescope/report/renderer.hpp"
#include "diescope/report/report.hpp"

namespace diescope::cli {
namespace {

namespace fs = std::filesystem;

struct ReportOptions {
  std::string input;
  std::string out;
  std::vector<std::string> formats;
  bool no_window = false;
  std::string calibration;
};

const std::set<std::string> kFormats = {"terminal", "json", "csv", "html", "trace", "all"};
// Without --format: the headline, report.json and samples.csv. "all" adds report.html and trace.json.
const std::set<std::string> kDefaultFormats = {"terminal", "json", "csv"};

// A folder given where a file is wanted: say what inside it could be meant.
[[noreturn]] void folder_given(const fs::path& dir) {
  std::vector<std::string> candidates;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const fs::path& p = entry.path();
    if (p.extension() == ".dsrec" || p.filename() == "report.json") candidates.push_back(p.string());
    if (candidates.size() == 3) break;
  }
  std::string fix = candidates.empty()
                        ? "name a recording (.dsrec) or a report.json"
                        : "name a file inside it, e.g. `diescope report " + candidates.front() + "`";
  throw core::InputError(dir.string(), 0, "is a folder, not a recording or a report", fix);
}

bool wants(const std::set<std::string>& formats, const char* name) {
  return formats.count(name) > 0 || formats.count("all") > 0;
}

fs::path output_folder(const ReportOptions& opt, const fs::path& input) {
  fs::path out = opt.out.empty() ? fs::path(input.string() + ".report") : fs::path(opt.out);
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec))
    throw core::UsageError("--out " + out.string() + " is a file, not a folder",
                           "name a folder (it is created if missing)");
  fs::create_directories(out, ec);
  if (ec)
    throw core::Error("cannot create the folder " + out.string() + ": " + ec.message(),
                      "choose another folder with --out", core::kExitInput);
  return out;
}

int rerender(const ReportOptions& opt, const std::set<std::string>& formats, const fs::path& input) {
  if (opt.no_window)
    throw core::UsageError("--no-window re-analyses, and a report.json holds no samples",
                           "run `diescope report --no-window` on the recording the report came from");
  nlohmann::json report = report::load_report(input);
  report::MultiRenderer renderers;
  if (wants(formats, "terminal")) renderers.add(std::make_unique<report::TerminalRenderer>(std::cout));
  // These show each sample; the multiplexer refuses them, naming the fix, before anything runs.
  if (wants(formats, "csv")) renderers.add(std::make_unique<report::CsvRenderer>("samples.csv"));
  if (wants(formats, "html")) renderers.add(std::make_unique<report::HtmlRenderer>("report.html"));
  if (wants(formats, "trace")) renderers.add(std::make_unique<report::TraceRenderer>("trace.json"));
  if (formats.count("json")) {
    fs::path out = opt.out.empty() ? input.parent_path() : output_folder(opt, input);
    renderers.add(std::make_unique<report::JsonRenderer>(out / "report.json"));
  }
  try {
    renderers.render(report::ReportInput{report});
  } catch (const nlohmann::json::exception& e) {
    throw core::InputError(input.string(), 0, std::string("not a complete report: ") + e.what(),
                           "re-create it with `diescope report RECORDING`");
  }
  return 0;
}

int run_report(const ReportOptions& opt) {
  const fs::path input = opt.input;
  std::set<std::string> formats(opt.formats.begin(), opt.formats.end());

  std::error_code ec;
  if (fs::is_directory(input, ec)) folder_given(input);
  // A report.json is printed again unless other forms are named.
  if (input.extension() == ".json")
    return rerender(opt, formats.empty() ? std::set<std::string>{"terminal"} : formats, input);
  if (formats.empty()) formats = kDefaultFormats;

  std::unique_ptr<recording::RecordSource> source = recording::open_recording(input);
  analysis::AnalysisOptions analysis_options;
  analysis_options.use_window = !opt.no_window;
  const analysis::Analysis analysis = analyze(*source, analysis_options);
  report::ReportContext context{input.string(), source->side().end};
  // The calibration that fits this recording's GPU model, driver, method and unit recipes.
  context.calibration = calibrate::calibration_block_json(calibrate::find_calibration(
      analysis.meta, analysis.method,
      opt.calibration.empty() ? std::nullopt : std::optional<fs::path>(opt.calibration)));
  const nlohmann::json report = build_report(analysis, context);

  report::MultiRenderer renderers;
  std::vector<fs::path> written;
  if (wants(formats, "terminal")) renderers.add(std::make_unique<report::TerminalRenderer>(std::cout));
  if (formats.size() > formats.count("terminal")) {
    const fs::path out = output_folder(opt, input);
    if (wants(formats, "json")) {
      renderers.add(std::make_unique<report::JsonRenderer>(out / "report.json"));
      written.push_back(out / "report.json");
    }
    if (wants(formats, "csv")) {
      renderers.add(std::make_unique<report::CsvRenderer>(out / "samples.csv"));
      written.push_back(out / "samples.csv");
    }
    if (wants(formats, "html")) {
      renderers.add(std::make_unique<report::HtmlRenderer>(out / "report.html"));
      written.push_back(out / "report.html");
    }
    if (wants(formats, "trace")) {
      renderers.add(std::make_unique<report::TraceRenderer>(out / "trace.json"));
      written.push_back(out / "trace.json");
    }
  }
  renderers.render(report::ReportInput{report, source.get(), &analysis});
  if (!written.empty()) {
    std::string list;
    for (const fs::path& p : written) list += (list.empty() ? "" : ", ") + p.string();
    std::cout << (wants(formats, "terminal") ? "\nwrote " : "wrote ") << list << "\n";
  }
  return 0;
}

std::function<int()> setup_report(CLI::App& sub) {
  auto opt = std::make_shared<ReportOptions>();
  sub.add_option("PATH", opt->input, "a recording (.dsrec) to analyse, or a report.json to print again")
      ->required();
  sub.add_option("--out", opt->out,
                 "folder for report.json and samples.csv (default: <recording>.report/ beside it)");
  sub.add_option(
         "--format", opt->formats,
         "what to produce: terminal (the headline), json (report.json), csv (samples.csv), html "
         "(report.html, a self-contained page with a timeline), trace (trace.json for Perfetto) or all; "
         "repeat or separate with commas (default: terminal,json,csv)")
      ->delimiter(',')
      ->check(CLI::IsMember(kFormats));
  sub.add_option(
      "--calibration", opt->calibration,
      "a calibration file or folder from `diescope calibrate` (default: the calibrations folder under "
      "$XDG_DATA_HOME/diescope or ~/.local/share/diescope)");
  sub.add_flag("--no-window", opt->no_window,
               "summarise the whole run only, even when the recording has window markers");
  return [opt]() { return run_report(*opt); };
}

const CommandRegistrar registrar{
    Command{"report", 20, setup_report,
            "analyse a recording or re-render a report: headline, report.json, samples.csv, HTML, trace"}};

}  // namespace
}  // namespace diescope::cli
