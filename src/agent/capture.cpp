// Captures: a fired rule records one GPU into a capture folder (docs/agent.md#triggered-captures).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <tuple>
#include <system_error>
#include <type_traits>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "diescope/agent/capture.hpp"
#include "diescope/analysis/analyze.hpp"
#include "diescope/collect/host_probes.hpp"
#include "diescope/collect/run.hpp"
#include "diescope/core/atomic_file.hpp"
#include "diescope/core/clock.hpp"
#include "diescope/core/error.hpp"
#include "diescope/recording/writer.hpp"
#include "diescope/report/recording_report.hpp"
#include "diescope/report/renderer.hpp"

namespace diescope::agent {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kSummaryFile = "capture.json";
constexpr const char* kRecordingFile = "capture.dsrec";
constexpr const char* kNvtxFile = "nvtx.csv";
// How many NVTX names the report's block lists (the most time first); nvtx.csv holds every range.
constexpr std::size_t kNvtxNamesShown = 12;
// At most this many ranges a capture (nvtx.csv and the trace); the rest are counted, not kept.
constexpr std::size_t kMaxNvtxRanges = 200000;
// How long the HTTP thread waits for the agent's loop to act on a request.
constexpr auto kHttpWait = std::chrono::seconds(4);

std::string utc_stamp(recording::TimeNs ns, bool compact) {
  const std::time_t t = static_cast<std::time_t>(ns / recording::kNsPerSecond);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, compact ? "%Y%m%dT%H%M%SZ" : "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Bytes under a folder (files only); 0 when it cannot be read.
std::uintmax_t folder_bytes(const fs::path& folder) {
  std::uintmax_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (it->is_regular_file(e2)) {
      const auto n = it->file_size(e2);
      if (!e2) total += n;
    }
  }
  return total;
}

// Capture folders under `root`, oldest first (their names start with the UTC start time).
std::vector<fs::path> capture_folders(const fs::path& root) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (it->is_directory(e2) && fs::exists(it->path() / kSummaryFile, e2)) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The word capture.json and report.json use for a chip source ("none" without chip columns).
std::string chip_source_word(const std::optional<collect::ChipSource>& source) {
  return source ? std::string(collect::chip_source_name(*source)) : std::string("none");
}

std::string query_value(const std::string& query, const std::string& key) {
  std::size_t pos = 0;
  while (pos <= query.size()) {
    const std::size_t amp = query.find('&', pos);
    const std::string part = query.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
    const std::size_t eq = part.find('=');
    if (part.substr(0, eq) == key) return eq == std::string::npos ? std::string() : part.substr(eq + 1);
    if (amp == std::string::npos) break;
    pos = amp + 1;
  }
  return {};
}

// A CSV field: quoted when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

// The ranges by name, the most time first: count, total and mean time, how many were still open.
json nvtx_by_name(const std::vector<NvtxRange>& ranges) {
  struct Sum {
    long count = 0;
    long open = 0;
    recording::TimeNs total = 0;
  };
  std::map<std::string, Sum> by;
  for (const NvtxRange& r : ranges) {
    Sum& s = by[r.name];
    ++s.count;
    s.open += r.open ? 1 : 0;
    s.total += std::max<recording::TimeNs>(r.end_ns - r.start_ns, 0);
  }
  std::vector<std::pair<std::string, Sum>> rows(by.begin(), by.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& x, const auto& y) { return x.second.total > y.second.total; });
  if (rows.size() > kNvtxNamesShown) rows.resize(kNvtxNamesShown);
  json out = json::array();
  for (const auto& [name, sum] : rows)
    out.push_back({{"name", name},
                   {"count", sum.count},
                   {"open", sum.open},
                   {"total_s", static_cast<double>(sum.total) / 1e9},
                   {"mean_ms", static_cast<double>(sum.total) / 1e6 / static_cast<double>(sum.count)}});
  return out;
}

std::string nvtx_csv(const std::vector<NvtxRange>& ranges) {
  std::string out = "pid,tid,depth,name,start_ns,end_ns,duration_ms,open\n";
  for (const NvtxRange& r : ranges)
    out += fmt::format("{},{},{},{},{},{},{:.6f},{}\n", r.pid, r.tid, r.depth, csv_field(r.name), r.start_ns,
                       r.end_ns, static_cast<double>(r.end_ns - r.start_ns) / 1e6, r.open ? 1 : 0);
  return out;
}

