// Triggered captures (docs/agent.md#triggered-captures): the rules file and its errors, the window
// conditions worked out by hand, the token comparison, and the capture manager over a replayed
// synthetic recording driven by a fake clock: a capture written, the rate limit under a condition
// that fires at every window, a disk that fills mid-capture (a write hook and the quota), a job that
// leaves mid-capture, the agent stopping mid-capture, and the Prometheus counts.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "diescope/agent/agent.hpp"
#include "diescope/agent/capture.hpp"
#include "diescope/agent/replay_feed.hpp"
#include "diescope/core/error.hpp"
#include "diescope/recording/reader.hpp"
#include "fake_clock.hpp"
#include "running_program.hpp"
#include "steady_recording.hpp"

namespace diescope::agent {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::FakeClock;

constexpr recording::TimeNs kMs = recording::kNsPerMs;
constexpr recording::TimeNs kS = recording::kNsPerSecond;

// The UsageError a rules text gives, as "cause | fix"; empty when it parses.
std::string parse_error(const std::string& text) {
  try {
    (void)parse_capture_rules(text, "rules.json");
  } catch (const core::UsageError& e) {
    return e.cause() + " | " + e.fix();
  }
  return "";
}

TEST(CaptureRules, EveryConditionWithItsFieldsAndDefaults) {
  const CaptureRules r = parse_capture_rules(R"({
  // comments are allowed
  "captures": {"folder": "/tmp/c", "quota_mb": 100, "min_interval_s": 30, "token_file": "/tmp/t"},
  "rules": [
    {"name": "gap", "when": "gap_over", "points": 40, "for_s": 300, "capture_s": 60},
    {"name": "idle", "when": "gap_over", "of": "idle", "points": 50, "capture_s": 20, "gpus": [1]},
    {"name": "low-die", "when": "die_under_gpu_over", "die_util_under": 10, "gpu_util_over": 80, "for_s": 600, "capture_s": 60},
    {"name": "on_request", "when": "http", "capture_s": 30},
    {"name": "usr1", "when": "sigusr1", "capture_s": 5}
  ]
})",
                                             "rules.json");
  ASSERT_EQ(r.rules.size(), 5u);
  EXPECT_EQ(r.settings.folder, "/tmp/c");
  EXPECT_EQ(r.settings.quota_mb, 100);
  EXPECT_EQ(r.settings.min_interval_s, 30);
  EXPECT_EQ(r.settings.host_interval_ms, 10);  // the default
  EXPECT_FALSE(r.settings.allow_remote);
  EXPECT_EQ(r.rules[0].condition, CaptureCondition::gap_over);
  EXPECT_EQ(r.rules[0].of, GapMeasure::gap);  // the default
  EXPECT_EQ(r.rules[0].points, 40);
  EXPECT_EQ(r.rules[0].for_s, 300);
  EXPECT_EQ(r.rules[0].line, 5);
  EXPECT_EQ(r.rules[1].of, GapMeasure::idle);
  EXPECT_EQ(r.rules[1].for_s, 0);  // the default: one window
  EXPECT_EQ(r.rules[1].gpus, std::vector<int>{1});
  EXPECT_EQ(r.rules[2].condition, CaptureCondition::die_under_gpu_over);
  EXPECT_EQ(r.rules[2].die_util_under, 10);
  EXPECT_EQ(r.rules[2].gpu_util_over, 80);
  EXPECT_EQ(r.rules[3].condition, CaptureCondition::http);
  EXPECT_EQ(r.rules[4].condition, CaptureCondition::signal);
  EXPECT_EQ(r.rules[4].capture_s, 5);
  EXPECT_TRUE(r.has(CaptureCondition::http));
}

TEST(CaptureRules, ASyntaxErrorNamesItsLine) {
  // The comma after "capture_s": 5 is missing: the parser stops at line 4's opening quote.
  const std::string err = parse_error(
      "{\n  \"rules\": [\n    {\"name\": \"a\", \"when\": \"sigusr1\", \"capture_s\": 5\n"
      "     \"gpus\": [0]}\n  ]\n}\n");
  EXPECT_NE(err.find("rules.json:4: not valid JSON"), std::string::npos) << err;
  EXPECT_NE(err.find("fix the JSON at that line"), std::string::npos) << err;
}

TEST(CaptureRules, AnUnknownFieldIsNamedWithItsLineAndTheNearestField) {
  const std::string err = parse_error(R"({
  "rules": [
    {"name": "a", "when": "gap_over", "points": 40, "capture_s": 5},
    {"name": "b", "when": "gap_over", "pionts": 40, "capture_s": 5}
  ]
})");
  EXPECT_NE(err.find("rules.json:4: unknown field \"pionts\" in a rule"), std::string::npos) << err;
  EXPECT_NE(err.find("did you mean \"points\"?"), std::string::npos) << err;
  const std::string top = parse_error(
      "{\"rules\": [{\"name\": \"a\", \"when\": \"sigusr1\", \"capture_s\": 5}],\n"
      "\"capture\": {}}");
  EXPECT_NE(top.find("rules.json:2: unknown field \"capture\" in the file"), std::string::npos) << top;
  EXPECT_NE(top.find("did you mean \"captures\"?"), std::string::npos) << top;
}

TEST(CaptureRules, MissingWrongAndMisplacedValuesAreRefused) {
  EXPECT_NE(parse_error(R"({"rules": [{"name": "a", "when": "gap_over", "capture_s": 5}]})")
                .find("the rule needs \"points\""),
            std::string::npos);
  EXPECT_NE(
      parse_error(R"({"rules": [{"name": "a", "when": "sigusr1"}]})").find("the rule needs \"capture_s\""),
      std::string::npos);
  EXPECT_NE(parse_error(R"({"rules": [{"name": "a", "when": "sigusr1", "points": 3, "capture_s": 5}]})")
                .find("\"points\" is for gap_over rules, not \"sigusr1\""),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"rules": [{"name": "a", "when": "often", "capture_s": 5}]})")
                .find("unknown condition \"when\": \"often\""),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"rules": [{"name": "a", "when": "sigusr1", "capture_s": 0}]})")
                .find("\"capture_s\" is 0, outside 1 to 3600"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"rules": [{"name": "a b", "when": "sigusr1", "capture_s": 5}]})")
                .find("may hold only letters, digits, - and _"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"rules": [{"name": "a", "when": "sigusr1", "capture_s": 5},
                                      {"name": "a", "when": "sigusr1", "capture_s": 5}]})")
                .find("two rules are named \"a\""),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"rules": [{"name": "a", "when": "http", "capture_s": 5}]})")
                .find("an http rule needs \"captures\": {\"token_file\": PATH}"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"rules": []})").find("a list of at least one rule"), std::string::npos);
}

TEST(CaptureRules, ARuleForAGpuTheAgentDoesNotMonitorIsRefused) {
  const CaptureRules r = parse_capture_rules(
      "{\"rules\": [\n{\"name\": \"a\", \"when\": \"sigusr1\", \"capture_s\": 5, \"gpus\": [0, 3]}]}",
      "rules.json");
  EXPECT_NO_THROW(check_rule_gpus(r, {0, 1, 2, 3}));
  try {
    check_rule_gpus(r, {0, 1});
    FAIL() << "GPU 3 is not monitored";
  } catch (const core::UsageError& e) {
    EXPECT_EQ(
        e.cause(),
        "capture rule \"a\" (line 2) watches GPU 3, which this agent does not monitor (it monitors 0, 1)");
  }
}

