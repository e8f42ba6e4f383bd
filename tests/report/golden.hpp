// Golden-file comparison with placeholders, in the manner of Google Benchmark's output tests:
// a golden line is literal text except that
//   {num}   matches a number (-12, 3.5, 1.1e+12),
//   {text}  matches anything up to the end of the line or the next literal,
//   a run of two or more spaces matches any run of spaces (column widths follow the numbers),
//   a line that is only {...} ends the comparison: what follows is not checked.
// Exact figures are checked by the exact-value tests; the golden files pin the layout and wording.
#pragma once

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace diescope::test {

inline std::regex golden_line_regex(const std::string& line) {
  std::string re;
  for (std::size_t i = 0; i < line.size();) {
    if (line.compare(i, 5, "{num}") == 0) {
      re += R"(-?[0-9]+(\.[0-9]+)?(e[+-]?[0-9]+)?)";
      i += 5;
    } else if (line.compare(i, 6, "{text}") == 0) {
      re += ".*";
      i += 6;
    } else if (line[i] == ' ' && i + 1 < line.size() && line[i + 1] == ' ') {
      while (i < line.size() && line[i] == ' ') ++i;
      re += " +";
    } else {
      if (std::string("\\^$.|?*+()[]{}").find(line[i]) != std::string::npos) re += '\\';
      re += line[i++];
    }
  }
  return std::regex(re);
}

inline std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

// Empty when `actual` matches the golden file; otherwise what differs, line by line.
inline std::string golden_mismatch(const std::string& actual, const std::filesystem::path& golden_path) {
  std::ifstream in(golden_path);
  if (!in) return "cannot read " + golden_path.string();
  std::stringstream buffer;
  buffer << in.rdbuf();
  auto want = split_lines(buffer.str());
  auto got = split_lines(actual);
  std::string diff;
  for (std::size_t i = 0; i < std::max(want.size(), got.size()); ++i) {
    if (i < want.size() && want[i] == "{...}") break;
    if (i >= want.size()) {
      diff += "line " + std::to_string(i + 1) + ": unexpected: " + got[i] + "\n";
    } else if (i >= got.size()) {
      diff += "line " + std::to_string(i + 1) + ": missing: " + want[i] + "\n";
    } else if (!std::regex_match(got[i], golden_line_regex(want[i]))) {
      diff += "line " + std::to_string(i + 1) + ":\n  want: " + want[i] + "\n  got:  " + got[i] + "\n";
    }
  }
  return diff;
}

}  // namespace diescope::test