// Adds the ranges to a trace.json the trace renderer wrote: one process "NVTX", a track per thread of
// the job, a slice per range, at the trace's own origin (docs/agent.md#nvtx-in-captures).
void add_nvtx_to_trace(const fs::path& trace, const std::vector<NvtxRange>& ranges) {
  if (ranges.empty()) return;
  std::ifstream in(trace, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t tail = text.rfind("\n]}");
  const std::string key = "\"time_origin_ns\":";
  const std::size_t at = text.find(key);
  if (tail == std::string::npos || at == std::string::npos)
    throw core::Error("the trace " + trace.string() + " does not end as the trace renderer writes it", "",
                      core::kExitInput);
  const recording::TimeNs origin = std::stoll(text.substr(at + key.size(), 24));
  constexpr int kNvtxPid = 3;
  std::string events = fmt::format(R"(,
{{"ph":"M","pid":{},"name":"process_name","args":{{"name":"NVTX ranges of the job"}}}})",
                                   kNvtxPid);
  std::set<std::pair<std::int64_t, std::uint32_t>> threads;
  for (const NvtxRange& r : ranges)
    if (threads.insert({r.pid, r.tid}).second)
      events += fmt::format(R"(,
{{"ph":"M","pid":{},"tid":{},"name":"thread_name","args":{{"name":"pid {} thread {}"}}}})",
                            kNvtxPid, r.tid, r.pid, r.tid);
  for (const NvtxRange& r : ranges) {
    const recording::TimeNs start = std::max(r.start_ns, origin);
    const recording::TimeNs end = std::max(r.end_ns, start);
    json args{{"pid", r.pid}, {"depth", r.depth}};
    if (r.start_ns < origin) args["start_ns"] = r.start_ns;  // began before the capture: drawn from its start
    if (r.open) args["open"] = true;
    events += ",\n" + json{{"ph", "X"},
                           {"pid", kNvtxPid},
                           {"tid", r.tid},
                           {"name", r.name},
                           {"ts", static_cast<double>(start - origin) / 1e3},
                           {"dur", static_cast<double>(end - start) / 1e3},
                           {"args", args}}
                          .dump();
  }
  text.insert(tail, events);
  core::write_file_atomically(trace, text);
}

}  // namespace

struct CaptureManager::Active {
  std::size_t gpu = 0;
  int gpu_index = -1;
  std::size_t rule = 0;
  std::string trigger;
  fs::path folder;
  recording::TimeNs start_ns = 0;
  recording::TimeNs end_ns = 0;  // when its length is reached
  recording::TimeNs closed_ns = 0;
  std::optional<CaptureJob> job;
  std::optional<recording::TimeNs> job_left_ns;
  std::optional<collect::ChipSource> chip_source;  // from the recording's columns; nullopt: none
  std::optional<CaptureOutcome> outcome;           // nullopt while it runs
  std::vector<std::string> notes;

  // The chip interval (docs/agent.md#what-a-capture-holds): the capture's, and the session's it returns to.
  double interval_ms = 0;
  double session_interval_ms = 0;
  bool interval_changed = false;
  // Until the counters' confirmed start after the capture began (or the change of interval), chip
  // samples are not yet usable; then the first sample after that start spans the setup.
  bool awaiting_on = false;
  std::optional<recording::TimeNs> on_ns;      // that confirmed start
  std::optional<recording::TimeNs> usable_ns;  // from here on samples are at the capture's interval
  recording::TimeNs last_chip_end_ns = 0;      // before the restart: where the old sampler's samples stop
  long chip_received = 0;                      // chip samples that start at or after usable_ns

  // NVTX (docs/agent.md#nvtx-in-captures): the rings of the job's processes, read at every step.
  std::map<std::int64_t, RingReader> rings;
  std::set<std::int64_t> not_ours;  // rings of processes outside the job's tree
  std::vector<NvtxRange> ranges;
  std::uint64_t ranges_left_out = 0;  // past kMaxNvtxRanges
  std::vector<std::string> ring_errors;

  std::mutex mutex;  // the writer is shared with the host probes' thread
  std::unique_ptr<recording::RecordingWriter> writer;
  std::array<recording::TimeNs, recording::kKindCount> last_ts{};
  std::array<bool, recording::kKindCount> have_ts{};
  bool chip_stopped = false;  // the chip columns changed: no more chip samples
  bool write_failed = false;
  long dropped = 0;  // records out of time order (or refused by the writer), left out
  std::string last_refusal;

  std::thread host;
  std::atomic<bool> stop_host{false};

  // Writes one record under the mutex's protection, keeping each kind's time order.
  template <typename R>
  void put(const R& record) {
    if (write_failed || !writer) return;
    using View = std::remove_cvref_t<decltype(recording::view_of(record))>;
    constexpr std::size_t k = recording::kind_index<View>;
    const recording::TimeNs ts = recording::order_time(record);
    if (have_ts[k] && ts < last_ts[k]) {
      ++dropped;
      return;
    }
    try {
      writer->write(record);
      last_ts[k] = ts;
      have_ts[k] = true;
    } catch (const std::exception& e) {
      ++dropped;
      last_refusal = e.what();
    }
  }
};

CaptureManager::CaptureManager(CaptureRules rules, Agent& agent, CaptureHooks hooks)
    : rules_(std::move(rules)),
      agent_(agent),
      hooks_(std::move(hooks)),
      evaluator_(rules_.rules, agent.status().size()),
      seen_window_(agent.status().size(), 0),
      last_start_(agent.status().size(), std::numeric_limits<recording::TimeNs>::min()),
      active_(agent.status().size()) {
  wake_ = core::make_pipe("capture requests");
  core::set_nonblocking(wake_.read.get());
  core::set_nonblocking(wake_.write.get());
  for (std::size_t i = 0; i < agent.status().size(); ++i)
    if (agent.status()[i].last_window) seen_window_[i] = agent.status()[i].last_window->seq;
  std::error_code ec;
  fs::create_directories(rules_.settings.folder, ec);
  if (ec)
    throw core::UsageError(
        fmt::format("cannot create the capture folder {}: {}", rules_.settings.folder.string(), ec.message()),
        "name a folder the agent's user can write in \"captures\": {\"folder\": ...} of the rules file");
}

CaptureManager::~CaptureManager() {
  for (auto& a : active_)
    if (a) {
      a->stop_host = true;
      if (a->host.joinable()) a->host.join();
    }
}

void CaptureManager::log(const std::string& line) const {
  if (hooks_.log) hooks_.log("capture: " + line);
}