TEST(CaptureRules, TheTokenComparisonNeedsEveryByte) {
  EXPECT_TRUE(token_matches("s3cret-token-0123456", "s3cret-token-0123456"));
  EXPECT_FALSE(token_matches("s3cret-token-0123457", "s3cret-token-0123456"));   // the last byte
  EXPECT_FALSE(token_matches("s3cret-token-012345", "s3cret-token-0123456"));    // a prefix
  EXPECT_FALSE(token_matches("s3cret-token-01234567", "s3cret-token-0123456"));  // longer
  EXPECT_FALSE(token_matches("", "s3cret-token-0123456"));
  EXPECT_FALSE(token_matches("", ""));  // no token configured accepts nothing
}

WindowFigures window(long seq, double start_s, double end_s, double gpu, double die) {
  WindowFigures w;
  w.seq = seq;
  w.start_ns = static_cast<recording::TimeNs>(start_s * 1e9);
  w.end_ns = static_cast<recording::TimeNs>(end_s * 1e9);
  w.gpu_util_pct = gpu;
  w.die_util_pct = die;
  w.gap_pct = gpu - die;
  w.stranded_pct = 100 - die;
  w.stranded_idle_pct = 100 - gpu;
  return w;
}

CaptureRule rule(CaptureCondition c, double for_s) {
  CaptureRule r;
  r.name = "r";
  r.condition = c;
  r.for_s = for_s;
  r.capture_s = 10;
  return r;
}

// The default duty: 2 s windows starting every 60 s. A gap of 45 points held for 300 s fires when the
// latest window's end is 300 s or more after the first window's start: windows start at 0, 60, ...,
// 300, and the one at 300 ends at 302 (302 - 0 >= 300), the sixth. The fifth ends at 242.
TEST(CaptureConditions, AGapHeldForDFiresOnTheWindowThatReachesD) {
  CaptureRule gap = rule(CaptureCondition::gap_over, 300);
  gap.points = 40;
  RuleEvaluator ev({gap}, 1);
  for (int k = 0; k < 5; ++k)
    EXPECT_TRUE(ev.observe(0, 0, window(k + 1, 60.0 * k, 60.0 * k + 2, 95, 50)).empty()) << "window " << k;
  EXPECT_EQ(ev.observe(0, 0, window(6, 300, 302, 95, 50)), std::vector<std::size_t>{0});
  // Fired: the count starts again, so the next window alone does not fire.
  EXPECT_TRUE(ev.observe(0, 0, window(7, 360, 362, 95, 50)).empty());
}

// A window under the threshold breaks the streak: counting restarts at the next window that holds.
// Gap 40.0 is not over 40 (strictly over), so it breaks too.
TEST(CaptureConditions, AWindowThatDoesNotHoldStartsTheCountAgain) {
  CaptureRule gap = rule(CaptureCondition::gap_over, 100);
  gap.points = 40;
  RuleEvaluator ev({gap}, 1);
  EXPECT_TRUE(ev.observe(0, 0, window(1, 0, 2, 95, 50)).empty());       // 45: holds, since 0
  EXPECT_TRUE(ev.observe(0, 0, window(2, 60, 62, 90, 50)).empty());     // 40.0: breaks
  EXPECT_TRUE(ev.observe(0, 0, window(3, 120, 122, 95, 50)).empty());   // since 120
  EXPECT_TRUE(ev.observe(0, 0, window(4, 180, 182, 95, 50)).empty());   // 62 s
  EXPECT_EQ(ev.observe(0, 0, window(5, 240, 242, 95, 50)).size(), 1u);  // 122 s >= 100
}

// DIE-Util under 10 while GPU-Util over 80, both strict; NaN never holds. The idle measure is
// 100 - GPU-Util: 100 - 14 = 86 > 50.
TEST(CaptureConditions, TheOtherMeasuresAndNaN) {
  CaptureRule low = rule(CaptureCondition::die_under_gpu_over, 0);
  low.die_util_under = 10;
  low.gpu_util_over = 80;
  EXPECT_TRUE(RuleEvaluator::holds(low, window(1, 0, 2, 85, 9.9)));
  EXPECT_FALSE(RuleEvaluator::holds(low, window(1, 0, 2, 85, 10)));
  EXPECT_FALSE(RuleEvaluator::holds(low, window(1, 0, 2, 80, 5)));
  EXPECT_FALSE(RuleEvaluator::holds(low, window(1, 0, 2, 85, std::nan(""))));
  CaptureRule idle = rule(CaptureCondition::gap_over, 0);
  idle.of = GapMeasure::idle;
  idle.points = 50;
  EXPECT_TRUE(RuleEvaluator::holds(idle, window(1, 0, 2, 14, 11)));  // idle 86, gap 3
  CaptureRule gap = idle;
  gap.of = GapMeasure::gap;
  EXPECT_FALSE(RuleEvaluator::holds(gap, window(1, 0, 2, 14, 11)));  // the gap is 3
  CaptureRule stranded = idle;
  stranded.of = GapMeasure::stranded;
  EXPECT_TRUE(RuleEvaluator::holds(stranded, window(1, 0, 2, 14, 11)));  // 89 > 50
  // A rule for GPU 1 ignores GPU 0's windows.
  CaptureRule only1 = idle;
  only1.gpus = {1};
  RuleEvaluator ev({only1}, 2);
  EXPECT_TRUE(ev.observe(0, 0, window(1, 0, 2, 14, 11)).empty());
  EXPECT_EQ(ev.observe(1, 1, window(1, 0, 2, 14, 11)).size(), 1u);
}

fs::path temp_dir(const std::string& name) {
  return testing::fresh_dir("capture", name);
}

// A replay whose chip source switches at `switch_at` (as the live session's does when another
// profiler takes the counters): that collect's batch says the columns changed.
class SwitchingFeed final : public collect::Feed {
 public:
  SwitchingFeed(std::unique_ptr<ReplayFeed> inner, recording::TimeNs switch_at)
      : inner_(std::move(inner)), switch_at_(switch_at) {}
  std::string kind() const override { return inner_->kind(); }
  std::size_t gpu_count() const override { return inner_->gpu_count(); }
  const recording::RecordingMeta& meta(std::size_t gpu) const override { return inner_->meta(gpu); }
  recording::TimeNs now_ns(const core::ClockReadings& c) override { return inner_->now_ns(c); }
  void collect(recording::TimeNs now, std::vector<collect::GpuBatch>& out) override {
    inner_->collect(now, out);
    if (!switched_ && now >= switch_at_) {
      switched_ = true;
      out[0].columns_changed_at = now;
      out[0].columns_change_why = "another profiler (ncu, pid 4242) runs: NVML GPM";
    }
  }
  void set_counters(std::size_t gpu, bool on, recording::TimeNs now) override {
    inner_->set_counters(gpu, on, now);
  }
  bool ended(recording::TimeNs now) const override { return inner_->ended(now); }
  recording::TimeNs end_ns() const override { return inner_->end_ns(); }
  void shutdown(recording::TimeNs now, std::vector<collect::GpuBatch>& out) override {
    inner_->shutdown(now, out);
  }
  bool counters_on(std::size_t gpu) const override { return inner_->counters_on(gpu); }
  // A live session's interval change, recorded; `accept_interval` says whether this source takes it.
  bool set_interval(std::size_t gpu, double interval_ms, recording::TimeNs /*now*/) override {
    intervals.emplace_back(gpu, interval_ms);
    return accept_interval;
  }
  recording::TimeNs origin_ns() const { return inner_->origin_ns(); }
  std::vector<std::pair<std::size_t, double>> intervals;
  bool accept_interval = false;

