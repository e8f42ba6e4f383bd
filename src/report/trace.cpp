// trace.json in the Chrome trace event format (Perfetto and chrome://tracing open it).
#include <fmt/format.h>

#include <cmath>

#include "diescope/analysis/analyze.hpp"
#include "diescope/core/atomic_file.hpp"
#include "diescope/report/renderer.hpp"
#include "diescope/report/samples_csv.hpp"

namespace diescope::report {

using nlohmann::json;

namespace {

constexpr int kPid = 1;
constexpr int kSamplesThread = 1;  // dropped-sample slices
constexpr int kPhasesThread = 2;   // the steady window, notes

// Streams events into the file, comma-separated inside the traceEvents array.
class EventWriter {
 public:
  EventWriter(core::AtomicFileWriter& file, recording::TimeNs origin) : file_(file), origin_(origin) {}
  double us(recording::TimeNs ns) const { return static_cast<double>(ns - origin_) / 1e3; }

  // `quoted_name` is the track's name as a JSON string (quoted once per track, not per event): the
  // counters are nearly all of a trace, so they are formatted directly.
  void counter(const std::string& quoted_name, recording::TimeNs ts, double value) {
    if (!std::isfinite(value)) return;  // no value: the track is left as it was, never drawn as 0
    buffer_ += first_ ? "\n" : ",\n";
    first_ = false;
    fmt::format_to(std::back_inserter(buffer_),
                   R"({{"ph":"C","pid":{},"name":{},"ts":{},"args":{{"value":{}}}}})", kPid, quoted_name,
                   us(ts), value);
    if (buffer_.size() > (1 << 16)) flush();
  }
  void slice(int tid, const std::string& name, recording::TimeNs start, recording::TimeNs end,
             json args = json::object()) {
    event(json{{"ph", "X"},
               {"pid", kPid},
               {"tid", tid},
               {"name", name},
               {"ts", us(start)},
               {"dur", static_cast<double>(std::max<recording::TimeNs>(end - start, 0)) / 1e3},
               {"args", std::move(args)}});
  }
  void instant(int tid, const std::string& name, recording::TimeNs ts, json args) {
    event(json{{"ph", "i"},
               {"s", "t"},
               {"pid", kPid},
               {"tid", tid},
               {"name", name},
               {"ts", us(ts)},
               {"args", std::move(args)}});
  }
  void event(const json& e) {
    buffer_ += first_ ? "\n" : ",\n";
    first_ = false;
    buffer_ += e.dump();
    if (buffer_.size() > (1 << 16)) flush();
  }
  void flush() {
    file_.write(buffer_);
    buffer_.clear();
  }