void CaptureManager::count(std::size_t rule, CaptureOutcome outcome) {
  std::lock_guard lock(counts_mutex_);
  ++counts_[{rule, outcome}];
}

std::vector<CaptureManager::Counted> CaptureManager::counts() const {
  std::lock_guard lock(counts_mutex_);
  std::vector<Counted> out;
  for (std::size_t r = 0; r < rules_.rules.size(); ++r)
    for (CaptureOutcome o : {CaptureOutcome::written, CaptureOutcome::cut_short, CaptureOutcome::disk_full,
                             CaptureOutcome::rate_limited, CaptureOutcome::busy, CaptureOutcome::failed}) {
      const auto it = counts_.find({r, o});
      out.push_back({rules_.rules[r].name, o, it == counts_.end() ? 0 : it->second});
    }
  return out;
}

std::vector<fs::path> CaptureManager::finished() const {
  return finished_;
}

bool CaptureManager::capturing(std::size_t gpu) const {
  return active_.at(gpu) != nullptr;
}

std::string CaptureManager::metrics(ExpositionFormat format) const {
  // Prometheus text names a counter's family with _total, OpenMetrics without (as metrics.cpp does).
  const std::string family =
      format == ExpositionFormat::openmetrics ? "diescope_captures" : "diescope_captures_total";
  std::string out = fmt::format(
      "# HELP {0} Triggered captures by rule and outcome (docs/agent.md#triggered-captures).\n"
      "# TYPE {0} counter\n",
      family);
  for (const Counted& c : counts())
    out += fmt::format("diescope_captures_total{{rule=\"{}\",outcome=\"{}\"}} {}\n",
                       escape_label_value(c.rule), to_string(c.outcome), c.count);
  return out;
}

void CaptureManager::signal() {
  std::lock_guard lock(pending_mutex_);
  signalled_ = true;
}

HttpReply CaptureManager::http(const CaptureHttpRequest& request) {
  if (!request.peer_loopback && !rules_.settings.allow_remote)
    return {
        403, "text/plain; charset=utf-8",
        "POST /capture is served to this host only (loopback); set \"allow_remote\": true in the rules file "
        "to take it from other hosts\n"};
  const std::string auth = request.authorization;
  const std::string given = auth.rfind("Bearer ", 0) == 0 ? auth.substr(7) : std::string();
  if (!token_matches(given, rules_.token))
    return {401, "text/plain; charset=utf-8",
            "a capture needs the token from the rules file's token_file: Authorization: Bearer TOKEN\n"};
  const std::string rule_name = query_value(request.query, "rule");
  std::optional<std::size_t> rule;
  for (std::size_t r = 0; r < rules_.rules.size(); ++r)
    if (rules_.rules[r].condition == CaptureCondition::http &&
        (rule_name.empty() || rules_.rules[r].name == rule_name)) {
      rule = r;
      break;
    }
  if (!rule)
    return {404, "text/plain; charset=utf-8",
            fmt::format("no http rule named \"{}\" in the rules file\n", rule_name)};
  int gpu = -1;
  const std::string gpu_text = query_value(request.query, "gpu");
  if (!gpu_text.empty()) {
    char* end = nullptr;
    const long v = std::strtol(gpu_text.c_str(), &end, 10);
    if (end == gpu_text.c_str() || *end != '\0' || v < 0)
      return {400, "text/plain; charset=utf-8", "gpu= takes a GPU index, e.g. /capture?gpu=0\n"};
    gpu = static_cast<int>(v);
  }
  Pending p;
  p.rule = *rule;
  p.gpu_index = gpu;
  p.trigger = "POST /capture";
  p.reply = std::make_shared<std::promise<HttpReply>>();
  std::future<HttpReply> reply = p.reply->get_future();
  {
    std::lock_guard lock(pending_mutex_);
    pending_.push_back(std::move(p));
  }
  const char byte = 'c';
  (void)!::write(wake_.write.get(), &byte, 1);
  if (reply.wait_for(kHttpWait) != std::future_status::ready)
    return {202, "text/plain; charset=utf-8",
            "capture requested; the agent has not acted on it yet (see diescope_captures_total)\n"};
  return reply.get();
}

void CaptureManager::enforce_quota(const fs::path& keep) {
  const double quota = rules_.settings.quota_mb * 1e6;
  std::vector<fs::path> folders = capture_folders(rules_.settings.folder);
  std::uintmax_t total = 0;
  std::vector<std::pair<fs::path, std::uintmax_t>> sized;
  for (const fs::path& f : folders) {
    const std::uintmax_t b = folder_bytes(f);
    total += b;
    sized.emplace_back(f, b);
  }
  // The oldest first; a running capture is never deleted (docs/agent.md#rate-and-space).
  for (const auto& [f, b] : sized) {
    if (static_cast<double>(total) <= quota) break;
    bool running = f == keep;
    for (const auto& a : active_)
      if (a && a->folder == f) running = true;
    if (running) continue;
    std::error_code ec;
    fs::remove_all(f, ec);
    if (ec) {
      log(fmt::format("quota: cannot delete {}: {}", f.string(), ec.message()));
      continue;
    }
    total -= b;
    log(fmt::format("quota: deleted the oldest capture {} ({:.1f} MB) to stay under {:g} MB", f.string(),
                    static_cast<double>(b) / 1e6, rules_.settings.quota_mb));
    finished_.erase(std::remove(finished_.begin(), finished_.end(), f), finished_.end());
  }
}

