// `diescope-workload calibrate --plan FILE [--device N]` and `--probe`: the device side of
// `diescope calibrate` (docs/calibration.md). It runs each step of the plan with counted work, every
// launch queued ahead so the GPU never waits on the host, and prints one JSON line per step and
// sweep (include/diescope/calibrate/device_protocol.hpp describes them). The sweeps are timed
// through the diescope::harness harness (CUDA events, L2 flushed before every sample).
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "calibrate_kernels.hpp"
#include "device.hpp"
#include "diescope/harness/benchmark.hpp"
#include "diescope/harness/cuda.hpp"
#include "diescope/harness/runner.hpp"
#include "diescope/core/clock.hpp"
#include "diescope/core/error.hpp"
#include "diescope/workloads/work.hpp"
#include "kernels.hpp"
#include "output.hpp"
#include "workloads.hpp"

namespace diescope::workloads::gpu {

namespace {

using nlohmann::json;

constexpr double kMarginSeconds = 0.25;        // settling time kept out of the window at each end
constexpr double kLaunchTargetSeconds = 0.02;  // each step launch runs about this long
constexpr std::uint64_t kStepStreamElements = std::uint64_t{1} << 28;  // 1 GiB per vector for the DRAM step
constexpr std::uint64_t kL2BufferFloat4s = std::uint64_t{1} << 19;     // 8 MiB: fits any Hopper L2 half

// CLOCK_REALTIME = %globaltimer + offset, from the narrowest of 16 brackets of a one-block stamp kernel.
struct TimerMap {
  std::int64_t offset_ns = 0;
  std::int64_t uncertainty_ns = 0;
};
TimerMap measure_timer_map(Stream& stream) {
  DeviceBuffer stamps(sizeof(RawStamp), "allocating a timer stamp");
  TimerMap best{0, std::numeric_limits<std::int64_t>::max()};
  for (int i = 0; i < 16; ++i) {
    const std::int64_t before = core::realtime_ns();
    check(launch_clock_stamps(stamps.as<RawStamp>(), 1, stream.get()), "launching the timer stamp kernel");
    stream.synchronize("running the timer stamp kernel");
    const std::int64_t after = core::realtime_ns();
    RawStamp s{};
    check(cudaMemcpy(&s, stamps.as<RawStamp>(), sizeof s, cudaMemcpyDeviceToHost), "reading the timer stamp");
    const std::int64_t half = (after - before) / 2;
    if (half < best.uncertainty_ns) best = TimerMap{before + half - static_cast<std::int64_t>(s.ns), half};
  }
  return best;
}

Rate fp64_warp_instructions_per_sm_per_cycle(int major, int minor) {
  if (major == 9 && minor == 0) return {2.0, ""};  // 64 FP64 lanes per SM (GH100)
  if (major == 8 && minor == 0) return {1.0, ""};  // 32 (GA100)
  return {std::numeric_limits<double>::quiet_NaN(), "FP64 lanes per SM not tabulated for this GPU"};
}

json nullable(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

struct StepSpec {
  int index = 0;
  std::string unit, name, workload;
  int loaded_sms = 0;
  double seconds = 0;
};

// One step's kernel: launch(tally, iterations) queues one launch; work(iterations) is what it counts.
struct StepKernel {
  std::function<void(ClockTally*, int)> launch;
  std::function<double(int)> work;
  double peak = std::numeric_limits<double>::quiet_NaN();
  std::string work_measure;
  bool sized_by_iterations = true;  // false: one launch is one fixed pass (STREAM)
  int blocks = 0;                   // blocks per launch, each stamped once
};

class Calibrator {
 public:
  explicit Calibrator(const DeviceInfo& device) : device_(device) {
    shared_ = shared_bytes_for_one_block_per_sm(device.shared_per_sm, device.reserved_shared_per_block,
                                                device.shared_per_block_optin);
    if (shared_ == 0)
      throw core::DeviceError(
          "cannot hold this GPU to one block per SM: a block may not ask for more than half of an SM's "
          "shared memory",
          "calibrate on a GPU whose blocks may take over half an SM's shared memory (Volta or newer)");
    // Every step kernel must fit exactly one block per SM, so that N blocks load N SMs.
    auto pin = [](const std::string& kernel, cudaError_t raised,
                  const std::function<cudaError_t(int*)>& occupancy) {
      check(raised, ("raising the " + kernel + " kernel's shared-memory limit").c_str());
      int blocks = 0;
      check(occupancy(&blocks), ("asking the " + kernel + " kernel's occupancy").c_str());
      if (blocks != 1)
        throw core::DeviceError("the " + kernel + " kernel fits " + std::to_string(blocks) +
                                    " blocks per SM where exactly 1 is needed to load a chosen number of SMs",
                                "report this with the GPU model");
    };
    pin("FFMA", ffma_set_shared_bytes(shared_), [this](int* b) { return ffma_blocks_per_sm(b, shared_); });
    for (CalibKernel k : {CalibKernel::imad, CalibKernel::ffma_imad, CalibKernel::dfma, CalibKernel::mma_bf16,
                          CalibKernel::l1_load, CalibKernel::l2_read})
      pin("calibration", calib_set_shared_bytes(k, shared_),
          [this, k](int* b) { return calib_blocks_per_sm(k, b, shared_); });
    if (device.cc_major == 9 && device.cc_minor == 0)  // the wgmma kernel exists for sm_90a alone
      pin("wgmma", wgmma_set_shared_bytes(shared_),
          [this](int* b) { return wgmma_blocks_per_sm(b, shared_); });
  }

  void run_step(const StepSpec& spec);
  void run_stream(const json& plan);
  void run_working_set(const json& plan);
  void run_reread(int repeats);
  void run_issue(const json& plan);
  void run_launch(const json& plan);

 private:
  StepKernel make_kernel(const StepSpec& spec, DeviceBuffer& sink, DeviceBuffer& l2_buffer);
  std::vector<double> time_harness(const std::string& name, const std::function<void()>& launch, int repeats);

  const DeviceInfo& device_;
  std::uint64_t shared_ = 0;
  Stream stream_;
  std::unique_ptr<DeviceBuffer> vectors_;  // the DRAM step's vectors, kept across its steps
};

StepKernel Calibrator::make_kernel(const StepSpec& spec, DeviceBuffer& sink, DeviceBuffer& l2_buffer) {
  StepKernel k;
  const int sms = spec.loaded_sms;
  const double warps = static_cast<double>(sms) * kCalibThreads / 32.0;
  const Rate fma_peak = ffma_warp_instructions_per_sm_per_cycle(device_.cc_major, device_.cc_minor);
  auto calib = [this, sms, &sink, &l2_buffer](CalibKernel kernel) {
    return [this, sms, kernel, &sink, &l2_buffer](ClockTally* tally, int iterations) {
      CalibArgs args{tally, sink.as<float>(), l2_buffer.as<float>(), kL2BufferFloat4s, iterations};
      check(launch_calib(kernel, args, sms, shared_, stream_.get()), "launching a calibration kernel");
    };
  };
  k.blocks = sms;
  if (spec.workload == "ffma") {
    k.launch = [this, sms, &sink](ClockTally* tally, int iterations) {
      FfmaArgs args{sink.as<float>(),
                    reinterpret_cast<unsigned*>(sink.as<float>() +
                                                static_cast<std::size_t>(device_.sm_count) * kCalibThreads),
                    tally,
                    iterations,
                    kFfmaMultiplier,
                    kFfmaAddend};
      check(launch_ffma(args, sms, shared_, stream_.get()), "launching the FFMA kernel");
    };
    k.work = [warps](int it) { return warps * it * kFfmaUnroll * kFfmaAccumulators; };
    k.peak = fma_peak.value;
    k.work_measure = "FFMA warp instructions";
  } else if (spec.workload == "imad") {
    k.launch = calib(CalibKernel::imad);
    k.work = [warps](int it) { return warps * it * kCalibUnroll * kImadChains; };
    k.peak = fma_peak.value;
    k.work_measure = "IMAD warp instructions (FMA pipe)";
  } else if (spec.workload == "ffma+imad") {
    k.launch = calib(CalibKernel::ffma_imad);
    k.work = [warps](int it) { return warps * it * kCalibUnroll * kMixedChains * 2.0; };
    k.peak = fma_peak.value;
    k.work_measure = "FFMA + IMAD warp instructions (FMA pipe)";
  } else if (spec.workload == "dfma") {
    k.launch = calib(CalibKernel::dfma);
    k.work = [warps](int it) { return warps * it * kCalibUnroll * kDfmaChains; };
    k.peak = fp64_warp_instructions_per_sm_per_cycle(device_.cc_major, device_.cc_minor).value;
    k.work_measure = "DFMA warp instructions";
  } else if (spec.workload == "bf16-mma") {
    if (device_.cc_major < 8)  // the kernel traps there (calibrate_kernels.cu); the plan leaves the step out
      throw core::UsageError("the bf16-mma step needs compute capability 8.0 or later (bf16 mma.sync)",
                             "rebuild diescope and diescope-workload from the same source");
    k.launch = calib(CalibKernel::mma_bf16);
    k.work = [warps](int it) { return warps * it * kMmaChains * kMmaPerChain * kMmaFlops; };
    k.peak = bf16_dense_flop_per_sm_per_cycle(device_.cc_major, device_.cc_minor).value;
    k.work_measure = "dense bf16 FLOPs (mma.sync m16n8k16: 4096 each)";
  } else if (spec.workload == "bf16-wgmma") {
    if (device_.cc_major != 9 || device_.cc_minor != 0)
      throw core::UsageError("the bf16-wgmma step needs compute capability 9.0 (Hopper's sm_90a)",
                             "rebuild diescope and diescope-workload from the same source");
    k.launch = [this, sms, &sink](ClockTally* tally, int iterations) {
      CalibArgs args{tally, sink.as<float>(), nullptr, 0, iterations};
      check(launch_wgmma(args, sms, shared_, stream_.get()), "launching the wgmma kernel");
    };
    k.work = [sms](int it) {
      return static_cast<double>(sms) * kWgmmaWarpgroups * it * kWgmmaPerTrip * kWgmmaFlops;
    };
    k.peak = bf16_dense_flop_per_sm_per_cycle(device_.cc_major, device_.cc_minor).value;
    k.work_measure = "dense bf16 FLOPs (wgmma.mma_async m64n256k16: 524288 each)";
  } else if (spec.workload == "l1-load") {
    k.launch = calib(CalibKernel::l1_load);
    k.work = [warps](int it) { return warps * it * kL1LoadsPerTrip * 4.0; };
    k.work_measure = "L1 data-stage wavefronts (4 per fully coalesced 128-bit warp load that hits L1)";
  } else if (spec.workload == "l2-read") {
    k.launch = calib(CalibKernel::l2_read);
    k.work = [sms](int it) { return static_cast<double>(sms) * kCalibThreads * it * kL2LoadsPerTrip * 16.0; };
    k.work_measure = "bytes requested at L2 (16 per thread per .cg load)";
  } else if (spec.workload == "stream-triad") {
    if (!vectors_) {
      vectors_ = std::make_unique<DeviceBuffer>(3 * kStepStreamElements * sizeof(float),
                                                "allocating the STREAM step vectors");
      float* base = vectors_->as<float>();
      for (int v = 0; v < 3; ++v)
        check(launch_stream_fill(base + v * kStepStreamElements, kStepStreamElements,
                                 1.0f + static_cast<float>(v), 0.001f, stream_.get()),
              "filling the STREAM step vectors");
    }
    // Blocks of 256 threads for `sms` SMs' worth of resident threads; the grid strides over the vectors.
    const int blocks = sms * std::max(1, device_.max_threads_per_sm / kStreamThreads);
    float* base = vectors_->as<float>();
    k.launch = [this, base, blocks](ClockTally* tally, int) {
      check(launch_stream_triad(base, base + kStepStreamElements, base + 2 * kStepStreamElements, 0.5f,
                                kStepStreamElements, tally, blocks, stream_.get()),
            "launching STREAM triad");
    };
    k.work = [](int) { return 3.0 * kStepStreamElements * sizeof(float); };
    k.work_measure = "bytes launched (2 vectors read, 1 written)";
    k.sized_by_iterations = false;
    k.blocks = blocks;
  } else {
    throw core::UsageError("unknown calibration workload \"" + spec.workload + "\"",
                           "rebuild diescope and diescope-workload from the same source");
  }
  return k;
}

void Calibrator::run_step(const StepSpec& spec) {
  if (spec.loaded_sms < 1 || spec.loaded_sms > device_.sm_count)
    throw core::UsageError("step " + spec.name + " asks for " + std::to_string(spec.loaded_sms) + " SMs of " +
                               std::to_string(device_.sm_count),
                           "rebuild diescope and diescope-workload from the same source");
  DeviceBuffer sink(
      static_cast<std::size_t>(device_.sm_count) * kCalibThreads * sizeof(float) * 4 + 4096 * 1024,
      "allocating the calibration output");
  DeviceBuffer l2_buffer(kL2BufferFloat4s * 16, "allocating the L2 buffer");
  check(cudaMemsetAsync(l2_buffer.get_void(), 0, kL2BufferFloat4s * 16, stream_.get()),
        "clearing the L2 buffer");
  StepKernel kernel = make_kernel(spec, sink, l2_buffer);

  // Size the launches: one warm-up, then one timed launch.
  DeviceBuffer sizing(sizeof(ClockTally), "allocating a clock tally");
  const ClockTally fresh = empty_tally();
  check(cudaMemcpy(sizing.as<ClockTally>(), &fresh, sizeof fresh, cudaMemcpyHostToDevice),
        "resetting a clock tally");
  constexpr int kSizingIterations = 256;
  kernel.launch(sizing.as<ClockTally>(), 16);
  Event e0, e1;
  e0.record(stream_.get());
  kernel.launch(sizing.as<ClockTally>(), kSizingIterations);
  e1.record(stream_.get());
  const double sizing_s = elapsed_ms(e0, e1) / 1000.0;
  int iterations = 1;
  double launch_s = sizing_s;
  if (kernel.sized_by_iterations) {
    iterations = static_cast<int>(std::clamp(std::round(kSizingIterations * kLaunchTargetSeconds / sizing_s),
                                             1.0, static_cast<double>(INT_MAX)));
    launch_s = sizing_s * iterations / kSizingIterations;
  }
  const std::uint64_t launches = launches_to_fill(spec.seconds + 2 * kMarginSeconds, launch_s);

  std::vector<ClockTally> tallies(launches, fresh);
  DeviceBuffer tally_buffer(launches * sizeof(ClockTally), "allocating the clock tallies");
  check(cudaMemcpy(tally_buffer.as<ClockTally>(), tallies.data(), launches * sizeof(ClockTally),
                   cudaMemcpyHostToDevice),
        "resetting the clock tallies");
  const TimerMap map = measure_timer_map(stream_);

  // Every launch queued at once: the host blocks only when the launch queue is full, never the GPU.
  for (std::uint64_t i = 0; i < launches; ++i) kernel.launch(tally_buffer.as<ClockTally>() + i, iterations);
  stream_.synchronize("running the calibration step");
  check(cudaMemcpy(tallies.data(), tally_buffer.as<ClockTally>(), launches * sizeof(ClockTally),
                   cudaMemcpyDeviceToHost),
        "reading the clock tallies");

  json intervals = json::array();
  double cycles = 0, ns = 0;
  std::uint64_t short_launches = 0;
  for (const ClockTally& t : tallies) {
    if (t.blocks != static_cast<unsigned long long>(kernel.blocks)) ++short_launches;
    intervals.push_back({static_cast<std::int64_t>(t.first_start_ns) + map.offset_ns,
                         static_cast<std::int64_t>(t.last_end_ns) + map.offset_ns});
    cycles += static_cast<double>(t.cycles);
    ns += static_cast<double>(t.ns);
  }
  if (short_launches > 0)
    throw core::DeviceError(std::to_string(short_launches) + " launches of step " + spec.name +
                                " stamped fewer blocks than launched",
                            "check the GPU with nvidia-smi and run again on an idle GPU");
  const std::int64_t first = intervals.front()[0].get<std::int64_t>();
  const std::int64_t last = intervals.back()[1].get<std::int64_t>();
  const auto margin = static_cast<std::int64_t>(kMarginSeconds * 1e9);
  json line{{"calibrate", "step"},
            {"index", spec.index},
            {"name", spec.name},
            {"unit", spec.unit},
            {"workload", spec.workload},
            {"loaded_sms", spec.loaded_sms},
            {"sm_count", device_.sm_count},
            {"work", kernel.work(iterations) * static_cast<double>(launches)},
            {"work_measure", kernel.work_measure},
            {"peak_per_sm_per_cycle", nullable(kernel.peak)},
            {"sm_clock_mhz", nullable(clock_mhz(cycles, ns))},
            {"iterations_per_launch", iterations},
            {"launch_count", launches},
            {"blocks_per_launch", kernel.blocks},
            {"timer_offset_ns", map.offset_ns},
            {"timer_uncertainty_ns", map.uncertainty_ns},
            {"window", {first + margin, last - margin}},
            {"launches", intervals}};
  print_result(line);
}

std::vector<double> Calibrator::time_harness(const std::string& name, const std::function<void()>& launch,
                                             int repeats) {
  harness::Benchmark b(name, [&launch](harness::State& state) {
    for (std::uint64_t i = 0; i < state.iterations(); ++i) launch();
  });
  harness::StoppingCriteria stop;
  stop.min_samples = stop.max_samples = static_cast<std::size_t>(std::max(repeats, 1));
  stop.min_time_s = 0;
  stop.max_noise = 1e9;
  stop.timeout_s = 60;
  b.domain(harness::MeasurementDomain::gpu)
      .timing(harness::TimingMode::cold)
      .backend(harness::cuda_event_backend(stream_.get()))
      .cache_flusher(harness::cuda_l2_flusher(stream_.get()))
      .stopping(stop);
  const harness::RunResult r = harness::run_point(b, harness::AxisPoint{});
  if (r.error)
    throw core::DeviceError("timing " + name + " failed: " + *r.error,
                            "check the GPU with nvidia-smi and run again");
  return r.sample_seconds;
}

void print_begin(int index, const std::string& name) {
  print_result(json{{"calibrate", "begin"}, {"index", index}, {"name", name}});
}

void Calibrator::run_stream(const json& plan) {
  const auto n = plan.at("elements").get<std::uint64_t>();
  const int repeats = plan.at("repeats").get<int>();
  DeviceBuffer a(n * sizeof(float), "allocating STREAM a"), b(n * sizeof(float), "allocating STREAM b"),
      c(n * sizeof(float), "allocating STREAM c");
  check(launch_stream_fill(a.as<float>(), n, 1.0f, 0.001f, stream_.get()), "filling STREAM a");
  check(launch_stream_fill(b.as<float>(), n, 2.0f, 0.001f, stream_.get()), "filling STREAM b");
  check(launch_stream_fill(c.as<float>(), n, 0.0f, 0.0f, stream_.get()), "filling STREAM c");
  DeviceBuffer tally(sizeof(ClockTally), "allocating a clock tally");
  const ClockTally fresh = empty_tally();
  check(cudaMemcpy(tally.as<ClockTally>(), &fresh, sizeof fresh, cudaMemcpyHostToDevice),
        "resetting a clock tally");
  cudaStream_t s = stream_.get();
  float *pa = a.as<float>(), *pb = b.as<float>(), *pc = c.as<float>();
  ClockTally* t = tally.as<ClockTally>();
  // Each kernel in several forms, as BabelStream-style runs tune theirs, since the fastest form
  // differs by GPU: the grid-strided loop at 1, 2, 3, 4 and all-resident blocks of 256 threads per SM
  // (fewer resident threads can move more bytes: on the H200 the DRAM step read 88.0% at a quarter
  // of the threads against 84.3% at all of them), and the one-pass form at 128 and 1024 threads (on
  // the H200 one pass moved 4.44 TB/s of triad where the loop at 2 blocks per SM moved 4.25:
  // bench/results/calibrate/2026-11-29-h200-stream-forms). Every repeat of every form goes
  // to the fit, which takes the best; each form's best is printed beside.
  struct Form {
    std::string name;
    int blocks_per_sm = 0;  // grid-strided loop; 0 for one pass
    int threads = kStreamThreads;
  };
  const int most = std::max(1, device_.max_threads_per_sm / kStreamThreads);
  std::vector<Form> forms;
  for (int g : {1, 2, 3, 4, most})
    if (g <= most &&
        std::none_of(forms.begin(), forms.end(), [g](const Form& f) { return f.blocks_per_sm == g; }))
      forms.push_back(Form{"loop " + std::to_string(g) + "/SM", g, kStreamThreads});
  for (int threads : {128, 1024})
    if (n % (4ull * threads) == 0) forms.push_back(Form{"pass " + std::to_string(threads), 0, threads});
  json points = json::array(), forms_best = json::array();
  for (const StreamKernel op : kStreamKernels) {
    const std::string name(stream_kernel_name(op));
    json all = json::array();
    for (const Form& form : forms) {
      const int blocks = device_.sm_count * form.blocks_per_sm;
      // The four STREAM kernels (docs/calibration.md#device-model): copy c = a, scale b = 0.5 a,
      // add c = a + b, triad a = b + 0.5 c.
      std::function<void()> launch;
      if (form.blocks_per_sm == 0) {
        launch = [=, threads = form.threads] {
          check(launch_stream_pass(op, pa, pb, pc, 0.5f, n, threads, s),
                "launching a one-pass STREAM kernel");
        };
      } else {
        switch (op) {
          case StreamKernel::copy:
            launch = [=] { check(launch_stream_copy(pa, pc, n, t, blocks, s), "launching STREAM copy"); };
            break;
          case StreamKernel::scale:
            launch = [=] {
              check(launch_stream_scale(pa, pb, 0.5f, n, blocks, s), "launching STREAM scale");
            };
            break;
          case StreamKernel::add:
            launch = [=] { check(launch_stream_add(pa, pb, pc, n, blocks, s), "launching STREAM add"); };
            break;
          case StreamKernel::triad:
            launch = [=] {
              check(launch_stream_triad(pa, pb, pc, 0.5f, n, t, blocks, s), "launching STREAM triad");
            };
            break;
        }
      }
      const std::vector<double> seconds = time_harness("stream " + name + " " + form.name, launch, repeats);
      for (double x : seconds) all.push_back(x);
      const std::uint64_t grid =
          form.blocks_per_sm == 0 ? n / (4ull * form.threads) : static_cast<std::uint64_t>(blocks);
      forms_best.push_back(
          {{"kernel", name},
           {"form", form.name},
           {"blocks", grid},
           {"threads_per_block", form.threads},
           {"best_seconds",
            seconds.empty() ? json(nullptr) : json(*std::min_element(seconds.begin(), seconds.end()))}});
    }
    points.push_back({{"kernel", name}, {"elements", n}, {"seconds", all}});
  }
  print_result(
      json{{"calibrate", "stream"},
           {"timing",
            "diescope::harness cold: CUDA events, L2 flushed before each sample; the fit takes the best "
            "repeat over every form"},
           {"forms", forms_best},
           {"points", points}});
}

void Calibrator::run_working_set(const json& plan) {
  const int m = plan.at("m").get<int>(), n = plan.at("n").get<int>(), repeats = plan.at("repeats").get<int>();
  const auto ks = plan.at("ks").get<std::vector<std::int64_t>>();
  const std::int64_t kmax = *std::max_element(ks.begin(), ks.end());
  DeviceBuffer dy(static_cast<std::size_t>(kmax) * m * sizeof(float), "allocating dy");
  DeviceBuffer x(static_cast<std::size_t>(kmax) * n * sizeof(float), "allocating x");
  DeviceBuffer dw(static_cast<std::size_t>(m) * n * sizeof(float), "allocating dw");
  check(launch_stream_fill(dy.as<float>(), static_cast<std::uint64_t>(kmax) * m, 0.5f, 0.001f, stream_.get()),
        "filling dy");
  check(launch_stream_fill(x.as<float>(), static_cast<std::uint64_t>(kmax) * n, 0.25f, 0.001f, stream_.get()),
        "filling x");
  const std::int64_t tiles = static_cast<std::int64_t>(m / kWsTile) * (n / kWsTile);
  int per_sm = 0;
  check(ws_blocks_per_sm(&per_sm), "asking the contraction's occupancy");
  const std::int64_t resident =
      std::min<std::int64_t>(tiles, static_cast<std::int64_t>(per_sm) * device_.sm_count);
  json points = json::array();
  for (std::int64_t k : ks) {
    const auto launch = [&, k] {
      check(launch_ws_contraction(dy.as<float>(), x.as<float>(), dw.as<float>(), m, n, static_cast<int>(k),
                                  stream_.get()),
            "launching the working-set contraction");
    };
    const std::vector<double> seconds = time_harness("working-set k=" + std::to_string(k), launch, repeats);
    const double best = seconds.empty() ? 0.0 : *std::min_element(seconds.begin(), seconds.end());
    const std::int64_t per_block = k * 2 * kWsTile * 4;  // one 16-row slice of dy and one of x
    points.push_back({{"k", k},
                      {"working_set_bytes", per_block * resident},
                      {"requested_bytes", per_block * tiles},
                      {"distinct_bytes", (k * (m + n) + static_cast<std::int64_t>(m) * n) * 4},
                      {"seconds", best}});
  }
  print_result(json{{"calibrate", "working_set"},
                    {"m", m},
                    {"n", n},
                    {"blocks", tiles},
                    {"resident_blocks", resident},
                    {"working_set_definition",
                     "the method's: per-block global read bytes (k x 32 floats) x resident blocks"},
                    {"points", points}});
}

// diescope's addition beside the contraction sweep: a buffer re-read with L1-bypassing loads, sized
// from 8 MiB to 256 MiB, where the distance between two reads of an address is the buffer itself.
void Calibrator::run_reread(int repeats) {
  const std::vector<std::int64_t> mib = {8,  16, 24, 32, 40, 44,  48,  52, 56,
                                         60, 64, 72, 80, 96, 128, 192, 256};
  const std::int64_t largest = mib.back() << 20;
  DeviceBuffer buffer(static_cast<std::size_t>(largest), "allocating the re-read buffer");
  check(launch_stream_fill(buffer.as<float>(), static_cast<std::uint64_t>(largest / 4), 1.0f, 0.001f,
                           stream_.get()),
        "filling the re-read buffer");
  const int blocks = device_.sm_count * std::max(1, device_.max_threads_per_sm / kRereadThreads);
  DeviceBuffer sink(static_cast<std::size_t>(blocks) * kRereadThreads * sizeof(float),
                    "allocating the re-read output");
  json points = json::array();
  for (std::int64_t size_mib : mib) {
    const std::int64_t bytes = size_mib << 20;
    const int passes = static_cast<int>(std::max<std::int64_t>(4, (std::int64_t{2} << 30) / bytes));
    const auto launch = [&, bytes, passes] {
      check(launch_reread(buffer.as<float>(), static_cast<std::uint64_t>(bytes / 16), passes,
                          sink.as<float>(), blocks, stream_.get()),
            "launching the re-read kernel");
    };
    const std::vector<double> seconds =
        time_harness("re-read " + std::to_string(size_mib) + " MiB", launch, repeats);
    const double best = seconds.empty() ? 0.0 : *std::min_element(seconds.begin(), seconds.end());
    points.push_back({{"k", passes},
                      {"working_set_bytes", bytes},
                      {"requested_bytes", bytes * passes},
                      {"distinct_bytes", bytes},
                      {"seconds", best}});
  }
  print_result(json{{"calibrate", "reread"},
                    {"blocks", blocks},
                    {"definition",
                     "k is the passes over the buffer; working set = distinct = the buffer; requested = "
                     "passes x buffer (.cg loads, L1 bypassed)"},
                    {"points", points}});
}

json contexts_json(std::int64_t blocks, int threads, double ops) {
  return json::array(
      {{{"blocks", blocks}, {"threads_per_block", threads}, {"scalar_ops", ops}, {"mma_ops", 0}}});
}

void Calibrator::run_issue(const json& plan) {
  const int m = plan.at("m").get<int>(), n = plan.at("n").get<int>(), repeats = plan.at("repeats").get<int>();
  const auto ks = plan.at("ks").get<std::vector<std::int64_t>>();
  const std::int64_t kmax = *std::max_element(ks.begin(), ks.end());
  DeviceBuffer dy(static_cast<std::size_t>(kmax) * m * sizeof(float), "allocating dy");
  DeviceBuffer x(static_cast<std::size_t>(kmax) * n * sizeof(float), "allocating x");
  DeviceBuffer dw(static_cast<std::size_t>(m) * n * sizeof(float), "allocating dw");
  check(cudaMemsetAsync(dy.get_void(), 0, dy.bytes(), stream_.get()), "clearing dy");
  check(cudaMemsetAsync(x.get_void(), 0, x.bytes(), stream_.get()), "clearing x");
  json points = json::array();
  for (std::int64_t k : ks) {
    const auto launch = [&, k] {
      check(launch_tiled_contraction(64, 64, 8, 4, 4, dy.as<float>(), x.as<float>(), dw.as<float>(), m, n,
                                     static_cast<int>(k), stream_.get()),
            "launching the tiled contraction");
    };
    const std::vector<double> seconds = time_harness("issue k=" + std::to_string(k), launch, repeats);
    const double best = seconds.empty() ? 0.0 : *std::min_element(seconds.begin(), seconds.end());
    const double ops = 2.0 * m * n * static_cast<double>(k);
    points.push_back({{"k", k},
                      {"scalar_ops", ops},
                      {"mma_ops", 0},
                      {"kernels", 1},
                      {"seconds", best},
                      {"contexts", contexts_json(static_cast<std::int64_t>(m / 64) * (n / 64), 256, ops)}});
  }
  print_result(
      json{{"calibrate", "issue"}, {"geometry", "64x64x8/4x4"}, {"m", m}, {"n", n}, {"points", points}});
}

void Calibrator::run_launch(const json& plan) {
  const auto sizes = plan.at("sizes").get<std::vector<std::int64_t>>();
  const double target = plan.at("target_ops").get<double>();
  const auto max_k = plan.at("max_k").get<std::int64_t>();
  const int repeats = plan.at("repeats").get<int>();
  const std::int64_t smax = *std::max_element(sizes.begin(), sizes.end());
  const auto k_for = [&](std::int64_t size, int bk) {
    const auto k =
        static_cast<std::int64_t>(target / (2.0 * static_cast<double>(size) * static_cast<double>(size)));
    return std::clamp<std::int64_t>(k / bk * bk, bk, max_k);
  };
  std::size_t floats = 0;  // the largest k x size any point reads
  for (std::int64_t size : sizes) floats = std::max(floats, static_cast<std::size_t>(k_for(size, 1) * size));
  DeviceBuffer dy(floats * sizeof(float), "allocating dy");
  DeviceBuffer x(dy.bytes(), "allocating x");
  DeviceBuffer dw(static_cast<std::size_t>(smax) * smax * sizeof(float), "allocating dw");
  check(cudaMemsetAsync(dy.get_void(), 0, dy.bytes(), stream_.get()), "clearing dy");
  check(cudaMemsetAsync(x.get_void(), 0, x.bytes(), stream_.get()), "clearing x");
  json points = json::array();
  for (const json& g : plan.at("geometries")) {
    const int bm = g.at("bm").get<int>(), bn = g.at("bn").get<int>(), bk = g.at("bk").get<int>(),
              tm = g.at("tm").get<int>(), tn = g.at("tn").get<int>();
    const int threads = (bm / tm) * (bn / tn);
    const std::string name = g.at("name").get<std::string>();
    // The plan names each geometry's sizes (docs/calibration.md#the-sweeps); one that is not a leaf of the
    // family at a size is an error naming both, never a point left out.
    const auto own_sizes = g.contains("sizes") ? g.at("sizes").get<std::vector<std::int64_t>>() : sizes;
    for (std::int64_t size : own_sizes) {
      // The host's not_a_leaf() in calibrate/steps.hpp states the same rule; this binary does not link it.
      if (size <= 0 || size % bm != 0 || size % bn != 0)
        throw core::UsageError(
            "launch geometry " + name + " is not a leaf of the tiled contraction at size " +
                std::to_string(size) + ": its block tile does not divide the output",
            "run `diescope calibrate`, whose plan times each geometry at the sizes it tiles");
      const std::int64_t k = k_for(size, bk);
      const auto launch = [&, size, k] {
        const cudaError_t e = launch_tiled_contraction(
            bm, bn, bk, tm, tn, dy.as<float>(), x.as<float>(), dw.as<float>(), static_cast<int>(size),
            static_cast<int>(size), static_cast<int>(k), stream_.get());
        if (e == cudaErrorInvalidValue)
          throw core::UsageError(
              "launch geometry " + name + " is not a leaf of the tiled contraction at size " +
                  std::to_string(size) + ": the family has no kernel for it",
              "time only 32x32x8/4x4 and 64x64x8/4x4, as `diescope calibrate`'s plan does");
        check(e, ("launching the tiled contraction " + name + " at size " + std::to_string(size)).c_str());
      };
      const std::vector<double> seconds =
          time_harness("launch " + name + " " + std::to_string(size), launch, repeats);
      const double best = seconds.empty() ? 0.0 : *std::min_element(seconds.begin(), seconds.end());
      const double ops = 2.0 * static_cast<double>(size) * static_cast<double>(size) * static_cast<double>(k);
      points.push_back({{"geometry", name},
                        {"m", size},
                        {"n", size},
                        {"k", k},
                        {"seconds", best},
                        {"contexts", contexts_json((size / bm) * (size / bn), threads, ops)}});
    }
  }
  print_result(json{{"calibrate", "launch"}, {"points", points}});
}

json device_line(const DeviceInfo& device) {
  json d = device_json(device);
  int l2 = 0;
  check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device.index), "reading the L2 size");
  d["l2_bytes"] = l2;
  d["max_threads_per_sm"] = device.max_threads_per_sm;
  return json{{"calibrate", "device"}, {"device", d}};
}

}  // namespace

