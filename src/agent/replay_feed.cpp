#include "diescope/agent/replay_feed.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <type_traits>

#include "diescope/core/error.hpp"
#include "diescope/recording/reader.hpp"

namespace diescope::agent {

namespace {

// One stream of a recording with its next record held back until the timeline reaches it.
template <typename Record>
struct Cursor {
  std::unique_ptr<recording::RecordStream<Record>> stream;
  Record next{};
  bool has = false;
  void open(std::unique_ptr<recording::RecordStream<Record>> s) {
    stream = std::move(s);
    advance();
  }
  void advance() { has = stream && stream->next(next); }
};

recording::TimeNs ts_of(const recording::ChipSample& s) {
  return std::max(s.start_ns, s.end_ns);
}  // handed out once ended
template <typename Record>
recording::TimeNs ts_of(const Record& r) {
  return r.ts_ns;
}

}  // namespace

struct ReplayFeed::Gpu {
  std::unique_ptr<recording::Recording> recording;
  recording::RecordingMeta meta;
  recording::TimeNs rec_start_ns = 0;
  recording::TimeNs rec_end_ns = 0;
  recording::TimeNs offset_ns = 0;  // added to every recording time
  bool exhausted = false;
  bool on = false;
  recording::TimeNs on_since_ns = 0;
  std::vector<recording::CountersEvent>
      pending_events;  // the agent's own on/off, handed out at the next collect

  recording::PerKind<std::tuple, Cursor, recording::StreamKinds> cursors;  // one per stream kind
  std::size_t next_event = 0;                                              // side().counters
  std::size_t next_note = 0;                                               // side().notes

  void open_streams() {
    recording::for_each_kind<recording::StreamKinds>([&]<typename Record>(std::type_identity<Record>) {
      std::get<Cursor<Record>>(cursors).open(recording->stream<Record>());
    });
    next_event = 0;
    next_note = 0;
  }

  bool streams_done() const {
    bool any = false;
    recording::for_each_kind<recording::StreamKinds>([&]<typename Record>(std::type_identity<Record>) {
      any = any || std::get<Cursor<Record>>(cursors).has;
    });
    return !any && next_event >= recording->side().counters.size() &&
           next_note >= recording->side().notes.size();
  }

  // Hands out every record whose (shifted) time is at or before `now`.
  void emit_until(recording::TimeNs now, collect::GpuBatch& out) {
    const recording::TimeNs limit = now - offset_ns;  // in the recording's own time
    recording::for_each_kind<recording::StreamKinds>([&]<typename Record>(std::type_identity<Record>) {
      Cursor<Record>& cursor = std::get<Cursor<Record>>(cursors);
      for (; cursor.has && ts_of(cursor.next) <= limit; cursor.advance()) {
        if constexpr (std::is_same_v<Record, recording::ChipSample>) {
          // Chip samples only while the agent's counters are on, from the first that ends after it
          // switched them on.
          const recording::ChipSample& s = cursor.next;
          if (!on || s.end_ns + offset_ns <= on_since_ns) continue;
          recording::OwnedChipSample o = owned_copy(s);
          o.start_ns += offset_ns;
          o.end_ns += offset_ns;
          out.list<Record>().push_back(std::move(o));
        } else {
          auto r = owned_copy(cursor.next);
          r.ts_ns += offset_ns;
          out.list<Record>().push_back(std::move(r));
        }
      }
    });
    const recording::SideRecords& side = recording->side();
    while (next_event < side.counters.size() && side.counters[next_event].ts_ns <= limit) {
      const recording::CountersEvent& e = side.counters[next_event++];
      // The recording's own starts pass through while the agent's counters are on: the sample
      // after each spans a setup. Its stops do not: the agent's schedule decides when they are off.
      if (e.on && on)
        out.counters.push_back(
            recording::CountersEvent{std::max(e.ts_ns + offset_ns, on_since_ns), true, ""});
    }
    while (next_note < side.notes.size() && side.notes[next_note].ts_ns <= limit) {
      recording::Note n = side.notes[next_note++];
      n.ts_ns += offset_ns;
      n.topic = "replay " + n.topic;
      out.notes.push_back(std::move(n));
    }
  }
};

ReplayFeed::ReplayFeed(const ReplayOptions& options, const core::ClockReadings& start)
    : speed_(options.speed), loop_(options.loop) {
  if (options.files.empty()) {
    throw core::UsageError("replay needs at least one recording",
                           "pass --replay FILE (once per GPU to replay)");
  }
  for (const auto& path : options.files) {
    auto gpu = std::make_unique<Gpu>();
    gpu->recording = recording::open_recording(path);
    gpus_.push_back(std::move(gpu));
  }
  init(start);
}

ReplayFeed::ReplayFeed(std::vector<std::unique_ptr<recording::Recording>> recordings, double speed, bool loop,
                       const core::ClockReadings& start)
    : speed_(speed), loop_(loop) {
  for (auto& recording : recordings) {
    auto gpu = std::make_unique<Gpu>();
    gpu->recording = std::move(recording);
    gpus_.push_back(std::move(gpu));
  }
  if (gpus_.empty()) throw core::UsageError("replay needs at least one recording", "pass --replay FILE");
  init(start);
}

ReplayFeed::~ReplayFeed() = default;

void ReplayFeed::init(const core::ClockReadings& start) {
  if (!(speed_ > 0) || !std::isfinite(speed_)) {
    throw core::UsageError("--replay-speed must be a positive number",
                           "e.g. --replay-speed 1 (real time) or 10");
  }
  mono0_ns_ = start.monotonic_ns;
  origin_ns_ = gpus_.front()->recording->meta().start_ns;
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    Gpu& g = *gpus_[i];
    const recording::Recording& rec = *g.recording;
    g.meta = rec.meta();
    g.rec_start_ns = g.meta.start_ns;
    g.rec_end_ns = rec.side().end ? rec.side().end->ts_ns : rec.side().last_ts_ns;
    if (g.rec_end_ns <= g.rec_start_ns) {
      throw core::InputError(rec.name(), 0,
                             "the recording ends at or before its start, so there is nothing to replay",
                             "replay a recording that holds at least one chip sample after its start");
    }
    g.offset_ns = origin_ns_ - g.rec_start_ns;
    // Each replayed file is one GPU of the replayed host, indexed in the order given.
    g.meta.gpu.index = static_cast<int>(i);
    for (std::size_t j = 0; j < i; ++j)
      if (gpus_[j]->meta.gpu.uuid == g.meta.gpu.uuid) g.meta.gpu.uuid += "-replay" + std::to_string(i);
    g.meta.start_ns = origin_ns_;
    g.open_streams();
  }
}