 private:
  std::unique_ptr<ReplayFeed> inner_;
  recording::TimeNs switch_at_;
  bool switched_ = false;
};

// The agent on a replayed steady recording (GPU-Util 90, DIE-Util 60: gap 30, idle 10), a 500 ms
// poll, with a capture manager on its batches. `gpm`: the recording's units are NVML GPM's (the
// live session reads GPM beside another profiler); `switch_at_s`: the chip source switches then.
struct Rig {
  FakeClock clock;
  std::unique_ptr<collect::Feed> source;
  SwitchingFeed* feed = nullptr;
  std::unique_ptr<Agent> agent;
  std::unique_ptr<CaptureManager> captures;
  std::vector<AgentRecord> records;
  recording::TimeNs origin = 0;

  Rig(double seconds, double on_ms, double period_ms, CaptureRules rules, CaptureHooks hooks = {},
      bool gpm = false, double switch_at_s = 1e9) {
    std::vector<std::unique_ptr<recording::Recording>> recs;
    recording::SyntheticSpec spec = testing::steady_spec(seconds);
    if (gpm)
      for (auto& u : spec.meta.units) u.source = recording::UnitSource::gpm;
    recs.push_back(recording::make_synthetic_recording(spec));
    auto replay = std::make_unique<ReplayFeed>(std::move(recs), 1.0, false, clock.read());
    origin = replay->origin_ns();
    auto switching = std::make_unique<SwitchingFeed>(
        std::move(replay), origin + static_cast<recording::TimeNs>(switch_at_s * 1e9));
    feed = switching.get();
    source = std::move(switching);
    AgentSettings s;
    s.poll_ms = 500;
    s.duty_on_ms = on_ms;
    s.duty_period_ms = period_ms;
    s.read_power = [] { return PowerSource::mains; };
    s.on_batch = [this](std::size_t gpu, const collect::GpuBatch& b) {
      if (captures) captures->on_batch(gpu, b);
    };
    agent = std::make_unique<Agent>(*source, clock, s);
    hooks.host_probes = false;  // a replay: this host is not the recording's
    captures = std::make_unique<CaptureManager>(std::move(rules), *agent, std::move(hooks));
  }
  // One 500 ms step: the agent, then the captures (as the runner does).
  void step() {
    clock.advance(500 * kMs);
    for (auto& r : agent->step()) records.push_back(std::move(r));
    captures->after_step();
  }
  void run_until(double s) {
    while (agent->now_ns() - origin < static_cast<recording::TimeNs>(s * 1e9) && !agent->ended()) step();
  }
  long count(const std::string& rule, CaptureOutcome o) const {
    for (const auto& c : captures->counts())
      if (c.rule == rule && c.outcome == o) return c.count;
    return -1;
  }
};

CaptureRules rules_with(const fs::path& folder, std::vector<CaptureRule> rules, double min_interval_s = 0) {
  CaptureRules r;
  r.settings.folder = folder;
  r.settings.min_interval_s = min_interval_s;
  r.rules = std::move(rules);
  return r;
}

json read_json(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

// SIGUSR1 at 1.0 s: the capture starts at the next step (1.0 s, the step that handles it) and, 2 s
// long, closes at the step at 3.0 s. Its folder holds the recording (readable, ended), the report with
// the capture block, and capture.json; the records go on (5 s periods: one record by 5 s).
TEST(CaptureManager, ASignalRuleWritesACaptureFolderAndTheRecordsGoOn) {
  const fs::path dir = temp_dir("signal");
  CaptureRule usr1 = rule(CaptureCondition::signal, 0);
  usr1.name = "usr1";
  usr1.capture_s = 2;
  std::vector<std::string> links;
  CaptureHooks hooks;
  hooks.job = [](int) {
    CaptureJob j;
    j.key = "pod/uid-1";
    j.name = "pod ml/train-7 (container trainer)";
    j.labels = {{"pod", "train-7"}, {"namespace", "ml"}};
    return std::optional<CaptureJob>(j);
  };
  hooks.link = [&links](int gpu, recording::TimeNs, const std::string& folder) {
    links.push_back(std::to_string(gpu) + " " + folder);
  };
  Rig rig(10, 1000, 5000, rules_with(dir, {usr1}), hooks);
  rig.run_until(0.5);
  rig.clock.advance(500 * kMs);
  for (auto& r : rig.agent->step()) rig.records.push_back(std::move(r));
  rig.captures->signal();
  rig.captures->after_step();  // at 1.0 s
  EXPECT_TRUE(rig.captures->capturing(0));
  rig.run_until(2.5);
  EXPECT_TRUE(rig.captures->capturing(0)) << "closed before its 2 s";
  rig.run_until(3.0);
  EXPECT_FALSE(rig.captures->capturing(0));
  rig.run_until(5.5);
  ASSERT_EQ(rig.records.size(), 1u);
  EXPECT_NEAR(rig.records[0].die_util_pct, 60, 1e-9);  // the record is the window's, unchanged

  ASSERT_EQ(rig.captures->finished().size(), 1u);
  const fs::path folder = rig.captures->finished()[0];
  EXPECT_NE(folder.filename().string().find("-gpu0-usr1"), std::string::npos) << folder;
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0], "0 " + folder.string());
  const json summary = read_json(folder / "capture.json");
  EXPECT_EQ(summary["state"], "written");
  EXPECT_EQ(summary["trigger"], "SIGUSR1");
  EXPECT_EQ(summary["job"]["labels"]["pod"], "train-7");
  EXPECT_EQ(summary["chip_source"], "pm");
  EXPECT_TRUE(summary["host_interval_ms"].is_null());  // a replay runs no host probes
  EXPECT_EQ(summary["end_ns"].get<recording::TimeNs>() - summary["start_ns"].get<recording::TimeNs>(),
            2 * kS);
  auto rec = recording::open_recording(folder / "capture.dsrec");
  ASSERT_TRUE(rec->side().end);
  // 10 ms samples over [1 s, 3 s): the counters were already off at 1 s (the window is 0-1 s), so
  // the hold starts them, and the first sample after that start is kept in the file (the analysis
  // drops it). At least 190 of the 200 are there.
  long chip = 0;
  auto stream = rec->stream<recording::ChipSample>();
  recording::ChipSample sample;
  while (stream->next(sample)) ++chip;
  EXPECT_GE(chip, 190);
  EXPECT_LE(chip, 201);
  const json report = read_json(folder / "report.json");
  EXPECT_EQ(report["capture"]["rule"], "usr1");
  EXPECT_EQ(report["capture"]["outcome"], "written");
  EXPECT_NEAR(report["results"]["die_util_pct"].get<double>(), 60, 1e-9);
  EXPECT_TRUE(fs::exists(folder / "report.html"));
  EXPECT_TRUE(fs::exists(folder / "trace.json"));
  EXPECT_EQ(rig.count("usr1", CaptureOutcome::written), 1);
  // The capture's report.json joins the ones the suite checks against docs/report.schema.json.
  const fs::path checked = fs::path(DIESCOPE_BINARY_DIR) / "test-reports" / "agent-capture";
  fs::create_directories(checked);
  fs::copy_file(folder / "report.json", checked / "report.json", fs::copy_options::overwrite_existing);
}

