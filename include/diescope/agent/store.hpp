// The agent's record store: an embedded SQLite database (docs/agent.md documents the schema).
//
// Durability: WAL journal with synchronous=FULL. Each call to add() is one transaction; once it
// returns, the records survive a kill -9 of the agent and, with FULL, a power loss as well (the
// WAL is fsynced at every commit; at one record per GPU per minute that costs nothing measurable).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "diescope/agent/record.hpp"

struct sqlite3;

namespace diescope::agent {

// The store's schema version (PRAGMA user_version); changes with its tables, not with the method.
inline constexpr int kStoreSchema = 1;

// Where the agent keeps its store unless told (docs/agent.md#the-store): $DIESCOPE_AGENT_DB,
// /var/lib/diescope/agent.db as root, else under $XDG_STATE_HOME or ~/.local/state.
std::filesystem::path default_store_path();

class RecordStore {
 public:
  // Opens or creates the database. Throws InputError naming the path when it cannot be opened,
  // is not a diescope store, or has a newer schema.
  explicit RecordStore(const std::filesystem::path& path);
  ~RecordStore();
  RecordStore(const RecordStore&) = delete;
  RecordStore& operator=(const RecordStore&) = delete;

  // Stores the records in one transaction and sets their ids. Throws Error on failure (disk full).
  void add(std::vector<AgentRecord>& records);
  // Deletes records whose period ended before `cutoff_ns` (and their units). Returns how many.
  long delete_before(recording::TimeNs cutoff_ns);
  long count() const;
  const std::filesystem::path& path() const { return path_; }

 private:
  void exec(const char* sql) const;
  [[noreturn]] void fail(const std::string& what, const std::string& fix) const;
  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
};

}  // namespace diescope::agent
