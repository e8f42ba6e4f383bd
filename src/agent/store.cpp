#include "diescope/agent/store.hpp"

#include <cstdlib>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sqlite3.h>

#include "diescope/core/error.hpp"
#include "diescope/report/wording.hpp"

namespace diescope::agent {

namespace {

// The schema. Figures that could not be computed are NULL (SQLite stores NaN as NULL), with the
// reason in the *_reason column beside them; record_json holds the whole record.
constexpr const char* kSchemaSql = R"sql(
CREATE TABLE IF NOT EXISTS store_info (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS records (
  id                   INTEGER PRIMARY KEY,
  gpu_index            INTEGER NOT NULL,
  gpu_uuid             TEXT NOT NULL,
  gpu_model            TEXT NOT NULL,
  source               TEXT NOT NULL,
  period_start_ns      INTEGER NOT NULL,
  period_end_ns        INTEGER NOT NULL,
  window_start_ns      INTEGER,
  window_end_ns        INTEGER,
  counters_on_s        REAL NOT NULL,
  duty_on_ms           REAL NOT NULL,
  duty_period_ms       REAL NOT NULL,
  interval_ms          REAL NOT NULL,
  die_util_pct         REAL,
  die_util_reason      TEXT NOT NULL,
  gpu_util_pct         REAL,
  gpu_util_reason      TEXT NOT NULL,
  gap_pct              REAL,
  stranded_idle_pct    REAL,
  stranded_active_pct  REAL,
  gap_reason           TEXT NOT NULL,
  limiting_unit        TEXT,
  limiting_reason      TEXT NOT NULL,
  chip_coverage_pct    REAL,
  chip_coverage_gate   TEXT NOT NULL,
  sm_clock_mean_mhz    REAL,
  mem_clock_mean_mhz   REAL,
  cost_lo_pct          REAL,
  cost_hi_pct          REAL,
  cost_reason          TEXT NOT NULL,
  restart_kind         TEXT,
  method               INTEGER NOT NULL,
  record_schema        INTEGER NOT NULL,
  record_json          TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS records_by_end ON records(period_end_ns);
CREATE INDEX IF NOT EXISTS records_by_gpu ON records(gpu_uuid, period_end_ns);
CREATE TABLE IF NOT EXISTS units (
  record_id         INTEGER NOT NULL REFERENCES records(id) ON DELETE CASCADE,
  key               TEXT NOT NULL,
  label             TEXT NOT NULL,
  mean_pct          REAL,
  availability_pct  REAL,
  PRIMARY KEY (record_id, key)
) WITHOUT ROWID;
)sql";

class Statement {
 public:
  Statement(sqlite3* db, const char* sql) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) stmt_ = nullptr;
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  bool ok() const { return stmt_ != nullptr; }
  sqlite3_stmt* get() const { return stmt_; }
  void bind(int i, std::int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void bind(int i, int v) { sqlite3_bind_int(stmt_, i, v); }
  void bind(int i, double v) {
    if (std::isfinite(v))
      sqlite3_bind_double(stmt_, i, v);
    else
      sqlite3_bind_null(stmt_, i);
  }
  void bind(int i, const std::string& v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  void bind_null(int i) { sqlite3_bind_null(stmt_, i); }
  int step() { return sqlite3_step(stmt_); }
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace

std::filesystem::path default_store_path() {
  if (const char* env = std::getenv("DIESCOPE_AGENT_DB"); env && *env) return env;
  if (::geteuid() == 0) return "/var/lib/diescope/agent.db";
  if (const char* state = std::getenv("XDG_STATE_HOME"); state && *state)
    return std::filesystem::path(state) / "diescope" / "agent.db";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::filesystem::path(home) / ".local" / "state" / "diescope" / "agent.db";
  return "diescope-agent.db";
}

RecordStore::RecordStore(const std::filesystem::path& path, bool create_folder) : path_(path) {
  if (path.has_parent_path()) {
    std::error_code ec;
    if (create_folder) {
      std::filesystem::create_directories(path.parent_path(), ec);
    } else if (!std::filesystem::is_directory(path.parent_path(), ec)) {
      // A path the user gave: a typo must not leave a tree of new folders behind.
      throw core::InputError(
          path.string(), 0,
          "cannot hold a record store: its folder " + path.parent_path().string() + " does not exist",
          "create the folder first (mkdir -p " + path.parent_path().string() +
              "), or fix the path given to --db");
    }
  }
  // A file that is there but not SQLite is named as such, not blamed on WAL or free space: every
  // SQLite database starts with these 16 bytes (its file format's header string).
  {
    static constexpr char kHeader[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f',
                                         'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};
    std::ifstream in(path, std::ios::binary);
    char head[sizeof kHeader] = {};
    if (in && in.read(head, sizeof head).gcount() > 0 && std::memcmp(head, kHeader, sizeof head) != 0) {
      throw core::InputError(path.string(), 0, "is not an SQLite database, so not a diescope record store",
                             "point --db at a new file or at a store the agent wrote");
    }
  }
  const int rc = sqlite3_open_v2(path.c_str(), &db_,
                                 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    const std::string why = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw core::InputError(
        path.string(), 0, "cannot open the record store: " + why,
        "check that the directory exists and is writable, or choose another with --db PATH");
  }
  sqlite3_busy_timeout(db_, 5000);
  // Another process (sqlite3, a dashboard) may read while the agent writes: WAL lets them.
  {
    Statement wal(db_, "PRAGMA journal_mode=WAL");
    if (!wal.ok() || wal.step() != SQLITE_ROW) fail("cannot switch the record store to WAL", "");
    const char* mode = reinterpret_cast<const char*>(sqlite3_column_text(wal.get(), 0));
    if (!mode || std::string(mode) != "wal") {
      fail("the record store could not use write-ahead logging (journal mode is " +
               std::string(mode ? mode : "?") + ")",
           "put the database on a local file system (WAL needs shared memory), e.g. --db "
           "/var/lib/diescope/agent.db");
    }
  }
  exec("PRAGMA synchronous=FULL");
  exec("PRAGMA foreign_keys=ON");
  int version = 0;
  {
    Statement v(db_, "PRAGMA user_version");
    if (v.ok() && v.step() == SQLITE_ROW) version = sqlite3_column_int(v.get(), 0);
  }
  if (version > kStoreSchema) {
    fail("the record store has schema " + std::to_string(version) + ", newer than this agent's " +
             std::to_string(kStoreSchema),
         "run a newer diescope, or point --db at another file");
  }
  if (version == 0) {
    // A new file, or one that is not ours: only an empty database may become a store.
    Statement tables(db_, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name <> 'store_info'");
    if (tables.ok() && tables.step() == SQLITE_ROW && sqlite3_column_int(tables.get(), 0) > 0) {
      Statement ours(db_, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='records'");
      if (!(ours.ok() && ours.step() == SQLITE_ROW && sqlite3_column_int(ours.get(), 0) > 0)) {
        fail("the file is an SQLite database but not a diescope record store",
             "point --db at a new file or at a store the agent wrote");
      }
    }
    exec("BEGIN IMMEDIATE");
    exec(kSchemaSql);
    exec(("PRAGMA user_version=" + std::to_string(kStoreSchema)).c_str());
    exec("INSERT OR REPLACE INTO store_info(key, value) VALUES ('written_by', 'diescope agent')");
    exec("COMMIT");
  }
}

RecordStore::~RecordStore() {
  if (db_) sqlite3_close_v2(db_);
}

void RecordStore::exec(const char* sql) const {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string why = err ? err : "unknown error";
    sqlite3_free(err);
    fail("record store: " + why, "");
  }
}

void RecordStore::fail(const std::string& what, const std::string& fix) const {
  throw core::InputError(path_.string(), 0, what,
                         fix.empty() ? "check free space and permissions of the database's directory" : fix);
}

void RecordStore::add(std::vector<AgentRecord>& records) {
  if (records.empty()) return;
  static constexpr const char* kInsert =
      "INSERT INTO records(gpu_index, gpu_uuid, gpu_model, source, period_start_ns, period_end_ns, "
      "window_start_ns,"
      " window_end_ns, counters_on_s, duty_on_ms, duty_period_ms, interval_ms, die_util_pct, die_util_reason,"
      " gpu_util_pct, gpu_util_reason, gap_pct, stranded_idle_pct, stranded_active_pct, gap_reason, "
      "limiting_unit,"
      " limiting_reason, chip_coverage_pct, chip_coverage_gate, sm_clock_mean_mhz, mem_clock_mean_mhz, "
      "cost_lo_pct,"
      " cost_hi_pct, cost_reason, restart_kind, method, record_schema, record_json)"
      " VALUES "
      "(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,?23,?24,?25,?26,?27,"
      "?28,?29,?30,?31,?32,?33)";
  exec("BEGIN IMMEDIATE");
  try {
    Statement ins(db_, kInsert);
    Statement unit(
        db_, "INSERT INTO units(record_id, key, label, mean_pct, availability_pct) VALUES (?1,?2,?3,?4,?5)");
    if (!ins.ok() || !unit.ok()) fail(std::string("record store: ") + sqlite3_errmsg(db_), "");
    for (AgentRecord& r : records) {
      ins.reset();
      ins.bind(1, r.gpu_index);
      ins.bind(2, r.gpu_uuid);
      ins.bind(3, r.gpu_model);
      ins.bind(4, r.source);
      ins.bind(5, static_cast<std::int64_t>(r.period_start_ns));
      ins.bind(6, static_cast<std::int64_t>(r.period_end_ns));
      if (r.window_start_ns)
        ins.bind(7, static_cast<std::int64_t>(*r.window_start_ns));
      else
        ins.bind_null(7);
      if (r.window_end_ns)
        ins.bind(8, static_cast<std::int64_t>(*r.window_end_ns));
      else
        ins.bind_null(8);
      ins.bind(9, r.counters_on_s);
      ins.bind(10, r.duty_on_ms);
      ins.bind(11, r.duty_period_ms);
      ins.bind(12, r.interval_ms);
      ins.bind(13, r.die_util_pct);
      ins.bind(14, r.die_util_reason);
      ins.bind(15, r.gpu_util_pct);
      ins.bind(16, r.gpu_util_reason);
      ins.bind(17, r.gap_pct);
      ins.bind(18, r.stranded_idle_pct);
      ins.bind(19, r.stranded_active_pct);
      ins.bind(20, r.gap_reason.empty() ? r.split_reason : r.gap_reason);
      if (r.limiting_unit)
        ins.bind(21, *r.limiting_unit);
      else
        ins.bind_null(21);
      ins.bind(22, r.limiting_reason);
      ins.bind(23, r.chip_coverage_pct);
      ins.bind(24, std::string(report::coverage_gate_code(r.chip_coverage_gate)));
      ins.bind(25, r.sm_clock.mean_mhz);
      ins.bind(26, r.mem_clock.mean_mhz);
      if (r.cost) {
        ins.bind(27, r.cost->slowdown_lo_pct);
        ins.bind(28, r.cost->slowdown_hi_pct);
      } else {
        ins.bind_null(27);
        ins.bind_null(28);
      }
      ins.bind(29, r.cost_reason);
      if (r.restart)
        ins.bind(30, r.restart->kind);
      else
        ins.bind_null(30);
      ins.bind(31, r.method);
      ins.bind(32, r.schema);
      ins.bind(33, record_to_ndjson(r));
      if (ins.step() != SQLITE_DONE)
        fail(std::string("record store: cannot insert a record: ") + sqlite3_errmsg(db_), "");
      r.id = sqlite3_last_insert_rowid(db_);
      for (const UnitFigure& u : r.units) {
        unit.reset();
        unit.bind(1, static_cast<std::int64_t>(r.id));
        unit.bind(2, u.key);
        unit.bind(3, u.label);
        unit.bind(4, u.mean_pct);
        unit.bind(5, u.availability_pct);
        if (unit.step() != SQLITE_DONE)
          fail(std::string("record store: cannot insert a unit: ") + sqlite3_errmsg(db_), "");
      }
    }
    exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    for (AgentRecord& r : records) r.id = 0;
    throw;
  }
}

long RecordStore::delete_before(recording::TimeNs cutoff_ns) {
  exec("BEGIN IMMEDIATE");
  Statement del(db_, "DELETE FROM records WHERE period_end_ns < ?1");
  if (!del.ok()) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    fail(std::string("record store: ") + sqlite3_errmsg(db_), "");
  }
  del.bind(1, static_cast<std::int64_t>(cutoff_ns));
  if (del.step() != SQLITE_DONE) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    fail(std::string("record store: cannot delete old records: ") + sqlite3_errmsg(db_), "");
  }
  const long deleted = sqlite3_changes(db_);
  exec("COMMIT");
  return deleted;
}

long RecordStore::count() const {
  Statement c(db_, "SELECT count(*) FROM records");
  if (c.ok() && c.step() == SQLITE_ROW) return sqlite3_column_int64(c.get(), 0);
  return -1;
}

}  // namespace diescope::agent