// A gap rule (gap 30 > 25) on one window fires every second: counters on 0.5 s of every 1 s, each
// window [k, k + 0.5] judged one 500 ms poll after it ends, at k + 1 s: at 1, 2, ..., 10 s. With one
// capture per 5 s and 1 s captures: started at 1 and at 6 s; refused at 2, 3, 4, 5, 7, 8, 9 and 10 s
// (8; at 2 and 7 s the capture before has just ended, so it is the rate, not a running capture, that
// refuses). Every period still gets its record: 10 by 10 s.
TEST(CaptureManager, TheRateLimitHoldsWhenAConditionFiresEverySecond) {
  const fs::path dir = temp_dir("rate");
  CaptureRule gap = rule(CaptureCondition::gap_over, 0);
  gap.name = "gap";
  gap.points = 25;
  gap.capture_s = 1;
  Rig rig(12, 500, 1000, rules_with(dir, {gap}, 5));
  rig.run_until(10.0);
  EXPECT_EQ(rig.count("gap", CaptureOutcome::written), 2);
  EXPECT_EQ(rig.count("gap", CaptureOutcome::rate_limited), 8);
  EXPECT_EQ(rig.count("gap", CaptureOutcome::busy), 0);
  ASSERT_EQ(rig.records.size(), 10u);
  for (const AgentRecord& r : rig.records) EXPECT_NEAR(r.die_util_pct, 60, 1e-9);
  const std::string text = rig.captures->metrics(ExpositionFormat::prometheus_text);
  EXPECT_NE(text.find("# TYPE diescope_captures_total counter"), std::string::npos) << text;
  EXPECT_NE(text.find("diescope_captures_total{rule=\"gap\",outcome=\"written\"} 2\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("diescope_captures_total{rule=\"gap\",outcome=\"rate_limited\"} 8\n"),
            std::string::npos)
      << text;
  // OpenMetrics names the family without _total, its samples with it.
  const std::string om = rig.captures->metrics(ExpositionFormat::openmetrics);
  EXPECT_NE(om.find("# TYPE diescope_captures counter\n"), std::string::npos) << om;
  EXPECT_NE(om.find("diescope_captures_total{rule=\"gap\",outcome=\"written\"} 2\n"), std::string::npos)
      << om;
}

// The disk fills mid-capture: the third flush fails (a write hook; a capture flushes at each step
// after the one that started it). The capture ends as disk_full with
// a note; the agent's records go on.
TEST(CaptureManager, ADiskThatFillsMidCaptureEndsItWithANoteAndTheRecordsGoOn) {
  const fs::path dir = temp_dir("disk");
  CaptureRule usr1 = rule(CaptureCondition::signal, 0);
  usr1.name = "usr1";
  usr1.capture_s = 5;
  CaptureHooks hooks;
  auto flushes = std::make_shared<int>(0);
  hooks.before_flush = [flushes](const fs::path&) {
    if (++*flushes == 3) throw core::Error("write failed: No space left on device", "", core::kExitInput);
  };
  Rig rig(12, 1000, 2000, rules_with(dir, {usr1}), hooks);
  rig.captures->signal();
  rig.step();  // 0.5 s: started
  rig.step();  // 1.0 s: first flush
  rig.step();  // 1.5 s: second
  EXPECT_TRUE(rig.captures->capturing(0));
  rig.step();  // 2.0 s: the third flush fails
  EXPECT_FALSE(rig.captures->capturing(0));
  rig.run_until(10.0);
  EXPECT_EQ(rig.records.size(), 5u);
  EXPECT_EQ(rig.count("usr1", CaptureOutcome::disk_full), 1);
  const json summary = read_json(rig.captures->finished().at(0) / "capture.json");
  EXPECT_EQ(summary["state"], "disk_full");
  bool noted = false;
  for (const auto& n : summary["notes"])
    noted = noted || n.get<std::string>().find(
                         "the disk filled mid-capture (write failed: No space left on "
                         "device)") != std::string::npos;
  EXPECT_TRUE(noted) << summary.dump(2);
}

// The quota (20 kB): two older capture folders of 15 kB each (30 kB) when a capture starts: the oldest
// (2020) is deleted, which brings the total to 15 kB, under the quota, so the 2021 one stays. As the
// capture grows (about 100 bytes a chip line, 100 lines a second) the total passes 20 kB again: the
// 2021 folder goes next, and then the capture alone passes the quota and stops with disk_full, its
// recording still readable.
TEST(CaptureManager, TheQuotaDeletesTheOldestFirstAndStopsACaptureThatAloneFillsIt) {
  const fs::path dir = temp_dir("quota");
  const fs::path oldest = dir / "20200101T000000Z-gpu0-old";
  const fs::path older = dir / "20210101T000000Z-gpu0-old";
  for (const fs::path& f : {oldest, older}) {
    fs::create_directories(f);
    std::ofstream(f / "capture.json") << "{}";
    std::ofstream(f / "capture.dsrec") << std::string(15000 - 2, 'x');
  }
  CaptureRule usr1 = rule(CaptureCondition::signal, 0);
  usr1.name = "usr1";
  usr1.capture_s = 5;
  CaptureRules rules = rules_with(dir, {usr1});
  rules.settings.quota_mb = 0.02;
  Rig rig(12, 1000, 2000, rules);
  rig.captures->signal();
  rig.step();
  EXPECT_FALSE(fs::exists(oldest)) << "the oldest capture should have been deleted";
  EXPECT_TRUE(fs::exists(older)) << "one deletion was enough: the next oldest stays";
  rig.run_until(6.0);
  EXPECT_FALSE(fs::exists(older));
  EXPECT_EQ(rig.count("usr1", CaptureOutcome::disk_full), 1);
  const fs::path folder = rig.captures->finished().at(0);
  const json summary = read_json(folder / "capture.json");
  EXPECT_EQ(summary["state"], "disk_full");
  EXPECT_LT(summary["end_ns"].get<recording::TimeNs>() - summary["start_ns"].get<recording::TimeNs>(),
            5 * kS);
  EXPECT_NO_THROW((void)recording::open_recording(folder / "capture.dsrec"));
  EXPECT_EQ(rig.records.size(), 3u);  // periods ending at 2, 4, 6 s
}

// The job leaves the GPU at 2.0 s, 1.5 s into a capture that started at 0.5 s: the capture says so
// and runs on to its 3 s.
TEST(CaptureManager, AJobThatLeavesMidCaptureIsNotedAndTheCaptureRunsOn) {
  const fs::path dir = temp_dir("job");
  CaptureRule usr1 = rule(CaptureCondition::signal, 0);
  usr1.name = "usr1";
  usr1.capture_s = 3;
  auto present = std::make_shared<bool>(true);
  CaptureHooks hooks;
  hooks.job = [present](int) -> std::optional<CaptureJob> {
    if (!*present) return std::nullopt;
    CaptureJob j;
    j.key = "process/4711";
    j.name = "process 4711 (python3)";
    return j;
  };
  Rig rig(12, 1000, 2000, rules_with(dir, {usr1}), hooks);
  rig.captures->signal();
  rig.step();  // 0.5 s: started
  rig.run_until(1.5);
  *present = false;
  rig.step();  // 2.0 s: gone
  EXPECT_TRUE(rig.captures->capturing(0));
  rig.run_until(3.5);
  EXPECT_FALSE(rig.captures->capturing(0));
  const fs::path folder = rig.captures->finished().at(0);
  const json summary = read_json(folder / "capture.json");
  EXPECT_EQ(summary["state"], "written");
  EXPECT_EQ(summary["job_left_ns"].get<recording::TimeNs>() - summary["start_ns"].get<recording::TimeNs>(),
            1500 * kMs);
  const json report = read_json(folder / "report.json");
  EXPECT_DOUBLE_EQ(report["capture"]["job_left_s"].get<double>(), 1.5);
}

// The agent stops 1 s into a 5 s capture: the capture is closed there, its recording ends with the
// stop and reads back, and its report is written.
TEST(CaptureManager, StoppingTheAgentClosesTheCaptureReadable) {
  const fs::path dir = temp_dir("stop");
  CaptureRule usr1 = rule(CaptureCondition::signal, 0);
  usr1.name = "usr1";
  usr1.capture_s = 5;
  Rig rig(12, 1000, 2000, rules_with(dir, {usr1}));
  rig.captures->signal();
  rig.step();  // 0.5 s
  rig.step();
  rig.step();  // 1.5 s
  for (auto& r : rig.agent->finish("SIGTERM")) rig.records.push_back(std::move(r));
  rig.captures->stop("SIGTERM");
  EXPECT_FALSE(rig.captures->capturing(0));
  const fs::path folder = rig.captures->finished().at(0);
  const json summary = read_json(folder / "capture.json");
  EXPECT_EQ(summary["state"], "cut_short");
  EXPECT_EQ(summary["end_ns"].get<recording::TimeNs>() - summary["start_ns"].get<recording::TimeNs>(), kS);
  auto rec = recording::open_recording(folder / "capture.dsrec");
  ASSERT_TRUE(rec->side().end);
  EXPECT_EQ(rec->side().end->ending.text, "the agent stopped (SIGTERM)");
  EXPECT_TRUE(fs::exists(folder / "report.html"));
  EXPECT_EQ(rig.count("usr1", CaptureOutcome::cut_short), 1);
}

// POST /capture from another host is refused unless allow_remote; the token is checked either way;
// a request that passes both is acted on by the agent's loop (here: the test's after_step).
TEST(CaptureManager, PostCaptureIsForLoopbackUnlessAllowedAndNeedsTheToken) {
  const fs::path dir = temp_dir("post");
  CaptureRule http = rule(CaptureCondition::http, 0);
  http.name = "on-request";
  http.capture_s = 1;
  CaptureRules rules = rules_with(dir, {http});
  rules.token = "0123456789abcdef";
  Rig rig(12, 1000, 2000, rules);
  EXPECT_EQ(rig.captures->http({"", "Bearer 0123456789abcdef", false}).status, 403);
  EXPECT_EQ(rig.captures->http({"", "Bearer 0123456789abcdeX", true}).status, 401);
  EXPECT_EQ(rig.captures->http({"gpu=x", "Bearer 0123456789abcdef", true}).status, 400);
  HttpReply reply;
  std::thread client([&] { reply = rig.captures->http({"gpu=0", "Bearer 0123456789abcdef", true}); });
  for (int i = 0; i < 200 && !rig.captures->capturing(0); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    rig.captures->after_step();
  }
  client.join();
  EXPECT_EQ(reply.status, 200) << reply.body;
  EXPECT_TRUE(rig.captures->capturing(0));

  CaptureRules remote = rules_with(temp_dir("post-remote"), {http});
  remote.token = "0123456789abcdef";
  remote.settings.allow_remote = true;
  Rig open(12, 1000, 2000, remote);
  EXPECT_EQ(open.captures->http({"", "Bearer 0123456789abcdeX", false}).status, 401);  // past the gate
}

// Beside another profiler the live session reads NVML GPM (its units' source is gpm): the capture
// records those columns and says so, in capture.json, the report's block and the page.
TEST(CaptureManager, ACaptureOnGpmSaysSo) {
  const fs::path dir = temp_dir("gpm");
  CaptureRule usr1 = rule(CaptureCondition::signal, 0);
  usr1.name = "usr1";
  usr1.capture_s = 1;
  Rig rig(12, 1000, 2000, rules_with(dir, {usr1}), {}, true);
  rig.captures->signal();
  rig.run_until(2.0);
  const fs::path folder = rig.captures->finished().at(0);
  const json summary = read_json(folder / "capture.json");
  EXPECT_EQ(summary["chip_source"], "gpm");
  ASSERT_FALSE(summary["notes"].empty());
  EXPECT_NE(
      summary["notes"][0].get<std::string>().find("chip source: NVML GPM, because another profiler held the "
                                                  "counters; the capture never takes them"),
      std::string::npos);
  std::ifstream html(folder / "report.html");
  const std::string page((std::istreambuf_iterator<char>(html)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("NVML GPM: another profiler held the counters, and the capture never takes them"),
            std::string::npos);
}

// The chip source switches 1.5 s into a 3 s capture started at 0.5 s: the capture keeps the columns it
// started with, takes no chip sample timed after the switch, and notes when and why.
TEST(CaptureManager, AChipSourceSwitchMidCaptureStopsItsChipSamplesWithANote) {
  const fs::path dir = temp_dir("switch");
  CaptureRule usr1 = rule(CaptureCondition::signal, 0);
  usr1.name = "usr1";
  usr1.capture_s = 3;
  Rig rig(12, 1000, 2000, rules_with(dir, {usr1}), {}, false, 2.0);
  rig.captures->signal();
  rig.run_until(4.0);
  const fs::path folder = rig.captures->finished().at(0);
  const json summary = read_json(folder / "capture.json");
  ASSERT_FALSE(summary["notes"].empty()) << summary.dump(2);
  EXPECT_NE(
      summary["notes"][0].get<std::string>().find(
          "the chip source changed 1.5 s into the capture (another profiler (ncu, pid 4242) runs: NVML GPM)"),
      std::string::npos)
      << summary.dump(2);
  auto rec = recording::open_recording(folder / "capture.dsrec");
  auto stream = rec->stream<recording::ChipSample>();
  recording::ChipSample sample;
  recording::TimeNs last_end = 0;
  while (stream->next(sample)) last_end = sample.end_ns;
  EXPECT_LE(last_end, rig.origin + 2 * kS);
  EXPECT_GT(last_end, rig.origin + 1500 * kMs);
}

// The rule's interval_ms: absent is 0 (the GPU model's default), a value is kept, and one outside the
// range --interval-ms takes (0.1 to 10000 ms) is refused with its line.
TEST(CaptureRules, TheIntervalFieldIsCheckedLikeIntervalMs) {
  const CaptureRules r = parse_capture_rules(R"({"rules": [
    {"name": "a", "when": "sigusr1", "capture_s": 5},
    {"name": "b", "when": "sigusr1", "capture_s": 5, "interval_ms": 1},
    {"name": "c", "when": "gap_over", "points": 40, "capture_s": 5, "interval_ms": 0.5}
  ]})",
                                             "rules.json");
  EXPECT_EQ(r.rules[0].interval_ms, 0);
  EXPECT_EQ(r.rules[1].interval_ms, 1);
  EXPECT_EQ(r.rules[2].interval_ms, 0.5);
  EXPECT_EQ(parse_error(R"({"rules": [
    {"name": "a", "when": "sigusr1", "capture_s": 5,
     "interval_ms": 0.05}
  ]})"),
            "capture rules rules.json:3: \"interval_ms\" is 0.05, outside 0.1 to 10000 | give "
            "\"interval_ms\" a value "
            "from 0.1 to 10000");
  EXPECT_NE(
      parse_error(R"({"rules": [{"name": "a", "when": "sigusr1", "capture_s": 5, "interval_ms": "1"}]})")
          .find("\"interval_ms\" must be a number"),
      std::string::npos);
}

