// trace.json in the Chrome trace event format (Perfetto and chrome://tracing open it).
#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <tuple>

#include "diescope/analysis/analyze.hpp"
#include "diescope/core/atomic_file.hpp"
#include "diescope/report/renderer.hpp"
#include "diescope/report/samples_csv.hpp"
#include "timeline.hpp"

namespace diescope::report {

using nlohmann::json;

namespace {

constexpr int kPid = 1;      // the GPU
constexpr int kHostPid = 2;  // host streams
constexpr std::int64_t kMaxDropSlices = 1000;
constexpr std::size_t kMaxHostTracksPerPanel = 8;
constexpr int kSamplesThread = 1;  // dropped-sample slices
constexpr int kPhasesThread = 2;   // the steady window, notes

// Streams events into the file, comma-separated inside the traceEvents array.
class EventWriter {
 public:
  EventWriter(core::AtomicFileWriter& file, recording::TimeNs origin) : file_(file), origin_(origin) {}
  double us(recording::TimeNs ns) const { return static_cast<double>(ns - origin_) / 1e3; }

  // `quoted_name` is the track's name as a JSON string (quoted once per track, not per event): the
  // counters are nearly all of a trace, so they are formatted directly.
  void counter(int pid, const std::string& quoted_name, recording::TimeNs ts, double value) {
    if (!std::isfinite(value)) return;  // no value: the track is left as it was, never drawn as 0
    buffer_ += first_ ? "\n" : ",\n";
    first_ = false;
    fmt::format_to(std::back_inserter(buffer_),
                   R"({{"ph":"C","pid":{},"name":{},"ts":{},"args":{{"value":{:.6g}}}}})", pid, quoted_name,
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

// A counter track's name, as people read it, with its unit.
std::string track_name(const detail::TimelineSeries& s) {
  using detail::Role;
  const std::string unit =
      s.descriptor.unit == metrics::Unit::pct ? "%" : metrics::display_scale(s.descriptor.unit, 1).symbol;
  switch (s.role) {
    case Role::die_util:
    case Role::gpu_util:
      return s.label + " %";
    case Role::unit:
      return "unit " + s.label + " %";
    case Role::engine:
      return "engine " + s.label + " %";
    case Role::diagnostic:
      return "diag " + s.label + " %";
    case Role::rate:
      return "rate " + s.label + " " + unit;
    case Role::throttle:
      return "throttle " + s.label + " % of time";
    case Role::host:
      return s.label + " · " + s.scope + (unit.empty() ? "" : " " + unit);
    case Role::limiting_share:
      return "busiest " + s.label + " % of time";
    case Role::sm_clock:
    case Role::mem_clock:
    case Role::power_limit:
    case Role::power_draw:
      return s.label + " " + unit;
  }
  return s.label;
}

}  // namespace

struct TraceRenderer::State {
  State(const std::filesystem::path& path, recording::TimeNs origin,
        std::shared_ptr<detail::SharedTimeline> shared, const ReportInput& input,
        const detail::TimelineOptions& options)
      : file(path),
        out(file, origin),
        timeline(std::move(shared)),
        who(timeline->join(input, options)),
        origin_ns(origin) {}
  core::AtomicFileWriter file;
  EventWriter out;
  std::shared_ptr<detail::SharedTimeline> timeline;
  std::size_t who;
  recording::TimeNs origin_ns;
  // Dropped chip samples in a row with one reason make one slice; at most kMaxDropSlices of them.
  std::optional<std::tuple<std::string, recording::TimeNs, recording::TimeNs, std::int64_t, std::int64_t>>
      open_drop;
  std::int64_t drop_slices = 0, drops_left_out = 0;
};

TraceRenderer::TraceRenderer(std::filesystem::path path, int bins, double smooth_s,
                             std::shared_ptr<detail::SharedTimeline> timeline)
    : path_(std::move(path)), bins_(bins), smooth_s_(smooth_s), timeline_(std::move(timeline)) {}
TraceRenderer::~TraceRenderer() = default;

void TraceRenderer::begin(const ReportInput& input) {
  const json& report = input.report;
  const recording::TimeNs origin = report.at("results").at("start_ns").get<recording::TimeNs>();
  detail::TimelineOptions options;
  options.max_bins = static_cast<std::size_t>(std::max(1, bins_));
  options.smooth_s = smooth_s_;
  state_ = std::make_unique<State>(
      path_, origin, timeline_ ? timeline_ : std::make_shared<detail::SharedTimeline>(), input, options);
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
  out.event(json{{"ph", "M"}, {"pid", kHostPid}, {"name", "process_name"}, {"args", {{"name", "host"}}}});
}

void TraceRenderer::sample(const WalkedSample& w) {
  State& st = *state_;
  st.timeline->sample(st.who, w);
  if (w.verdict.use == SampleUse::used) return;
  const recording::ChipSample& s = *w.sample;
  auto& open = st.open_drop;
  if (open && std::get<0>(*open) == w.verdict.reason && std::get<2>(*open) == s.start_ns) {
    std::get<2>(*open) = s.end_ns;
    std::get<4>(*open) = w.index;
    return;
  }
  close_drop();
  open.emplace(w.verdict.reason, s.start_ns, s.end_ns, w.index, w.index);
}

void TraceRenderer::close_drop() {
  State& st = *state_;
  if (!st.open_drop) return;
  auto [reason, start, end, first, last] = *st.open_drop;
  st.open_drop.reset();
  if (st.drop_slices >= kMaxDropSlices) {
    st.drops_left_out += last - first + 1;
    return;
  }
  ++st.drop_slices;
  // Perfetto drops events before the trace's origin: a slice that begins before the run is cut there.
  json args{{"first_index", first}, {"samples", last - first + 1}};
  if (start < st.origin_ns) args["start_ns"] = start;
  st.out.slice(kSamplesThread, "dropped: " + reason, std::max(start, st.origin_ns),
               std::max(end, st.origin_ns), std::move(args));
}

void TraceRenderer::finish(const ReportInput& input) {
  const json& report = input.report;
  close_drop();
  State& st = *state_;
  core::AtomicFileWriter& file = st.file;
  EventWriter& out = st.out;

  // Every series on the grid: one value per bin at the bin's start, written only when it changes
  // (a counter holds its value); a bin without a value is left out, never drawn as 0. Where a bin
  // holds more than one value, DIE-Util and GPU-Util also get their lowest and highest.
  const detail::Timeline t = st.timeline->finish(st.who, input);
  const bool merged = t.grid.step_ns > std::llround(input.recording->meta().interval_ms * 1e6);
  auto emit = [&](int pid, const std::string& name, const std::vector<double>& values) {
    const std::string quoted = json(name).dump();
    double last = analysis::kNaN;
    for (std::size_t k = 0; k < values.size(); ++k) {
      if (!std::isfinite(values[k]) || values[k] == last) continue;
      out.counter(pid, quoted, t.grid.origin_ns + static_cast<recording::TimeNs>(k) * t.grid.step_ns,
                  values[k]);
      last = values[k];
    }
  };
  // Host streams: those report.html draws (at most 8 per panel), so the trace's size stays bounded
  // on a machine of many cores or a command of many processes.
  std::vector<bool> host_drawn(t.series.size(), false);
  for (const detail::HostPanel& panel : detail::host_panels(t, kMaxHostTracksPerPanel))
    for (std::size_t i : panel.series) host_drawn[i] = true;
  for (std::size_t i = 0; i < t.series.size(); ++i) {
    const detail::TimelineSeries& s = t.series[i];
    if (s.role == detail::Role::limiting_share) continue;  // report.html's strip; here, the units say it
    if (s.role == detail::Role::host && !host_drawn[i]) continue;
    const int pid = s.role == detail::Role::host ? kHostPid : kPid;
    const std::string name = track_name(s);
    emit(pid, name, s.envelope.mean);
    if (merged && (s.role == detail::Role::die_util || s.role == detail::Role::gpu_util)) {
      emit(pid, name + " min", s.envelope.min);
      emit(pid, name + " max", s.envelope.max);
    }
  }
  if (st.drops_left_out > 0)
    out.instant(
        kSamplesThread, "dropped samples left out", t.grid.end_ns(),
        json{{"samples", st.drops_left_out},
             {"text", fmt::format("{} more dropped chip samples after the first {} slices are not drawn",
                                  st.drops_left_out, kMaxDropSlices)}});

  const json& window = report.at("window");
  if (window.value("found", false))
    out.slice(kPhasesThread, "steady window", window.at("start_ns").get<recording::TimeNs>(),
              window.at("end_ns").get<recording::TimeNs>(), json{{"how", window.value("how", "")}});
  for (const json& n : report.at("notes")) {
    const recording::TimeNs ts = n.at("ts_ns").get<recording::TimeNs>();
    json args{{"text", n.value("text", "")}};
    if (ts < st.origin_ns) args["ts_ns"] = ts;  // drawn at the origin, its own time kept
    out.instant(kPhasesThread, n.value("topic", "note"), std::max(ts, st.origin_ns), std::move(args));
  }

  out.flush();
  file.write("\n]}\n");
  file.commit();
  state_.reset();
}

}  // namespace diescope::report
