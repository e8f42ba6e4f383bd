#include "child_io.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <charconv>
#include <csignal>
#include <cstring>
#include <poll.h>
#include <string_view>
#include <unistd.h>

#include "diescope/core/clock.hpp"

namespace diescope::collect::child {

namespace {

bool parse_double(std::string_view text, double& out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && ptr == text.data() + text.size();
}

template <typename Int>
bool parse_int(std::string_view text, Int& out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && ptr == text.data() + text.size();
}

}  // namespace

double decode_period_ms(double interval_ms, double drain_ms) {
  return std::min(drain_ms, std::max(kMaxSamplesPerDecode * interval_ms, kMinDecodePeriodMs));
}

double decode_slack_ms(double interval_ms, double drain_ms) {
  return std::max(0.25 * decode_period_ms(interval_ms, drain_ms), kDecodeLatenessMs);
}

std::size_t samples_held(double interval_ms, double drain_ms) {
  const double per_decode = std::ceil(decode_period_ms(interval_ms, drain_ms) / interval_ms - 1e-9);
  const double slack = std::ceil(decode_slack_ms(interval_ms, drain_ms) / interval_ms - 1e-9);
  return static_cast<std::size_t>(per_decode + std::max(per_decode, slack)) + kSpareSamples;
}

std::size_t decode_image_samples(double interval_ms, double drain_ms) {
  const double held =
      (decode_period_ms(interval_ms, drain_ms) + decode_slack_ms(interval_ms, drain_ms)) / interval_ms;
  return static_cast<std::size_t>(std::max(8.0, std::ceil(held - 1e-9) + 4));
}

std::size_t hardware_buffer_bytes(double interval_ms, double drain_ms, std::size_t bytes_per_sample) {
  constexpr double kMiB = 1 << 20;
  const double bytes = static_cast<double>(samples_held(interval_ms, drain_ms)) *
                       static_cast<double>(bytes_per_sample) * kHardwareBufferHeadroom;
  const double mib = std::ceil(bytes / kMiB);
  if (!(mib * kMiB < static_cast<double>(kHardwareBufferMaxBytes))) return kHardwareBufferMaxBytes;
  return std::max(kHardwareBufferMinBytes, static_cast<std::size_t>(mib) << 20);
}

std::size_t decode_images(std::size_t image_bytes) {
  const std::size_t fit = image_bytes > 0 ? kDecodeImagesBytes / image_bytes : kDecodeImagesMax;
  return std::clamp(fit, kDecodeImagesLimitMin, kDecodeImagesMax);
}

ImageRing::ImageRing(std::size_t limit, std::size_t made)
    : limit_(std::max<std::size_t>(limit, 1)), made_(std::min(made, limit_)) {
  for (std::size_t i = 0; i < made_; ++i) free_.push_back(i);
}

std::optional<ImageRing::Taken> ImageRing::take_free() {
  std::unique_lock lock(mutex_);
  Taken taken;
  if (free_.empty() && made_ < limit_ && !closed_) {
    taken.image = made_++;
    taken.fresh = true;
    return taken;
  }
  if (free_.empty() && !closed_) {
    const std::int64_t began = core::monotonic_ns();
    changed_.wait(lock, [&] { return !free_.empty() || closed_; });
    taken.waited_ns = std::max<std::int64_t>(1, core::monotonic_ns() - began);
  }
  if (closed_) return std::nullopt;
  taken.image = free_.front();
  free_.pop_front();
  return taken;
}

std::optional<std::size_t> ImageRing::try_take_free() {
  std::lock_guard lock(mutex_);
  if (free_.empty() || closed_) return std::nullopt;
  const std::size_t image = free_.front();
  free_.pop_front();
  return image;
}

void ImageRing::put_decoded(std::size_t image) {
  {
    std::lock_guard lock(mutex_);
    decoded_.push_back(image);
  }
  changed_.notify_all();
}

std::optional<std::size_t> ImageRing::take_decoded() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !decoded_.empty() || closed_; });
  if (decoded_.empty()) return std::nullopt;
  const std::size_t image = decoded_.front();
  decoded_.pop_front();
  return image;
}

void ImageRing::put_free(std::size_t image) {
  {
    std::lock_guard lock(mutex_);
    free_.push_back(image);
  }
  changed_.notify_all();
}

void ImageRing::close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  changed_.notify_all();
}

std::size_t ImageRing::made() const {
  std::lock_guard lock(mutex_);
  return made_;
}