// The default: 1 ms on the H200 (shown to hold for 60 s), never longer than the session's own
// interval; the session's interval on a model not measured.
TEST(CaptureRules, TheDefaultIntervalIsTheShortestShownToHoldOnTheModel) {
  EXPECT_EQ(default_capture_interval_ms("NVIDIA H200", 10), 1);
  EXPECT_EQ(default_capture_interval_ms("NVIDIA H200", 0.5), 0.5);
  EXPECT_EQ(default_capture_interval_ms("NVIDIA A100-SXM4-80GB", 10), 10);
  EXPECT_EQ(default_capture_interval_ms("", 20), 20);
}

recording::OwnedChipSample chip(recording::TimeNs start_us, recording::TimeNs end_us,
                                std::vector<double> units, double diag, double count) {
  return recording::OwnedChipSample{start_us * 1000, end_us * 1000, std::move(units), {diag}, {count}};
}

// Samples of 1 ms folded into a session's 2.2 ms: A [0, 1] units (10, NaN) diag 50 count 100, B [1, 2]
// (30, 40) 70 200 and C [2, 3] (0, 0) 10 1 make [0, 3] (the first span to reach 2.2 ms) with units
// ((10 + 30 + 0) / 3, (40 + 0) / 2) = (13.33, 20) (the NaN weighs nothing), diag (50 + 70 + 10) / 3 =
// 43.33, count 301; D [5, 6] comes after a gap and stands alone; E [6, 16], longer than half the
// interval, is left as it was.
TEST(CaptureInterval, ShortSamplesFoldIntoTheSessionsInterval) {
  const double nan = std::nan("");
  std::vector<recording::OwnedChipSample> v = {
      chip(0, 1000, {10, nan}, 50, 100), chip(1000, 2000, {30, 40}, 70, 200), chip(2000, 3000, {0, 0}, 10, 1),
      chip(5000, 6000, {5, 6}, 7, 8), chip(6000, 16000, {1, 2}, 3, 4)};
  fold_short_samples(v, 2200 * 1000);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].start_ns, 0);
  EXPECT_EQ(v[0].end_ns, 3 * kMs);
  EXPECT_NEAR(v[0].units[0], 40.0 / 3, 1e-12);
  EXPECT_DOUBLE_EQ(v[0].units[1], 20);
  EXPECT_NEAR(v[0].diagnostics[0], 130.0 / 3, 1e-12);
  EXPECT_DOUBLE_EQ(v[0].counts[0], 301);
  EXPECT_EQ(v[1].start_ns, 5 * kMs);
  EXPECT_EQ(v[1].end_ns, 6 * kMs);
  EXPECT_DOUBLE_EQ(v[1].units[0], 5);
  EXPECT_DOUBLE_EQ(v[1].counts[0], 8);
  EXPECT_EQ(v[2].start_ns, 6 * kMs);
  EXPECT_EQ(v[2].end_ns, 16 * kMs);
  EXPECT_DOUBLE_EQ(v[2].units[1], 2);
}

