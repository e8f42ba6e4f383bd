// The live session on the CPU (docs/live-collection.md): the sampler child's supervision (restarts with a
// doubling backoff, a clean stop that is no failure) driven by the fake sampler child, the watch for
// other profilers over a fake /proc tree, the switch to NVML GPM and back through the swapped NVML
// function table, and the duty schedule. The agent's and top's tests cover their policies and sinks.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <filesystem>
#include <fstream>
#include <csignal>
#include <thread>
#include <sys/wait.h>
#include <unistd.h>

#include "diescope/collect/duty.hpp"
#include "diescope/collect/profiler_watch.hpp"
#include "diescope/collect/live_collection.hpp"
#include "diescope/core/clock.hpp"
#include "diescope/core/error.hpp"
#include "nvml_fake.hpp"
#include "two_unit_table.hpp"

namespace diescope::collect {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

SamplerConfig fake_config(std::vector<std::string> extra) {
  SamplerConfig c;
  c.executable = DIESCOPE_SAMPLER_FAKE;
  c.device = 0;
  c.interval_ms = 2;
  c.drain_ms = 20;
  c.extra_args = std::move(extra);
  return c;
}

bool any_note(const std::vector<recording::Note>& notes, const std::string& text) {
  for (const recording::Note& n : notes)
    if (n.text.find(text) != std::string::npos) return true;
  return false;
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("diescope-session-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void add_process(const fs::path& proc, int pid, const std::string& comm, int parent = 1,
                 const std::string& environ = "PATH=/usr/bin") {
  const fs::path dir = proc / std::to_string(pid);
  fs::create_directories(dir);
  std::ofstream(dir / "comm") << comm << "\n";
  std::ofstream(dir / "stat") << pid << " (" << comm << ") S " << parent << " 1 1 0 -1\n";
  std::ofstream(dir / "environ", std::ios::binary) << environ << '\0';
}

TEST(SamplerSupervisor, RestartsACrashedSamplerWithADoublingBackoff) {
  SupervisorTiming timing;
  timing.backoff_initial_ns = 100 * recording::kNsPerMs;
  timing.backoff_max_ns = 400 * recording::kNsPerMs;
  SamplerSupervisor sup(fake_config({"--crash-after", "10"}), &diescope::test::two_unit_table(), "GPU-fake-0",
                        timing);
  GpuBatch batch;
  sup.set_wanted(true, core::realtime_ns(), batch);
  EXPECT_EQ(sup.starts(), 1);
  const auto deadline = std::chrono::steady_clock::now() + 1600ms;
  while (std::chrono::steady_clock::now() < deadline) {
    sup.pump(core::realtime_ns(), batch);
    std::this_thread::sleep_for(5ms);
  }
  // Each child crashes after 10 samples; it is restarted after 0.1 s, then 0.2 s, then 0.4 s
  // (the cap), so 1.6 s holds at least 4 starts: 0 + (crash) 0.1 + 0.2 + 0.4 = 0.7 s of backoff.
  EXPECT_GE(sup.starts(), 4);
  EXPECT_EQ(sup.restarts(), sup.starts() - 1);
  EXPECT_TRUE(any_note(batch.notes, "killed by signal SIGSEGV"));
  EXPECT_TRUE(any_note(batch.notes, "restarting it in 0.1 s"));
  EXPECT_TRUE(any_note(batch.notes, "restarting it in 0.2 s"));
  EXPECT_TRUE(any_note(batch.notes, "restarting it in 0.4 s"));
  EXPECT_FALSE(any_note(batch.notes, "restarting it in 0.8 s"));  // capped at the maximum
  EXPECT_TRUE(any_note(batch.notes, "restarted the counter sampler"));
  // A crash is a stop of the counters, with its reason; every child's start is an "on".
  int ons = 0, crash_offs = 0;
  for (const recording::CountersEvent& e : batch.counters) {
    if (e.on)
      ++ons;
    else if (e.reason.find("SIGSEGV") != std::string::npos)
      ++crash_offs;
  }
  EXPECT_EQ(ons, static_cast<int>(sup.starts()));
  EXPECT_GE(crash_offs, 3);
  // Samples arrive with the fake's values: unit a is metric 0, 10 + k%10; unit b 20 + k%10.
  ASSERT_GE(batch.list<recording::ChipSample>().size(), 30u);
  EXPECT_EQ(batch.list<recording::ChipSample>()[3].units.size(), 2u);
  EXPECT_DOUBLE_EQ(batch.list<recording::ChipSample>()[3].units[0], 13);
  EXPECT_DOUBLE_EQ(batch.list<recording::ChipSample>()[3].units[1], 23);
  GpuBatch last;
  sup.stop_and_wait(core::realtime_ns(), last);
  EXPECT_FALSE(sup.running());
}

TEST(SamplerSupervisor, ACleanStopDisablesTheCountersAndIsNoFailure) {
  SupervisorTiming timing;
  timing.backoff_initial_ns = 100 * recording::kNsPerMs;
  SamplerSupervisor sup(fake_config({}), &diescope::test::two_unit_table(), "GPU-fake-0", timing);
  GpuBatch batch;
  sup.set_wanted(true, core::realtime_ns(), batch);
  const auto until = std::chrono::steady_clock::now() + 150ms;
  while (std::chrono::steady_clock::now() < until) {
    sup.pump(core::realtime_ns(), batch);
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_TRUE(sup.running());
  sup.set_wanted(false, core::realtime_ns(), batch);
  const auto stop_deadline = std::chrono::steady_clock::now() + 3s;
  while (sup.running() && std::chrono::steady_clock::now() < stop_deadline) {
    sup.pump(core::realtime_ns(), batch);
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_FALSE(sup.running());
  EXPECT_EQ(sup.restarts(), 0);
  EXPECT_FALSE(any_note(batch.notes, "restarting"));
  ASSERT_FALSE(batch.counters.empty());
  EXPECT_FALSE(batch.counters.back().on);
  EXPECT_EQ(batch.counters.back().reason, "");  // the agent asked: an ordinary stop
  EXPECT_GE(batch.list<recording::ChipSample>().size(), 10u);
}

// A reader's own sink (run's recording sink is one): it counts what the supervisor hands it.
struct CountingSink final : SamplerSink {
  int samples = 0;
  int ons = 0;
  int starts = 0;
  std::vector<SamplerExit> exits;  // one per end
  std::vector<recording::Note> notes;
  void started(recording::TimeNs /*now*/) override { ++starts; }
  void message(const SamplerMessage& message, recording::TimeNs /*now*/) override {
    if (std::holds_alternative<sampler_msg::Sample>(message)) ++samples;
    if (std::holds_alternative<sampler_msg::On>(message)) ++ons;
  }
  void ended(const SamplerExit& exit, recording::TimeNs /*now*/) override { exits.push_back(exit); }
  void note(recording::Note note) override { notes.push_back(std::move(note)); }
};

// docs/live-collection.md#policies: under RestartRule::none (run's) a child that crashes is reaped
// and not started again, however long the reader keeps pumping; its sink gets every message it
// wrote (the fake crashes after its 10th sample) and one end, the crash.
TEST(SamplerSupervisor, RestartRuleNoneLeavesACrashedSamplerEnded) {
  SupervisorTiming timing;
  timing.backoff_initial_ns = 50 * recording::kNsPerMs;  // after_backoff would restart within 0.05 s
  SamplerSupervisor sup(fake_config({"--crash-after", "10"}), &diescope::test::two_unit_table(), "", timing,
                        RestartRule::none);
  CountingSink sink;
  sup.set_wanted(true, core::realtime_ns(), sink);
  const auto until = std::chrono::steady_clock::now() + 800ms;
  while (std::chrono::steady_clock::now() < until) {
    sup.pump(core::realtime_ns(), sink);
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_FALSE(sup.running());
  EXPECT_EQ(sup.starts(), 1);
  EXPECT_EQ(sup.restarts(), 0);
  EXPECT_EQ(sink.ons, 1);
  EXPECT_EQ(sink.samples, 10);
  ASSERT_EQ(sink.exits.size(), 1u);
  EXPECT_NE(sink.exits[0].describe().find("SIGSEGV"), std::string::npos);
  EXPECT_TRUE(sink.notes.empty());
}

// Under RestartRule::none a child that cannot be run is the reader's failure now (DeviceError);
// under after_backoff it is a note and a retry after the first backoff (1 s).
TEST(SamplerSupervisor, AChildThatCannotRunThrowsOnlyWithoutRestarts) {
  SamplerConfig config = fake_config({});
  config.executable = "/nonexistent/diescope-cupti";
  SamplerSupervisor none(config, &diescope::test::two_unit_table(), "", {}, RestartRule::none);
  CountingSink sink;
  EXPECT_THROW(none.set_wanted(true, 1000, sink), core::DeviceError);
  SamplerSupervisor again(config, &diescope::test::two_unit_table(), "", {});
  again.set_wanted(true, 1000, sink);
  EXPECT_FALSE(again.running());
  EXPECT_EQ(again.retry_at_ns(), 1000 + recording::kNsPerSecond);
  ASSERT_EQ(sink.notes.size(), 1u);
  EXPECT_NE(sink.notes[0].text.find("trying again in 1.0 s"), std::string::npos);
}

// docs/live-collection.md#policies: the three NVML cadences. run reads clocks at each 100 ms tick, the
// power line once a second, GPU-Util samples every 5 s, the rest once a second; top everything once a
// poll; the agent everything once a poll but the power line and GPU-Util samples when due.
TEST(NvmlCadence, RunTopAndAgentCadences) {
  const NvmlCadence run = NvmlCadence::run(100 * recording::kNsPerMs);
  EXPECT_EQ(run.fast_ns, 100'000'000);
  EXPECT_EQ(run.slow_ns, 1'000'000'000);
  EXPECT_EQ(run.power, PowerReads::every_power_ns);
  EXPECT_EQ(run.power_ns, 1'000'000'000);
  EXPECT_EQ(run.util_ns, 5'000'000'000);
  const NvmlCadence top = NvmlCadence::once_a_poll(250 * recording::kNsPerMs);
  EXPECT_EQ(top.fast_ns, 250'000'000);
  EXPECT_EQ(top.slow_ns, 250'000'000);
  EXPECT_EQ(top.power, PowerReads::every_read);
  const NvmlCadence agent = NvmlCadence::agent(1000 * recording::kNsPerMs);
  EXPECT_EQ(agent.fast_ns, 1'000'000'000);
  EXPECT_EQ(agent.power, PowerReads::when_due);
}

// The power rule, case by case. run (ticks of 100 ms, the power line every 1 s): a tick 0.4 s after
// the last read does not read it, one 0.95 s after does (the tick nearest to 1 s: half a tick early
// counts), 0.94 s does not; a window mark or the command's end asks for it 0.01 s after the last
// read; after a failed read of the counter every tick reads it. The agent: only while the counters
// are wanted or where asked. top: at every read.
TEST(NvmlCadence, WhichReadsReadThePowerLine) {
  const NvmlCadence run = NvmlCadence::run(100 * recording::kNsPerMs);
  auto since = [](double s) {
    PowerReadState state;
    state.since_last_ns = static_cast<recording::TimeNs>(s * 1e9);
    return state;
  };
  EXPECT_TRUE(run.reads_power(PowerReadState{}));  // the first read: nothing read before
  EXPECT_FALSE(run.reads_power(since(0.4)));
  EXPECT_TRUE(run.reads_power(since(0.95)));
  EXPECT_FALSE(run.reads_power(since(0.94)));
  EXPECT_TRUE(run.reads_power(since(1.0)));
  PowerReadState asked = since(0.01);
  asked.asked = true;
  EXPECT_TRUE(run.reads_power(asked));
  PowerReadState failed = since(0.1);
  failed.last_failed = true;
  EXPECT_TRUE(run.reads_power(failed));

  const NvmlCadence agent = NvmlCadence::agent(recording::kNsPerSecond);
  EXPECT_FALSE(agent.reads_power(since(30)));
  PowerReadState wanted = since(1);
  wanted.counters_wanted = true;
  EXPECT_TRUE(agent.reads_power(wanted));
  EXPECT_TRUE(agent.reads_power(asked));
  EXPECT_TRUE(agent.reads_power(failed));

  const NvmlCadence top = NvmlCadence::once_a_poll(recording::kNsPerSecond);
  EXPECT_TRUE(top.reads_power(since(0.001)));
}

// The GPU-Util rule (docs/live-collection.md#policies). The agent (poll 1 s, util_ns 5 s): a poll
// 4.4 s after the last read of the samples does not read them, one 4.5 s after does (half a poll
// early counts), and so does any poll where the power line is asked for, the counters are wanted, or
// GPU-Util is polled; after the first read (nothing read before) it reads. run (slow reads every 1 s,
// util_ns 5 s): the slow read 4.4 s after the last read of the samples does not read them, the one
// 4.5 s after does, so with slow reads 1.0 s apart every fifth reads them; polled, every one does.
// top (util_ns 0): every slow read.
TEST(NvmlCadence, WhichReadsReadGpuUtilSamples) {
  const NvmlCadence agent = NvmlCadence::agent(recording::kNsPerSecond);
  EXPECT_EQ(agent.util_ns, 5'000'000'000);
  const PowerReadState quiet;
  const recording::TimeNs s = recording::kNsPerSecond;
  EXPECT_TRUE(agent.reads_util(quiet, std::numeric_limits<recording::TimeNs>::max(), false));
  EXPECT_FALSE(agent.reads_util(quiet, 1 * s, false));
  EXPECT_FALSE(agent.reads_util(quiet, 4400 * recording::kNsPerMs, false));
  EXPECT_TRUE(agent.reads_util(quiet, 4500 * recording::kNsPerMs, false));
  EXPECT_TRUE(agent.reads_util(quiet, 1 * s, true));
  PowerReadState asked;
  asked.asked = true;
  EXPECT_TRUE(agent.reads_util(asked, 1 * s, false));
  PowerReadState wanted;
  wanted.counters_wanted = true;
  EXPECT_TRUE(agent.reads_util(wanted, 1 * s, false));
  PowerReadState failed;
  failed.last_failed = true;  // the energy counter's failure reads the power line, not GPU-Util
  EXPECT_FALSE(agent.reads_util(failed, 1 * s, false));
  EXPECT_TRUE(NvmlCadence::once_a_poll(s).reads_util(quiet, 1, false));
  const NvmlCadence run = NvmlCadence::run(100 * recording::kNsPerMs);
  EXPECT_TRUE(run.reads_util(quiet, std::numeric_limits<recording::TimeNs>::max(), false));
  EXPECT_FALSE(run.reads_util(quiet, 1 * s, false));
  EXPECT_FALSE(run.reads_util(quiet, 4 * s, false));
  EXPECT_FALSE(run.reads_util(quiet, 4400 * recording::kNsPerMs, false));
  EXPECT_TRUE(run.reads_util(quiet, 4500 * recording::kNsPerMs, false));
  EXPECT_TRUE(run.reads_util(quiet, 5 * s, false));
  EXPECT_TRUE(run.reads_util(quiet, 1 * s, true));
}

// The sample checks every reader gets (docs/live-collection.md#sample-checks), from a stand-in child
// that writes the protocol by hand: the second sample starts before the first, the third has one value
// where the metrics line announced two, the fourth has an infinite value. Kept: the first (start
// 1000 ns) and the fourth (start 3000 ns), whose first unit is NaN and second is 2 (unit B is m_b).
TEST(SamplerSupervisor, LeavesOutOfOrderAndShortSamplesAndReadsInfinityAsNaN) {
  const fs::path dir = fresh_dir("checks");
  const fs::path script = dir / "sampler.sh";
  std::ofstream(script) << "#!/bin/sh\n"
                           "echo 'hello 1 1 fake'\n"
                           "echo 'metrics 2 m_a m_b'\n"
                           "echo 'on 1000'\n"
                           "echo 's 1000 2000 1 2'\n"
                           "echo 's 500 900 1 2'\n"
                           "echo 's 2000 3000 1'\n"
                           "echo 's 3000 4000 inf 2'\n"
                           "read line\n"
                           "echo 'off 5000'\n"
                           "echo 'bye 4'\n";
  fs::permissions(script, fs::perms::owner_all);
  SamplerConfig config = fake_config({});
  config.executable = script.string();
  SamplerSupervisor sup(config, &diescope::test::two_unit_table(), "", {});
  GpuBatch batch;
  sup.set_wanted(true, core::realtime_ns(), batch);
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < deadline && batch.list<recording::ChipSample>().size() < 2) {
    sup.pump(core::realtime_ns(), batch);
    std::this_thread::sleep_for(5ms);
  }
  sup.stop_and_wait(core::realtime_ns(), batch);
  const auto& samples = batch.list<recording::ChipSample>();
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].start_ns, 1000);
  EXPECT_EQ(samples[1].start_ns, 3000);
  ASSERT_EQ(samples[1].units.size(), 2u);
  EXPECT_TRUE(std::isnan(samples[1].units[0]));
  EXPECT_EQ(samples[1].units[1], 2.0);
  EXPECT_TRUE(any_note(batch.notes, "a chip sample out of time order was left out (start 500 ns)"));
  EXPECT_TRUE(any_note(batch.notes, "a chip sample with 1 values where 2 were expected was left out"));
  EXPECT_EQ(sup.restarts(), 0);
  fs::remove_all(dir);
}

// The GPM switch (docs/live-collection.md#what-was-decided-for-run), decided in one place for both rules.
TEST(GpmSwitch, WholeRunTakesGpmOnlyWherePmSamplingDidNotStart) {
  GpmSwitchState running;
  running.pm_running = true;
  GpmSwitchState not_started;
  // --source pm never reads GPM, --source gpm always does, whatever PM sampling did.
  EXPECT_FALSE(gpm_wanted(ChipSourceSetting::pm, GpmSwitch::whole_run, not_started));
  EXPECT_TRUE(gpm_wanted(ChipSourceSetting::gpm, GpmSwitch::whole_run, running));
  EXPECT_FALSE(gpm_wanted(ChipSourceSetting::automatic, GpmSwitch::whole_run, running));
  EXPECT_TRUE(gpm_wanted(ChipSourceSetting::automatic, GpmSwitch::whole_run, not_started));
  // A profiler seen does not move a run that samples: its rule looks only at the start.
  running.profiler_seen = true;
  EXPECT_FALSE(gpm_wanted(ChipSourceSetting::automatic, GpmSwitch::whole_run, running));
}

TEST(GpmSwitch, FollowProfilersSwitchesWhileOneRunsAndBackAfter) {
  GpmSwitchState s;
  EXPECT_FALSE(gpm_wanted(ChipSourceSetting::automatic, GpmSwitch::follow_profilers, s));
  s.profiler_seen = true;
  EXPECT_TRUE(gpm_wanted(ChipSourceSetting::automatic, GpmSwitch::follow_profilers, s));
  s.profiler_seen = false;
  s.held_lately = true;
  EXPECT_TRUE(gpm_wanted(ChipSourceSetting::automatic, GpmSwitch::follow_profilers, s));
  // On GPM, none seen now but one seen within the return time: stay; after it: back to PM sampling.
  s.held_lately = false;
  s.on_gpm = true;
  s.seen_recently = true;
  EXPECT_TRUE(gpm_wanted(ChipSourceSetting::automatic, GpmSwitch::follow_profilers, s));
  s.seen_recently = false;
  EXPECT_FALSE(gpm_wanted(ChipSourceSetting::automatic, GpmSwitch::follow_profilers, s));
  // No PM sampling on this GPU: GPM whenever it can be read.
  GpmSwitchState no_pm;
  no_pm.pm_possible = false;
  EXPECT_TRUE(gpm_wanted(ChipSourceSetting::automatic, GpmSwitch::follow_profilers, no_pm));
  EXPECT_FALSE(gpm_wanted(ChipSourceSetting::pm, GpmSwitch::follow_profilers, no_pm));
}

TEST(SamplerSupervisor, NoTableMeansNoChild) {
  SamplerSupervisor sup(fake_config({}), nullptr, "", {});
  GpuBatch batch;
  sup.set_wanted(true, core::realtime_ns(), batch);
  EXPECT_FALSE(sup.running());
  EXPECT_EQ(sup.starts(), 0);
}

TEST(ProfilerWatch, SeesProfilersByNameAndByInjectionButNotItself) {
  const fs::path proc = fresh_dir("watch");
  add_process(proc, 10, "bash");
  add_process(proc, 11, "ncu");
  add_process(proc, 12, "nv-nsight-cu-cl");
  add_process(proc, 13, "python3", 11,
              std::string("HOME=/root") + '\0' + "CUDA_INJECTION64_PATH=/opt/ncu/libToolsInjection64.so");
  add_process(proc, 14, "dcgmproftester12");
  add_process(proc, 15, "nsys", 500);  // a child of the agent (pid 500): its own, never counted
  add_process(proc, 500, "ncu");       // the agent itself, whatever its name
  fs::create_directories(proc / "self");
  ProfilerWatch watch(proc, 500);
  const std::vector<SeenProfiler> seen = watch.scan();
  EXPECT_EQ(profilers_text(seen),
            "ncu (pid 11), nv-nsight-cu-cl (pid 12), python3 with CUDA_INJECTION64_PATH (pid 13), "
            "dcgmproftester12 (pid 14)");
  fs::remove_all(proc);
  EXPECT_TRUE(ProfilerWatch(proc, 500).scan().empty()) << "no /proc tree: nothing seen";
}

// A process's files in `dir`: comm, stat with a start time (field 22) after the parent (field 4):
// "pid (comm) S ppid" then fields 5..21, and its environment.
void write_process(const fs::path& dir, int pid, const std::string& comm, int parent,
                   const std::string& environ, unsigned long long start) {
  fs::create_directories(dir);
  std::ofstream(dir / "comm") << comm << "\n";
  std::ofstream(dir / "stat") << pid << " (" << comm << ") S " << parent
                              << " 1 1 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 " << start << " 0 0\n";
  std::ofstream(dir / "environ", std::ios::binary) << environ << '\0';
}

// A new process under `pid`. /proc gives every new process's directory a new inode, so the fake
// tree's directory is made anew beside the old one and renamed over it, never written in place.
void replace_process(const fs::path& proc, int pid, const std::string& comm, int parent,
                     const std::string& environ, unsigned long long start) {
  const fs::path dir = proc / std::to_string(pid);
  const fs::path made = proc / (std::to_string(pid) + "-new");  // not all digits: never scanned
  const fs::path old = proc / (std::to_string(pid) + "-old");
  write_process(made, pid, comm, parent, environ, start);
  fs::rename(dir, old);
  fs::rename(made, dir);
  fs::remove_all(old);
}

std::string reads_text(const ProfilerWatch& watch) {
  return "stat " + std::to_string(watch.reads().stat) + ", comm " + std::to_string(watch.reads().comm) +
         ", environ " + std::to_string(watch.reads().environ);
}

TEST(ProfilerWatch, ReadsAnEnvironmentOncePerProcessAndAgainForAReusedPid) {
  const fs::path proc = fresh_dir("watch-reuse");
  const std::string injected = std::string("CUDA_INJECTION64_PATH=/opt/libinject.so");
  // comm with spaces and a ')' of its own
  write_process(proc / "20", 20, "python3 (a) b", 1, injected, 1000);
  ProfilerWatch watch(proc, 500);
  EXPECT_EQ(profilers_text(watch.scan()), "python3 (a) b with CUDA_INJECTION64_PATH (pid 20)");
  EXPECT_EQ(reads_text(watch), "stat 1, comm 1, environ 1");
  // The environment a process started with cannot change: the same process is not read again, but
  // for its name.
  std::ofstream(proc / "20" / "environ", std::ios::binary) << "PATH=/usr/bin" << '\0';
  EXPECT_EQ(watch.scan().size(), 1U);
  EXPECT_EQ(reads_text(watch), "stat 1, comm 2, environ 1");
  // The pid reused by a new process (a new directory, another start time): its environment is read,
  // no injection.
  replace_process(proc, 20, "python3 (a) b", 1, "PATH=/usr/bin", 2000);
  EXPECT_TRUE(watch.scan().empty());
  EXPECT_EQ(reads_text(watch), "stat 2, comm 3, environ 2");
  // A new directory with the same start time is the same process (its entry dropped and made again):
  // its stat is read, its environment is not.
  replace_process(proc, 20, "python3 (a) b", 1, injected, 2000);
  EXPECT_TRUE(watch.scan().empty());
  EXPECT_EQ(reads_text(watch), "stat 3, comm 4, environ 2");
  fs::remove_all(proc);
}

// A process met before is read only for its name (its comm file), a kernel thread or the agent's
// child not at all; a new process under a pid met before (a new directory), a process that execs
// into a profiler and a profiler started after the first scan are each seen at the next scan. A kernel
// thread is never taken for an injected process.
TEST(ProfilerWatch, ReadsAProcessMetBeforeOnlyForItsName) {
  const fs::path proc = fresh_dir("watch-known");
  write_process(proc / "2", 2, "kthreadd", 0, "", 1);
  write_process(proc / "30", 30, "kworker/0:1", 2, "CUDA_INJECTION64_PATH=/not/read.so", 5);
  write_process(proc / "31", 31, "bash", 1, "PATH=/usr/bin", 900);
  write_process(proc / "32", 32, "nsys", 500, "PATH=/usr/bin", 950);  // the agent's (pid 500) child
  ProfilerWatch watch(proc, 500);
  EXPECT_TRUE(watch.scan().empty());
  // Met for the first time: each one's comm and stat, and bash's environment.
  EXPECT_EQ(reads_text(watch), "stat 4, comm 4, environ 1");
  EXPECT_TRUE(watch.scan().empty());
  EXPECT_EQ(reads_text(watch), "stat 4, comm 5, environ 1");  // bash's name only

  write_process(proc / "31", 31, "ncu", 1, "PATH=/usr/bin", 900);  // bash execs ncu: same directory
  EXPECT_EQ(profilers_text(watch.scan()), "ncu (pid 31)");
  EXPECT_EQ(reads_text(watch), "stat 5, comm 6, environ 1");  // its comm changed: its stat again

  replace_process(proc, 30, "ncu", 1, "PATH=/usr/bin", 1200);  // the kernel thread's pid reused by ncu
  EXPECT_EQ(profilers_text(watch.scan()), "ncu (pid 30), ncu (pid 31)");
  EXPECT_EQ(reads_text(watch), "stat 6, comm 8, environ 1");  // ncu is seen by name: no environment

  // kthreadd's files written over in place (no new process): not read again.
  write_process(proc / "2", 2, "ncu", 1, "", 1);
  EXPECT_EQ(profilers_text(watch.scan()), "ncu (pid 30), ncu (pid 31)");
  EXPECT_EQ(reads_text(watch), "stat 6, comm 10, environ 1");

  // A process started after the first scans, with an injection: seen at the next scan.
  write_process(proc / "40", 40, "python3", 31, "CUDA_INJECTION64_PATH=/opt/libinject.so", 1300);
  EXPECT_EQ(profilers_text(watch.scan()),
            "ncu (pid 30), ncu (pid 31), python3 with CUDA_INJECTION64_PATH (pid 40)");
  EXPECT_EQ(reads_text(watch), "stat 7, comm 13, environ 2");

  fs::remove_all(proc / "31");  // it ends
  EXPECT_EQ(profilers_text(watch.scan()), "ncu (pid 30), python3 with CUDA_INJECTION64_PATH (pid 40)");
  EXPECT_EQ(reads_text(watch), "stat 7, comm 15, environ 2");
  fs::remove_all(proc);
}

// On this host's /proc: a child met under this test's name and then exec'ing a copy of sleep named
// ncu is seen at the next scan, read through its comm file kept open; it is gone once it ends.
TEST(ProfilerWatch, OnThisHostSeesAProcessThatExecsAProfilerAtTheNextScan) {
  const fs::path dir = fresh_dir("watch-exec");
  fs::copy_file("/bin/sleep", dir / "ncu");
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    char c = 0;
    if (::read(go[0], &c, 1) == 1) ::execl((dir / "ncu").c_str(), "ncu", "30", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(go[0]);
  auto child_seen = [&](const std::vector<SeenProfiler>& seen) {
    for (const SeenProfiler& p : seen)
      if (p.pid == child) return p.name;
    return std::string();
  };
  ProfilerWatch watch("/proc", 1);  // as if the agent were pid 1: this process's child counts
  EXPECT_EQ(child_seen(watch.scan()), "");
  // The child is now known and read only for its name. How many reads each scan takes is counted on
  // the fake trees above: on a real host other processes start between two scans and are read.
  EXPECT_EQ(child_seen(watch.scan()), "");
  ASSERT_EQ(::write(go[1], "x", 1), 1);
  std::string comm;
  for (int i = 0; i < 200 && comm != "ncu\n"; ++i) {
    std::this_thread::sleep_for(10ms);
    std::ifstream in("/proc/" + std::to_string(child) + "/comm");
    comm.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_EQ(comm, "ncu\n");
  EXPECT_EQ(child_seen(watch.scan()), "ncu");
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_EQ(child_seen(watch.scan()), "");
  ::close(go[1]);
  fs::remove_all(dir);
}

std::size_t open_descriptors() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& fd : fs::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

// At most kKeptNames comm files stay open; a process beyond them has its comm opened at each scan, and
// is seen the same when it execs a profiler.
TEST(ProfilerWatch, KeepsAtMostKeptNamesCommFilesOpen) {
  static_assert(ProfilerWatch::kKeptNames == 64);
  const fs::path proc = fresh_dir("watch-many");
  for (int pid = 100; pid < 170; ++pid) write_process(proc / std::to_string(pid), pid, "bash", 1, "A=b", 7);
  const std::size_t before = open_descriptors();
  {
    ProfilerWatch watch(proc, 500);
    EXPECT_TRUE(watch.scan().empty());
    EXPECT_EQ(open_descriptors(), before + 64 + 1);  // 64 comm files and the tree's directory
    for (int pid = 100; pid < 170; ++pid) write_process(proc / std::to_string(pid), pid, "ncu", 1, "A=b", 7);
    EXPECT_EQ(watch.scan().size(), 70U);
    EXPECT_EQ(reads_text(watch), "stat 140, comm 140, environ 70");
  }
  EXPECT_EQ(open_descriptors(), before);
  fs::remove_all(proc);
}

// NVML stand-in with GPM: GPU-Util 50 at each read; GPM from the swapped NVML function table.
class GpmTelemetry final : public GpuTelemetry {
 public:
  GpmTelemetry() : nvml_(std::make_unique<Nvml>(fake_nvml::fake_functions())) {}
  recording::GpuIdentity identity() const override { return test::fake_gpu_identity(); }
  std::vector<recording::ColumnDef> engine_columns() const override { return {}; }
  void read(recording::TimeNs now, GpuBatch& out) override {
    out.list<recording::UtilSample>().push_back(
        recording::UtilSample{now, 50, recording::UtilSource::samples});
  }
  std::unique_ptr<GpmSampler> open_gpm(recording::TimeNs now) override {
    return std::make_unique<GpmSampler>(nvml_->device(0), now, 0);
  }

 private:
  std::unique_ptr<Nvml> nvml_;
};

// One GPU on the stand-in above with the two-unit table; with_sampler: the fake sampler child makes
// its PM-sampling chip samples, else it has none.
std::vector<SessionGpu> one_gpu(bool with_sampler) {
  std::vector<SessionGpu> gpus(1);
  gpus[0].telemetry = std::make_unique<GpmTelemetry>();
  gpus[0].table = &diescope::test::two_unit_table();
  if (with_sampler) gpus[0].sampler.executable = DIESCOPE_SAMPLER_FAKE;
  return gpus;
}

// What a session handed out over a span of collects.
struct Collected {
  std::size_t pm_samples = 0;   // chip samples with the two-unit table's columns
  std::size_t gpm_samples = 0;  // chip samples with GPM's
  double gpm_fp32 = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::string> changes;  // columns_change_why of each switch
};

// Collects every 10 ms for `span`, or until `done` holds.
void collect_for(LiveSession& session, std::chrono::milliseconds span, Collected& got,
                 const std::function<bool()>& done = {}) {
  const auto until = std::chrono::steady_clock::now() + span;
  while (std::chrono::steady_clock::now() < until && !(done && done())) {
    std::vector<GpuBatch> out(1);
    session.collect(core::realtime_ns(), out);
    const bool gpm = session.meta(0).unit_table == gpm_unit_table().name;
    // A switch ends the batch's chip samples: those before it have the old columns.
    const bool switched = out[0].columns_changed_at.has_value();
    for (const recording::OwnedChipSample& s : out[0].list<recording::ChipSample>()) {
      if (gpm != switched) {
        ++got.gpm_samples;
        const auto& units = session.meta(0).units;
        for (std::size_t i = 0; i < units.size() && i < s.units.size(); ++i)
          if (units[i].key == "fp32") got.gpm_fp32 = s.units[i];
      } else {
        ++got.pm_samples;
      }
    }
    if (switched) got.changes.push_back(out[0].columns_change_why);
    std::this_thread::sleep_for(10ms);
  }
}

// docs/live-collection.md#what-it-owns: with --source auto, PM sampling until a profiler appears, GPM while
// it runs, and PM sampling again once none has been seen for return_after_ns (0.3 s here).
TEST(LiveSession, SwitchesToGpmWhileAProfilerRunsAndBackWhenItEnds) {
  const fs::path proc = fresh_dir("switch");
  add_process(proc, 10, "bash");
  ChipSourcePolicy policy;
  policy.source = ChipSourceSetting::automatic;
  policy.proc_root = proc;
  policy.scan_ns = 20 * recording::kNsPerMs;
  policy.return_after_ns = 300 * recording::kNsPerMs;
  LiveSession session(one_gpu(true), 2, 50, {}, {}, policy);
  session.set_counters(0, true, core::realtime_ns());
  Collected got;
  collect_for(session, 400ms, got);
  EXPECT_EQ(session.chip_source(0), ChipSource::pm);
  EXPECT_GT(got.pm_samples, 0u);
  EXPECT_TRUE(got.changes.empty());

  add_process(proc, 4242, "ncu");  // Nsight Compute starts
  collect_for(session, 2s, got, [&] { return session.chip_source(0) == ChipSource::gpm; });
  ASSERT_EQ(session.chip_source(0), ChipSource::gpm);
  collect_for(session, 350ms, got);  // GPM at its own 100 ms floor (the interval asked is 2 ms)
  ASSERT_EQ(got.changes.size(), 1u);
  EXPECT_EQ(got.changes[0],
            "chip samples come from NVML GPM from now on (another profiler runs: ncu (pid 4242)): the agent "
            "holds no performance counters, so it blocks no other profiler; GPM does not see L1, L2 or "
            "load/store");
  EXPECT_EQ(session.meta(0).unit_table, "gpm");
  EXPECT_EQ(session.meta(0).interval_ms, 100);
  EXPECT_GE(got.gpm_samples, 1u);
  EXPECT_DOUBLE_EQ(got.gpm_fp32, 46.3);  // the swapped table's FP32 metric
  EXPECT_TRUE(session.counters_on(0));

  fs::remove_all(proc / "4242");  // it ends
  collect_for(session, 2s, got, [&] { return session.chip_source(0) == ChipSource::pm; });
  EXPECT_EQ(session.chip_source(0), ChipSource::pm);
  ASSERT_EQ(got.changes.size(), 2u);
  EXPECT_EQ(got.changes[1], "chip samples come from PM sampling again (no other profiler seen for 0.3 s)");
  EXPECT_EQ(session.meta(0).unit_table, "test-two-units");

  std::vector<GpuBatch> last(1);
  session.shutdown(core::realtime_ns(), last);
  EXPECT_FALSE(session.counters_on(0));
  fs::remove_all(proc);
}

TEST(LiveSession, SourcePmNeverReadsGpm) {
  const fs::path proc = fresh_dir("pm");
  add_process(proc, 4242, "ncu");
  std::vector<SessionGpu> gpus = one_gpu(true);
  ChipSourcePolicy policy;
  policy.source = ChipSourceSetting::pm;
  policy.proc_root = proc;
  LiveSession session(std::move(gpus), 2, 50, {}, {}, policy);
  EXPECT_EQ(session.chip_source(0), ChipSource::pm);
  EXPECT_EQ(session.meta(0).unit_table, "test-two-units");
  fs::remove_all(proc);
}

// A GPU with a unit table but no sampler executable, under --source pm: neither PM sampling nor GPM
// makes its chip samples, and the session says so with no value rather than a name.
TEST(LiveSession, NoSamplerAndNoGpmIsNoChipSource) {
  std::vector<SessionGpu> gpus = one_gpu(false);
  ChipSourcePolicy policy;
  policy.source = ChipSourceSetting::pm;
  LiveSession session(std::move(gpus), 2, 50, {}, {}, policy);
  EXPECT_FALSE(session.chip_source(0).has_value());
}

// docs/live-collection.md#the-gpm-switch: the switch to GPM opens it (its first pair taken then),
// asks PM sampling to stop and wants it no more; GPM's columns are its table at its interval (at
// least 100 ms: 2 ms asked gives 100, 250 gives 250); its start is a counters-on event at the time
// given, taking a new pair only where asked; the switch back closes it and wants PM sampling again.
TEST(GpmChipSource, OpensGpmStopsPmSamplingAndSwitchesBack) {
  EXPECT_EQ(GpmChipSource::interval_for(2), 100);
  EXPECT_EQ(GpmChipSource::interval_for(250), 250);
  GpmTelemetry telemetry;
  SamplerSupervisor pm(fake_config({}), &diescope::test::two_unit_table(), "");
  GpuBatch out;
  pm.set_wanted(true, core::realtime_ns(), out);
  ASSERT_TRUE(pm.running());
  GpmChipSource gpm;
  EXPECT_FALSE(gpm.is_open());
  const int pairs = fake_nvml::state().gpm_samples_taken;
  ASSERT_TRUE(gpm.open(telemetry, &pm, 1000));
  EXPECT_TRUE(gpm.is_open());
  EXPECT_TRUE(gpm.error().empty());
  EXPECT_FALSE(pm.wanted()) << "PM sampling is wanted no more while GPM stands in";
  EXPECT_EQ(fake_nvml::state().gpm_samples_taken, pairs + 2) << "the first pair, taken at the opening";
  const auto until = std::chrono::steady_clock::now() + 2s;
  while (pm.running() && std::chrono::steady_clock::now() < until) {
    pm.pump(core::realtime_ns(), out);
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_FALSE(pm.running()) << "the PM sampler child was asked to stop, and stopped";

  recording::RecordingMeta meta;
  gpm.columns(meta, GpmChipSource::interval_for(2));
  EXPECT_EQ(meta.unit_table, "gpm");
  EXPECT_EQ(meta.interval_ms, 100);
  EXPECT_EQ(meta.units.size(), gpm.sampler().table().units.size());

  const recording::CountersEvent run_start = gpm.start(2000, false);
  EXPECT_EQ(run_start.ts_ns, 2000);
  EXPECT_TRUE(run_start.on);
  EXPECT_EQ(run_start.reason, "");
  EXPECT_EQ(fake_nvml::state().gpm_samples_taken, pairs + 2) << "run's start keeps the opening's pair";
  const recording::CountersEvent window_start = gpm.start(3000, true);
  EXPECT_EQ(window_start.ts_ns, 3000);
  EXPECT_TRUE(window_start.on);
  EXPECT_EQ(fake_nvml::state().gpm_samples_taken, pairs + 3) << "the agent's start takes a new pair";

  gpm.close(&pm, true, core::realtime_ns(), out);
  EXPECT_FALSE(gpm.is_open());
  EXPECT_TRUE(pm.wanted());
  EXPECT_TRUE(pm.running()) << "PM sampling started again";
  pm.stop_and_wait(core::realtime_ns(), out);
}

// A GPU whose driver has no GPM: the switch fails with GPM's own reason, and PM sampling is left as it
// was (still wanted).
TEST(GpmChipSource, NoGpmLeavesPmSamplingAsItWas) {
  GpmTelemetry telemetry;
  fake_nvml::state().gpm_supported = false;
  SamplerSupervisor pm(fake_config({}), &diescope::test::two_unit_table(), "");
  GpuBatch out;
  pm.set_wanted(true, core::realtime_ns(), out);
  GpmChipSource gpm;
  EXPECT_FALSE(gpm.open(telemetry, &pm, 1000));
  EXPECT_FALSE(gpm.is_open());
  EXPECT_NE(gpm.error().find("NVML GPM cannot be read on GPU 0"), std::string::npos) << gpm.error();
  EXPECT_TRUE(pm.wanted());
  EXPECT_TRUE(pm.running());
  EXPECT_FALSE(GpmChipSource().open(telemetry, nullptr, 1000)) << "no PM sampling to leave: the same";
  pm.stop_and_wait(core::realtime_ns(), out);
}

// docs/live-collection.md#policies: the session reads NVML once a poll (50 ms here), however often it
// is collected, and a collect up to a tenth of a poll early (5 ms) still reads. Collects at 0, 20,
// 46 (due at 50, 4 ms early), 60 (next due at 96) and 91 ms (5 ms early) read at 0, 46 and 91 ms.
TEST(LiveSession, ReadsNvmlOnceAPoll) {
  LiveSession session(one_gpu(false), 2, 50, {}, {}, ChipSourcePolicy{});
  const recording::TimeNs t0 = core::realtime_ns();
  std::vector<recording::TimeNs> reads;
  for (const recording::TimeNs ms : {0, 20, 46, 60, 91}) {
    std::vector<GpuBatch> out(1);
    session.collect(t0 + ms * recording::kNsPerMs, out);
    for (const recording::UtilSample& u : out[0].list<recording::UtilSample>())
      reads.push_back((u.ts_ns - t0) / recording::kNsPerMs);
  }
  EXPECT_EQ(reads, (std::vector<recording::TimeNs>{0, 46, 91}));
}

// NVML stand-in that notes each read of the power line; its energy counter cannot be read (NaN) before
// `readable_from`, and reads 1 J a second after.
class PowerTelemetry final : public GpuTelemetry {
 public:
  PowerTelemetry(recording::TimeNs readable_from, std::vector<recording::TimeNs>* reads)
      : readable_from_(readable_from), reads_(reads) {}
  recording::GpuIdentity identity() const override { return test::fake_gpu_identity(); }
  std::vector<recording::ColumnDef> engine_columns() const override { return {}; }
  void read(recording::TimeNs now, GpuBatch& out) override {
    if (!power_wanted()) return;
    reads_->push_back(now);
    const double mj =
        now < readable_from_ ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>(now) / 1e6;
    out.list<recording::PowerLimitReading>().push_back(recording::PowerLimitReading{now, 700, 300, mj});
  }

 private:
  recording::TimeNs readable_from_;
  std::vector<recording::TimeNs>* reads_;
};

// docs/live-collection.md#policies: the session's power rule, polled every 1 s at 0 to 5 s with the
// counters off and the counter unreadable before 2 s. The agent's cadence reads the power line at 0
// (the first poll), 1 and 2 s (the read before failed) and 5 s (power_due: a period ends there), not
// at 3 and 4 s; top's reads it at all six polls.
TEST(LiveSession, ThePowerLineIsReadAsTheReadersCadenceSays) {
  for (const bool agent : {true, false}) {
    const recording::TimeNs t0 = core::realtime_ns();
    std::vector<recording::TimeNs> reads;
    std::vector<SessionGpu> gpus(1);
    gpus[0].telemetry = std::make_unique<PowerTelemetry>(t0 + 2 * recording::kNsPerSecond, &reads);
    gpus[0].table = &diescope::test::two_unit_table();  // no sampler executable: no counters
    LiveSession session(std::move(gpus), 10, 1000, {}, {}, ChipSourcePolicy{});
    if (agent) session.set_cadence(NvmlCadence::agent(recording::kNsPerSecond));
    EXPECT_EQ(session.cadence().power, agent ? PowerReads::when_due : PowerReads::every_read);
    for (int s = 0; s <= 5; ++s) {
      if (s == 5) session.power_due(0);
      std::vector<GpuBatch> out(1);
      session.collect(t0 + s * recording::kNsPerSecond, out);
    }
    std::vector<recording::TimeNs> at;
    for (const recording::TimeNs t : reads) at.push_back((t - t0) / recording::kNsPerSecond);
    EXPECT_EQ(at, agent ? (std::vector<recording::TimeNs>{0, 1, 2, 5})
                        : (std::vector<recording::TimeNs>{0, 1, 2, 3, 4, 5}))
        << agent;
  }
}

// docs/live-collection.md#policies: the pids on NVML's process lists come with a read only where the
// reader's cadence asks for them (top's), so the agent's reads make no more NVML calls than before.
// The stand-in NVML lists pids 7 and 5 on the compute list and 5 on the graphics list: top's read
// hands out 5 and 7 (ascending, once each) beside the counts 2 and 1; the agent's hands out the counts
// alone.
TEST(LiveSession, ThePidsOnTheProcessListsComeWithTopsReadsOnly) {
  for (const bool top : {true, false}) {
    auto nvml = std::make_shared<Nvml>(fake_nvml::fake_functions());
    fake_nvml::state().compute_pids = {7, 5};
    fake_nvml::state().graphics_pids = {5};
    const recording::TimeNs t0 = core::realtime_ns();
    std::vector<SessionGpu> gpus(1);
    gpus[0].telemetry = std::make_unique<NvmlTelemetry>(nvml, 0, t0);
    LiveSession session(std::move(gpus), 10, 1000, {}, {}, ChipSourcePolicy{});
    session.set_cadence(top ? NvmlCadence::once_a_poll(recording::kNsPerSecond)
                            : NvmlCadence::agent(recording::kNsPerSecond));
    std::vector<GpuBatch> out(1);
    session.collect(t0, out);
    const auto& counts = out[0].list<recording::ProcessReading>();
    ASSERT_EQ(counts.size(), 1U) << top;
    EXPECT_EQ(counts[0].compute, 2);
    EXPECT_EQ(counts[0].graphics, 1);
    if (top) {
      ASSERT_TRUE(out[0].process_ids.has_value());
      EXPECT_EQ(*out[0].process_ids, (std::vector<unsigned>{5, 7}));
    } else {
      EXPECT_FALSE(out[0].process_ids.has_value());
    }
  }
}

// A reader with its own sink and run's policy (docs/live-collection.md#what-run-is-now): one GPU of the fake
// sampler child that crashes after its 10th sample, its messages into `sink`.
std::unique_ptr<LiveSession> session_with_sink(CountingSink& sink, std::vector<std::string> extra,
                                               DutyCycle duty = {}) {
  std::vector<SessionGpu> gpus = one_gpu(true);
  gpus[0].sampler.extra_args = std::move(extra);
  gpus[0].sink = &sink;
  SupervisorTiming timing;
  timing.backoff_initial_ns = 50 * recording::kNsPerMs;  // after_backoff would restart within 0.05 s
  ReaderPolicy reader;
  reader.restart = RestartRule::none;
  reader.gpm_switch = GpmSwitch::whole_run;
  reader.duty = duty;
  reader.drain_ms = 20;
  ChipSourcePolicy chip;
  chip.source = ChipSourceSetting::automatic;
  return std::make_unique<LiveSession>(std::move(gpus), 2, 1000, timing, nullptr, chip, reader);
}

// Pumps GPU 0 every 5 ms until `done` holds or 5 s have passed.
void pump_until(LiveSession& session, const std::function<bool()>& done) {
  const auto until = std::chrono::steady_clock::now() + 5s;
  while (!done() && std::chrono::steady_clock::now() < until) {
    session.pump(0, core::realtime_ns());
    std::this_thread::sleep_for(5ms);
  }
}

// The reader's sink gets the child's messages instead of the batch, and the reader's restart rule
// holds: under RestartRule::none the child that crashes after its 10th sample is reaped and not
// started again (after_backoff would within 0.05 s), however long the session is collected; the sink
// got 1 start, 1 "on", the 10 samples and 1 end (the crash), the batches none of them. With
// GpmSwitch::whole_run the session never switches to GPM on its own, though PM sampling ended and the
// setting is auto (follow_profilers would).
TEST(LiveSession, AReadersSinkGetsTheChildsMessagesUnderItsRestartRule) {
  CountingSink sink;
  auto session = session_with_sink(sink, {"--crash-after", "10"});
  session->set_counters(0, true, core::realtime_ns());
  EXPECT_TRUE(session->sampler_running(0));
  EXPECT_GE(session->sampler_fd(0), 0);
  std::size_t batch_samples = 0;
  const auto until = std::chrono::steady_clock::now() + 800ms;
  while (std::chrono::steady_clock::now() < until) {
    std::vector<GpuBatch> out(1);
    session->collect(core::realtime_ns(), out);
    batch_samples += out[0].list<recording::ChipSample>().size();
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_FALSE(session->sampler_running(0));
  EXPECT_EQ(session->sampler_fd(0), -1);
  EXPECT_EQ(sink.starts, 1);
  EXPECT_EQ(sink.ons, 1);
  EXPECT_EQ(sink.samples, 10);
  ASSERT_EQ(sink.exits.size(), 1u);
  EXPECT_NE(sink.exits[0].describe().find("SIGSEGV"), std::string::npos);
  EXPECT_EQ(batch_samples, 0u);
  EXPECT_EQ(session->sampler_restarts(0), 0);
  EXPECT_EQ(session->chip_source(0), ChipSource::pm);
}

// docs/live-collection.md#duty-phases: the session's duty step, 100 ms on in every 200 ms from t0,
// stepped by hand at the times below. Before the counters came on it starts nothing (210 ms: an on
// part). Once on: 150 ms (period 0, off) asks the child to stop; 160 ms (off) does nothing more;
// 210 ms (period 1, on) starts a child; 220 ms (on, running) nothing; 350 ms (period 1, off) stops
// it; 1010 ms (period 5, on) starts the third. So 3 starts and 2 clean ends.
TEST(LiveSession, TheDutyStepStopsAndStartsTheChildByTheSchedule) {
  CountingSink sink;
  auto session = session_with_sink(sink, {}, DutyCycle{100, 200});
  const recording::TimeNs t0 = core::realtime_ns();
  const auto at = [&](int ms) { return t0 + ms * recording::kNsPerMs; };
  session->duty_step(at(210), t0);
  EXPECT_EQ(sink.starts, 0) << "counters that never came on are not cycled";
  session->set_counters(0, true, t0);
  pump_until(*session, [&] { return sink.ons == 1; });
  ASSERT_EQ(sink.ons, 1);
  session->duty_step(at(150), t0);
  pump_until(*session, [&] { return !session->sampler_running(0); });
  EXPECT_EQ(sink.exits.size(), 1u);
  session->duty_step(at(160), t0);
  EXPECT_FALSE(session->sampler_running(0));
  session->duty_step(at(210), t0);
  EXPECT_EQ(sink.starts, 2);
  session->duty_step(at(220), t0);
  EXPECT_EQ(sink.starts, 2);
  pump_until(*session, [&] { return sink.ons == 2; });
  session->duty_step(at(350), t0);
  pump_until(*session, [&] { return !session->sampler_running(0); });
  EXPECT_EQ(sink.exits.size(), 2u);
  session->duty_step(at(1010), t0);
  EXPECT_EQ(sink.starts, 3);
  EXPECT_TRUE(session->sampler_running(0));
  session->set_counters(0, false, at(1020));
  session->finish(0, core::realtime_ns());
  EXPECT_FALSE(session->sampler_running(0));
  ASSERT_EQ(sink.exits.size(), 3u);
  for (const SamplerExit& exit : sink.exits) EXPECT_TRUE(exit.clean()) << exit.describe();
}

// docs/live-collection.md#policies: run's cadence through the session's tick_reads, ticks of 100 ms.
// At 0 (the first tick): a slow read, so everything, GPU-Util samples (none read yet) and the power
// line (none read yet) too, with the holders of pid 42. At 100 ms: clocks alone (the power line was
// read 0.1 s ago, under the 0.95 s its rule asks). At 1000 ms: a slow read with the power line (1 s
// since) but no GPU-Util samples (1 s since, under 4.5 s). After the end (1100 ms): GPU-Util alone.
TEST(LiveSession, RunsCadenceSaysWhatEachTickReads) {
  const recording::TimeNs t0 = core::realtime_ns();
  std::vector<recording::TimeNs> power_reads;
  std::vector<SessionGpu> gpus(1);
  gpus[0].telemetry = std::make_unique<PowerTelemetry>(t0, &power_reads);
  ReaderPolicy reader;
  reader.cadence = NvmlCadence::run(100 * recording::kNsPerMs);
  LiveSession session(std::move(gpus), 10, 100, {}, {}, ChipSourcePolicy{}, reader);
  const auto tick = [&](int ms, bool ended) {
    const recording::TimeNs now = t0 + ms * recording::kNsPerMs;
    TickReads reads = session.tick_reads(now, ended, 42);
    GpuBatch out;
    session.read(0, now, reads.gpus.at(0), out);
    return reads;
  };
  TickReads r = tick(0, false);
  EXPECT_TRUE(r.slow);
  EXPECT_TRUE(r.gpus[0].util && r.gpus[0].clocks && r.gpus[0].power && r.gpus[0].engines &&
              r.gpus[0].processes);
  EXPECT_EQ(r.gpus[0].holders_of, std::optional<std::int64_t>(42));
  r = tick(100, false);
  EXPECT_FALSE(r.slow);
  EXPECT_TRUE(r.gpus[0].clocks);
  EXPECT_FALSE(r.gpus[0].util || r.gpus[0].power || r.gpus[0].engines || r.gpus[0].processes);
  EXPECT_FALSE(r.gpus[0].holders_of.has_value());
  r = tick(1000, false);
  EXPECT_TRUE(r.slow);
  EXPECT_TRUE(r.gpus[0].power && r.gpus[0].engines && r.gpus[0].clocks);
  EXPECT_FALSE(r.gpus[0].util);
  r = tick(1100, true);
  EXPECT_TRUE(r.gpus[0].util);
  EXPECT_FALSE(r.gpus[0].clocks || r.gpus[0].power || r.gpus[0].engines || r.gpus[0].processes);
  EXPECT_EQ(power_reads, (std::vector<recording::TimeNs>{t0, t0 + recording::kNsPerSecond}));
  // A window mark asks for a read where the rule alone would not (0.05 s after the last).
  EXPECT_FALSE(session.power_due(0, t0 + 1050 * recording::kNsPerMs, false));
  EXPECT_TRUE(session.power_due(0, t0 + 1050 * recording::kNsPerMs, true));
}

// docs/live-collection.md#duty-phases: 2000 ms on in every 60000 ms. 1.999 s in is on, 2 s off; 61 s is
// the second period (index 1), 1 s into it, so on.
TEST(DutyCycle, OnForTheFirstPartOfEachPeriod) {
  const DutyCycle duty{2000, 60000};
  EXPECT_TRUE(duty.cycles());
  EXPECT_EQ(duty.phase_at(0), DutyPhase::on);
  EXPECT_EQ(duty.phase_at(1999 * recording::kNsPerMs), DutyPhase::on);
  EXPECT_EQ(duty.phase_at(2000 * recording::kNsPerMs), DutyPhase::off);
  EXPECT_EQ(duty.phase_at(59'999 * recording::kNsPerMs), DutyPhase::off);
  EXPECT_EQ(duty.period_at(59'999 * recording::kNsPerMs), 0);
  EXPECT_EQ(duty.phase_at(61'000 * recording::kNsPerMs), DutyPhase::on);
  EXPECT_EQ(duty.period_at(61'000 * recording::kNsPerMs), 1);
  // Both 0, or on at least the period: always on, one period.
  for (const DutyCycle always : {DutyCycle{0, 0}, DutyCycle{500, 500}, DutyCycle{900, 600}}) {
    EXPECT_FALSE(always.cycles());
    EXPECT_EQ(always.phase_at(123'456 * recording::kNsPerMs), DutyPhase::on);
    EXPECT_EQ(always.period_at(123'456 * recording::kNsPerMs), 0);
  }
  EXPECT_EQ(duty_phase_name(DutyPhase::off), "off");
  EXPECT_EQ(duty_phase_from_name("on"), DutyPhase::on);
  EXPECT_FALSE(duty_phase_from_name("paused").has_value());
}

}  // namespace
}  // namespace diescope::collect
