// Triggered captures in the agent (docs/agent.md#triggered-captures): rules read from a JSON file,
// each a condition (a gap held for a time, DIE-Util low while GPU-Util is high, a POST /capture, a
// SIGUSR1) and a length. A fired rule records one GPU for that length with the counters held on at
// the shortest interval that holds, the host probes at 10 ms following the job's process tree, and
// the job's NVTX ranges from its rings (docs/agent.md#nvtx-in-captures), into a capture folder with the
// recording, report.html, report.json, trace.json and nvtx.csv; the job record links to it. A per-GPU rate
// limit, a disk quota that deletes the oldest capture first, and a full disk that ends a capture with
// a note, never the agent.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "diescope/agent/agent.hpp"
#include "diescope/agent/http_server.hpp"
#include "diescope/agent/metrics.hpp"
#include "diescope/agent/nvtx_ring.hpp"
#include "diescope/collect/feed.hpp"
#include "diescope/core/unique_fd.hpp"
#include "diescope/report/recording_report.hpp"

namespace diescope::agent {

enum class CaptureCondition { gap_over, die_under_gpu_over, http, signal };
std::string_view to_string(CaptureCondition condition);

// Which points a gap_over rule compares (docs/agent.md#rules): GPU-Util minus DIE-Util, 100 minus
// DIE-Util, or 100 minus GPU-Util (capacity stranded while nothing ran: a starved GPU).
enum class GapMeasure { gap, stranded, idle };
std::string_view to_string(GapMeasure measure);

struct CaptureRule {
  std::string name;
  CaptureCondition condition = CaptureCondition::signal;
  GapMeasure of = GapMeasure::gap;
  double points = 0;          // gap_over: over this many points
  double die_util_under = 0;  // die_under_gpu_over
  double gpu_util_over = 0;
  double for_s = 0;       // D: the condition holds this long (window conditions)
  double capture_s = 60;  // S: the capture's length
  // The capture's chip sampling interval; 0: the shortest shown to hold on the GPU's model
  // (default_capture_interval_ms).
  double interval_ms = 0;
  std::vector<int> gpus;  // GPU indexes it watches; empty: every GPU
  int line = 0;           // where the rule starts in the file
};

struct CaptureSettings {
  std::filesystem::path folder;  // where capture folders go
  double quota_mb = 2048;        // every capture folder together; the oldest is deleted first
  double min_interval_s = 600;   // per GPU: at most one capture started in this many seconds
  std::filesystem::path token_file;
  bool allow_remote = false;  // POST /capture from an address other than loopback
  double host_interval_ms = 10;
};

struct CaptureRules {
  CaptureSettings settings;
  std::vector<CaptureRule> rules;
  std::string token;  // read from settings.token_file; empty when no http rule
  bool has(CaptureCondition condition) const;
};

// Parses a rules file's text. Throws UsageError naming `path`, the line and the fix for a syntax
// error, an unknown or misspelt field, a value out of range or a missing one.
CaptureRules parse_capture_rules(std::string_view text, const std::string& path);
// Reads the file (and the token file its http rules need). Throws UsageError.
CaptureRules read_capture_rules(const std::filesystem::path& path);

// Refuses a rule that names a GPU the agent does not monitor (`monitored`: the feed's GPU indexes), so
// a mistyped index stops the agent before any counter is switched on. Throws UsageError.
void check_rule_gpus(const CaptureRules& rules, const std::vector<int>& monitored);

// The chip interval a capture samples at when its rule names none (docs/agent.md#what-a-capture-holds):
// the shortest interval shown to hold for 60 s on `gpu_model` (1 ms on the NVIDIA H200), and never
// longer than the session's own `session_ms`; the session's interval on a model not measured.
double default_capture_interval_ms(std::string_view gpu_model, double session_ms);

// Compares a token in time that depends only on the lengths, never on where they first differ.
bool token_matches(std::string_view given, std::string_view expected);

// The window conditions of one set of rules, fed each GPU's window figures as they come: which
// rules fire now (their condition held for at least for_s over consecutive windows). Pure.
class RuleEvaluator {
 public:
  RuleEvaluator(std::vector<CaptureRule> rules, std::size_t gpus);
  std::vector<std::size_t> observe(std::size_t gpu, int gpu_index, const WindowFigures& window);
  static bool holds(const CaptureRule& rule, const WindowFigures& window);

