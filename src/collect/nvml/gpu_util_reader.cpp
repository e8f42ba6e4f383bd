// GPU-Util from NVML's timestamped samples, with the method's switch to polling
// (docs/method.md#reading-gpu-util-from-nvml).
#include <fmt/format.h>

#include "diescope/collect/nvml.hpp"

namespace diescope::collect {
namespace {

// NVML averages a sample over at most 1 s before its timestamp; older samples describe time
// before the reader started and are left out.
constexpr recording::TimeNs kLongestNvmlPeriodNs = recording::kNsPerSecond;

std::string seconds(recording::TimeNs ns) {
  return fmt::format("{:.1f} s", static_cast<double>(ns) / static_cast<double>(recording::kNsPerSecond));
}

}  // namespace

GpuUtilReader::GpuUtilReader(const NvmlDevice& device, recording::TimeNs start_ns)
    : device_(&device), start_ns_(start_ns), last_new_sample_ns_(start_ns) {}

std::string_view GpuUtilReader::reason_name(Reason reason) {
  switch (reason) {
    case Reason::none:
      return "none";
    case Reason::no_samples:
      return "no_samples";
    case Reason::call_missing:
      return "call_missing";
    case Reason::repeated_failures:
      return "repeated_failures";
    case Reason::no_new_samples:
      return "no_new_samples";
  }
  return "unknown";
}

void GpuUtilReader::switch_to_polling(Reason reason, recording::TimeNs now_ns, const std::string& detail) {
  reason_ = reason;
  switched_at_ns_ = now_ns;
  reason_text_ = "GPU " + std::to_string(device_->index()) + ": " + detail +
                 "; GPU-Util is polled from nvmlDeviceGetUtilizationRates for the rest of the run, and each "
                 "polled reading is booked to the time since the previous poll (up to 1 s), so its span is "
                 "an estimate";
}

void GpuUtilReader::poll(recording::TimeNs now_ns, std::vector<recording::UtilSample>& out) {
  const NvmlReading reading = device_->polled_gpu_util();
  if (reading.ok())
    out.push_back(recording::UtilSample{now_ns, reading.value, recording::UtilSource::polled});
}

void GpuUtilReader::read(recording::TimeNs now_ns, std::vector<recording::UtilSample>& out) {
  if (polling()) {
    poll(now_ns, out);
    return;
  }
  UtilSamplesRead got = device_->gpu_util_samples(last_seen_us_);
  using Status = UtilSamplesRead::Status;
  switch (got.status) {
    case Status::unsupported:
      switch_to_polling(Reason::call_missing, now_ns,
                        "the driver cannot give GPU-Util samples (" + got.error + ")");
      poll(now_ns, out);
      return;
    case Status::failed:
      if (failures_ == 0) first_failure_ns_ = now_ns;
      ++failures_;
      if (failures_ >= kMaxFailures && now_ns - first_failure_ns_ >= kFailureSpanNs) {
        switch_to_polling(Reason::repeated_failures, now_ns,
                          "reading GPU-Util samples failed " + std::to_string(failures_) +
                              " times in a row over " + seconds(now_ns - first_failure_ns_) +
                              " (last: " + got.error + ")");
        poll(now_ns, out);
        return;
      }
      break;
    case Status::ok:
    case Status::none: {
      failures_ = 0;
      const bool first = first_read_;
      first_read_ = false;
      if (first && got.samples.empty()) {
        switch_to_polling(Reason::no_samples, now_ns,
                          "NVML holds no GPU-Util samples for this GPU (the first read of its whole sample "
                          "buffer was empty)");
        poll(now_ns, out);
        return;
      }
      if (!got.samples.empty()) {
        last_seen_us_ = got.newest_us;
        last_new_sample_ns_ = now_ns;
        for (const auto& s : got.samples) {
          if (s.ts_ns > start_ns_ - kLongestNvmlPeriodNs) out.push_back(s);
        }
      }
      break;
    }
  }
  if (now_ns - last_new_sample_ns_ >= kStaleNs) {
    switch_to_polling(Reason::no_new_samples, now_ns,
                      "no new GPU-Util sample arrived for " + seconds(now_ns - last_new_sample_ns_));
    poll(now_ns, out);
  }
}

}  // namespace diescope::collect