 private:
  core::AtomicFileWriter& file_;
  recording::TimeNs origin_;
  std::string buffer_;
  bool first_ = true;
};

// A counter track's name, quoted as JSON.
std::string track(const recording::ColumnDef& c, const char* kind) {
  return json(std::string(kind) + (c.label.empty() ? c.key : c.label) + " %").dump();
}

}  // namespace

struct TraceRenderer::State {
  explicit State(const std::filesystem::path& path, recording::TimeNs origin)
      : file(path), out(file, origin) {}
  core::AtomicFileWriter file;
  EventWriter out;
  std::vector<std::string> unit_tracks, diag_tracks, engine_tracks;
};

TraceRenderer::TraceRenderer(std::filesystem::path path) : path_(std::move(path)) {}
TraceRenderer::~TraceRenderer() = default;

void TraceRenderer::begin(const ReportInput& input) {
  const json& report = input.report;
  const recording::RecordSource& source = *input.recording;
  const recording::RecordingMeta& meta = source.meta();
  const recording::TimeNs origin = report.at("results").at("start_ns").get<recording::TimeNs>();

  state_ = std::make_unique<State>(path_, origin);
  core::AtomicFileWriter& file = state_->file;
  file.write("{\"displayTimeUnit\":\"ms\",\"otherData\":");
  file.write(json{
      {"schema", report.value("schema", 0)},
      {"method", report.value("method", 0)},
      {"recording", report.at("source").value("recording", "")},
      {"time_origin_ns",
       origin}}.dump());
  file.write(",\"traceEvents\":[");
  EventWriter& out = state_->out;

  const json& gpu = report.at("gpu");
  out.event(json{
      {"ph", "M"},
      {"pid", kPid},
      {"name", "process_name"},
      {"args",
       {{"name", fmt::format("GPU {}: {} ({})", gpu.at("index").is_number() ? gpu.at("index").dump() : "?",
                             gpu.value("model", ""), gpu.value("chip", ""))}}}});
  out.event(json{{"ph", "M"},
                 {"pid", kPid},
                 {"tid", kSamplesThread},
                 {"name", "thread_name"},
                 {"args", {{"name", "dropped chip samples"}}}});
  out.event(json{{"ph", "M"},
                 {"pid", kPid},
                 {"tid", kPhasesThread},
                 {"name", "thread_name"},
                 {"args", {{"name", "window and notes"}}}});

  for (const recording::ColumnDef& c : meta.units) state_->unit_tracks.push_back(track(c, "unit "));
  for (const recording::ColumnDef& c : meta.diagnostics) state_->diag_tracks.push_back(track(c, "diag "));
  for (const recording::ColumnDef& c : meta.engines) state_->engine_tracks.push_back(track(c, "engine "));
}

// Chip samples: a counter value at each used sample's start; dropped samples as slices.
void TraceRenderer::sample(const WalkedSample& w) {
  EventWriter& out = state_->out;
  const std::vector<std::string>& unit_tracks = state_->unit_tracks;
  const std::vector<std::string>& diag_tracks = state_->diag_tracks;
  const std::vector<std::string>& engine_tracks = state_->engine_tracks;
  const recording::ChipSample& s = *w.sample;
  if (w.verdict.use != SampleUse::used) {
    out.slice(kSamplesThread, std::string("dropped: ") + w.verdict.reason, s.start_ns, s.end_ns,
              json{{"index", w.index}});
    return;
  }
  out.counter(R"("DIE-Util %")", s.start_ns, w.die_util_pct);
  for (std::size_t i = 0; i < s.units.size() && i < unit_tracks.size(); ++i)
    out.counter(unit_tracks[i], s.start_ns, s.units[i]);
  for (std::size_t i = 0; i < s.diagnostics.size() && i < diag_tracks.size(); ++i)
    out.counter(diag_tracks[i], s.start_ns, s.diagnostics[i]);
  for (std::size_t i = 0; i < w.engines.size() && i < engine_tracks.size(); ++i)
    out.counter(engine_tracks[i], s.start_ns, w.engines[i]);
}

void TraceRenderer::finish(const ReportInput& input) {
  const json& report = input.report;
  const recording::RecordSource& source = *input.recording;
  core::AtomicFileWriter& file = state_->file;
  EventWriter& out = state_->out;

  // GPU-Util from the start of the time the analysis books each NVML sample to.
  analysis::for_each_booked_util(
      source, [&](const analysis::BookedUtil& b) { out.counter(R"("GPU-Util %")", b.lo, b.pct); });

  const json& window = report.at("window");
  if (window.value("found", false))
    out.slice(kPhasesThread, "steady window", window.at("start_ns").get<recording::TimeNs>(),
              window.at("end_ns").get<recording::TimeNs>(), json{{"how", window.value("how", "")}});
  for (const json& n : report.at("notes"))
    out.instant(kPhasesThread, n.value("topic", "note"), n.at("ts_ns").get<recording::TimeNs>(),
                json{{"text", n.value("text", "")}});

  out.flush();
  file.write("\n]}\n");
  file.commit();
  state_.reset();
}

}  // namespace diescope::report
