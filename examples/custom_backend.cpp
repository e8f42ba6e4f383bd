// A custom measurement backend you can copy, with no CUDA: a simulated event timer. It derives from
// DeviceEventBackend, as CudaEventBackend does, so it keeps the duration contract (the device's time
// is the sample's duration, the host's extra time is host_overhead_ms) and its error handling; only
// where the "device time" comes from is its own. Here a modelled device: each sample's work is
// bytes moved at a bandwidth it is given, plus a fixed launch latency. Every fifth timed sample
// reports a fake device error to show that a failed sample is named and left out, never a crash.
//
// It also shows a group (docs/harness.md#groups): the two benchmarks share one modelled device, the
// group's context, made once, and the group's domain (gpu) and backend (made from that context).
//
//   ./custom_backend                 both benchmarks
//   ./custom_backend --json out.json
#include <cstdint>
#include <memory>
#include <string>

#include "diescope/harness/group.hpp"
#include "diescope/harness/main.hpp"

using namespace diescope::harness;

namespace {

// The "device": what one launch of `bytes` costs at `bytes_per_s`, plus launch latency.
struct ModelDevice {
  double bytes_per_s = 2.0e12;
  double latency_s = 5e-6;
  std::uint64_t bytes_queued = 0;  // what the benchmark "launched" since the window opened
  double seconds_for(std::uint64_t bytes, std::uint64_t launches) const {
    return static_cast<double>(bytes) / bytes_per_s + static_cast<double>(launches) * latency_s;
  }
};

// The backend: record_start() opens the device window, record_stop_and_wait() closes it,
// elapsed_seconds() gives the device time. A non-zero return is a device error code.
class ModelEventBackend final : public DeviceEventBackend {
 public:
  explicit ModelEventBackend(ModelDevice& device) : device_(device) {}
  std::string_view label() const override { return "model-events"; }

 protected:
  int record_start() override {
    device_.bytes_queued = 0;
    return 0;
  }
  int record_stop_and_wait() override { return 0; }
  int elapsed_seconds(const SampleWindow& window, double& seconds) override {
    if (window.phase == SamplePhase::timed && window.sample_index % 5 == 4)
      return 700;  // a fake device error
    seconds = device_.seconds_for(device_.bytes_queued, window.iterations);
    return 0;
  }
  std::string error_name(int code) const override { return "model device error " + std::to_string(code); }

 private:
  ModelDevice& device_;
};

}  // namespace

int main(int argc, char** argv) {
  Group<ModelDevice> device("model", [] { return std::make_unique<ModelDevice>(); });
  device.domain(MeasurementDomain::gpu).backend([](ModelDevice& d) {
    return std::make_unique<ModelEventBackend>(d);
  });
  // A "copy" of 64 MiB per launch: 2 x 64 MiB moved at 2 TB/s is 67.1 us, plus 5 us of latency.
  device
      .add("copy",
           [](ModelDevice& d, State& state) {
             for (std::uint64_t i = 0; i < state.iterations(); ++i)
               d.bytes_queued += 2 * (std::uint64_t{64} << 20);
           })
      .bytes_per_iteration(2.0 * static_cast<double>(std::uint64_t{64} << 20))
      .time_unit(TimeUnit::microsecond);
  // The same device through a sampled function that names its own operation count and a metric.
  device
      .add_sampled("fill",
                   [](ModelDevice& d, State& state) {
                     d.bytes_queued += state.iterations() * (std::uint64_t{16} << 20);
                     return SampleResult::of_operations(state.iterations())
                         .push_metric(MetricValue::integer("bytes_per_launch", std::int64_t{16} << 20, "B"));
                   })
      .time_unit(TimeUnit::microsecond);
  return bench_main(argc, argv, device.benchmarks());
}