 private:
  std::vector<CaptureRule> rules_;
  std::vector<std::vector<std::optional<recording::TimeNs>>> since_;  // [rule][gpu]: streak start
};

enum class CaptureOutcome { written, cut_short, disk_full, rate_limited, busy, failed };
std::string_view to_string(CaptureOutcome outcome);

// Who held the GPU when a capture started (attribution's holder).
struct CaptureJob {
  std::string key;  // the holder's stable key
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;
  std::int64_t root_pid = 0;  // the process tree the host probes follow; 0: none
};

struct CaptureHooks {
  // Who holds a GPU now (nullopt: nobody, or attribution is off).
  std::function<std::optional<CaptureJob>(int gpu_index)> job;
  // Links a capture folder to the job records of the GPU (attribution's job store).
  std::function<void(int gpu_index, recording::TimeNs start_ns, const std::string& folder)> link;
  std::function<void(const std::string&)> log;
  // Called before each flush of a capture's recording; throwing stands for a write that failed
  // (tests: a disk that fills).
  std::function<void(const std::filesystem::path& recording)> before_flush;
  // The report's calibration block, as `diescope report` looks it up (empty: none is looked up).
  report::CalibrationLookup calibration;
  std::filesystem::path proc = "/proc";  // the host probes' /proc (tests give a fixture)
  // Where the jobs' NVTX rings are (docs/agent.md#nvtx-in-captures); empty: no NVTX is read.
  std::filesystem::path nvtx_dir = nvtx_ring_dir();
  bool host_probes = true;  // false in a replay: this host is not the recording's
};

// A POST /capture as the HTTP thread sees it.
struct CaptureHttpRequest {
  std::string query;          // after '?', e.g. "rule=on-request&gpu=0"
  std::string authorization;  // the Authorization header
  bool peer_loopback = false;
};

class CaptureManager {
 public:
  CaptureManager(CaptureRules rules, Agent& agent, CaptureHooks hooks = {});
  ~CaptureManager();
  CaptureManager(const CaptureManager&) = delete;
  CaptureManager& operator=(const CaptureManager&) = delete;

  // The agent's batch tee (AgentSettings::on_batch): every capture of that GPU writes it.
  void on_batch(std::size_t gpu, const collect::GpuBatch& batch);
  // After each agent step: requests waiting (HTTP, SIGUSR1), new windows against the rules, captures
  // whose time is up, flushes and the quota.
  void after_step();
  // SIGUSR1 arrived: every signal rule fires at the next after_step.
  void signal();
  // From the HTTP thread: waits (bounded) for the main loop to act on it.
  HttpReply http(const CaptureHttpRequest& request);
  // A descriptor the agent's loop wakes for (a request waits).
  int wake_fd() const { return wake_.read.get(); }
  // Closes every running capture now (the agent stops): recording ended, report written.
  void stop(const std::string& why);
  // diescope_captures_total{rule,outcome}.
  std::string metrics(ExpositionFormat format) const;

  struct Counted {
    std::string rule;
    CaptureOutcome outcome;
    long count = 0;
  };
  std::vector<Counted> counts() const;
  // Folders of finished captures, oldest first.
  std::vector<std::filesystem::path> finished() const;
  bool capturing(std::size_t gpu) const;

 private:
  struct Active;
  struct Pending {
    std::size_t rule = 0;
    int gpu_index = -1;  // -1: every GPU the rule watches
    std::string trigger;
    std::shared_ptr<std::promise<HttpReply>> reply;
  };
  std::optional<std::string> start(std::size_t rule, std::size_t gpu, const std::string& trigger,
                                   CaptureOutcome& outcome);
  void finish(Active& a, const std::string& why, CaptureOutcome outcome);
  void count(std::size_t rule, CaptureOutcome outcome);
  void enforce_quota(const std::filesystem::path& keep);
  void read_nvtx(Active& a);
  std::string nvtx_text(const Active& a) const;
  void write_summary(const Active& a, const std::string& state) const;
  void log(const std::string& line) const;

  CaptureRules rules_;
  Agent& agent_;
  CaptureHooks hooks_;
  RuleEvaluator evaluator_;
  std::vector<long> seen_window_;                // per GPU: the last window seq evaluated
  std::vector<recording::TimeNs> last_start_;    // per GPU: the last capture's start (rate limit)
  std::vector<std::unique_ptr<Active>> active_;  // per GPU: the running capture, or null
  mutable std::mutex counts_mutex_;
  std::map<std::pair<std::size_t, CaptureOutcome>, long> counts_;
  std::vector<std::filesystem::path> finished_;
  std::mutex pending_mutex_;
  std::deque<Pending> pending_;
  bool signalled_ = false;
  core::Pipe wake_;
};

}  // namespace diescope::agent
