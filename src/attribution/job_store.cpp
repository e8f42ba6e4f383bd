// docs/attribution.md#the-jobs-table, #diescope-jobs and #prometheus-labels.
#include "diescope/attribution/job_store.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <set>
#include <sqlite3.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "diescope/agent/metrics.hpp"
#include "diescope/core/error.hpp"

namespace diescope::attribution {
namespace {

using nlohmann::json;

json number(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}
double number_from(const json& j) {
  return j.is_number() ? j.get<double>() : kNaN;
}

constexpr const char* kSchemaSql =
    "CREATE TABLE IF NOT EXISTS jobs ("
    " id INTEGER PRIMARY KEY,"
    " gpu_index INTEGER NOT NULL, gpu_uuid TEXT NOT NULL, gpu_instance_id INTEGER,"
    " holder_kind TEXT NOT NULL, holder_key TEXT NOT NULL,"
    " pod TEXT, namespace TEXT, container TEXT, slurm_job TEXT,"
    " start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL,"
    " gpu_seconds REAL NOT NULL, stranded_gpu_seconds REAL, energy_j REAL,"
    " record_json TEXT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS jobs_end ON jobs(end_ns);";

struct Stmt {
  sqlite3_stmt* s = nullptr;
  Stmt(sqlite3* db, const char* sql) { sqlite3_prepare_v2(db, sql, -1, &s, nullptr); }
  ~Stmt() { sqlite3_finalize(s); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
};

void bind_text(sqlite3_stmt* s, int i, const std::string& v) {
  if (v.empty())
    sqlite3_bind_null(s, i);
  else
    sqlite3_bind_text(s, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}
void bind_real(sqlite3_stmt* s, int i, double v) {
  if (std::isfinite(v))
    sqlite3_bind_double(s, i, v);
  else
    sqlite3_bind_null(s, i);
}

std::string fixed(double v, int digits) {
  return std::isfinite(v) ? fmt::format("{:.{}f}", v, digits) : "n/a";
}

// A CSV field: quoted when it holds a comma, a quote or a line break (quotes doubled).
std::string csv_field(const std::string& v) {
  if (v.find_first_of(",\"\n\r") == std::string::npos) return v;
  std::string out = "\"";
  for (char c : v) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// The terminal shows printable text only: a control character from a label cannot move the cursor.
std::string printable(const std::string& v) {
  std::string out = v;
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return out;
}

}  // namespace

json job_to_json(const JobRecord& j) {
  json labels = json::object();
  for (const Label& l : holder_labels(j.holder)) labels[l.key] = l.value;
  json out{
      {"schema", j.schema},
      {"holder", json{{"kind", std::string(to_string(j.holder.kind))},
                      {"key", j.holder.key},
                      {"name", describe(j.holder)},
                      {"labels", labels},
                      {"pids", j.holder.pids},
                      {"commands", j.holder.commands},
                      {"notes", j.holder.notes}}},
      {"gpu", json{{"index", j.gpu_index},
                   {"uuid", j.gpu_uuid},
                   {"gpu_instance_id", j.gpu_instance_id ? json(*j.gpu_instance_id) : json(nullptr)},
                   {"gpu_instance_profile", j.gpu_instance_profile}}},
      {"start_ns", j.start_ns},
      {"end_ns", j.end_ns},
      {"gpu_seconds", j.gpu_seconds},
      {"shared", j.shared},
      {"mean_share", j.mean_share},
      {"gpu_util_pct", number(j.gpu_util_pct)},
      {"die_util_pct", number(j.die_util_pct)},
      {"gap_pct", number(j.gap_pct)},
      {"limiting_unit", j.limiting_unit.empty() ? json(nullptr) : json(j.limiting_unit)},
      {"stranded_gpu_seconds", number(j.stranded_gpu_seconds)},
      {"energy_j", number(j.energy_j)},
      {"energy_reason", j.energy_reason},
      {"stranded_energy_j", number(j.stranded_energy_j)},
      {"coverage_pct", j.coverage_pct},
      {"chip_source", std::string(to_string(j.chip_source))},
      {"notes", j.notes},
      {"captures", j.captures},
  };
  if (j.id > 0) out["id"] = j.id;
  return out;
}

JobRecord job_from_json(const json& in) {
  JobRecord j;
  j.id = in.value("id", std::int64_t{0});
  j.schema = in.at("schema").get<int>();
  const json& h = in.at("holder");
  j.holder.kind = holder_kind_from_name(h.at("kind").get<std::string>()).value_or(HolderKind::process);
  j.holder.key = h.at("key").get<std::string>();
  const json& labels = h.at("labels");
  auto label = [&labels](const char* k) {
    return labels.contains(k) ? labels.at(k).get<std::string>() : std::string();
  };
  j.holder.pod = label("pod");
  j.holder.pod_namespace = label("namespace");
  j.holder.container = label("container");
  j.holder.pod_uid = label("pod_uid");
  j.holder.slurm_job = label("slurm_job");
  j.holder.slurm_step = label("slurm_step");
  j.holder.slurm_user = label("slurm_user");
  j.holder.container_id = label("container_id");
  const std::string runtime = label("container_runtime");
  for (ContainerRuntime r : {ContainerRuntime::docker, ContainerRuntime::containerd, ContainerRuntime::cri_o,
                             ContainerRuntime::podman})
    if (runtime == to_string(r)) j.holder.runtime = r;
  static const std::set<std::string> kOwn = {"pod",        "namespace",    "container",
                                             "pod_uid",    "slurm_job",    "slurm_step",
                                             "slurm_user", "container_id", "container_runtime"};
  for (const auto& [k, v] : labels.items())
    if (!kOwn.count(k)) j.holder.labels.push_back(Label{k, v.get<std::string>()});
  j.holder.pids = h.at("pids").get<std::vector<unsigned>>();
  j.holder.commands = h.at("commands").get<std::vector<std::string>>();
  j.holder.notes = h.at("notes").get<std::vector<std::string>>();
  const json& g = in.at("gpu");
  j.gpu_index = g.at("index").get<int>();
  j.gpu_uuid = g.at("uuid").get<std::string>();
  if (g.at("gpu_instance_id").is_number()) j.gpu_instance_id = g.at("gpu_instance_id").get<unsigned>();
  j.gpu_instance_profile = g.at("gpu_instance_profile").get<std::string>();
  j.start_ns = in.at("start_ns").get<recording::TimeNs>();
  j.end_ns = in.at("end_ns").get<recording::TimeNs>();
  j.gpu_seconds = in.at("gpu_seconds").get<double>();
  j.shared = in.at("shared").get<bool>();
  j.mean_share = in.at("mean_share").get<double>();
  j.gpu_util_pct = number_from(in.at("gpu_util_pct"));
  j.die_util_pct = number_from(in.at("die_util_pct"));
  j.gap_pct = number_from(in.at("gap_pct"));
  if (in.at("limiting_unit").is_string()) j.limiting_unit = in.at("limiting_unit").get<std::string>();
  j.stranded_gpu_seconds = number_from(in.at("stranded_gpu_seconds"));
  j.energy_j = number_from(in.at("energy_j"));
  j.energy_reason = in.at("energy_reason").get<std::string>();
  // Records stored before it was added have none: NaN.
  if (in.contains("stranded_energy_j")) j.stranded_energy_j = number_from(in.at("stranded_energy_j"));
  j.coverage_pct = in.at("coverage_pct").get<double>();
  const std::string source = in.at("chip_source").get<std::string>();
  for (ChipSourceSeen s :
       {ChipSourceSeen::none, ChipSourceSeen::pm, ChipSourceSeen::gpm, ChipSourceSeen::both})
    if (source == to_string(s)) j.chip_source = s;
  j.notes = in.at("notes").get<std::vector<std::string>>();
  // Records written before captures existed have no such field.
  if (in.contains("captures")) j.captures = in.at("captures").get<std::vector<std::string>>();
  return j;
}

std::string job_to_ndjson(const JobRecord& job) {
  return job_to_json(job).dump(-1, ' ', false, json::error_handler_t::replace);
}

JobStore::JobStore(const std::filesystem::path& path, bool create) : path_(path) {
  std::error_code ec;
  if (!create && !std::filesystem::exists(path, ec))
    throw core::InputError(path.string(), 0, "no such record store",
                           "give the agent's store with --db PATH (the agent's log names it when it starts)");
  const int flags = create ? (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX)
                           : (SQLITE_OPEN_READONLY | SQLITE_OPEN_FULLMUTEX);
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw core::InputError(path.string(), 0, "cannot open the record store: " + why,
                           "check the path and its permissions, or give another with --db PATH");
  }
  sqlite3_busy_timeout(db_, 5000);
  if (create) {
    char* err = nullptr;
    if (sqlite3_exec(db_, kSchemaSql, nullptr, nullptr, &err) != SQLITE_OK) {
      const std::string why = err ? err : "unknown error";
      sqlite3_free(err);
      throw core::InputError(path.string(), 0, "cannot add the jobs table: " + why,
                             "check free space and permissions of the database's directory");
    }
  }
}

JobStore::~JobStore() {
  if (db_) sqlite3_close_v2(db_);
}

void JobStore::add(std::vector<JobRecord>& jobs) {
  if (jobs.empty()) return;
  auto fail = [this](const std::string& what) {
    throw core::Error(path_.string() + ": cannot store job records: " + what,
                      "check free space and permissions of the database's directory", core::kExitInput);
  };
  sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
  Stmt ins(
      db_,
      "INSERT INTO jobs(gpu_index, gpu_uuid, gpu_instance_id, holder_kind, holder_key, pod, namespace, "
      "container, slurm_job, start_ns, end_ns, gpu_seconds, stranded_gpu_seconds, energy_j, record_json) "
      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  if (!ins.s) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    fail(sqlite3_errmsg(db_));
  }
  for (JobRecord& j : jobs) {
    sqlite3_reset(ins.s);
    sqlite3_bind_int(ins.s, 1, j.gpu_index);
    bind_text(ins.s, 2, j.gpu_uuid);
    if (j.gpu_instance_id)
      sqlite3_bind_int64(ins.s, 3, *j.gpu_instance_id);
    else
      sqlite3_bind_null(ins.s, 3);
    bind_text(ins.s, 4, std::string(to_string(j.holder.kind)));
    bind_text(ins.s, 5, j.holder.key);
    bind_text(ins.s, 6, j.holder.pod);
    bind_text(ins.s, 7, j.holder.pod_namespace);
    bind_text(ins.s, 8, j.holder.container);
    bind_text(ins.s, 9, j.holder.slurm_job);
    sqlite3_bind_int64(ins.s, 10, j.start_ns);
    sqlite3_bind_int64(ins.s, 11, j.end_ns);
    sqlite3_bind_double(ins.s, 12, j.gpu_seconds);
    bind_real(ins.s, 13, j.stranded_gpu_seconds);
    bind_real(ins.s, 14, j.energy_j);
    const std::string text = job_to_ndjson(j);
    sqlite3_bind_text(ins.s, 15, text.c_str(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
    if (sqlite3_step(ins.s) != SQLITE_DONE) {
      const std::string why = sqlite3_errmsg(db_);
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      fail(why);
    }
    j.id = sqlite3_last_insert_rowid(db_);
  }
  if (sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) fail(sqlite3_errmsg(db_));
}

std::vector<JobRecord> JobStore::list(recording::TimeNs since_ns) const {
  std::vector<JobRecord> out;
  Stmt has(db_, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='jobs'");
  if (!has.s || sqlite3_step(has.s) != SQLITE_ROW)
    throw core::InputError(path_.string(), 0, "is not an SQLite database the agent wrote",
                           "give the agent's store with --db PATH");
  if (sqlite3_column_int(has.s, 0) == 0) return out;  // a store from before job records, or none yet
  Stmt q(db_, "SELECT id, record_json FROM jobs WHERE end_ns >= ? ORDER BY id");
  sqlite3_bind_int64(q.s, 1, since_ns);
  while (sqlite3_step(q.s) == SQLITE_ROW) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(q.s, 1));
    try {
      JobRecord j = job_from_json(json::parse(text ? text : ""));
      j.id = sqlite3_column_int64(q.s, 0);
      out.push_back(std::move(j));
    } catch (const std::exception& e) {
      throw core::InputError(
          path_.string(), 0,
          fmt::format("job record {} cannot be read: {}", sqlite3_column_int64(q.s, 0), e.what()),
          "the store was changed by something other than diescope; give another with --db PATH");
    }
  }
  sort_most_wasteful(out);
  return out;
}

recording::TimeNs parse_since(const std::string& text, recording::TimeNs now_ns) {
  auto bad = [&text] {
    return core::UsageError(
        fmt::format("--since \"{}\" is neither a duration nor a UTC time", text),
        "give a duration ago (90s, 30m, 24h, 7d) or a UTC time (2026-12-02 or 2026-12-02T14:00:00Z)");
  };
  if (text.size() >= 2 && std::isdigit(static_cast<unsigned char>(text[0]))) {
    const char unit = text.back();
    const std::string digits = text.substr(0, text.size() - 1);
    const double scale = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : unit == 'd' ? 86400 : 0;
    if (scale > 0 &&
        std::all_of(digits.begin(), digits.end(),
                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) &&
        digits.size() <= 9)
      return now_ns - static_cast<recording::TimeNs>(std::stod(digits) * scale * 1e9);
  }
  std::tm tm{};
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  char tail = 0;
  int n = 0;
  const bool date_only = std::sscanf(text.c_str(), "%4d-%2d-%2d%n", &y, &mo, &d, &n) == 3 &&
                         static_cast<std::size_t>(n) == text.size();
  const bool date_time =
      !date_only &&
      std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c%n", &y, &mo, &d, &h, &mi, &sec, &tail, &n) == 7 &&
      tail == 'Z' && static_cast<std::size_t>(n) == text.size();
  if (!date_only && !date_time) throw bad();
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) throw bad();
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  return static_cast<recording::TimeNs>(::timegm(&tm)) * recording::kNsPerSecond;
}

std::string jobs_json(const std::vector<JobRecord>& jobs) {
  json arr = json::array();
  for (const JobRecord& j : jobs) arr.push_back(job_to_json(j));
  return json{{"jobs", arr}, {"order", "stranded_gpu_seconds, most first"}}.dump(
             2, ' ', false, json::error_handler_t::replace) +
         "\n";
}

std::string jobs_csv(const std::vector<JobRecord>& jobs) {
  std::string out =
      "holder_kind,holder,pod,namespace,container,slurm_job,gpu,uuid,gpu_instance_id,start_ns,end_ns,gpu_"
      "seconds,"
      "shared,gpu_util_pct,die_util_pct,gap_pct,limiting_unit,stranded_gpu_seconds,energy_j,coverage_pct,"
      "chip_source,stranded_energy_j\n";
  auto num = [](double v) { return std::isfinite(v) ? fmt::format("{}", v) : std::string(); };
  for (const JobRecord& j : jobs) {
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", to_string(j.holder.kind),
        csv_field(describe(j.holder)), csv_field(j.holder.pod), csv_field(j.holder.pod_namespace),
        csv_field(j.holder.container), csv_field(j.holder.slurm_job), j.gpu_index, j.gpu_uuid,
        j.gpu_instance_id ? std::to_string(*j.gpu_instance_id) : "", j.start_ns, j.end_ns, num(j.gpu_seconds),
        j.shared ? "approximate" : "exact", num(j.gpu_util_pct), num(j.die_util_pct), num(j.gap_pct),
        csv_field(j.limiting_unit), num(j.stranded_gpu_seconds), num(j.energy_j), num(j.coverage_pct),
        to_string(j.chip_source), num(j.stranded_energy_j));
  }
  return out;
}

std::string jobs_terminal(const std::vector<JobRecord>& jobs) {
  if (jobs.empty()) return "no job records\n";
  std::string out =
      fmt::format("{:<44} {:>4} {:>10} {:>8} {:>8} {:>6} {:<10} {:>10} {:>9} {:>5}\n", "holder", "gpu",
                  "GPU-s", "GPU-Util", "DIE-Util", "gap", "limiting", "stranded-s", "energy-kJ", "cov%");
  bool any_shared = false;
  for (const JobRecord& j : jobs) {
    std::string name = printable(describe(j.holder));
    if (name.size() > 44) name = name.substr(0, 43) + "~";
    const std::string gpu = j.gpu_instance_id ? fmt::format("{}/{}", j.gpu_index, *j.gpu_instance_id)
                                              : std::to_string(j.gpu_index);
    out += fmt::format("{:<44} {:>4} {:>10} {:>8} {:>8} {:>6} {:<10} {:>10} {:>9} {:>5}{}\n", name, gpu,
                       fixed(j.gpu_seconds, 1), fixed(j.gpu_util_pct, 1), fixed(j.die_util_pct, 1),
                       fixed(j.gap_pct, 1), printable(j.limiting_unit.empty() ? "-" : j.limiting_unit),
                       fixed(j.stranded_gpu_seconds, 1), fixed(j.energy_j / 1000.0, 2),
                       fixed(j.coverage_pct, 0), j.shared ? " ~" : "");
    any_shared = any_shared || j.shared;
  }
  out += "most wasteful first (GPU-seconds stranded)";
  if (any_shared) out += "; ~: the GPU was shared and the split is approximate";
  return out + "\n";
}

std::string jobs_metrics(const std::vector<JobRecord>& last, bool openmetrics) {
  if (last.empty()) return {};
  struct Family {
    const char* name;
    const char* help;
    const char* unit;
    double (*value)(const JobRecord&);
  };
  static const Family kFamilies[] = {
      {"diescope_job_gpu_seconds", "GPU-seconds a finished job held (its share where the GPU was shared)",
       "seconds", [](const JobRecord& j) { return j.gpu_seconds; }},
      {"diescope_job_stranded_gpu_seconds", "GPU-seconds a finished job left unused by the busiest unit",
       "seconds", [](const JobRecord& j) { return j.stranded_gpu_seconds; }},
      {"diescope_job_die_util_percent", "DIE-Util over a finished job's time on the GPU", "percent",
       [](const JobRecord& j) { return j.die_util_pct; }},
      {"diescope_job_gpu_util_percent", "GPU-Util over a finished job's time on the GPU", "percent",
       [](const JobRecord& j) { return j.gpu_util_pct; }},
      {"diescope_job_energy_joules", "energy a finished job drew, from NVML's total energy counter", "joules",
       [](const JobRecord& j) { return j.energy_j; }},
      {"diescope_job_stranded_energy_joules",
       "energy a finished job drew while DIE-Util was under 10%, from the agent's records", "joules",
       [](const JobRecord& j) { return j.stranded_energy_j; }},
      {"diescope_job_end_timestamp_seconds", "when a finished job left the GPU", "seconds",
       [](const JobRecord& j) { return static_cast<double>(j.end_ns) / 1e9; }},
  };
  std::string out;
  for (const Family& f : kFamilies) {
    out += fmt::format("# HELP {} {}.\n# TYPE {} gauge\n", f.name, f.help, f.name);
    if (openmetrics) out += fmt::format("# UNIT {} {}\n", f.name, f.unit);
    for (const JobRecord& j : last) {
      std::string labels =
          fmt::format("gpu=\"{}\",UUID=\"{}\"", j.gpu_index, agent::escape_label_value(j.gpu_uuid));
      if (j.gpu_instance_id)
        labels += fmt::format(",GPU_I_ID=\"{}\",GPU_I_PROFILE=\"{}\"", *j.gpu_instance_id,
                              agent::escape_label_value(j.gpu_instance_profile));
      labels += fmt::format(",holder_kind=\"{}\",holder=\"{}\"", to_string(j.holder.kind),
                            agent::escape_label_value(j.holder.key));
      for (const Label& l : holder_labels(j.holder)) {
        if (l.key == "pod_uid" || l.key == "container_id" || l.key == "container_runtime") continue;
        labels += fmt::format(",{}=\"{}\"", l.key, agent::escape_label_value(l.value));
      }
      labels += fmt::format(",job_id=\"{}\"", j.id);
      const double v = f.value(j);
      out += fmt::format("{}{{{}}} {}\n", f.name, labels, std::isfinite(v) ? fmt::format("{}", v) : "NaN");
    }
  }
  return out;
}

}  // namespace diescope::attribution