// A capture whose rule asks for 1 ms on a source that takes it: the sampler is asked for 1 ms when the
// capture starts and for the session's 10 ms when it ends; capture.json and the report say 1 ms. A source
// that cannot (a replay) keeps 10 ms, and the capture says so.
TEST(CaptureInterval, ACaptureSwitchesTheIntervalAndBack) {
  for (const bool accept : {true, false}) {
    const fs::path dir = temp_dir(accept ? "interval" : "interval-refused");
    CaptureRule usr1 = rule(CaptureCondition::signal, 0);
    usr1.name = "usr1";
    usr1.capture_s = 1;
    usr1.interval_ms = 1;
    Rig rig(12, 1000, 2000, rules_with(dir, {usr1}));
    rig.feed->accept_interval = accept;
    rig.captures->signal();
    rig.run_until(2.0);
    const fs::path folder = rig.captures->finished().at(0);
    const json summary = read_json(folder / "capture.json");
    const json report = read_json(folder / "report.json");
    if (accept) {
      ASSERT_EQ(rig.feed->intervals.size(), 2u);
      EXPECT_EQ(rig.feed->intervals[0], (std::pair<std::size_t, double>{0, 1.0}));
      EXPECT_EQ(rig.feed->intervals[1], (std::pair<std::size_t, double>{0, 10.0}));
      EXPECT_EQ(summary["interval_ms"], 1.0);
      EXPECT_EQ(report["capture"]["interval_ms"], 1.0);
    } else {
      ASSERT_EQ(rig.feed->intervals.size(), 1u);  // asked once, refused: nothing to switch back
      EXPECT_EQ(summary["interval_ms"], 10.0);
      EXPECT_NE(
          summary["notes"].dump().find("the replay source keeps its interval (10 ms): the capture's 1 ms "
                                       "needs a live session"),
          std::string::npos)
          << summary.dump(2);
    }
    EXPECT_EQ(summary["session_interval_ms"], 10.0);
  }
}