int run_calibrate(const std::vector<std::string>& args) {
  std::string plan_path;
  int device_index = 0;
  bool probe = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--plan" && i + 1 < args.size())
      plan_path = args[++i];
    else if (args[i] == "--device" && i + 1 < args.size())
      device_index = std::stoi(args[++i]);
    else if (args[i] == "--probe")
      probe = true;
    else if (args[i] == "-h" || args[i] == "--help") {
      std::fputs(
          "diescope-workload calibrate (--probe | --plan FILE) [--device N]\n\n"
          "The device side of `diescope calibrate`: runs the plan's steps and sweeps and prints one JSON\n"
          "line for each (include/diescope/calibrate/device_protocol.hpp). Run `diescope calibrate`.\n",
          stdout);
      return 0;
    } else {
      throw core::UsageError("unknown argument to calibrate: " + args[i],
                             "run `diescope calibrate`, which starts this");
    }
  }
  if (!probe && plan_path.empty())
    throw core::UsageError("calibrate needs --plan FILE or --probe", "run `diescope calibrate`");
  const DeviceInfo device = open_device(device_index);
  print_result(device_line(device));
  if (probe) return 0;

  std::ifstream in(plan_path);
  if (!in)
    throw core::Error("cannot read the calibration plan " + plan_path, "run `diescope calibrate`",
                      core::kExitInput);
  const json plan = json::parse(in);
  Calibrator calibrator(device);
  print_measure_start();  // the whole calibration is one window for `diescope report` on its recording
  int index = 0;
  for (const json& s : plan.at("steps")) {
    StepSpec spec{s.at("index").get<int>(),        s.at("unit").get<std::string>(),
                  s.at("name").get<std::string>(), s.at("workload").get<std::string>(),
                  s.at("loaded_sms").get<int>(),   s.at("seconds").get<double>()};
    print_begin(spec.index, spec.name);
    calibrator.run_step(spec);
    index = spec.index;
  }
  print_begin(++index, "stream");
  calibrator.run_stream(plan.at("stream"));
  if (!plan.at("working_set").is_null()) {
    print_begin(++index, "working-set sweep");
    calibrator.run_working_set(plan.at("working_set"));
    calibrator.run_reread(plan.at("working_set").at("repeats").get<int>());
  }
  if (!plan.at("launch").is_null()) {
    print_begin(++index, "launch-fill sweep");
    calibrator.run_launch(plan.at("launch"));
  }
  if (!plan.at("issue").is_null()) {
    print_begin(++index, "issue-rate sweep");
    calibrator.run_issue(plan.at("issue"));
  }
  print_measure_stop();
  print_result(json{{"calibrate", "done"}});
  return 0;
}

}  // namespace diescope::workloads::gpu
