// What both sampler children (CUPTI and fake) share: their arguments, how they learn to stop, and
// how they write protocol lines to the parent.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "diescope/collect/sampler.hpp"
#include "diescope/core/signals.hpp"

namespace diescope::collect::child {

struct Args {
  int device = 0;
  double interval_ms = recording::kDefaultIntervalMs;
  double drain_ms = 1000;
  std::vector<std::string> metrics;
  // CUPTI only.
  std::size_t hw_buffer_mb = 0;  // 0: sized from the interval and the drain (hardware_buffer_bytes)
  bool keep_latest = false;      // hardware buffer append mode; KEEP_OLDEST reports overflow
  bool timing = false;           // a "timing" note per drain: where the decode time went
  // Fake only.
  bool fake = false;
  long crash_after = -1;            // raise SIGSEGV after this many samples
  std::string fail_with;            // an ErrorKind name: report it and exit
  long max_samples = -1;            // stop by itself after this many
  long gap_at = -1;                 // skip one sample's time after this many, to show a gap
  bool blank_each_drain = false;    // like CUPTI's split sample: the first of each later drain has no values
  std::string fake_chip = "GH100";  // the chip the fake claims to be (its unit table is chosen by it)
  // Per GPU index: every value the fake reads on that GPU is this (--fake-level DEVICE:PCT, repeat),
  // so that the GPUs of a stand-in host differ by known amounts (docs/method.md#several-gpus).
  std::map<int, double> fake_levels;
};

// How often the child decodes: every --drain-ms, but at least every kMaxSamplesPerDecode intervals,
// so that what one decode must hold does not grow as the interval shrinks, and no more often than
// every kMinDecodePeriodMs, so that the image's initialisation, which grows with the slack, is spread
// over enough samples (docs/footprint.md#the-decode-period).
inline constexpr double kMaxSamplesPerDecode = 100;
inline constexpr double kMinDecodePeriodMs = 20;
double decode_period_ms(double interval_ms, double drain_ms);

// How late a decode may read the hardware buffer without losing a sample: a quarter of the decode
// period, but at least kDecodeLatenessMs. Where GPU programs ended and began on the H200, the driver
// held decode calls up to 25.5 ms before they read the buffer and slowed them to 40 to 70 ms, so the
// next decode began late, and 30 ms of slack lost samples there once. A slack that covers it (60 ms,
// decoded every 40 ms) doubles the image at 0.1 ms, and a larger image costs more per sample to
// decode and initialise: the decoding thread then had no headroom and fell behind
// (docs/footprint.md#the-decode-image).
inline constexpr double kDecodeLatenessMs = 30;
double decode_slack_ms(double interval_ms, double drain_ms);

// The samples the hardware buffer is sized for: one decode period's, then another period's or the
// slack's, whichever is longer, plus kSpareSamples (docs/footprint.md#the-hardware-buffer).
inline constexpr std::size_t kSpareSamples = 64;
std::size_t samples_held(double interval_ms, double drain_ms);

// The samples the decode image holds: one decode period's and the slack's, with 4 spare, at least 8.
// CUPTI's decode drops the records that do not fit in the image, so it must hold every sample that
// arrives between two decodes, a late one included; re-initialising it costs time in proportion to
// its size, so it holds no more (docs/footprint.md#the-decode-image).
std::size_t decode_image_samples(double interval_ms, double drain_ms);

// The counters' hardware buffer: samples_held() at `bytes_per_sample` each, times
// kHardwareBufferHeadroom, rounded up to whole MiB and held within [kHardwareBufferMinBytes,
// kHardwareBufferMaxBytes] (docs/footprint.md#the-hardware-buffer).
inline constexpr double kHardwareBufferHeadroom = 1.5;
inline constexpr std::size_t kHardwareBufferMinBytes = std::size_t{4} << 20;
inline constexpr std::size_t kHardwareBufferMaxBytes = std::size_t{512} << 20;
std::size_t hardware_buffer_bytes(double interval_ms, double drain_ms, std::size_t bytes_per_sample);

// How many counter-data images the CUPTI child may rotate between its decoding thread and its
// evaluating one: as many as kDecodeImagesBytes holds, within [kDecodeImagesLimitMin,
// kDecodeImagesMax]. The child makes kDecodeImagesMin at start (one decoded into while the other is
// evaluated) and adds one only when the decode finds every image still waiting for the evaluation
// (docs/footprint.md#the-decode-pipeline).
inline constexpr std::size_t kDecodeImagesMin = 2;
inline constexpr std::size_t kDecodeImagesLimitMin = 3;
inline constexpr std::size_t kDecodeImagesMax = 4;
inline constexpr std::size_t kDecodeImagesBytes = std::size_t{32} << 20;
std::size_t decode_images(std::size_t image_bytes);

// The images in rotation, by index: free ones for the decoding thread, decoded ones (oldest first)
// for the evaluating thread. Bounded by `limit` images; the decoding side waits only when every one
// of them is decoded and not yet evaluated (docs/footprint.md#the-decode-pipeline).
class ImageRing {
 public:
  explicit ImageRing(std::size_t limit, std::size_t made = kDecodeImagesMin);
  struct Taken {
    std::size_t image = 0;
    bool fresh = false;          // a new image: the caller makes it (the limit was not reached)
    std::int64_t waited_ns = 0;  // how long the caller waited for the evaluation to give one back
  };
  // The decoding side: the image given back first; else a new one while fewer than the limit exist;
  // else waits for the evaluating side to give one back. nullopt once closed.
  std::optional<Taken> take_free();
  // The decoding side, ahead of its next decode: an image given back, or nullopt at once when none
  // is (it neither makes one nor waits).
  std::optional<std::size_t> try_take_free();
  // The decoding side hands a decoded image to the evaluating side.
  void put_decoded(std::size_t image);
  // The evaluating side: the oldest decoded image, waiting for one; nullopt once closed and every
  // decoded image has been taken.
  std::optional<std::size_t> take_decoded();
  // The evaluating side gives an image back.
  void put_free(std::size_t image);
  // No more images will be decoded (or the evaluation stopped): wakes both sides.
  void close();
  std::size_t made() const;
  std::size_t limit() const { return limit_; }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t limit_;
  std::size_t made_;
  std::deque<std::size_t> free_;
  std::deque<std::size_t> decoded_;
  bool closed_ = false;
};

// Parses the child's command line (argv[0] is the program or subcommand name). Returns nullopt and
// sets `why` on a bad argument.
std::optional<Args> parse_args(int argc, char** argv, std::string& why);

// Watches stdin (EOF or a "stop" line) and SIGTERM/SIGINT/SIGHUP; one per process.
class StopWatcher {
 public:
  StopWatcher();
  // Sleeps up to `timeout_ms`; returns true once a stop has been asked for.
  bool wait(std::int64_t timeout_ms);
  bool stop_requested() const { return stop_; }
  std::string reason() const { return reason_; }

