// Screen text against a golden file whose numbers are placeholders, as google/benchmark's output
// tests do: a golden line is literal text except for
//   {pct}    a figure as the screen prints it: "  9.5%", "100.0%" or "   n/a"
//   {num}    a number, e.g. 1980 or 46.7 (a leading minus allowed)
//   {bar}    a bar: full and partial blocks and spaces
//   {spark}  a sparkline: U+2581..U+2588 and spaces
//   {time}   HH:MM:SS
//   {sp}     spaces, none or more (a figure's padding)
//   {any}    anything (to the end of the line, or up to the next literal text)
#pragma once

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace diescope::test {

inline std::string golden_regex(const std::string& line) {
  static const std::vector<std::pair<std::string, std::string>> kTokens = {
      {"{pct}", "(?: *[0-9]+\\.[0-9]%|   n/a)"},
      {"{num}", "-?[0-9]+(?:\\.[0-9]+)?"},
      {"{bar}", "(?:█|▉|▊|▋|▌|▍|▎|▏| )*"},
      {"{spark}", "(?:▁|▂|▃|▄|▅|▆|▇|█| )*"},
      {"{time}", "[0-9]{2}:[0-9]{2}:[0-9]{2}"},
      {"{sp}", " *"},
      {"{any}", ".*"},
  };
  std::string out;
  std::size_t i = 0;
  while (i < line.size()) {
    bool token = false;
    for (const auto& [name, pattern] : kTokens) {
      if (line.compare(i, name.size(), name) == 0) {
        out += pattern;
        i += name.size();
        token = true;
        break;
      }
    }
    if (token) continue;
    const char c = line[i++];
    if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out;
}

inline std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Empty when every line matches; else the first line that does not, with both texts.
inline std::string golden_mismatch(const std::vector<std::string>& screen,
                                   const std::vector<std::string>& golden) {
  for (std::size_t i = 0; i < std::max(screen.size(), golden.size()); ++i) {
    const std::string got = i < screen.size() ? screen[i] : "<no line>";
    const std::string want = i < golden.size() ? golden[i] : "<no line>";
    if (i >= screen.size() || i >= golden.size() || !std::regex_match(got, std::regex(golden_regex(want))))
      return "line " + std::to_string(i + 1) + ":\n  screen: [" + got + "]\n  golden: [" + want + "]";
  }
  return {};
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace diescope::test
