// The committed H200 exports (tests/roofline/fixtures/README.md says how they were made).
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "diescope/roofline/ncu.hpp"

namespace diescope::roofline::test {

inline std::string fixture_path(const std::string& name) {
  return std::string(DIESCOPE_SOURCE_DIR) + "/tests/roofline/fixtures/" + name;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The rows of one fixture export, named `executable`.
inline std::vector<Row> fixture_rows(const std::string& name, const std::string& executable) {
  const std::string path = fixture_path(name);
  return rows_from_export(parse_raw_export(read_file(path), path), executable, path);
}

}  // namespace diescope::roofline::test
