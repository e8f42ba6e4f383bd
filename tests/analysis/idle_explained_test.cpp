// Stranded idle explained (docs/method.md#stranded-idle-explained): one synthetic recording per
// verdict and per threshold's edge. Each run cycles a GPU step (GPU-Util 100) and a wait (GPU
// idle); host samples every 100 ms fall wholly in one phase, so the idle-weighted means are the
// wait's values, worked out below by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "diescope/analysis/analyze.hpp"
#include "diescope/metrics/catalog.hpp"
#include "diescope/recording/synthetic.hpp"

namespace diescope {
namespace {

using analysis::IdleNotExplained;
using analysis::IdleVerdict;
constexpr double kGiB = 1024.0 * 1024 * 1024;

// What the host does while the GPU waits (and, in brackets, during the step).
struct HostCase {
  int workers = 4;
  double worker_pct = 50;       // each worker's CPU, % of a core [step: 50]
  double main_cpu_pct = 20;     // the root process [step: 100]
  double main_thread_pct = 20;  // its busiest thread [step: 95]
  double host_busy_pct = 30;    // [step: 30]
  double iowait_pct = 1;        // [step: 1]
  double disk_busy_pct = 1;     // [step: 1]
  double mem_available_pct = 50;
  double step_s = 0.6, wait_s = 0.4;
  long cycles = 10;
  // The command's own reads (docs/method.md#stranded-idle-explained), while the GPU waits; the step
  // reads nothing. NaN: the stream is not recorded.
  double main_read_bytes = std::nan("");    // root's storage reads, bytes/s
  double main_kernel_pct = 0;               // root's kernel time, % of a core
  double main_blocked_pct = std::nan("");   // root's delay-accounting blocked time
  double main_threads_blocked = 0;          // root's threads in D at the read
  double worker_read_bytes = std::nan("");  // each worker's storage reads
  double worker_kernel_pct = 0;
  // A third phase after the wait, GPU idle too, in which the command reads nothing (and its kernel
  // time is 0); 0 s: none.
  double pause_s = 0;
};

recording::SyntheticSpec spec_of(const HostCase& c) {
  recording::SyntheticSpec s;
  s.meta = recording::synthetic_hopper_meta();
  s.meta.host_interval_ms = 100;
  metrics::PeakInputs inputs;
  inputs.logical_cpus = 8;
  inputs.readings["mem__capacity_bytes"] = 64 * kGiB;
  std::vector<double> step, wait, pause;
  auto add = [&](std::string_view name, const metrics::Scope& scope, double in_step, double in_wait) {
    s.host_streams.push_back(recording::HostStream{0, static_cast<std::int64_t>(s.host_streams.size()),
                                                   *metrics::describe_metric(name, scope, inputs)});
    step.push_back(in_step);
    wait.push_back(in_wait);
    // The pause reads nothing and spends no kernel time; every other figure is the wait's.
    const bool io =
        name == "proc__io_read_bytes.sum.per_second" || name == "proc__cycles_kernel.sum.per_second";
    pause.push_back(io && !std::isnan(in_wait) ? 0 : in_wait);
  };
  const auto sys = metrics::Scope::system();
  add("cpu__cycles_busy.avg.pct_of_peak_sustained_elapsed", sys, 30, c.host_busy_pct);
  add("cpu__cycles_iowait.avg.pct_of_peak_sustained_elapsed", sys, 1, c.iowait_pct);
  add("mem__capacity_bytes", sys, 64 * kGiB, 64 * kGiB);
  add("mem__available_bytes", sys, 32 * kGiB, c.mem_available_pct / 100 * 64 * kGiB);
  add("disk__busy.pct", metrics::Scope::block_device("sda"), 1, c.disk_busy_pct);
  add("disk__read_bytes.sum.per_second", metrics::Scope::block_device("sda"), 1e6, 1e6);
  s.host_tasks.push_back(recording::HostTask{0, 500, 1, "python3"});
  add("proc__cycles_active.sum.per_second", metrics::Scope::process(500), 100, c.main_cpu_pct);
  add("proc__thread_cycles_active.max.per_second", metrics::Scope::process(500), 95, c.main_thread_pct);
  add("proc__threads", metrics::Scope::process(500), 30, 30);
  if (!std::isnan(c.main_read_bytes)) {
    add("proc__io_read_bytes.sum.per_second", metrics::Scope::process(500), 0, c.main_read_bytes);
    add("proc__cycles_kernel.sum.per_second", metrics::Scope::process(500), 5, c.main_kernel_pct);
    add("proc__io_blocked.sum.per_second", metrics::Scope::process(500), 0, c.main_blocked_pct);
    add("proc__threads_blocked", metrics::Scope::process(500), 0, c.main_threads_blocked);
  }
  for (int i = 1; i <= c.workers; ++i) {
    s.host_tasks.push_back(recording::HostTask{0, 500 + i, 500, "pt_data_worker"});
    add("proc__cycles_active.sum.per_second", metrics::Scope::process(500 + i), 50, c.worker_pct);
    add("proc__thread_cycles_active.max.per_second", metrics::Scope::process(500 + i), 50, c.worker_pct);
    if (!std::isnan(c.worker_read_bytes)) {
      add("proc__io_read_bytes.sum.per_second", metrics::Scope::process(500 + i), 0, c.worker_read_bytes);
      add("proc__cycles_kernel.sum.per_second", metrics::Scope::process(500 + i), 0, c.worker_kernel_pct);
      add("proc__threads_blocked", metrics::Scope::process(500 + i), 0, 0);
    }
  }
  s.phases = {{"step", c.step_s, {0.5, 60, 30, 35}, {95, 99}, {2.3e12}, 100},
              {"wait", c.wait_s, {0, 0, 0, 0}, {0, 0}, {0}, 0}};
  s.host_values = {step, wait};
  if (c.pause_s > 0) {
    s.phases.push_back({"pause", c.pause_s, {0, 0, 0, 0}, {0, 0}, {0}, 0});
    s.host_values.push_back(pause);
  }
  s.cycles = c.cycles;
  s.significant_digits = 0;
  return s;
}

analysis::IdleExplanation explain(const HostCase& c) {
  const auto rec = recording::make_synthetic_recording(spec_of(c));
  return analysis::analyze(*rec).run.idle_explained;
}

TEST(IdleExplained, InputBoundWhenTheWorkersAreSaturated) {
  HostCase c;
  c.worker_pct = 98;
  const analysis::IdleExplanation x = explain(c);
  // GPU-Util 60% (0.6 s of every 1 s): idle 40 points. Per cycle the host samples at 0.7, 0.8, 0.9
  // and 1.0 s cover the wait: 0.4 s of GPU-idle time, over 10 cycles 4 s; busy 6 s.
  EXPECT_DOUBLE_EQ(x.idle_points, 40.0);
  EXPECT_NEAR(x.idle_observed_s, 4.0, 1e-9);
  EXPECT_NEAR(x.busy_observed_s, 6.0, 1e-9);
  EXPECT_EQ(x.logical_cpus, 8);  // the process CPU peak, 800, over 100
  // Workers: 4 at 0.98 cores = 3.92 of a capacity of min(4, 8) = 4; 3.92 >= 0.85 * 4 = 3.4.
  EXPECT_NEAR(x.workers, 4.0, 1e-12);
  EXPECT_NEAR(x.worker_cores, 3.92, 1e-12);
  EXPECT_NEAR(x.worker_capacity_cores, 4.0, 1e-12);
  EXPECT_NEAR(x.worker_cores_busy, 2.0, 1e-12);  // 4 x 0.5 during the step
  // The command: root 0.2 + workers 3.92 = 4.12 cores while idle; 1.0 + 2.0 = 3.0 while busy.
  EXPECT_NEAR(x.command_cores, 4.12, 1e-12);
  EXPECT_NEAR(x.command_cores_busy, 3.0, 1e-12);
  EXPECT_EQ(x.worker_names, std::vector<std::string>{"pt_data_worker"});
  ASSERT_TRUE(x.root.has_value());
  EXPECT_EQ(x.root->pid, 500);
  EXPECT_NEAR(x.root->threads, 30, 1e-12);
  ASSERT_TRUE(x.busiest.has_value());
  EXPECT_EQ(x.busiest->pid, 501);  // the first of the equally busy workers
  EXPECT_NEAR(x.host_cpu_busy_pct, 30, 1e-12);
  EXPECT_NEAR(x.memory_available_pct, 50, 1e-9);
  EXPECT_NEAR(x.disk_busy_max_pct, 1, 1e-12);
  EXPECT_EQ(x.busiest_disk, "sda");
  EXPECT_EQ(x.why_not, IdleNotExplained::none);
  EXPECT_EQ(x.verdict, IdleVerdict::input_bound);
}

TEST(IdleExplained, LoaderSaturationEdge) {
  HostCase c;
  c.worker_pct = 85.5;  // 3.42 of 4 cores >= 3.4
  EXPECT_EQ(explain(c).verdict, IdleVerdict::input_bound);
  c.worker_pct = 84.5;  // 3.38 < 3.4, and nothing else holds
  EXPECT_EQ(explain(c).verdict, IdleVerdict::no_clear_cause);
  // Capacity is capped at the logical CPUs: 12 workers on 8 CPUs at 60% each use 7.2 of 8 cores
  // (90%): input-bound, where 7.2 of 12 (60%) would not be.
  c.workers = 12;
  c.worker_pct = 60;
  const analysis::IdleExplanation x = explain(c);
  EXPECT_NEAR(x.worker_capacity_cores, 8, 1e-12);
  EXPECT_NEAR(x.worker_cores, 7.2, 1e-9);
  EXPECT_EQ(x.verdict, IdleVerdict::input_bound);
}

TEST(IdleExplained, EnoughWorkersIsNotInputBound) {
  HostCase c;
  c.worker_pct = 30;  // 1.2 of 4 cores
  const analysis::IdleExplanation x = explain(c);
  EXPECT_NEAR(x.worker_cores, 1.2, 1e-12);
  EXPECT_NE(x.verdict, IdleVerdict::input_bound);
  EXPECT_EQ(x.verdict, IdleVerdict::no_clear_cause);
}

// The command reads its input in the main process from a fast device: its thread is on CPU most of
// the time (73% of a core, so not one-thread-bound), mostly in the kernel, the disk far from busy.
TEST(IdleExplained, OwnReadsInTheMainProcess) {
  HostCase c;
  c.workers = 0;
  c.main_cpu_pct = 75;
  c.main_thread_pct = 73;
  c.main_read_bytes = 1e9;
  c.main_kernel_pct = 60;
  c.main_threads_blocked = 0;  // no thread in D at the reads
  c.disk_busy_pct = 67;
  const analysis::IdleExplanation x = explain(c);
  // Every idle sample reads (share 1), at 1e9 B/s; I/O cores 0.60 + 0 blocked = 0.60 >= 0.5, of the
  // reader's 0.75 + 0 = 0.75 cores (0.60 >= 0.5 x 0.75 = 0.375).
  EXPECT_NEAR(x.own_read_share, 1.0, 1e-12);
  EXPECT_NEAR(x.own_read_bytes_per_s, 1e9, 1e-3);
  EXPECT_NEAR(x.own_io_cores, 0.60, 1e-12);
  EXPECT_NEAR(x.own_reader_cores, 0.75, 1e-12);
  EXPECT_EQ(x.own_blocked_from, analysis::IdleExplanation::Blocked::thread_states);
  EXPECT_EQ(x.reader_names, std::vector<std::string>{"python3"});
  EXPECT_EQ(x.verdict, IdleVerdict::own_io_bound);
  // Without the new streams (an older recording) the same host reads as before: no clear cause.
  c.main_read_bytes = std::nan("");
  EXPECT_EQ(explain(c).verdict, IdleVerdict::no_clear_cause);
}

// Reads from the page cache move no storage bytes: not the command's I/O, whatever its kernel time.
TEST(IdleExplained, PageCacheReadsAreNotIo) {
  HostCase c;
  c.workers = 0;
  c.main_cpu_pct = 75;
  c.main_thread_pct = 73;
  c.main_read_bytes = 0;
  c.main_kernel_pct = 70;
  const analysis::IdleExplanation x = explain(c);
  // No idle sample reads from storage or waits on I/O: no share, 0 B/s, and no I/O time to describe.
  EXPECT_NEAR(x.own_read_share, 0, 1e-12);
  EXPECT_NEAR(x.own_read_bytes_per_s, 0, 1e-12);
  EXPECT_TRUE(std::isnan(x.own_io_cores));
  EXPECT_EQ(x.own_blocked_from, analysis::IdleExplanation::Blocked::not_seen);
  EXPECT_EQ(x.verdict, IdleVerdict::no_clear_cause);
}

// A slow device: the thread waits blocked, on CPU little; delay accounting measures it.
TEST(IdleExplained, OwnReadsBlockedOnASlowDevice) {
  HostCase c;
  c.workers = 0;
  c.main_cpu_pct = 10;
  c.main_thread_pct = 10;
  c.main_read_bytes = 20e6;
  c.main_kernel_pct = 5;
  c.main_blocked_pct = 85;
  c.main_threads_blocked = 3;  // delay accounting wins over the instant's count
  const analysis::IdleExplanation x = explain(c);
  // I/O 0.05 + 0.85 = 0.90 cores of 0.10 + 0.85 = 0.95; 20 MB/s >= 10 MB/s.
  EXPECT_NEAR(x.own_io_cores, 0.90, 1e-12);
  EXPECT_NEAR(x.own_reader_cores, 0.95, 1e-12);
  EXPECT_EQ(x.own_blocked_from, analysis::IdleExplanation::Blocked::delay_accounting);
  EXPECT_EQ(x.verdict, IdleVerdict::own_io_bound);
  // Delay accounting off (NaN): one thread in D at every read stands for one blocked thread.
  c.main_blocked_pct = std::nan("");
  c.main_threads_blocked = 1;
  const analysis::IdleExplanation y = explain(c);
  EXPECT_NEAR(y.own_io_cores, 1.05, 1e-12);
  EXPECT_EQ(y.own_blocked_from, analysis::IdleExplanation::Blocked::thread_states);
  EXPECT_EQ(y.verdict, IdleVerdict::own_io_bound);
}

// A throttled device: reads are accounted when issued, in bursts, so in half of the idle samples the
// reader reads nothing while it waits (delay accounting on). Wait: 22 MB/s, kernel 5%, blocked 90%;
// pause: no reads, no kernel time, still blocked 90%: every idle sample is an I/O sample.
TEST(IdleExplained, OwnReadsBurstyOnAThrottledDevice) {
  HostCase c;
  c.workers = 0;
  c.main_cpu_pct = 10;
  c.main_thread_pct = 10;
  c.main_read_bytes = 22e6;
  c.main_kernel_pct = 5;
  c.main_blocked_pct = 90;
  c.step_s = 0.2;
  c.pause_s = 0.4;
  const analysis::IdleExplanation x = explain(c);
  EXPECT_NEAR(x.own_read_share, 1.0, 1e-12);
  // Over all the idle time: (22e6 x 0.4 + 0 x 0.4) / 0.8 = 11e6.
  EXPECT_NEAR(x.own_read_bytes_per_s, 11e6, 1e-3);
  // I/O cores (0.05 + 0.90 + 0 + 0.90) / 2 = 0.925; the reader's (0.10 + 0.90) = 1.0 in both.
  EXPECT_NEAR(x.own_io_cores, 0.925, 1e-12);
  EXPECT_NEAR(x.own_reader_cores, 1.0, 1e-12);
  EXPECT_EQ(x.own_blocked_from, analysis::IdleExplanation::Blocked::delay_accounting);
  EXPECT_EQ(x.verdict, IdleVerdict::own_io_bound);
  // Blocked 40% of a thread (below 0.5) in the pause: those samples are no I/O, the share 0.5, and
  // the I/O cores those of the wait alone: 0.05 + 0.40 = 0.45 < 0.5.
  c.main_blocked_pct = 40;
  const analysis::IdleExplanation y = explain(c);
  EXPECT_NEAR(y.own_read_share, 0.5, 1e-12);
  EXPECT_NEAR(y.own_io_cores, 0.45, 1e-12);
  EXPECT_NE(y.verdict, IdleVerdict::own_io_bound);
}

// Workers that read from storage: their reads, not their CPU, are the cause; the rule comes before
// input_bound.
TEST(IdleExplained, OwnReadsInWorkers) {
  HostCase c;
  c.workers = 4;
  c.worker_pct = 95;  // input-bound by CPU alone (3.8 of 4 cores)
  c.worker_read_bytes = 250e6;
  c.worker_kernel_pct = 80;
  c.main_read_bytes = 0;
  const analysis::IdleExplanation x = explain(c);
  // 4 x 250 MB/s = 1 GB/s; I/O 4 x 0.80 = 3.2 of 4 x 0.95 = 3.8 cores.
  EXPECT_NEAR(x.own_read_bytes_per_s, 1e9, 1e-3);
  EXPECT_NEAR(x.own_io_cores, 3.2, 1e-12);
  EXPECT_NEAR(x.own_reader_cores, 3.8, 1e-12);
  EXPECT_EQ(x.reader_names, std::vector<std::string>{"pt_data_worker"});
  EXPECT_EQ(x.verdict, IdleVerdict::own_io_bound);
  // Decoding, not reading: kernel 20% each = 0.8 of 3.8 cores (< 0.5 x 3.8): input_bound.
  c.worker_kernel_pct = 20;
  EXPECT_EQ(explain(c).verdict, IdleVerdict::input_bound);
}

// Reading for half of the idle time is enough; for less, not. The wait (0.4 s) reads, a pause after
// it (GPU idle, no reads) does not: share 0.4 / (0.4 + 0.4) = 0.5, then 0.4 / (0.4 + 0.6) = 0.4.
TEST(IdleExplained, OwnReadShareEdge) {
  HostCase c;
  c.workers = 0;
  c.main_cpu_pct = 75;
  c.main_thread_pct = 73;
  c.main_read_bytes = 1e9;
  c.main_kernel_pct = 60;
  c.step_s = 0.2;
  c.pause_s = 0.4;
  analysis::IdleExplanation x = explain(c);
  EXPECT_NEAR(x.own_read_share, 0.5, 1e-9);
  EXPECT_NEAR(x.own_io_cores, 0.60, 1e-12);  // over the reading samples only
  EXPECT_EQ(x.verdict, IdleVerdict::own_io_bound);
  c.pause_s = 0.6;  // 0.4 / (0.4 + 0.6) = 0.4
  x = explain(c);
  EXPECT_NEAR(x.own_read_share, 0.4, 1e-9);
  EXPECT_NE(x.verdict, IdleVerdict::own_io_bound);
}

// Each threshold's edge: 10 MB/s, 0.5 cores, half of the readers' time.
TEST(IdleExplained, OwnIoEdges) {
  HostCase c;
  c.workers = 0;
  c.main_cpu_pct = 60;
  c.main_thread_pct = 60;
  c.main_read_bytes = 10e6;
  c.main_kernel_pct = 50;
  EXPECT_EQ(explain(c).verdict, IdleVerdict::own_io_bound);  // 10 MB/s, 0.50 of 0.60 cores
  c.main_read_bytes = 9.9e6;
  EXPECT_EQ(explain(c).verdict, IdleVerdict::no_clear_cause);
  c.main_read_bytes = 10e6;
  c.main_kernel_pct = 49;
  EXPECT_EQ(explain(c).verdict, IdleVerdict::no_clear_cause);  // 0.49 < 0.5 cores
  c.main_kernel_pct = 50;
  c.main_cpu_pct = 100.5;
  c.main_thread_pct = 80;
  EXPECT_EQ(explain(c).verdict, IdleVerdict::no_clear_cause);  // 0.50 < 0.5 x 1.005
  c.main_cpu_pct = 100;
  EXPECT_EQ(explain(c).verdict, IdleVerdict::own_io_bound);  // 0.50 = 0.5 x 1.00
}

TEST(IdleExplained, OneThreadBound) {
  HostCase c;
  c.workers = 0;
  c.main_cpu_pct = 110;
  c.main_thread_pct = 90;  // the edge: at least 90% of a core
  analysis::IdleExplanation x = explain(c);
  EXPECT_EQ(x.verdict, IdleVerdict::one_thread_bound);
  ASSERT_TRUE(x.busiest_thread_owner.has_value());
  EXPECT_EQ(x.busiest_thread_owner->pid, 500);
  EXPECT_NEAR(x.busiest_thread_owner->busiest_thread_pct, 90, 1e-12);
  EXPECT_TRUE(std::isnan(x.worker_capacity_cores));  // no workers
  c.main_thread_pct = 89;
  EXPECT_EQ(explain(c).verdict, IdleVerdict::no_clear_cause);
}

TEST(IdleExplained, HostCpuSaturated) {
  HostCase c;
  c.host_busy_pct = 90;  // the edge
  EXPECT_EQ(explain(c).verdict, IdleVerdict::host_cpu_saturated);
  c.host_busy_pct = 89.9;
  EXPECT_EQ(explain(c).verdict, IdleVerdict::no_clear_cause);
}

TEST(IdleExplained, IoBoundByIowaitOrABusyDisk) {
  HostCase c;
  c.iowait_pct = 20;
  EXPECT_EQ(explain(c).verdict, IdleVerdict::io_bound);
  c.iowait_pct = 19.9;
  EXPECT_EQ(explain(c).verdict, IdleVerdict::no_clear_cause);
  c.disk_busy_pct = 90;
  const analysis::IdleExplanation x = explain(c);
  EXPECT_EQ(x.verdict, IdleVerdict::io_bound);
  EXPECT_EQ(x.busiest_disk, "sda");
}

TEST(IdleExplained, MemoryPressure) {
  HostCase c;
  c.mem_available_pct = 4.9;
  const analysis::IdleExplanation x = explain(c);
  EXPECT_NEAR(x.memory_available_pct, 4.9, 1e-9);
  EXPECT_EQ(x.verdict, IdleVerdict::memory_pressure);
  c.mem_available_pct = 5.1;  // not below 5%
  EXPECT_EQ(explain(c).verdict, IdleVerdict::no_clear_cause);
}

TEST(IdleExplained, TheRulesGoInOrder) {
  // Saturated workers, a flat-out thread and a saturated host at once: input-bound comes first.
  HostCase c;
  c.worker_pct = 99;
  c.main_thread_pct = 99;
  c.host_busy_pct = 99;
  EXPECT_EQ(explain(c).verdict, IdleVerdict::input_bound);
  c.worker_pct = 10;
  EXPECT_EQ(explain(c).verdict, IdleVerdict::one_thread_bound);
}

TEST(IdleExplained, NothingToExplain) {
  HostCase c;
  // 0.96 s busy, 0.04 s idle: GPU-Util 96%, idle 4 points < 5.
  c.step_s = 0.96;
  c.wait_s = 0.04;
  c.worker_pct = 99;
  analysis::IdleExplanation x = explain(c);
  EXPECT_DOUBLE_EQ(x.idle_points, 4.0);
  EXPECT_EQ(x.verdict, IdleVerdict::not_explained);
  EXPECT_EQ(x.why_not, IdleNotExplained::idle_too_small);
  // Two cycles: 0.8 s of GPU-idle time seen, under the 1 s needed.
  c = HostCase{};
  c.cycles = 2;
  c.worker_pct = 99;
  x = explain(c);
  EXPECT_NEAR(x.idle_observed_s, 0.8, 1e-9);
  EXPECT_EQ(x.why_not, IdleNotExplained::too_little_idle_observed);
  // No host streams at all.
  const auto plain = recording::make_synthetic_recording(recording::h200_probe_shape_spec());
  EXPECT_EQ(analysis::analyze(*plain).run.idle_explained.why_not, IdleNotExplained::no_host_streams);
}

TEST(IdleExplained, TheBundledInputBoundRecording) {
  // data/recordings/synthetic-input-bound.dsrec: 4 workers at 98% while the GPU waits.
  const auto rec = recording::make_synthetic_recording(recording::input_bound_spec());
  const analysis::IdleExplanation x = analysis::analyze(*rec).run.idle_explained;
  EXPECT_EQ(x.verdict, IdleVerdict::input_bound);
  EXPECT_NEAR(x.worker_cores, 3.92, 1e-9);
  EXPECT_NEAR(x.worker_capacity_cores, 4, 1e-12);
  EXPECT_NEAR(x.idle_observed_s, 8.0, 1e-9);  // 0.4 s a cycle, 20 cycles
}

}  // namespace
}  // namespace diescope
