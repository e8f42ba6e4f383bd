#include "diescope/core/edit_distance.hpp"

#include <algorithm>
#include <vector>

namespace diescope::core {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic-programming table: d[i][j] is the distance between the first i bytes
  // of `a` and the first j bytes of `b`; a swap looks two rows back.
  std::vector<std::size_t> before(b.size() + 1), prev(b.size() + 1), row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      row[j] = std::min({prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        row[j] = std::min(row[j], before[j - 2] + 1);
    }
    std::swap(before, prev);
    std::swap(prev, row);
  }
  return prev[b.size()];
}

}  // namespace diescope::core