 private:
  core::SignalSelfPipe signals_;
  bool stop_ = false;
  std::string reason_;
  std::string stdin_buffer_;
};

// Finds samples lost between two that should touch: with a time trigger each sample starts where
// the previous one ended. A hole longer than half an interval is reported as a gap.
class Continuity {
 public:
  explicit Continuity(std::int64_t interval_ns) : tolerance_ns_(interval_ns / 2) {}
  std::optional<sampler_msg::Gap> check(std::int64_t start_ns, std::int64_t end_ns);
  void reset() { last_end_ns_.reset(); }

 private:
  std::int64_t tolerance_ns_;
  std::optional<std::int64_t> last_end_ns_;
};

// CUPTI sometimes hands back a run of samples without a time of their own (end <= start, stamped
// with an older time) where the next timed sample leaves a hole that the run fills exactly: on the
// H200 at 1 ms, runs of 8 to 152 samples every few seconds, each run's length equal to its hole in
// intervals (bench/results/sampler/2026-11-29-h200-device-checks/). With a GPU-time trigger every
// sample lasts one interval, so the retimer places such a run evenly in its hole. A run that does not fit its
// hole is dropped and the hole reported as a gap. Both are said in a note; nothing is dropped silently.
class Retimer {
 public:
  explicit Retimer(std::int64_t interval_ns) : interval_ns_(interval_ns), continuity_(interval_ns) {}
  // Takes one sample on the host timeline; appends what can be sent now.
  void feed(sampler_msg::Sample sample, std::vector<SamplerMessage>& out);
  // No more samples come: a run still held has no hole to fill and is dropped.
  void finish(std::vector<SamplerMessage>& out);
  long retimed() const { return retimed_; }
  long dropped() const { return dropped_; }

 private:
  void send(sampler_msg::Sample sample, std::vector<SamplerMessage>& out);
  std::int64_t interval_ns_;
  Continuity continuity_;
  std::vector<sampler_msg::Sample> held_;
  std::optional<std::int64_t> last_end_ns_;
  long retimed_ = 0;
  long dropped_ = 0;
};

// Buffers lines and writes them to stdout. A parent that has gone away (EPIPE) marks it broken.
class Emitter {
 public:
  void emit(const SamplerMessage& message);
  // Bytes waiting for flush().
  std::size_t pending_bytes() const { return buffer_.size(); }
  // Writes everything buffered. Returns false when the parent can no longer read.
  bool flush();
  bool broken() const { return broken_; }
  long samples() const { return samples_; }

 private:
  std::string buffer_;
  bool broken_ = false;
  long samples_ = 0;
};

}  // namespace diescope::collect::child