// A ring written by hand (capacity 8): thread 5 pushes A at 100 (depth 1) and B at 200 (depth 2), pops
// at 300 (B: 100 ns) and 400 (A: 300 ns); a range C started at 150 with id 7 ends at 450 (300 ns); thread
// 6 pops with nothing pushed (unmatched) and pushes D at 500, still open at the end.
struct HandRing {
  fs::path path;
  std::vector<char> bytes;
  explicit HandRing(const fs::path& p, std::uint32_t capacity = 8) : path(p) {
    bytes.assign(nvtx_ring::file_bytes(capacity), 0);
    auto* h = reinterpret_cast<nvtx_ring::Header*>(bytes.data());
    std::memcpy(h->magic, nvtx_ring::kMagic, sizeof h->magic);
    h->version = nvtx_ring::kVersion;
    h->slot_bytes = sizeof(nvtx_ring::Slot);
    h->capacity = capacity;
    h->pid = 4242;
  }
  void add(nvtx_ring::EventKind kind, std::int64_t ts, std::uint32_t tid, int depth, std::uint64_t id,
           const char* name = "") {
    auto* h = reinterpret_cast<nvtx_ring::Header*>(bytes.data());
    auto* slots = reinterpret_cast<nvtx_ring::Slot*>(h + 1);
    const std::uint64_t index = h->written++;
    nvtx_ring::Slot& s = slots[index % h->capacity];
    s = nvtx_ring::Slot{};
    s.seq = index + 1;
    s.ts_ns = ts;
    s.id = id;
    s.tid = tid;
    s.kind = static_cast<std::uint16_t>(kind);
    s.depth = static_cast<std::uint16_t>(depth);
    std::snprintf(s.name, sizeof s.name, "%s", name);
  }
  void save() const {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  // Rewrites the file in place (a reader's mapping sees it), as a writer does.
  void update() const {
    std::fstream out(path, std::ios::binary | std::ios::in | std::ios::out);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  nvtx_ring::Slot& slot(std::size_t i) {
    return reinterpret_cast<nvtx_ring::Slot*>(bytes.data() + sizeof(nvtx_ring::Header))[i];
  }
};

// A slot claimed but not yet whole (its sequence number still 0) stops the read there: the first read
// takes only A's push; once the slot is published, the next read takes B's push and its pop: B, 10 ns.
TEST(NvtxRing, ASlotNotYetWholeIsTakenByTheNextRead) {
  const fs::path dir = temp_dir("ring-partial");
  using K = nvtx_ring::EventKind;
  HandRing ring(dir / "4242.ring");
  ring.add(K::push, 10, 1, 1, 0, "A");
  ring.add(K::push, 20, 1, 2, 0, "B");
  ring.add(K::pop, 30, 1, 2, 0);
  ring.slot(1).seq = 0;
  ring.save();
  std::string why;
  auto reader = RingReader::open(ring.path, why);
  ASSERT_TRUE(reader) << why;
  std::vector<NvtxRange> out;
  EXPECT_EQ(reader->read(0, out), 1u);
  EXPECT_TRUE(out.empty());
  ring.slot(1).seq = 2;
  ring.update();
  EXPECT_EQ(reader->read(0, out), 2u);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].name, "B");
  EXPECT_EQ(out[0].end_ns - out[0].start_ns, 10);
  EXPECT_EQ(reader->lost(), 0u);
}

TEST(NvtxRing, TheReaderPairsPushesPopsStartsAndEndsByHand) {
  const fs::path dir = temp_dir("ring-hand");
  using K = nvtx_ring::EventKind;
  HandRing ring(dir / "4242.ring");
  ring.add(K::push, 100, 5, 1, 0, "A");
  ring.add(K::start, 150, 5, 0, 7, "C");
  ring.add(K::push, 200, 5, 2, 0, "B");
  ring.add(K::pop, 300, 5, 2, 0);
  ring.add(K::pop, 400, 5, 1, 0);
  ring.add(K::end, 450, 5, 0, 7);
  ring.add(K::pop, 460, 6, 1, 0);
  ring.add(K::push, 500, 6, 1, 0, "D");
  ring.save();
  std::string why;
  auto reader = RingReader::open(ring.path, why);
  ASSERT_TRUE(reader) << why;
  EXPECT_EQ(reader->pid(), 4242);
  std::vector<NvtxRange> out;
  EXPECT_EQ(reader->read(0, out), 8u);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].name, "B");
  EXPECT_EQ(out[0].depth, 2);
  EXPECT_EQ(out[0].end_ns - out[0].start_ns, 100);
  EXPECT_EQ(out[1].name, "A");
  EXPECT_EQ(out[1].depth, 1);
  EXPECT_EQ(out[1].end_ns - out[1].start_ns, 300);
  EXPECT_EQ(out[2].name, "C");
  EXPECT_EQ(out[2].start_ns, 150);
  EXPECT_EQ(out[2].end_ns, 450);
  EXPECT_EQ(out[2].tid, 5u);
  EXPECT_EQ(reader->unmatched(), 1u);
  EXPECT_EQ(reader->lost(), 0u);
  // D is open: closed at 900 and marked so; with `since` 1000 nothing that ended before is kept.
  std::vector<NvtxRange> open;
  reader->close_open(900, 0, open);
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0].name, "D");
  EXPECT_EQ(open[0].end_ns, 900);
  EXPECT_TRUE(open[0].open);
  open.clear();
  reader->close_open(900, 1000, open);
  EXPECT_TRUE(open.empty());
  // Nothing new: a second read takes nothing.
  EXPECT_EQ(reader->read(0, out), 0u);
}

// Capacity 4 and 7 events written before the first read: the 3 oldest were overwritten (lost), and
// the 4 left are a push at 40 (depth 1), its pop at 50, a push at 60 and its pop at 70: two ranges of
// 10 ns. With `since` 55, only the second (ending at 70) is kept.
TEST(NvtxRing, EventsOverwrittenBeforeTheyAreReadAreCountedLost) {
  const fs::path dir = temp_dir("ring-lost");
  using K = nvtx_ring::EventKind;
  HandRing ring(dir / "4242.ring", 4);
  ring.add(K::push, 10, 1, 1, 0, "old");
  ring.add(K::pop, 20, 1, 1, 0);
  ring.add(K::push, 30, 1, 1, 0, "old");
  ring.add(K::push, 40, 1, 1, 0, "x");
  ring.add(K::pop, 50, 1, 1, 0);
  ring.add(K::push, 60, 1, 1, 0, "y");
  ring.add(K::pop, 70, 1, 1, 0);
  ring.save();
  std::string why;
  auto reader = RingReader::open(ring.path, why);
  ASSERT_TRUE(reader) << why;
  std::vector<NvtxRange> out;
  EXPECT_EQ(reader->read(55, out), 4u);
  EXPECT_EQ(reader->lost(), 3u);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].name, "y");
  EXPECT_EQ(out[0].end_ns - out[0].start_ns, 10);
}

TEST(NvtxRing, AFileThatIsNotARingIsRefusedWithItsName) {
  const fs::path dir = temp_dir("ring-bad");
  std::ofstream(dir / "1.ring") << "not a ring at all, but long enough to hold a header of sixty-four bytes.";
  std::string why;
  EXPECT_FALSE(RingReader::open(dir / "1.ring", why));
  EXPECT_NE(why.find("is not an NVTX ring of this version"), std::string::npos) << why;
}

TEST(NvtxRing, AProcessTreeIsFollowedByParentLinks) {
  EXPECT_TRUE(in_process_tree("/proc", ::getpid(), ::getpid()));
  EXPECT_TRUE(in_process_tree("/proc", ::getpid(), 1));  // every process descends from init
  EXPECT_FALSE(in_process_tree("/proc", ::getppid(), ::getpid()));
  EXPECT_FALSE(in_process_tree("/proc", 0, ::getpid()));
}