std::size_t ReplayFeed::gpu_count() const {
  return gpus_.size();
}
const recording::RecordingMeta& ReplayFeed::meta(std::size_t gpu) const {
  return gpus_.at(gpu)->meta;
}

recording::TimeNs ReplayFeed::now_ns(const core::ClockReadings& clocks) {
  const double elapsed = static_cast<double>(clocks.monotonic_ns - mono0_ns_) * speed_;
  return origin_ns_ + static_cast<recording::TimeNs>(std::llround(elapsed));
}

void ReplayFeed::collect(recording::TimeNs now, std::vector<collect::GpuBatch>& out) {
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    Gpu& g = *gpus_[i];
    collect::GpuBatch& batch = out.at(i);
    for (const recording::CountersEvent& e : g.pending_events) batch.counters.push_back(e);
    g.pending_events.clear();
    for (;;) {
      if (g.exhausted) break;
      g.emit_until(now, batch);
      if (!g.streams_done()) break;
      // Every record is out. The recording is over once the timeline passes its end.
      if (now < g.rec_end_ns + g.offset_ns) break;
      if (!loop_) {
        g.exhausted = true;
        break;
      }
      g.offset_ns += g.rec_end_ns - g.rec_start_ns;
      g.open_streams();
    }
  }
}

void ReplayFeed::set_counters(std::size_t gpu, bool on, recording::TimeNs now) {
  Gpu& g = *gpus_.at(gpu);
  if (g.on == on) return;
  g.on = on;
  if (on) g.on_since_ns = now;
  g.pending_events.push_back(recording::CountersEvent{now, on, ""});  // the schedule's own: no reason
}

bool ReplayFeed::ended(recording::TimeNs now) const {
  if (loop_) return false;
  for (const auto& g : gpus_)
    if (!g->exhausted && now < g->rec_end_ns + g->offset_ns) return false;
  return true;
}

bool ReplayFeed::gpu_ended(std::size_t gpu, recording::TimeNs now) const {
  const Gpu& g = *gpus_.at(gpu);
  return !loop_ && (g.exhausted || now >= g.rec_end_ns + g.offset_ns);
}

recording::TimeNs ReplayFeed::gpu_end_ns(std::size_t gpu) const {
  const Gpu& g = *gpus_.at(gpu);
  return g.rec_end_ns + g.offset_ns;
}

recording::TimeNs ReplayFeed::end_ns() const {
  recording::TimeNs end = origin_ns_;
  for (const auto& g : gpus_) end = std::max(end, g->rec_end_ns + g->offset_ns);
  return end;
}

void ReplayFeed::shutdown(recording::TimeNs now, std::vector<collect::GpuBatch>& out) {
  for (std::size_t i = 0; i < gpus_.size(); ++i) set_counters(i, false, now);
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    for (const recording::CountersEvent& e : gpus_[i]->pending_events) out.at(i).counters.push_back(e);
    gpus_[i]->pending_events.clear();
  }
}

bool ReplayFeed::counters_on(std::size_t gpu) const {
  return gpus_.at(gpu)->on;
}

}  // namespace diescope::agent
