// Renderers print one report in one form; a MultiRenderer fans a report out to several (as
// nvbench's printers do). Every renderer reads the report document (report.hpp); those that show
// each sample also stream the recording (SampleRenderer), and say so through needs_recording().
#pragma once

#include <filesystem>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diescope/analysis/result.hpp"
#include "diescope/recording/recording.hpp"

namespace diescope::report {

struct WalkedSample;  // samples_csv.hpp
namespace detail {
class SharedTimeline;  // report.html's and trace.json's timelines from one walk (src/report/timeline.hpp)
}

struct ReportInput {
  const nlohmann::json& report;
  // Present when the report was made from a recording now; null when re-rendering a report.json.
  const recording::Recording* recording = nullptr;
  const analysis::Analysis* analysis = nullptr;
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

// A renderer that shows each chip sample. Its samples come from one walk of the recording
// (walk_samples: a pass of the analysis with its per-sample observer); a MultiRenderer makes that
// walk once for all of them, so samples.csv, report.html and trace.json together cost one extra
// pass over the recording, not three. render() alone walks for this renderer only.
class SampleRenderer : public Renderer {
 public:
  bool needs_recording() const override { return true; }
  // Before the walk (open files, write headers); the input has a recording (render() and the
  // MultiRenderer check, with a UsageError that names the output).
  virtual void begin(const ReportInput& input) = 0;
  virtual void sample(const WalkedSample& walked) = 0;
  // After the walk: the rest of the output, committed.
  virtual void finish(const ReportInput& input) = 0;
  void render(const ReportInput& input) final;
};

class MultiRenderer final : public Renderer {
 public:
  void add(std::unique_ptr<Renderer> renderer) { renderers_.push_back(std::move(renderer)); }
  bool empty() const { return renderers_.empty(); }
  std::string name() const override;
  bool needs_recording() const override;
  // The renderers that need no samples in the order added, then those that do, over one shared walk.
  void render(const ReportInput& input) override;
  // The renderers that show each sample, in the order added; render_documents() renders the others.
  // Together they let the analysis's own pass feed the samples (analyse_and_render(),
  // docs/report.md#one-pass).
  std::vector<SampleRenderer*> sample_renderers() const;
  void render_documents(const ReportInput& input);

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

// samples.csv: one row per chip sample as read (samples_csv.hpp), streamed to disk atomically;
// with `smooth_s` above 0, the used rows' values smoothed by the pipeline's boxcar.
class CsvRenderer final : public SampleRenderer {
 public:
  explicit CsvRenderer(std::filesystem::path path, double smooth_s = 0);
  ~CsvRenderer() override;
  std::string name() const override { return "csv"; }
  void begin(const ReportInput& input) override;
  void sample(const WalkedSample& walked) override;
  void finish(const ReportInput& input) override;

 private:
  struct State;
  std::filesystem::path path_;
  double smooth_s_;
  std::unique_ptr<State> state_;  // between begin() and finish()
};

// report.html: one self-contained page (no external files; docs/report.md#reporthtml): headline
// cards, the run's timeline, every unit, the limiting unit, clocks, power and throttle reasons, host
// panels and notes, with read-outs under the pointer. Every series goes through the post-processing
// pipeline onto a grid of at most `bins` bins (min/mean/max envelopes), smoothed first by a boxcar of
// `smooth_s` seconds when above 0, so the page's size does not grow with the recording.
class HtmlRenderer final : public SampleRenderer {
 public:
  // `timeline`, when given, is shared with a TraceRenderer of the same walk (and the same smoothing):
  // GPU-Util, clocks, power and throttle reasons are then read once for both.
  explicit HtmlRenderer(std::filesystem::path path, int bins = 1000, double smooth_s = 0,
                        std::shared_ptr<detail::SharedTimeline> timeline = nullptr);
  ~HtmlRenderer() override;
  std::string name() const override { return "html"; }
  void begin(const ReportInput& input) override;
  void sample(const WalkedSample& walked) override;
  void finish(const ReportInput& input) override;

 private:
  struct State;
  std::filesystem::path path_;
  int bins_;
  double smooth_s_;
  std::shared_ptr<detail::SharedTimeline> timeline_;
  std::unique_ptr<State> state_;
};

// trace.json: the Chrome trace event format, which Perfetto (ui.perfetto.dev) and chrome://tracing
// open (docs/report.md#tracejson). Counter tracks for DIE-Util, GPU-Util, each unit, diagnostic,
// rate, clock, throttle reason and host stream, from the same pipeline and grid as report.html (at
// most `bins` bins, so its size is bounded whatever the run's length); slices for the steady window
// and for dropped samples (runs of them merged, at most 1000); instant events for notes. Times are
// microseconds after the run's start and never negative.
class TraceRenderer final : public SampleRenderer {
 public:
  // `timeline`: as HtmlRenderer's.
  explicit TraceRenderer(std::filesystem::path path, int bins = 10000, double smooth_s = 0,
                         std::shared_ptr<detail::SharedTimeline> timeline = nullptr);
  ~TraceRenderer() override;
  std::string name() const override { return "trace"; }
  void begin(const ReportInput& input) override;
  void sample(const WalkedSample& walked) override;
  void finish(const ReportInput& input) override;

 private:
  struct State;
  void close_drop();
  std::filesystem::path path_;
  int bins_;
  double smooth_s_;
  std::shared_ptr<detail::SharedTimeline> timeline_;
  std::unique_ptr<State> state_;
};

}  // namespace diescope::report