#ifdef DIESCOPE_NVTX_WRITER
// The NVTX writer, a child of this test, started with libdiescope-nvtx.so: its ring holds what it wrote,
// paired by the reader: inner (depth 2) inside outer (depth 1), async (a start/end range), after (depth
// 1) and, on its second thread, worker (depth 1).
struct Writer {
  std::unique_ptr<testing::RunningProgram> program;
  fs::path release;
  explicit Writer(const fs::path& dir) : release(dir / "release") {
    program = std::make_unique<testing::RunningProgram>(
        std::vector<std::string>{DIESCOPE_NVTX_WRITER, release.string()}, "",
        std::vector<std::pair<std::string, std::string>>{{"NVTX_INJECTION64_PATH", DIESCOPE_NVTX_LIBRARY},
                                                         {"DIESCOPE_NVTX_DIR", (dir / "rings").string()}});
  }
  ~Writer() {
    std::ofstream(release.string()) << "go";
    program->wait(std::chrono::seconds(10));
  }
};

TEST(NvtxRing, TheInjectionLibraryWritesWhatTheProgramPushed) {
  const fs::path dir = temp_dir("ring-real");
  Writer w(dir);
  ASSERT_TRUE(w.program->started()) << w.program->start_error();
  const auto line = w.program->read_line(std::chrono::seconds(10));
  ASSERT_TRUE(line) << w.program->stderr_text();
  const fs::path ring = dir / "rings" / (std::to_string(w.program->pid()) + ".ring");
  std::string why;
  auto reader = RingReader::open(ring, why);
  ASSERT_TRUE(reader) << why;
  std::vector<NvtxRange> out;
  EXPECT_EQ(reader->read(0, out), 10u);  // 4 pushes, 4 pops, a start and an end
  ASSERT_EQ(out.size(), 5u);
  std::map<std::string, NvtxRange> by;
  for (const auto& r : out) by[r.name] = r;
  EXPECT_EQ(by["outer"].depth, 1);
  EXPECT_EQ(by["inner"].depth, 2);
  EXPECT_EQ(by["async"].depth, 0);
  EXPECT_EQ(by["after"].depth, 1);
  EXPECT_EQ(by["worker"].depth, 1);
  EXPECT_LE(by["outer"].start_ns, by["inner"].start_ns);
  EXPECT_LT(by["inner"].start_ns, by["inner"].end_ns);
  EXPECT_LE(by["inner"].end_ns, by["outer"].end_ns);
  EXPECT_GE(by["inner"].end_ns - by["inner"].start_ns, 2 * kMs);             // it slept 2 ms inside
  EXPECT_EQ(by["outer"].tid, static_cast<std::uint32_t>(w.program->pid()));  // the main thread
  EXPECT_NE(by["worker"].tid, by["outer"].tid);
  EXPECT_EQ(by["outer"].pid, w.program->pid());
  EXPECT_EQ(reader->lost(), 0u);
  EXPECT_EQ(reader->unmatched(), 0u);
}

// A capture of a job whose root is this test process: the writer (its child) has a ring, so the capture
// reads it: nvtx.csv holds the 5 ranges, report.json's block names them (the most time first; outer
// 4 ms or more), the page and the trace show them. Without a ring the capture says why.
TEST(NvtxRing, ACaptureRecordsTheJobsRangesOrSaysWhyNot) {
  for (const bool with_ring : {true, false}) {
    const fs::path dir = temp_dir(with_ring ? "nvtx-capture" : "nvtx-none");
    std::optional<Writer> w;
    if (with_ring) {
      w.emplace(dir);
      ASSERT_TRUE(w->program->read_line(std::chrono::seconds(10)));
    }
    CaptureRule usr1 = rule(CaptureCondition::signal, 0);
    usr1.name = "usr1";
    usr1.capture_s = 1;
    CaptureHooks hooks;
    hooks.job = [](int) {
      CaptureJob j;
      j.key = "process/test";
      j.name = "the test";
      j.root_pid = ::getpid();
      return std::optional<CaptureJob>(j);
    };
    hooks.nvtx_dir = dir / "rings";
    Rig rig(12, 1000, 2000, rules_with(dir / "captures", {usr1}), hooks);
    rig.captures->signal();
    rig.run_until(2.0);
    const fs::path folder = rig.captures->finished().at(0);
    const json summary = read_json(folder / "capture.json");
    const json report = read_json(folder / "report.json");
    if (!with_ring) {
      EXPECT_EQ(summary["nvtx"], "not recorded: no process of the job (pid " + std::to_string(::getpid()) +
                                     " and its children) wrote an NVTX ring under " +
                                     (dir / "rings").string() +
                                     "; start the job with NVTX_INJECTION64_PATH naming libdiescope-nvtx.so "
                                     "(docs/agent.md#nvtx-in-captures)");
      EXPECT_FALSE(fs::exists(folder / "nvtx.csv"));
      EXPECT_TRUE(report["capture"]["nvtx_ranges"].empty());
      continue;
    }
    EXPECT_EQ(summary["nvtx"], "5 range(s) from 1 process(es) of the job, in nvtx.csv") << summary.dump(2);
    std::ifstream csv(folder / "nvtx.csv");
    std::string header;
    std::getline(csv, header);
    EXPECT_EQ(header, "pid,tid,depth,name,start_ns,end_ns,duration_ms,open");
    int rows = 0;
    for (std::string l; std::getline(csv, l);) ++rows;
    EXPECT_EQ(rows, 5);
    const json& names = report["capture"]["nvtx_ranges"];
    ASSERT_EQ(names.size(), 5u);
    // The most time first. Which of outer (two 2 ms sleeps) and after (one) leads depends on how long
    // each sleep overran, so the test checks the order itself and outer's own figures.
    std::map<std::string, json> by_name;
    for (std::size_t i = 0; i < names.size(); ++i) {
      by_name[names[i]["name"].get<std::string>()] = names[i];
      if (i > 0) {
        EXPECT_GE(names[i - 1]["total_s"].get<double>(), names[i]["total_s"].get<double>());
      }
    }
    ASSERT_EQ(by_name.count("outer"), 1u);
    EXPECT_EQ(by_name["outer"]["count"], 1);
    EXPECT_GE(by_name["outer"]["total_s"].get<double>(), 0.004);
    EXPECT_GE(by_name["outer"]["total_s"].get<double>(), by_name["inner"]["total_s"].get<double>());
    std::ifstream html(folder / "report.html");
    const std::string page((std::istreambuf_iterator<char>(html)), std::istreambuf_iterator<char>());
    EXPECT_NE(page.find("<td>inner</td>"), std::string::npos);
    const json trace = read_json(folder / "trace.json");
    int slices = 0;
    for (const json& e : trace["traceEvents"])
      if (e.value("pid", 0) == 3 && e.value("ph", "") == "X") ++slices;
    EXPECT_EQ(slices, 5);
  }
}
#endif

}  // namespace
}  // namespace diescope::agent
