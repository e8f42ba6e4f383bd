// `diescope report PATH`: re-analyses a recording, or re-renders a report.json (docs/report.md).
#include "diescope/report/report_command.hpp"

#include <unistd.h>

#include <fmt/core.h>

#include <cerrno>
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <system_error>

#include "diescope/core/error.hpp"
#include "diescope/report/recording_report.hpp"
#include "diescope/report/renderer.hpp"
#include "diescope/report/report.hpp"
#include "timeline.hpp"

namespace diescope::report {

namespace fs = std::filesystem;

namespace {

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

// The default output folder is in the current folder, named after the recording, so that a report
// of a recording in a read-only or shared place (the bundled ones, a colleague's run) lands where
// the user is (docs/report.md).
fs::path default_output_folder(const fs::path& input) {
  return input.filename().string() + ".report";
}

fs::path output_folder(const ReportRequest& opt, const fs::path& input) {
  fs::path out = opt.out.empty() ? default_output_folder(input) : fs::path(opt.out);
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec))
    throw core::UsageError("--output " + out.string() + " is a file, not a folder",
                           "name a folder (it is created if missing)");
  fs::create_directories(out, ec);
  if (!ec && ::access(out.c_str(), W_OK) != 0) ec = std::error_code(errno, std::generic_category());
  if (ec)
    throw core::Error(
        "cannot write the report into " + out.string() + ": " + ec.message(),
        "choose a folder you can write with --output DIR, or print the headline alone with --format "
        "terminal",
        core::kExitInput);
  return out;
}

int rerender(const ReportRequest& opt, const std::set<std::string>& formats, const fs::path& input) {
  if (opt.no_window)
    throw core::UsageError("--no-window re-analyses, and a report.json holds no samples",
                           "run `diescope report --no-window` on the recording the report came from");
  nlohmann::json report = load_report(input);
  MultiRenderer renderers;
  if (wants(formats, "terminal")) renderers.add(std::make_unique<TerminalRenderer>(std::cout));
  // These show each sample; the multiplexer refuses them, naming the fix, before anything runs.
  if (wants(formats, "csv")) renderers.add(std::make_unique<CsvRenderer>("samples.csv"));
  if (wants(formats, "html")) renderers.add(std::make_unique<HtmlRenderer>("report.html"));
  if (wants(formats, "trace")) renderers.add(std::make_unique<TraceRenderer>("trace.json"));
  if (formats.count("json")) {
    fs::path out = opt.out.empty() ? input.parent_path() : output_folder(opt, input);
    renderers.add(std::make_unique<JsonRenderer>(out / "report.json"));
  }
  try {
    renderers.render(ReportInput{report});
  } catch (const nlohmann::json::exception& e) {
    throw core::InputError(input.string(), 0, std::string("not a complete report: ") + e.what(),
                           "re-create it with `diescope report RECORDING`");
  }
  return 0;
}

}  // namespace

const std::set<std::string>& report_formats() {
  return kFormats;
}

int report_command(const ReportRequest& opt) {
  if (opt.input == "-")
    throw core::UsageError(
        "report reads a recording from a file, not from standard input ('-')",
        "save it to a file first (e.g. `cat > run.dsrec`), then `diescope report run.dsrec`");
  if (opt.out == "-")
    throw core::UsageError(
        "--output - would make a folder named '-': report.json and samples.csv go into a folder",
        "name a folder, e.g. --output run-report; for the headline alone use --format terminal");
  const fs::path input = opt.input;
  std::set<std::string> formats(opt.formats.begin(), opt.formats.end());

  std::error_code ec;
  if (fs::is_directory(input, ec)) folder_given(input);
  // A report.json is printed again unless other forms are named.
  if (input.extension() == ".json")
    return rerender(opt, formats.empty() ? std::set<std::string>{"terminal"} : formats, input);
  if (formats.empty()) formats = kDefaultFormats;
  // The boxcar of report.html, trace.json and samples.csv (docs/report.md#smoothing).
  if (opt.smooth_ms < 0 || !std::isfinite(opt.smooth_ms))
    throw core::UsageError(
        "--smooth " + fmt::format("{:g}", opt.smooth_ms) + " is not a length of time",
        "give the smoothing kernel in milliseconds, above 0 (--smooth 100), or leave it out");
  const double smooth_s = opt.smooth_ms / 1e3;

  const analysis::WindowMode window =
      opt.no_window ? analysis::WindowMode::none : analysis::WindowMode::markers;
  MultiRenderer renderers;
  std::vector<fs::path> written;
  // The headline renders first and is always printed; a folder that cannot be written is an error
  // after it, and after the recording's own errors (the analysis comes first).
  if (wants(formats, "terminal")) renderers.add(std::make_unique<TerminalRenderer>(std::cout));
  std::optional<core::Error> folder_error;
  std::optional<fs::path> made_folder;  // created here for this report: removed again if the analysis fails
  if (formats.size() > formats.count("terminal")) {
    try {
      const fs::path wanted = opt.out.empty() ? default_output_folder(input) : fs::path(opt.out);
      std::error_code exists_ec;
      const bool existed = fs::exists(wanted, exists_ec);
      const fs::path out = output_folder(opt, input);
      if (!existed) made_folder = out;
      if (wants(formats, "json")) {
        renderers.add(std::make_unique<JsonRenderer>(out / "report.json"));
        written.push_back(out / "report.json");
      }
      if (wants(formats, "csv")) {
        renderers.add(std::make_unique<CsvRenderer>(out / "samples.csv", smooth_s));
        written.push_back(out / "samples.csv");
      }
      // report.html and trace.json drawn from one timeline's reads (docs/report.md#one-pass).
      std::shared_ptr<detail::SharedTimeline> timeline;
      if (wants(formats, "html") && wants(formats, "trace"))
        timeline = std::make_shared<detail::SharedTimeline>();
      if (wants(formats, "html")) {
        renderers.add(std::make_unique<HtmlRenderer>(out / "report.html", 1000, smooth_s, timeline));
        written.push_back(out / "report.html");
      }
      if (wants(formats, "trace")) {
        renderers.add(std::make_unique<TraceRenderer>(out / "trace.json", 10000, smooth_s, timeline));
        written.push_back(out / "trace.json");
      }
    } catch (const core::Error& e) {
      folder_error = e;
      written.clear();
    }
  }
  if (folder_error && !wants(formats, "terminal")) {
    analyse_recording(input, window, opt.calibration);
    throw *folder_error;
  }
  // One pass over the recording feeds the analysis and every output (docs/report.md#one-pass).
  try {
    analyse_and_render(input, window, opt.calibration, renderers);
  } catch (...) {
    std::error_code remove_ec;
    if (made_folder) fs::remove(*made_folder, remove_ec);  // only while empty: nothing was written into it
    throw;
  }
  if (folder_error) {
    std::cout.flush();
    throw *folder_error;
  }
  if (!written.empty()) {
    std::string list;
    for (const fs::path& p : written) list += (list.empty() ? "" : ", ") + p.string();
    std::cout << (wants(formats, "terminal") ? "\nwrote " : "wrote ") << list << "\n";
  }
  return 0;
}

}  // namespace diescope::report