void CaptureManager::write_summary(const Active& a, const std::string& state) const {
  const CaptureRule& rule = rules_.rules[a.rule];
  json j;
  j["schema"] = 1;
  j["state"] = state;
  j["rule"] = rule.name;
  j["condition"] = std::string(to_string(rule.condition));
  j["trigger"] = a.trigger;
  j["gpu"] = a.gpu_index;
  j["start_ns"] = a.start_ns;
  j["start_utc"] = utc_stamp(a.start_ns, false);
  j["length_s"] = rule.capture_s;
  j["end_ns"] = a.closed_ns ? json(a.closed_ns) : json(nullptr);
  j["chip_source"] = chip_source_word(a.chip_source);
  if (a.job) {
    json labels = json::object();
    for (const auto& [k, v] : a.job->labels) labels[k] = v;
    j["job"] = {
        {"key", a.job->key}, {"name", a.job->name}, {"labels", labels}, {"root_pid", a.job->root_pid}};
  } else {
    j["job"] = nullptr;
  }
  j["job_left_ns"] = a.job_left_ns ? json(*a.job_left_ns) : json(nullptr);
  j["interval_ms"] = a.interval_ms;
  j["session_interval_ms"] = a.session_interval_ms;
  // Samples expected at the capture's interval from the first usable one to the end, and received.
  if (a.usable_ns && a.closed_ns > *a.usable_ns) {
    const double expected = static_cast<double>(a.closed_ns - *a.usable_ns) / (a.interval_ms * 1e6);
    j["chip_samples"] = {{"expected", std::floor(expected)},
                         {"received", a.chip_received},
                         {"from_s", static_cast<double>(*a.usable_ns - a.start_ns) / 1e9}};
  } else {
    j["chip_samples"] = nullptr;
  }
  j["host_interval_ms"] = hooks_.host_probes ? json(rules_.settings.host_interval_ms) : json(nullptr);
  j["nvtx"] = nvtx_text(a);
  if (!a.rings.empty()) j["nvtx_file"] = kNvtxFile;
  j["notes"] = a.notes;
  j["files"] = {{"recording", kRecordingFile},
                {"report", "report.html"},
                {"report_json", "report.json"},
                {"trace", "trace.json"}};
  try {
    core::write_file_atomically(a.folder / kSummaryFile, j.dump(2) + "\n");
  } catch (const std::exception& e) {
    log(fmt::format("{}: capture.json not written: {}", a.folder.string(), e.what()));
  }
}

