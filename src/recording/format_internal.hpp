// Pieces of the recording format shared by the writer and the reader (docs/recording-format.md).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "diescope/recording/record_kinds.hpp"
#include "diescope/recording/records.hpp"

namespace diescope::recording::recfmt {

// The index in RecordKinds (record_kinds.hpp) of the kind whose lines start with `word`.
std::optional<std::size_t> kind_of_word(std::string_view word);

inline bool is_separator(char c) {
  return c == ' ' || c == '\t';
}

// Appends a value as the format writes it: shortest round-trip decimal, "nan" for any NaN.
void append_number(std::string& out, double value);
void append_integer(std::string& out, std::int64_t value);
// Free text to the end of a line: backslash, newline and carriage return become \\, \n and \r.
void append_escaped(std::string& out, std::string_view text);
// The inverse of append_escaped. Returns an error description, or an empty string on success.
std::string unescape(std::string_view text, std::string& out);

// A meta line that breaks a rule; the reader turns it into an InputError for line 2, the writer into
// an internal Error.
struct MetaProblem : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The JSON text of the meta line (one line, no newline). Throws MetaProblem for an invalid meta.
std::string meta_to_json(const RecordingMeta& meta);
// Parses and checks the JSON text of a meta line. Throws MetaProblem naming the field.
RecordingMeta meta_from_json(std::string_view text);
// The rules every meta must keep (unique column keys, a positive interval, ...).
void validate_meta(const RecordingMeta& meta);

// Up to `max` characters of `text` with anything unprintable shown as '?', for messages.
std::string excerpt(std::string_view text, std::size_t max = 40);

}  // namespace diescope::recording::recfmt
