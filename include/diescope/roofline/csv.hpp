// The tidy table as CSV (docs/roofline.md#the-table): headers read `name [unit]`, one row per launch
// or group, "not available" is an empty cell. Derived columns (intensity, performance, roofs) are
// written for people and recomputed, never read back.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "diescope/roofline/table.hpp"

namespace diescope::roofline {

std::string table_csv(const std::vector<Row>& rows);
// Throws InputError naming `path`:line for a malformed or truncated table; header units are
// stripped ("duration [s]" is read as "duration").
std::vector<Row> parse_table_csv(std::string_view text, const std::string& path);

// One CSV line split into fields (RFC 4180 quoting). Throws std::invalid_argument for an unclosed
// quote.
std::vector<std::string> split_csv_line(std::string_view line);

}  // namespace diescope::roofline