std::optional<std::string> CaptureManager::start(std::size_t rule_i, std::size_t gpu,
                                                 const std::string& trigger, CaptureOutcome& outcome) {
  const CaptureRule& rule = rules_.rules[rule_i];
  const recording::TimeNs now = agent_.now_ns();
  const int gpu_index = agent_.status().at(gpu).index;
  if (active_[gpu]) {
    outcome = CaptureOutcome::busy;
    count(rule_i, outcome);
    log(fmt::format("rule {} fired on GPU {} ({}) while a capture runs there; not started", rule.name,
                    gpu_index, trigger));
    return std::nullopt;
  }
  const double since_s = static_cast<double>(now - last_start_[gpu]) / 1e9;
  if (last_start_[gpu] != std::numeric_limits<recording::TimeNs>::min() &&
      since_s < rules_.settings.min_interval_s) {
    outcome = CaptureOutcome::rate_limited;
    count(rule_i, outcome);
    log(fmt::format(
        "rule {} fired on GPU {} ({}) {:.0f} s after the last capture there; the limit is one per {:g} s",
        rule.name, gpu_index, trigger, since_s, rules_.settings.min_interval_s));
    return std::nullopt;
  }
  auto a = std::make_unique<Active>();
  a->gpu = gpu;
  a->gpu_index = gpu_index;
  a->rule = rule_i;
  a->trigger = trigger;
  a->start_ns = now;
  a->end_ns = now + static_cast<recording::TimeNs>(std::llround(rule.capture_s * 1e9));
  a->folder = rules_.settings.folder / fmt::format("{}-gpu{}-{}", utc_stamp(now, true), gpu_index, rule.name);
  enforce_quota({});
  std::error_code ec;
  fs::create_directories(a->folder, ec);
  recording::RecordingMeta meta = agent_.source().meta(gpu);
  meta.start_ns = now;
  meta.run_type = "sustained";
  meta.duty_on_ms = 0;
  meta.duty_period_ms = 0;
  meta.host_interval_ms =
      hooks_.host_probes ? rules_.settings.host_interval_ms : recording::RecordingMeta{}.host_interval_ms;
  if (!meta.units.empty())
    a->chip_source = meta.units.front().source == recording::UnitSource::gpm ? collect::ChipSource::gpm
                                                                             : collect::ChipSource::pm;
  if (a->chip_source == collect::ChipSource::gpm)
    a->notes.emplace_back(
        "chip source: NVML GPM, because another profiler held the counters; the capture never takes them "
        "from "
        "a profiler (docs/agent.md#beside-other-profilers)");
  if (hooks_.job) a->job = hooks_.job(gpu_index);
  meta.command.clear();
  if (a->job) meta.command = {a->job->name};
  // The capture's interval: the sampler restarts at it (docs/agent.md#what-a-capture-holds).
  a->session_interval_ms = meta.interval_ms;
  a->interval_ms = meta.interval_ms;
  const bool counters_were_on = agent_.source().counters_on(gpu);
  const double wanted_ms =
      rule.interval_ms > 0 ? rule.interval_ms : default_capture_interval_ms(meta.gpu.model, meta.interval_ms);
  if (wanted_ms != meta.interval_ms) {
    // A source that cannot change its interval is noted only when the rule asked for one: the default
    // is the shortest that holds where the source can sample at all.
    if (a->chip_source == collect::ChipSource::gpm) {
      if (rule.interval_ms > 0)
        a->notes.push_back(
            fmt::format("NVML GPM keeps its own interval ({:g} ms); the capture's {:g} ms is for "
                        "PM sampling",
                        meta.interval_ms, wanted_ms));
    } else if (agent_.sample_interval(gpu, wanted_ms)) {
      a->interval_ms = wanted_ms;
      a->interval_changed = true;
    } else if (rule.interval_ms > 0) {
      a->notes.push_back(
          fmt::format("the {} source keeps its interval ({:g} ms): the capture's {:g} ms needs "
                      "a live session",
                      agent_.source().kind(), meta.interval_ms, wanted_ms));
    }
  }
  meta.interval_ms = a->interval_ms;
  a->awaiting_on = a->interval_changed || !counters_were_on;
  if (!a->awaiting_on) a->usable_ns = now;
  try {
    if (ec)
      throw core::Error("cannot create " + a->folder.string() + ": " + ec.message(), "", core::kExitInput);
    a->writer = std::make_unique<recording::RecordingWriter>(a->folder / kRecordingFile, meta);
    a->put(recording::Note{
        now, "capture",
        fmt::format("rule {} fired: {}; capturing {:g} s", rule.name, trigger, rule.capture_s)});
    if (a->job && a->job->root_pid > 0)
      a->put(recording::Note{now, "capture",
                             fmt::format("host probes follow process {} and its children ({})",
                                         a->job->root_pid, a->job->name)});
  } catch (const std::exception& e) {
    if (a->interval_changed) agent_.sample_interval(gpu, a->session_interval_ms);
    outcome = CaptureOutcome::failed;
    count(rule_i, outcome);
    log(fmt::format("rule {} fired on GPU {} but its capture could not start: {}", rule.name, gpu_index,
                    e.what()));
    return std::nullopt;
  }
  last_start_[gpu] = now;
  agent_.hold_counters(gpu, a->end_ns);
  if (hooks_.link) hooks_.link(gpu_index, now, a->folder.string());
  write_summary(*a, "running");
  // The host probes at their own cadence (10 ms by default), on their own thread so the agent's loop
  // keeps its polls (docs/agent.md#what-a-capture-holds).
  Active* raw = a.get();
  const std::int64_t root = a->job ? a->job->root_pid : 0;
  const auto step = std::chrono::nanoseconds(std::llround(rules_.settings.host_interval_ms * 1e6));
  const fs::path proc = hooks_.proc;
  if (hooks_.host_probes)
    raw->host = std::thread([raw, root, step, proc] {
      collect::HostProbeOptions options;
      options.proc = proc;
      collect::HostProbes probes(options);
      auto next = std::chrono::steady_clock::now();
      while (!raw->stop_host.load()) {
        const collect::HostBatch b = probes.read(core::realtime_ns(), core::monotonic_ns(), root);
        {
          std::lock_guard lock(raw->mutex);
          for (const auto& s : b.streams) raw->put(s);
          for (const auto& t : b.tasks) raw->put(t);
          for (const auto& n : b.notes) raw->put(n);
          if (!b.sample.values.empty()) raw->put(b.sample);
        }
        next += step;
        const auto now_tp = std::chrono::steady_clock::now();
        if (next < now_tp) next = now_tp;  // behind: skip, never burst
        std::this_thread::sleep_until(next);
      }
    });
  log(fmt::format("rule {} fired on GPU {} ({}): capturing {:g} s into {}", rule.name, gpu_index, trigger,
                  rule.capture_s, a->folder.string()));
  const std::string folder = a->folder.string();
  active_[gpu] = std::move(a);
  outcome = CaptureOutcome::written;  // so far: the final outcome is counted when it closes
  return folder;
}

void CaptureManager::on_batch(std::size_t gpu, const collect::GpuBatch& batch) {
  if (gpu >= active_.size() || !active_[gpu]) return;
  Active& a = *active_[gpu];
  std::lock_guard lock(a.mutex);
  const recording::TimeNs lo = a.start_ns;
  for (const auto& e : batch.counters)
    if (e.on && a.awaiting_on && !a.on_ns && e.ts_ns >= lo) a.on_ns = e.ts_ns;
  recording::for_each_kind<recording::StreamKinds>([&]<typename Record>(std::type_identity<Record>) {
    if constexpr (std::is_same_v<Record, recording::HostSample>) {
      return;  // the capture's own probes write the host
    } else {
      for (const auto& r : batch.list<Record>()) {
        if constexpr (std::is_same_v<Record, recording::ChipSample>) {
          if (a.chip_stopped || r.end_ns <= lo) continue;
          if (batch.columns_changed_at && r.end_ns > *batch.columns_changed_at) continue;
          if (a.on_ns && !a.usable_ns && r.start_ns >= *a.on_ns) a.usable_ns = r.end_ns;  // the setup sample
          if (!a.on_ns) a.last_chip_end_ns = std::max(a.last_chip_end_ns, r.end_ns);
          if (a.usable_ns && r.start_ns >= *a.usable_ns) ++a.chip_received;
        } else {
          if (r.ts_ns < lo) continue;
        }
        a.put(r);
      }
    }
  });
  for (const auto& e : batch.counters)
    if (e.ts_ns >= lo) a.put(e);
  for (recording::Note n : batch.notes) {
    if (n.ts_ns < lo) continue;
    // A recording's note topic is one word (docs/recording-format.md); a feed's may not be.
    std::replace(n.topic.begin(), n.topic.end(), ' ', '_');
    a.put(n);
  }
  if (batch.columns_changed_at && !a.chip_stopped) {
    // The recording's columns are those it started with; the other source's samples cannot join it.
    a.chip_stopped = true;
    const std::string text = fmt::format(
        "the chip source changed {:.1f} s into the capture ({}); chip samples after it are not in this "
        "capture",
        static_cast<double>(*batch.columns_changed_at - lo) / 1e9, batch.columns_change_why);
    a.notes.push_back(text);
    a.put(recording::Note{std::max(lo, *batch.columns_changed_at), "capture", text});
  }
}

