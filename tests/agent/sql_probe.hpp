// Reads an agent store with plain SQL, as a user with sqlite3 would: the tests check the documented
// schema, not the store's own reader.
#pragma once

#include <sqlite3.h>

#include <filesystem>
#include <string>

namespace diescope::agent::test_support {

struct SqlProbe {
  sqlite3* db = nullptr;
  // Read-write recovers a WAL left by a killed writer, as any later reader would.
  explicit SqlProbe(const std::filesystem::path& p, int flags = SQLITE_OPEN_READONLY) {
    sqlite3_open_v2(p.c_str(), &db, flags, nullptr);
  }
  ~SqlProbe() { sqlite3_close(db); }
  SqlProbe(const SqlProbe&) = delete;
  SqlProbe& operator=(const SqlProbe&) = delete;

  // The first column of the first row as text; "NULL" for a null, "<error>" when the query fails.
  std::string text(const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    std::string out = "<error>";
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
      const unsigned char* t = sqlite3_column_text(st, 0);
      out = t ? reinterpret_cast<const char*>(t) : "NULL";
    }
    sqlite3_finalize(st);
    return out;
  }
};

}  // namespace diescope::agent::test_support