std::optional<Args> parse_args(int argc, char** argv, std::string& why) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    std::string_view v;
    const bool has_value = i + 1 < argc;
    if (has_value) v = argv[i + 1];
    auto bad = [&](const std::string& what) {
      why = has_value ? what + " (got '" + std::string(v) + "')" : std::string(flag) + " needs a value";
      return std::nullopt;
    };
    bool ok = has_value;
    if (flag == "--fake") {
      args.fake = true;
      continue;
    }
    if (flag == "--keep-latest") {
      args.keep_latest = true;
      continue;
    }
    if (flag == "--blank-each-drain") {
      args.blank_each_drain = true;
      continue;
    }
    if (flag == "--timing") {
      args.timing = true;
      continue;
    }
    if (flag == "--device") {
      ok = ok && parse_int(v, args.device) && args.device >= 0;
      if (!ok) return bad("--device takes a GPU index");
    } else if (flag == "--interval-ms") {
      ok = ok && parse_double(v, args.interval_ms) && args.interval_ms >= 0.01;
      if (!ok) return bad("--interval-ms must be at least 0.01");
    } else if (flag == "--drain-ms") {
      ok = ok && parse_double(v, args.drain_ms) && args.drain_ms >= 1;
      if (!ok) return bad("--drain-ms must be at least 1");
    } else if (flag == "--hw-buffer-mb") {
      ok = ok && parse_int(v, args.hw_buffer_mb);
      if (!ok) return bad("--hw-buffer-mb takes a size in MiB (0: sized from the interval and drain)");
    } else if (flag == "--crash-after") {
      if (!(ok && parse_int(v, args.crash_after))) return bad("--crash-after takes a sample count");
    } else if (flag == "--max-samples") {
      if (!(ok && parse_int(v, args.max_samples))) return bad("--max-samples takes a sample count");
    } else if (flag == "--gap-at") {
      if (!(ok && parse_int(v, args.gap_at))) return bad("--gap-at takes a sample count");
    } else if (flag == "--fake-chip") {
      if (!ok || v.empty()) return bad("--fake-chip takes a CUPTI chip name");
      args.fake_chip = std::string(v);
    } else if (flag == "--fake-level") {
      // DEVICE:PCT, e.g. 1:20: every value the fake reads on GPU DEVICE is PCT.
      const auto colon = ok ? v.find(':') : std::string_view::npos;
      int device = -1;
      double level = 0;
      if (colon == std::string_view::npos || !parse_int(v.substr(0, colon), device) || device < 0 ||
          !parse_double(v.substr(colon + 1), level) || !(level >= 0))
        return bad("--fake-level takes DEVICE:PCT, e.g. 1:20");
      args.fake_levels[device] = level;
    } else if (flag == "--fail-with") {
      if (!(ok && error_kind_from_name(v))) return bad("--fail-with takes an error kind");
      args.fail_with = std::string(v);
    } else if (flag == "--metrics") {
      if (!ok) return bad("--metrics");
      std::size_t begin = 0;
      for (;;) {
        auto comma = v.find(',', begin);
        auto name = v.substr(begin, comma == std::string_view::npos ? std::string_view::npos : comma - begin);
        if (!name.empty()) args.metrics.emplace_back(name);
        if (comma == std::string_view::npos) break;
        begin = comma + 1;
      }
    } else {
      why = "unknown argument '" + std::string(flag) + "'";
      return std::nullopt;
    }
    ++i;  // the flag's value
  }
  if (args.metrics.empty()) {
    why = "--metrics lists no metric";
    return std::nullopt;
  }
  return args;
}

// A parent that went away must show up as EPIPE on write (SIGPIPE ignored), not kill the child
// before it disables the counters.
StopWatcher::StopWatcher() : signals_({SIGTERM, SIGINT, SIGHUP}, {SIGPIPE}) {}