// docs/agent.md#nvtx-in-captures: the rings of the job's processes (the root the host probes follow and
// its descendants), found under the ring folder and read since the previous step.
void CaptureManager::read_nvtx(Active& a) {
  if (hooks_.nvtx_dir.empty() || !a.job || a.job->root_pid <= 0) return;
  std::error_code ec;
  for (fs::directory_iterator it(hooks_.nvtx_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() < 6 || name.compare(name.size() - 5, 5, ".ring") != 0) continue;
    std::int64_t pid = 0;
    try {
      std::size_t used = 0;
      pid = std::stoll(name.substr(0, name.size() - 5), &used);
      if (used != name.size() - 5) continue;
    } catch (const std::exception&) {
      continue;
    }
    if (a.rings.count(pid) || a.not_ours.count(pid)) continue;
    if (!in_process_tree(hooks_.proc, pid, a.job->root_pid)) {
      a.not_ours.insert(pid);
      continue;
    }
    std::string why;
    if (auto r = RingReader::open(it->path(), why)) {
      a.rings.emplace(pid, std::move(*r));
    } else {
      a.not_ours.insert(pid);
      a.ring_errors.push_back(why);
    }
  }
  for (auto& [pid, ring] : a.rings) ring.read(a.start_ns, a.ranges);
  if (a.ranges.size() > kMaxNvtxRanges) {
    a.ranges_left_out += a.ranges.size() - kMaxNvtxRanges;
    a.ranges.resize(kMaxNvtxRanges);
  }
}

std::string CaptureManager::nvtx_text(const Active& a) const {
  if (hooks_.nvtx_dir.empty()) return "not recorded: no NVTX ring folder is set";
  if (!hooks_.job) return "not recorded: attribution is off, so there is no job whose NVTX rings to read";
  if (!a.job) return "not recorded: no job held the GPU when the capture started";
  if (a.job->root_pid <= 0) return "not recorded: the job has no process on this host to follow";
  if (a.rings.empty())
    return fmt::format(
        "not recorded: no process of the job (pid {} and its children) wrote an NVTX ring under {}; start "
        "the job "
        "with NVTX_INJECTION64_PATH naming libdiescope-nvtx.so (docs/agent.md#nvtx-in-captures)",
        a.job->root_pid, hooks_.nvtx_dir.string());
  std::uint64_t lost = 0;
  std::uint64_t unmatched = 0;
  for (const auto& [pid, ring] : a.rings) {
    lost += ring.lost();
    unmatched += ring.unmatched();
  }
  std::string text = fmt::format("{} range(s) from {} process(es) of the job, in {}", a.ranges.size(),
                                 a.rings.size(), kNvtxFile);
  if (lost > 0) text += fmt::format("; {} event(s) were overwritten in the ring before they were read", lost);
  if (unmatched > 0) text += fmt::format("; {} pop(s) or end(s) matched no push or start", unmatched);
  if (a.ranges_left_out > 0)
    text += fmt::format("; {} more range(s) left out (at most {} kept)", a.ranges_left_out, kMaxNvtxRanges);
  return text;
}

