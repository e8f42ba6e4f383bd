// Renderers print one report in one form; a MultiRenderer fans a report out to several (as
// nvbench's printers do). Every renderer reads the report document (report.hpp); those that show
// each sample also stream the recording, and say so through needs_recording().
#pragma once

#include <filesystem>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diescope/analysis/result.hpp"
#include "diescope/recording/source.hpp"

namespace diescope {

struct ReportInput {
  const nlohmann::json& report;
  // Present when the report was made from a recording now; null when re-rendering a report.json.
  const RecordSource* recording = nullptr;
  const Analysis* analysis = nullptr;
};

class Renderer {
 public:
  virtual ~Renderer() = default;
  virtual std::string name() const = 0;
  virtual bool needs_recording() const { return false; }
  // Throws UsageError when it needs the recording and the input has none; Error when a file
  // cannot be written.
  virtual void render(const ReportInput& input) = 0;
};

class MultiRenderer final : public Renderer {
 public:
  void add(std::unique_ptr<Renderer> renderer) { renderers_.push_back(std::move(renderer)); }
  bool empty() const { return renderers_.empty(); }
  std::string name() const override;
  bool needs_recording() const override;
  void render(const ReportInput& input) override;  // in the order added

 private:
  std::vector<std::unique_ptr<Renderer>> renderers_;
};

// The headline on a terminal: GPU-Util, DIE-Util, gap, stranded capacity (idle and active), the
// limiting unit, coverage, calibration, and the steady window when there is one.
class TerminalRenderer final : public Renderer {
 public:
  explicit TerminalRenderer(std::ostream& out) : out_(out) {}
  std::string name() const override { return "terminal"; }
  void render(const ReportInput& input) override;

 private:
  std::ostream& out_;
};

std::string render_terminal(const nlohmann::json& report);

// report.json, written atomically.
class JsonRenderer final : public Renderer {
 public:
  explicit JsonRenderer(std::filesystem::path path) : path_(std::move(path)) {}
  std::string name() const override { return "json"; }
  void render(const ReportInput& input) override;

 private:
  std::filesystem::path path_;
};

// samples.csv: one row per chip sample as read (samples_csv.hpp), streamed to disk atomically.
class CsvRenderer final : public Renderer {
 public:
  explicit CsvRenderer(std::filesystem::path path) : path_(std::move(path)) {}
  std::string name() const override { return "csv"; }
  bool needs_recording() const override { return true; }
  void render(const ReportInput& input) override;

 private:
  std::filesystem::path path_;
};

// report.html: one self-contained page (no external files, scripts or fonts): the headline and an
// inline SVG timeline of DIE-Util beside GPU-Util over the run, each averaged over time into
// `bins` equal slices so the page stays small for a day-long recording. Streams the recording.
class HtmlRenderer final : public Renderer {
 public:
  explicit HtmlRenderer(std::filesystem::path path, int bins = 1000) : path_(std::move(path)), bins_(bins) {}
  std::string name() const override { return "html"; }
  bool needs_recording() const override { return true; }
  void render(const ReportInput& input) override;

 private:
  std::filesystem::path path_;
  int bins_;
};

// trace.json: the Chrome trace event format, which Perfetto (ui.perfetto.dev) and chrome://tracing
// open. Counter tracks for DIE-Util, GPU-Util, each unit and diagnostic; slices for the steady
// window and for dropped samples; instant events for notes. Times are microseconds after the run's
// start. Streamed: one event per value, so it grows with the recording.
class TraceRenderer final : public Renderer {
 public:
  explicit TraceRenderer(std::filesystem::path path) : path_(std::move(path)) {}
  std::string name() const override { return "trace"; }
  bool needs_recording() const override { return true; }
  void render(const ReportInput& input) override;

 private:
  std::filesystem::path path_;
};

}  // namespace diescope