bool StopWatcher::wait(std::int64_t timeout_ms) {
  const std::int64_t deadline = core::monotonic_ns() + timeout_ms * 1'000'000;
  while (!stop_) {
    if (const auto caught = signals_.next()) {
      stop_ = true;
      reason_ = "signal " + core::signal_name(caught->number);
      break;
    }
    // A wait with no time left still looks at stdin once: a caller that fell behind must still
    // see the parent's stop.
    const std::int64_t left_ms =
        std::max<std::int64_t>(0, (deadline - core::monotonic_ns() + 999'999) / 1'000'000);
    pollfd fds[2] = {{0, POLLIN, 0}, {signals_.fd(), POLLIN, 0}};
    int ready = ::poll(fds, 2, static_cast<int>(left_ms));
    if (ready > 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      char chunk[256];
      ssize_t n = ::read(0, chunk, sizeof chunk);
      if (n <= 0 && !(n < 0 && errno == EINTR)) {
        stop_ = true;
        reason_ = "the parent closed the sampler's input";
        break;
      }
      if (n > 0) {
        stdin_buffer_.append(chunk, static_cast<std::size_t>(n));
        if (stdin_buffer_.find("stop\n") != std::string::npos) {
          stop_ = true;
          reason_ = "the parent asked the sampler to stop";
          break;
        }
        if (stdin_buffer_.size() > 4096) stdin_buffer_.erase(0, stdin_buffer_.size() - 8);
      }
    }
    if (left_ms == 0 && (ready <= 0 || core::monotonic_ns() >= deadline)) {
      // Timed out: one last look at the signals, then return.
      if (const auto caught = signals_.next()) {
        stop_ = true;
        reason_ = "signal " + core::signal_name(caught->number);
      }
      break;
    }
  }
  return stop_;
}

std::optional<sampler_msg::Gap> Continuity::check(std::int64_t start_ns, std::int64_t end_ns) {
  std::optional<sampler_msg::Gap> gap;
  if (last_end_ns_ && start_ns - *last_end_ns_ > tolerance_ns_)
    gap = sampler_msg::Gap{*last_end_ns_, start_ns};
  last_end_ns_ = end_ns;
  return gap;
}

void Retimer::send(sampler_msg::Sample sample, std::vector<SamplerMessage>& out) {
  if (auto gap = continuity_.check(sample.start_ns, sample.end_ns)) out.emplace_back(*gap);
  last_end_ns_ = sample.end_ns;
  out.emplace_back(std::move(sample));
}

void Retimer::feed(sampler_msg::Sample sample, std::vector<SamplerMessage>& out) {
  if (sample.end_ns <= sample.start_ns) {
    held_.push_back(std::move(sample));
    return;
  }
  if (!held_.empty()) {
    const auto count = static_cast<std::int64_t>(held_.size());
    const std::int64_t hole = last_end_ns_ ? sample.start_ns - *last_end_ns_ : -1;
    // The run fits when the hole is its length in intervals, to within half an interval.
    const bool fits = hole > 0 && std::llabs(hole - count * interval_ns_) * 2 <= interval_ns_;
    if (fits) {
      const std::int64_t from = *last_end_ns_;
      for (std::int64_t i = 0; i < count; ++i) {
        auto& held = held_[static_cast<std::size_t>(i)];
        held.start_ns = from + hole * i / count;
        held.end_ns = from + hole * (i + 1) / count;
        send(std::move(held), out);
      }
      retimed_ += count;
      out.emplace_back(sampler_msg::Note{
          "sampler", "retimed " + std::to_string(count) +
                         " samples that CUPTI gave no time: they fill the hole from " + std::to_string(from) +
                         " to " + std::to_string(sample.start_ns) + " ns exactly, one interval each"});
    } else {
      dropped_ += count;
      out.emplace_back(sampler_msg::Note{
          "sampler",
          "dropped " + std::to_string(count) + " samples that CUPTI gave no time: " +
              (hole > 0 ? "the hole before the next timed sample holds " +
                              std::to_string(static_cast<double>(hole) / static_cast<double>(interval_ns_)) +
                              " intervals"
                        : std::string("no timed sample before them to place them after"))});
    }
    held_.clear();
  }
  send(std::move(sample), out);
}

void Retimer::finish(std::vector<SamplerMessage>& out) {
  if (held_.empty()) return;
  dropped_ += static_cast<long>(held_.size());
  out.emplace_back(
      sampler_msg::Note{"sampler", "dropped " + std::to_string(held_.size()) +
                                       " samples that CUPTI gave no time at the end of sampling: no "
                                       "timed sample followed to place them before"});
  held_.clear();
}

void Emitter::emit(const SamplerMessage& message) {
  if (std::holds_alternative<sampler_msg::Sample>(message)) ++samples_;
  append_message(buffer_, message);
  buffer_ += '\n';
}

bool Emitter::flush() {
  std::size_t done = 0;
  while (!broken_ && done < buffer_.size()) {
    ssize_t n = ::write(1, buffer_.data() + done, buffer_.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      broken_ = true;
    }
  }
  buffer_.clear();
  return !broken_;
}

}  // namespace diescope::collect::child