void CaptureManager::finish(Active& a, const std::string& why, CaptureOutcome outcome) {
  a.stop_host = true;
  if (a.host.joinable()) a.host.join();
  const recording::TimeNs now = std::max(agent_.now_ns(), a.start_ns);
  a.closed_ns = now;
  // Back to the session's interval (the hold is released first, so a sampler no longer wanted is not
  // restarted for it).
  if (a.interval_changed) agent_.sample_interval(a.gpu, a.session_interval_ms);
  read_nvtx(a);
  for (const auto& [pid, ring] : a.rings) ring.close_open(now, a.start_ns, a.ranges);
  std::sort(a.ranges.begin(), a.ranges.end(), [](const NvtxRange& x, const NvtxRange& y) {
    return std::tie(x.start_ns, x.pid, x.tid, x.depth) < std::tie(y.start_ns, y.pid, y.tid, y.depth);
  });
  if (a.interval_changed || a.awaiting_on) {
    if (a.usable_ns) {
      const recording::TimeNs from = std::max(a.start_ns, a.last_chip_end_ns);
      a.notes.push_back(fmt::format(
          "the sampler {} at {:g} ms: no usable chip samples from {:+.2f} s to {:+.2f} s of the capture (its "
          "start-up; the first sample after the counters' start spans it and is dropped)",
          a.interval_changed ? "restarted" : "started", a.interval_ms,
          static_cast<double>(from - a.start_ns) / 1e9,
          static_cast<double>(*a.usable_ns - a.start_ns) / 1e9));
    } else {
      a.notes.emplace_back("the sampler did not deliver chip samples during the capture");
    }
  }
  {
    std::lock_guard lock(a.mutex);
    if (!a.ranges.empty() || !a.rings.empty())
      a.put(recording::Note{now, "nvtx",
                            fmt::format("{} NVTX range(s) of {} process(es) of the job in {}",
                                        a.ranges.size(), a.rings.size(), kNvtxFile)});
    if (a.dropped > 0)
      a.notes.push_back(fmt::format("{} record(s) out of time order or refused by the writer were left out{}",
                                    a.dropped,
                                    a.last_refusal.empty() ? "" : " (the last: " + a.last_refusal + ")"));
    a.put(recording::RunEnd{now, 0, recording::RunEnding{recording::RunEnding::Way::other, 0, why}});
    try {
      if (a.writer) a.writer->close();
    } catch (const std::exception& e) {
      outcome = CaptureOutcome::disk_full;
      a.notes.push_back(std::string("closing the recording failed: ") + e.what());
    }
  }
  if (!a.rings.empty()) {
    try {
      core::write_file_atomically(a.folder / kNvtxFile, nvtx_csv(a.ranges));
    } catch (const std::exception& e) {
      a.notes.push_back(std::string(kNvtxFile) + " not written: " + e.what());
    }
  }
  if (!a.notes.empty() || outcome != CaptureOutcome::written)
    log(fmt::format("{}: {}", a.folder.string(), why));
  a.outcome = outcome;
  // The report, with the capture's own block first (docs/agent.md#what-a-capture-holds). A recording cut by a
  // full disk still reads (the writer flushed whole lines), so it gets its report when there is room.
  try {
    report::RecordingReport r =
        report::analyse_recording(a.folder / kRecordingFile, analysis::WindowMode::none, hooks_.calibration);
    const CaptureRule& rule = rules_.rules[a.rule];
    json block;
    block["rule"] = rule.name;
    block["condition"] = std::string(to_string(rule.condition));
    block["trigger"] = a.trigger;
    block["outcome"] = std::string(to_string(outcome));
    block["ended"] = why;
    block["start_utc"] = utc_stamp(a.start_ns, false);
    block["length_s"] = rule.capture_s;
    block["captured_s"] = static_cast<double>(now - a.start_ns) / 1e9;
    block["chip_source"] = chip_source_word(a.chip_source);
    if (a.job) {
      json labels = json::object();
      for (const auto& [k, v] : a.job->labels) labels[k] = v;
      block["job"] = {{"name", a.job->name}, {"key", a.job->key}, {"labels", labels}};
    } else {
      block["job"] = nullptr;
      block["job_reason"] =
          hooks_.job ? "no job held the GPU when the capture started" : "attribution is off: no job is named";
    }
    if (a.job_left_ns) {
      block["job_left_s"] = static_cast<double>(*a.job_left_ns - a.start_ns) / 1e9;
    } else {
      block["job_left_s"] = nullptr;
      block["job_left_s_reason"] = a.job ? "the job held the GPU to the capture's end" : "no job to leave";
    }
    block["nvtx"] = nvtx_text(a);
    block["nvtx_ranges"] = nvtx_by_name(a.ranges);
    block["interval_ms"] = a.interval_ms;
    block["notes"] = a.notes;
    r.report["capture"] = block;
    report::MultiRenderer renderers;
    renderers.add(std::make_unique<report::JsonRenderer>(a.folder / "report.json"));
    renderers.add(std::make_unique<report::HtmlRenderer>(a.folder / "report.html"));
    renderers.add(std::make_unique<report::TraceRenderer>(a.folder / "trace.json"));
    renderers.render(report::ReportInput{r.report, r.source.get(), &r.analysis});
    add_nvtx_to_trace(a.folder / "trace.json", a.ranges);
  } catch (const std::exception& e) {
    if (outcome == CaptureOutcome::written) outcome = CaptureOutcome::failed;
    a.outcome = outcome;
    a.notes.push_back(std::string("the report could not be written: ") + e.what());
    log(fmt::format("{}: the report could not be written: {}", a.folder.string(), e.what()));
  }
  write_summary(a, std::string(to_string(outcome)));
  count(a.rule, outcome);
  finished_.push_back(a.folder);
}

void CaptureManager::after_step() {
  {
    char buf[64];
    while (::read(wake_.read.get(), buf, sizeof buf) > 0) {}
  }
  // Running captures first (the job, the disk, the length), so one that has ended does not refuse a
  // rule that fires in the same step.
  const recording::TimeNs now = agent_.now_ns();
  for (std::size_t g = 0; g < active_.size(); ++g) {
    if (!active_[g]) continue;
    Active& a = *active_[g];
    if (a.job && !a.job_left_ns && hooks_.job) {
      const std::optional<CaptureJob> j = hooks_.job(a.gpu_index);
      if (!j || j->key != a.job->key) {
        a.job_left_ns = now;
        const std::string text = fmt::format(
            "the job ({}) left GPU {} {:.1f} s into the capture; the capture goes on to its length",
            a.job->name, a.gpu_index, static_cast<double>(now - a.start_ns) / 1e9);
        a.notes.push_back(text);
        std::lock_guard lock(a.mutex);
        a.put(recording::Note{now, "capture", text});
      }
    }
    read_nvtx(a);
    bool disk_full = false;
    std::string disk_why;
    {
      std::lock_guard lock(a.mutex);
      try {
        if (hooks_.before_flush) hooks_.before_flush(a.folder / kRecordingFile);
        if (a.writer && !a.write_failed) a.writer->flush();
      } catch (const std::exception& e) {
        a.write_failed = true;
        disk_full = true;
        disk_why = e.what();
      }
    }
    if (!disk_full) {
      enforce_quota(a.folder);
      const double quota = rules_.settings.quota_mb * 1e6;
      if (static_cast<double>(folder_bytes(rules_.settings.folder)) > quota) {
        disk_full = true;
        disk_why = fmt::format(
            "the capture folders reached the quota of {:g} MB with no older capture left to delete",
            rules_.settings.quota_mb);
        std::lock_guard lock(a.mutex);
        a.put(recording::Note{now, "capture", disk_why + "; the capture stops here"});
        try {
          if (a.writer) a.writer->flush();
        } catch (const std::exception&) {}
        a.write_failed = true;
      }
    }
    if (disk_full) {
      a.notes.push_back("the disk filled mid-capture (" + disk_why +
                        "); the capture stopped there and the agent's records and /metrics went on");
      agent_.hold_counters(g, 0);
      finish(a, "disk full: " + disk_why, CaptureOutcome::disk_full);
      active_[g].reset();
      continue;
    }
    if (now >= a.end_ns) {
      agent_.hold_counters(g, 0);
      finish(a, fmt::format("the capture's length ({:g} s) was reached", rules_.rules[a.rule].capture_s),
             CaptureOutcome::written);
      active_[g].reset();
    }
  }

  std::deque<Pending> pending;
  bool signalled = false;
  {
    std::lock_guard lock(pending_mutex_);
    pending.swap(pending_);
    signalled = signalled_;
    signalled_ = false;
  }
  const auto& status = agent_.status();
  auto watches = [&](const CaptureRule& rule, std::size_t gpu) {
    return rule.gpus.empty() ||
           std::find(rule.gpus.begin(), rule.gpus.end(), status[gpu].index) != rule.gpus.end();
  };
  if (signalled)
    for (std::size_t r = 0; r < rules_.rules.size(); ++r)
      if (rules_.rules[r].condition == CaptureCondition::signal)
        for (std::size_t g = 0; g < status.size(); ++g)
          if (watches(rules_.rules[r], g)) {
            CaptureOutcome o{};
            start(r, g, "SIGUSR1", o);
          }
  for (Pending& p : pending) {
    std::vector<std::string> folders;
    std::vector<std::string> refused;
    bool any = false;
    for (std::size_t g = 0; g < status.size(); ++g) {
      if (p.gpu_index >= 0 ? status[g].index != p.gpu_index : !watches(rules_.rules[p.rule], g)) continue;
      any = true;
      CaptureOutcome o{};
      if (auto f = start(p.rule, g, p.trigger, o))
        folders.push_back(*f);
      else
        refused.push_back(fmt::format("GPU {}: {}", status[g].index, to_string(o)));
    }
    HttpReply reply;
    reply.content_type = "text/plain; charset=utf-8";
    if (!any) {
      reply.status = 404;
      reply.body = fmt::format("this agent does not monitor GPU {}\n", p.gpu_index);
    } else if (folders.empty()) {
      reply.status = 429;
      for (const auto& s : refused) reply.body += "not started: " + s + "\n";
    } else {
      reply.status = 200;
      for (const auto& f : folders) reply.body += "capturing into " + f + "\n";
      for (const auto& s : refused) reply.body += "not started: " + s + "\n";
    }
    if (p.reply) p.reply->set_value(reply);
  }
  // New windows against the window rules.
  for (std::size_t g = 0; g < status.size(); ++g) {
    const auto& w = status[g].last_window;
    if (!w || w->seq <= seen_window_[g]) continue;
    seen_window_[g] = w->seq;
    for (std::size_t r : evaluator_.observe(g, status[g].index, *w)) {
      const CaptureRule& rule = rules_.rules[r];
      const double value = rule.condition == CaptureCondition::die_under_gpu_over ? w->die_util_pct
                           : rule.of == GapMeasure::gap                           ? w->gap_pct
                           : rule.of == GapMeasure::stranded                      ? w->stranded_pct
                                                                                  : w->stranded_idle_pct;
      const std::string trigger =
          rule.condition == CaptureCondition::gap_over
              ? fmt::format(
                    "{} {:.1f} points over {:g} (GPU-Util {:.1f}%, DIE-Util {:.1f}%) for at least {:g} s",
                    to_string(rule.of), value, rule.points, w->gpu_util_pct, w->die_util_pct, rule.for_s)
              : fmt::format(
                    "DIE-Util {:.1f}% under {:g}% while GPU-Util {:.1f}% over {:g}% for at least {:g} s",
                    w->die_util_pct, rule.die_util_under, w->gpu_util_pct, rule.gpu_util_over, rule.for_s);
      CaptureOutcome o{};
      start(r, g, trigger, o);
    }
  }
}

void CaptureManager::stop(const std::string& why) {
  for (auto& slot : active_) {
    if (!slot) continue;
    Active& a = *slot;
    a.notes.push_back(
        fmt::format("the agent stopped ({}) {:.1f} s into the capture; the capture was closed there", why,
                    static_cast<double>(agent_.now_ns() - a.start_ns) / 1e9));
    finish(a, "the agent stopped (" + why + ")", CaptureOutcome::cut_short);
    slot.reset();
  }
}

}  // namespace diescope::agent
