#include "diescope/recording/reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <set>
#include <thread>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "diescope/core/error.hpp"
#include "diescope/core/version.hpp"
#include "diescope/recording/format.hpp"
#include "format_internal.hpp"
#include "line_reader.hpp"

namespace diescope::recording {

namespace {

using recfmt::is_separator;
using recfmt::LineReader;
using recfmt::OpenFile;

// Each cursor reads through a buffer this large (smaller when its kind's lines span less).
constexpr std::size_t kCursorBufferBytes = std::size_t{1} << 20;

const char* const kFormatDoc = "docs/recording-format.md";

// Where a kind's lines lie in the file: cursors read only [begin, end).
struct KindRange {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  long first_line = 0;
  long count = 0;
};

class SharedRead;

// What the cursors share; immutable once the file is opened (the shared read behind its pointer is
// the one thing that moves).
struct Shared {
  std::shared_ptr<const OpenFile> file;
  RecordingMeta meta;
  std::array<KindRange, kKindCount> ranges;
  std::vector<std::string> chip_column_names;  // "unit 'fp32'", ... for messages
  std::set<std::int64_t> host_ids;             // the host streams the file declares
  std::shared_ptr<SharedRead> read;            // one pass over the file for cursors open together
};

// ---- each kind's line syntax, for messages (docs/recording-format.md, "Records") -----------------

std::string syntax(std::type_identity<ChipSample>, const RecordingMeta& meta) {
  return "chip START_NS END_NS, then one value per column of the meta: " + std::to_string(meta.units.size()) +
         " units, " + std::to_string(meta.diagnostics.size()) + " diagnostics, " +
         std::to_string(meta.counts.size()) + " counts";
}
std::string syntax(std::type_identity<UtilSample>, const RecordingMeta&) {
  return "util TIME_NS PCT samples|polled";
}
std::string syntax(std::type_identity<ClockReading>, const RecordingMeta&) {
  return "clock TIME_NS SM_MHZ MEM_MHZ";
}
std::string syntax(std::type_identity<ThrottleReading>, const RecordingMeta&) {
  return "throttle TIME_NS REASONS (names joined by commas, - for none, ? for unknown)";
}
std::string syntax(std::type_identity<PowerLimitReading>, const RecordingMeta& meta) {
  return meta.format_version >= 4 ? "power TIME_NS LIMIT_W DRAW_W ENERGY_MJ" : "power TIME_NS LIMIT_W";
}
std::string syntax(std::type_identity<EngineReading>, const RecordingMeta& meta) {
  return "engine TIME_NS, then one value per engine of the meta (" + std::to_string(meta.engines.size()) +
         ")";
}
std::string syntax(std::type_identity<ProcessReading>, const RecordingMeta&) {
  return "proc TIME_NS COMPUTE GRAPHICS EXITED";
}
std::string syntax(std::type_identity<HostSample>, const RecordingMeta&) {
  return "host TIME_NS ID VALUE [ID VALUE]... (ids of declared host streams, ascending)";
}
std::string syntax(std::type_identity<HostStream>, const RecordingMeta&) {
  return "hstream TIME_NS ID NAME TYPE UNIT SCOPE PEAK [NO_PEAK_REASON]";
}
std::string syntax(std::type_identity<HostTask>, const RecordingMeta&) {
  return "task TIME_NS PID PPID [NAME]";
}
std::string syntax(std::type_identity<GpuHolder>, const RecordingMeta&) {
  return "holder TIME_NS PID command|diescope|other|gone [NAME]";
}
std::string syntax(std::type_identity<Mark>, const RecordingMeta&) {
  return "mark TIME_NS start|stop";
}
std::string syntax(std::type_identity<CountersEvent>, const RecordingMeta&) {
  return "counters TIME_NS on|off [REASON]";
}
std::string syntax(std::type_identity<Note>, const RecordingMeta&) {
  return "note TIME_NS TOPIC [TEXT]";
}
std::string syntax(std::type_identity<ClockJump>, const RecordingMeta&) {
  return "jump TIME_NS STEP_NS";
}
std::string syntax(std::type_identity<RunEnd>, const RecordingMeta&) {
  return "end TIME_NS EXIT_CODE [HOW]";
}

// The syntax of the kind at `kind` (its index in RecordKinds).
std::string syntax_of(std::size_t kind, const RecordingMeta& meta) {
  std::string out;
  with_kind_at<RecordKinds>(kind, [&](auto tag) { out = syntax(tag, meta); });
  return out;
}

// "chip, util, ..., jump and end", for messages.
std::string known_kinds() {
  std::string out;
  for (std::size_t i = 0; i < kKindCount; ++i) {
    if (i > 0) out += i + 1 == kKindCount ? " and " : ", ";
    out += kKindWords[i];
  }
  return out;
}

std::string number_text(double v) {
  std::string s;
  recfmt::append_number(s, v);
  return s;
}

enum class NumStatus { ok, missing, not_number, out_of_range };

// Skips separators, then parses one number that must end at a separator or the line's end.
template <typename T>
inline NumStatus parse_field(const char*& p, const char* e, T& value) {
  while (p != e && is_separator(*p)) ++p;
  if (p == e) return NumStatus::missing;
  const auto [q, ec] = std::from_chars(p, e, value);
  if (ec == std::errc::result_out_of_range) return NumStatus::out_of_range;
  if (ec != std::errc{} || (q != e && !is_separator(*q))) return NumStatus::not_number;
  p = q;
  return NumStatus::ok;
}

// Integers (times above all: two 19-digit numbers on every chip line) without std::from_chars's
// per-digit overflow checks: up to 19 digits cannot overflow 64 unsigned bits.
template <>
inline NumStatus parse_field<std::int64_t>(const char*& p, const char* e, std::int64_t& value) {
  while (p != e && is_separator(*p)) ++p;
  if (p == e) return NumStatus::missing;
  const char* q = p;
  const bool negative = *q == '-';
  if (negative) ++q;
  const char* first = q;
  while (q + 1 < e && *q == '0' && static_cast<unsigned>(q[1] - '0') < 10) ++q;  // leading zeros
  const char* digits = q;
  std::uint64_t acc = 0;
  // Eight digits at a time where there are eight (fast_float's trick).
  static_assert(std::endian::native == std::endian::little, "the eight-digit step reads bytes little-endian");
  while (e - q >= 8 && q - digits <= 11) {
    std::uint64_t chunk;
    std::memcpy(&chunk, q, 8);
    if ((((chunk + 0x4646464646464646ULL) | (chunk - 0x3030303030303030ULL)) & 0x8080808080808080ULL) != 0)
      break;  // not eight digits
    chunk -= 0x3030303030303030ULL;
    chunk = (chunk * 10) + (chunk >> 8);
    chunk = (((chunk & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
             (((chunk >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >>
            32;
    acc = acc * 100000000 + chunk;
    q += 8;
  }
  while (q != e && q - digits < 19 && static_cast<unsigned>(*q - '0') < 10)
    acc = acc * 10 + static_cast<std::uint64_t>(*q++ - '0');
  if (q == first) return NumStatus::not_number;
  if (q != e && static_cast<unsigned>(*q - '0') < 10) return NumStatus::out_of_range;  // 20 digits or more
  if (q != e && !is_separator(*q)) return NumStatus::not_number;
  const std::uint64_t limit = negative ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
  if (acc > limit) return NumStatus::out_of_range;
  value = negative ? static_cast<std::int64_t>(0 - acc) : static_cast<std::int64_t>(acc);
  p = q;
  return NumStatus::ok;
}

// How many of the eight bytes at `q` (all readable) are digits before the first that is not, and in
// `value` the number those digits make (fast_float's eight-digit step on the digits alone).
[[gnu::always_inline]] inline int leading_digits(const char* q, std::uint64_t& value) {
  std::uint64_t chunk;
  std::memcpy(&chunk, q, 8);
  const std::uint64_t not_digit =
      ((chunk + 0x4646464646464646ULL) | (chunk - 0x3030303030303030ULL)) & 0x8080808080808080ULL;
  const int n = not_digit == 0 ? 8 : std::countr_zero(not_digit) / 8;
  if (n == 0) return 0;
  // The n digits to the top bytes, zero digits before them.
  chunk = (chunk - 0x3030303030303030ULL) << (8 * (8 - n));
  chunk = (chunk * 10) + (chunk >> 8);
  chunk = (((chunk & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
           (((chunk >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >>
          32;
  value = chunk;
  return n;
}

constexpr std::uint64_t kPow10Int[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};

// Numbers as the writer prints them ("24.89", "0", "1.711e+10") without std::from_chars's general
// path: a mantissa of at most 2^53 scaled by a power of ten up to 10^22 is exact in a double on both
// sides, so one multiplication or division rounds correctly and gives from_chars's own result
// (Clinger's fast path). Anything else (nan, longer mantissas, larger exponents) goes to from_chars.
template <>
inline NumStatus parse_field<double>(const char*& p, const char* e, double& value) {
  static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  while (p != e && is_separator(*p)) ++p;
  if (p == e) return NumStatus::missing;
  const char* q = p;
  const bool negative = *q == '-';
  if (negative) ++q;
  // The common shape first, "DDD" or "DDD.DDD" with fewer than eight digits on each side and a
  // separator after: each run of digits is found and read eight bytes at a time, without a branch
  // per digit. The mantissa and exponent are those the loop below finds, so the value is the same.
  if (e - q >= 8) {
    std::uint64_t int_part = 0;
    const int int_digits = leading_digits(q, int_part);
    if (int_digits > 0 && int_digits < 8) {
      const char* r = q + int_digits;
      std::uint64_t frac_part = 0;
      int frac_digits = 0;
      if (*r == '.' && e - r > 8) {
        frac_digits = leading_digits(r + 1, frac_part);
        r = frac_digits > 0 && frac_digits < 8 ? r + 1 + frac_digits : nullptr;
      }
      if (r != nullptr && (r == e || is_separator(*r))) {
        double v = static_cast<double>(int_part * kPow10Int[frac_digits] + frac_part);
        v = v / kPow10[frac_digits];
        value = negative ? -v : v;
        p = r;
        return NumStatus::ok;
      }
    }
  }
  std::uint64_t mantissa = 0;
  int digits = 0;
  int exponent = 0;
  const char* int_start = q;
  while (q != e && static_cast<unsigned>(*q - '0') < 10 && digits < 19) {
    mantissa = mantissa * 10 + static_cast<std::uint64_t>(*q++ - '0');
    ++digits;
  }
  bool fast = q != int_start && (q == e || static_cast<unsigned>(*q - '0') >= 10);
  if (fast && q != e && *q == '.') {
    const char* frac_start = ++q;
    while (q != e && static_cast<unsigned>(*q - '0') < 10 && digits < 19) {
      mantissa = mantissa * 10 + static_cast<std::uint64_t>(*q++ - '0');
      ++digits;
      --exponent;
    }
    fast = q != frac_start && (q == e || static_cast<unsigned>(*q - '0') >= 10);
  }
  if (fast && q != e && (*q == 'e' || *q == 'E')) {
    ++q;
    const bool exp_negative = q != e && *q == '-';
    if (q != e && (*q == '-' || *q == '+')) ++q;
    const char* exp_start = q;
    int exp_value = 0;
    while (q != e && static_cast<unsigned>(*q - '0') < 10 && q - exp_start < 4)
      exp_value = exp_value * 10 + (*q++ - '0');
    fast = q != exp_start && (q == e || static_cast<unsigned>(*q - '0') >= 10);
    exponent += exp_negative ? -exp_value : exp_value;
  }
  if (fast && (q == e || is_separator(*q)) && mantissa <= (std::uint64_t{1} << 53) && exponent >= -22 &&
      exponent <= 22) {
    double v = static_cast<double>(mantissa);
    v = exponent < 0 ? v / kPow10[-exponent] : v * kPow10[exponent];
    value = negative ? -v : v;
    p = q;
    return NumStatus::ok;
  }
  const auto [end, ec] = std::from_chars(p, e, value);
  if (ec == std::errc::result_out_of_range) return NumStatus::out_of_range;
  if (ec != std::errc{} || (end != e && !is_separator(*end))) return NumStatus::not_number;
  p = end;
  return NumStatus::ok;
}

// ---- chip values as the writer prints them (docs/recording-format.md#reading-a-recording) -------

// The longest run of values after a chip line's times that the fixed-format path below takes; a
// longer one takes the general path.
constexpr std::size_t kFixedValueBytes = 480;

// A number as std::to_chars prints a double, starting at s and `length` bytes long, with at least 16
// readable bytes after it: [-]I[.F][e(+|-)X] with I and F of one to seven digits and X of one to
// three. Its mantissa (I and F as one integer, below 10^14 < 2^53) and power of ten (X less F's
// digits) are exact in a double, so one multiplication or division by the exact power rounds
// correctly (Clinger's fast path) and gives std::from_chars's result, as parse_field<double>'s does.
// False for anything else (nan, longer numbers, larger powers), which parse_field then reads.
[[gnu::always_inline]] inline bool writer_number(const char* s, std::size_t length, double& value) {
  static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const bool negative = *s == '-';
  s += negative ? 1 : 0;
  length -= negative ? 1 : 0;
  std::uint64_t mantissa = 0;
  const int int_digits = leading_digits(s, mantissa);
  if (int_digits == 0 || int_digits == 8) return false;
  auto used = static_cast<std::size_t>(int_digits);
  int exponent = 0;
  if (used < length && s[used] == '.') {
    std::uint64_t frac = 0;
    const int frac_digits = leading_digits(s + used + 1, frac);
    if (frac_digits == 0 || frac_digits == 8) return false;
    mantissa = mantissa * kPow10Int[frac_digits] + frac;
    exponent = -frac_digits;
    used += 1 + static_cast<std::size_t>(frac_digits);
  }
  if (used < length) {
    if (s[used] != 'e' || used + 2 >= length || (s[used + 1] != '+' && s[used + 1] != '-')) return false;
    std::uint64_t power = 0;
    const int power_digits = leading_digits(s + used + 2, power);
    if (power_digits == 0 || power_digits > 3 || used + 2 + static_cast<std::size_t>(power_digits) != length)
      return false;
    exponent += s[used + 1] == '-' ? -static_cast<int>(power) : static_cast<int>(power);
  }
  if (exponent < -22 || exponent > 22) return false;
  double v = static_cast<double>(mantissa);
  v = exponent < 0 ? v / kPow10[-exponent] : v * kPow10[exponent];
  value = negative ? -v : v;
  return true;
}

// Reads the values of a chip line after its times, [p, e), when the writer printed them: each after
// one space, none missing or extra, each as writer_number() reads it. The line is copied into a
// buffer with spaces after it, so that every value's bytes and the 16 after them can be read whole;
// the spaces are found for the whole line first, so no value waits on the one before it. False
// (with `values` partly written) for anything else, which the general path then reads, with its
// messages for a line that is wrong.
inline bool read_writer_values(const char* p, const char* e, std::span<double> values) {
  const auto n = static_cast<std::size_t>(e - p);
  if (n == 0 || n > kFixedValueBytes || *p != ' ') return false;
  constexpr std::size_t kWords = (kFixedValueBytes + 64) / 64;
  alignas(16) char buf[kWords * 64 + 16];
  std::memcpy(buf, p, n);
  // Spaces to the end of n's 64-byte word and 16 bytes beyond, all that is read.
  std::memset(buf + n, ' ', 64 + 16);
  // Bit i of spaces[i / 64]: buf[i] is a separator (a tab is one too; the writer writes none).
  std::array<std::uint64_t, kWords> spaces{};
  const std::size_t words = n / 64 + 1;
  for (std::size_t w = 0; w < words; ++w) {
    std::uint64_t bits = 0;
#if defined(__SSE2__)
    for (std::size_t i = 0; i < 64; i += 16) {
      const __m128i x = _mm_load_si128(reinterpret_cast<const __m128i*>(buf + w * 64 + i));
      const __m128i sep =
          _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(x, _mm_set1_epi8('\t')));
      bits |= static_cast<std::uint64_t>(static_cast<std::uint32_t>(_mm_movemask_epi8(sep))) << i;
    }
#else
    for (std::size_t i = 0; i < 64; ++i) {
      const char c = buf[w * 64 + i];
      bits |= static_cast<std::uint64_t>(c == ' ' || c == '\t') << i;
    }
#endif
    spaces[w] = bits;
  }
  // Each value starts after a separator and ends at the next one, which the next value follows.
  std::size_t at = 0;  // a separator
  std::size_t word = 0;
  std::uint64_t rest = spaces[0] & ~std::uint64_t{1};
  for (double& v : values) {
    if (at >= n) return false;  // fewer values than columns
    while (rest == 0) {
      if (++word == words) return false;
      rest = spaces[word];
    }
    const std::size_t next = word * 64 + static_cast<std::size_t>(std::countr_zero(rest));
    rest &= rest - 1;
    if (next == at + 1 || !writer_number(buf + at + 1, next - at - 1, v)) return false;
    at = next;
  }
  return at == n;  // no field after the last column's
}

std::string_view token_at(const char* p, const char* e) {
  while (p != e && is_separator(*p)) ++p;
  const char* q = p;
  while (q != e && !is_separator(*q)) ++q;
  return {p, static_cast<std::size_t>(q - p)};
}

// The text of a time already read and its value, so that the same text is not read again: a chip
// sample starts where the one before it ended, and a throttle line carries its clock line's time.
// Equal text is an equal number, so the value and every check come out as reading it would give.
struct TimeMemo {
  std::array<char, 24> text{};
  std::size_t length = 0;
  TimeNs value = 0;
};

// Whether the n bytes at a and b are the same, eight at a time (a call to memcmp costs more).
inline bool same_bytes(const char* a, const char* b, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t x;
    std::uint64_t y;
    std::memcpy(&x, a + i, 8);
    std::memcpy(&y, b + i, 8);
    if (x != y) return false;
  }
  for (; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

// ---- chip times in the writer's layout (docs/recording-format.md#reading-a-recording) -----------

// A chip line as the writer prints it starts "chip START END" with both times of 19 digits (every
// time from September 2001 to 2286), each after one space and the values after another. The text
// of such a time orders as its number does, so the opening pass checks these lines' times by their
// text alone, and the chip cursor reads an END in one go.
constexpr std::size_t kTimeDigits = 19;
constexpr std::size_t kChipStartAt = 5;                          // "chip " before it
constexpr std::size_t kChipEndAt = 25;                           // the start and one space before it
constexpr std::size_t kChipValuesAt = 44;                        // the separator after the end
constexpr const char* kLargestTimeText = "9223372036854775807";  // 2^63 - 1

// The eight bytes at s as a big-endian number: two texts compare as these do, byte by byte.
[[gnu::always_inline]] inline std::uint64_t text_word(const char* s) {
  std::uint64_t x;
  std::memcpy(&x, s, 8);
  static_assert(std::endian::native == std::endian::little, "text words are read little-endian");
  return __builtin_bswap64(x);
}

// Below 0, 0 or above 0 as the 19-byte texts at a and b order.
[[gnu::always_inline]] inline int compare_time_text(const char* a, const char* b) {
  for (const std::size_t at : {std::size_t{0}, std::size_t{8}, std::size_t{11}}) {
    const std::uint64_t x = text_word(a + at);
    const std::uint64_t y = text_word(b + at);
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

[[gnu::always_inline]] inline bool eight_digits(std::uint64_t chunk) {
  return ((((chunk + 0x4646464646464646ULL) | (chunk - 0x3030303030303030ULL)) & 0x8080808080808080ULL) == 0);
}

// The number eight digit bytes make, read little-endian (fast_float's eight-digit step).
[[gnu::always_inline]] inline std::uint64_t eight_digits_value(std::uint64_t chunk) {
  chunk -= 0x3030303030303030ULL;
  chunk = (chunk * 10) + (chunk >> 8);
  return (((chunk & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
          (((chunk >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >>
         32;
}

// The 19 bytes at s as three words: bytes 0-7, 8-15 and 11-18 (the last overlaps the second).
struct TimeTextWords {
  std::uint64_t a;
  std::uint64_t b;
  std::uint64_t c;
};
[[gnu::always_inline]] inline TimeTextWords time_text_words(const char* s) {
  TimeTextWords w;
  std::memcpy(&w.a, s, 8);
  std::memcpy(&w.b, s + 8, 8);
  std::memcpy(&w.c, s + 11, 8);
  return w;
}

// Whether the 19 bytes at s are digits whose number is a time (at most 2^63 - 1).
[[gnu::always_inline]] inline bool is_time_text(const char* s) {
  const auto [a, b, c] = time_text_words(s);
  return eight_digits(a) && eight_digits(b) && eight_digits(c) && compare_time_text(s, kLargestTimeText) <= 0;
}

// The number of 19 digits at s (is_time_text(s)).
[[gnu::always_inline]] inline TimeNs time_of_text(const char* s) {
  const auto [a, b, c] = time_text_words(s);
  // c holds digits 11 to 18: its last three are the time's last three.
  const std::uint64_t last3 = eight_digits_value(c) % 1000;
  return static_cast<TimeNs>((eight_digits_value(a) * 100000000 + eight_digits_value(b)) * 1000 + last3);
}

// Whether the four bytes at s are "chip", compared as one word (a call to memcmp costs more).
[[gnu::always_inline]] inline bool starts_with_chip(const char* s) {
  std::uint32_t word;
  std::memcpy(&word, s, 4);
  constexpr std::uint32_t kChip = 'c' | ('h' << 8) | ('i' << 16) | (static_cast<std::uint32_t>('p') << 24);
  return word == kChip;
}

// Whether a chip line starts as the writer prints it: "chip ", a time of 19 digits, one space, a
// time of 19 digits, then a separator or the line's end. The times' digits are not checked here.
inline bool chip_times_layout(std::string_view line) {
  return line.size() >= kChipValuesAt && line[4] == ' ' && line[kChipEndAt - 1] == ' ' &&
         (line.size() == kChipValuesAt || is_separator(line[kChipValuesAt]));
}

// Reads the fields of one line after its kind word; every problem becomes an InputError naming
// the file, the line and the line's syntax.
class Fields {
 public:
  Fields(std::string_view line, std::size_t kind, const Shared& shared, long line_number)
      : p_(line.data() + kKindWords[kind].size()),
        e_(line.data() + line.size()),
        kind_(kind),
        shared_(shared),
        line_number_(line_number) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw core::InputError(shared_.file->path, line_number_, what,
                           "a " + std::string(kKindWords[kind_]) +
                               " line reads: " + syntax_of(kind_, shared_.meta) + " (" + kFormatDoc +
                               "); correct or delete line " + std::to_string(line_number_));
  }

  [[noreturn]] void fail_number(NumStatus status, const char* p, std::string_view what,
                                const char* expected) const {
    if (status == NumStatus::missing)
      fail("the " + std::string(kKindWords[kind_]) + " line ends before its " + std::string(what));
    const std::string tok = recfmt::excerpt(token_at(p, e_));
    if (status == NumStatus::out_of_range)
      fail("the " + std::string(what) + " '" + tok + "' is out of range");
    fail("the " + std::string(what) + " '" + tok + "' is not " + expected);
  }

  std::int64_t integer(std::string_view what, const char* expected = "a whole number") {
    const char* at = p_;
    std::int64_t v = 0;
    const NumStatus s = parse_field(p_, e_, v);
    if (s != NumStatus::ok) fail_number(s, at, what, expected);
    return v;
  }
  TimeNs time(std::string_view what = "time") {
    return integer(what, "a whole number of nanoseconds since the Unix epoch");
  }
  // A time as time() reads it; when its text is the memo's, the memo's value, unread. The memo
  // then holds this time.
  TimeNs time(std::string_view what, TimeMemo& memo) {
    while (p_ != e_ && is_separator(*p_)) ++p_;
    const std::size_t n = memo.length;
    if (n > 0 && static_cast<std::size_t>(e_ - p_) >= n && same_bytes(p_, memo.text.data(), n) &&
        (p_ + n == e_ || is_separator(p_[n]))) {
      p_ += n;
      return memo.value;
    }
    const char* at = p_;
    const TimeNs v = time(what);
    const auto length = static_cast<std::size_t>(p_ - at);
    memo.length = length <= memo.text.size() ? length : 0;
    if (memo.length > 0) std::memcpy(memo.text.data(), at, length);
    memo.value = v;
    return v;
  }
  int small_integer(std::string_view what) {
    const char* at = p_;
    const std::int64_t v = integer(what);
    if (v < INT32_MIN || v > INT32_MAX) fail_number(NumStatus::out_of_range, at, what, "");
    return static_cast<int>(v);
  }
  double number(std::string_view what, bool nan_allowed) {
    const char* at = p_;
    double v = 0;
    const NumStatus s = parse_field(p_, e_, v);
    if (s != NumStatus::ok) fail_number(s, at, what, "a number");
    if (std::isinf(v))
      fail("the " + std::string(what) + " is infinite ('" + recfmt::excerpt(token_at(at, e_)) +
           "'); write nan for a value that could not be read");
    if (std::isnan(v) && !nan_allowed) fail("the " + std::string(what) + " is NaN, which it may not be");
    return v;
  }
  std::string_view word(std::string_view what) {
    while (p_ != e_ && is_separator(*p_)) ++p_;
    if (p_ == e_)
      fail("the " + std::string(kKindWords[kind_]) + " line ends before its " + std::string(what));
    const char* q = p_;
    while (q != e_ && !is_separator(*q)) ++q;
    const std::string_view w(p_, static_cast<std::size_t>(q - p_));
    p_ = q;
    return w;
  }
  // Free text: everything after the one separator that follows the previous field.
  std::string text(const char* what) {
    if (p_ == e_) return {};
    std::string out;
    const std::string problem =
        recfmt::unescape(std::string_view(p_ + 1, static_cast<std::size_t>(e_ - p_ - 1)), out);
    if (!problem.empty()) fail("the " + std::string(what) + ": " + problem);
    p_ = e_;
    return out;
  }
  void finish() {
    while (p_ != e_ && is_separator(*p_)) ++p_;
    if (p_ != e_)
      fail("the " + std::string(kKindWords[kind_]) + " line has a field too many: '" +
           recfmt::excerpt(token_at(p_, e_)) + "'");
  }
  const char* position() const { return p_; }
  const char* line_end() const { return e_; }
  void skip_to(const char* p) { p_ = p; }

 private:
  const char* p_;
  const char* e_;
  std::size_t kind_;
  const Shared& shared_;
  long line_number_;
};

[[noreturn]] void order_error(const Shared& shared, std::size_t kind, long line, TimeNs ts, long prev_line,
                              TimeNs prev_ts) {
  const std::string k(kKindWords[kind]);
  throw core::InputError(
      shared.file->path, line,
      "this " + k + " record's time " + std::to_string(ts) + " ns is earlier than the previous " + k +
          " record's " + std::to_string(prev_ts) + " ns (line " + std::to_string(prev_line) +
          "); times must not decrease within a kind",
      "the recording was reordered or edited: sort each kind's lines by time, or delete line " +
          std::to_string(line));
}

[[noreturn]] void span_error(const Shared& shared, long line, TimeNs start, TimeNs end) {
  throw core::InputError(
      shared.file->path, line,
      "this chip sample ends (" + std::to_string(end) + " ns) before it starts (" + std::to_string(start) +
          " ns)",
      "a chip sample's END_NS must be at least its START_NS; correct or delete line " + std::to_string(line));
}

// Checks one kind's time order as lines arrive.
struct OrderCheck {
  bool any = false;
  TimeNs ts = 0;
  long line = 0;
  void see(const Shared& shared, std::size_t kind, long line_number, TimeNs t) {
    if (any && t < ts) order_error(shared, kind, line_number, t, line, ts);
    any = true;
    ts = t;
    line = line_number;
  }
};

// Whether `line` is of the kind whose word is `word` (compared byte by byte: the words are short and
// a call to memcmp costs more).
inline bool has_kind(std::string_view line, std::string_view word) {
  if (line.size() < word.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i)
    if (line[i] != word[i]) return false;
  return line.size() == word.size() || is_separator(line[word.size()]);
}

// One read of the file shared by the cursors that are open at the same time
// (docs/recording-format.md#reading-a-recording): the analysis walks the chip samples with the
// GPU-Util, engine, power, clock and throttle cursors in lockstep, and the report's timelines read
// GPU-Util, clocks, power, throttle reasons and host streams along with them; each of those would
// otherwise read the whole file for itself, as their kinds' lines are interleaved. Any number of
// cursors of one kind may join. A cursor joins the shared read when it opens before the read has
// passed its kind's first line; the read then queues the lines of every joined cursor's kind as it
// passes them, until that cursor takes them. A queue that grows past kQueueBytes (a cursor that lags
// far behind the others) is dropped and its cursor goes on with a reader of its own from its first
// line not yet taken, so memory stays bounded whatever the recording's length. Cursors of one
// recording share it from the thread that opened the first of them; one opened on another thread
// reads alone.
class SharedRead {
 public:
  static constexpr std::size_t kQueueBytes = std::size_t{4} << 20;

  // Where a cursor that left (or never joined) the shared read goes on by itself.
  struct Resume {
    std::int64_t offset = 0;
    long line_number = 0;  // of the line at `offset`
  };

  SharedRead(std::shared_ptr<const OpenFile> file, const std::array<KindRange, kKindCount>& ranges)
      : file_(std::move(file)), ranges_(ranges) {
    for (const KindRange& r : ranges_) {
      if (r.count == 0) continue;
      if (begin_ < 0 || r.begin < begin_) {
        begin_ = r.begin;
        first_line_ = r.first_line;
      }
      end_ = std::max(end_, r.end);
    }
  }

  // Joins a cursor of `kind` to the shared read: its id, or nullopt when it must read alone.
  std::optional<std::size_t> join(std::size_t kind) {
    if (begin_ < 0) return std::nullopt;
    if (joined_.empty()) {
      // Nobody reads along: the next pass starts from the top (a second analysis, a later reader).
      reader_.reset();
      reader_done_ = false;
    }
    if (!owner_set_) {
      owner_ = std::this_thread::get_id();
      owner_set_ = true;
    } else if (owner_ != std::this_thread::get_id()) {
      return std::nullopt;
    }
    const std::int64_t at = reader_ ? reader_->offset_after() : begin_;
    if (reader_ && (reader_done_ || at > ranges_[kind].begin)) return std::nullopt;
    std::size_t id = 0;
    while (id < queues_.size() && queues_[id].joined) ++id;
    if (id == queues_.size()) queues_.emplace_back();
    queues_[id] = Queue{};
    queues_[id].joined = true;
    queues_[id].kind = kind;
    joined_.push_back(id);
    index_kinds();
    return id;
  }

  void leave(std::size_t id) {
    queues_[id] = Queue{};
    joined_.erase(std::remove(joined_.begin(), joined_.end(), id), joined_.end());
    index_kinds();
  }

  // The next line of joined cursor `id`'s kind: true with the line; false at the end of the file;
  // nullopt when its queue was dropped, with `resume` set (the cursor has left the shared read).
  std::optional<bool> next(std::size_t id, std::string_view& line, long& line_number, Resume& resume) {
    Queue& q = queues_[id];
    if (q.dropped) {
      resume = q.resume;
      leave(id);
      return std::nullopt;
    }
    if (q.head < q.lines.size()) {
      const Queued& l = q.lines[q.head++];
      line = std::string_view(q.bytes.data() + l.at, l.length);
      line_number = l.line_number;
      if (q.head == q.lines.size()) q.clear_taken = true;
      return true;
    }
    q.clear();
    return pump(id, line, line_number);
  }

 private:
  struct Queued {
    std::size_t at;
    std::size_t length;
    long line_number;
    std::int64_t offset;
  };
  struct Queue {
    bool joined = false;
    bool dropped = false;
    bool clear_taken = false;
    std::size_t kind = 0;
    std::string bytes;
    std::vector<Queued> lines;
    std::size_t head = 0;
    Resume resume;
    // Forgets the lines taken once all are (the line last handed out stays valid until then).
    void clear() {
      if (!clear_taken) return;
      lines.clear();
      bytes.clear();
      head = 0;
      clear_taken = false;
    }
  };

  // Queues line `l` for cursor `id`, or drops the queue when it would grow too large.
  void enqueue(std::size_t id, std::string_view l) {
    Queue& q = queues_[id];
    if (q.dropped) return;
    if (q.bytes.size() + l.size() > kQueueBytes) {
      // Too far ahead of its cursor: that cursor reads alone from its first line not yet taken.
      q.dropped = true;
      q.resume = q.head < q.lines.size() ? Resume{q.lines[q.head].offset, q.lines[q.head].line_number}
                                         : Resume{reader_->line_offset(), reader_->line_number()};
      q.bytes = std::string();
      q.lines = std::vector<Queued>();
      return;
    }
    q.clear();
    q.lines.push_back({q.bytes.size(), l.size(), reader_->line_number(), reader_->line_offset()});
    q.bytes.append(l);
  }

  // The joined cursors by kind, the kinds in the order of RecordKinds (chip samples, most lines,
  // first), so that a line's kind is found with one comparison per kind read, not per cursor.
  void index_kinds() {
    kinds_.clear();
    for (std::size_t k = 0; k < kKindCount; ++k) {
      KindReaders readers{k, {}};
      for (std::size_t j : joined_)
        if (queues_[j].kind == k) readers.ids.push_back(j);
      if (!readers.ids.empty()) kinds_.push_back(std::move(readers));
    }
  }

  // Reads on until a line of cursor `id`'s kind, queueing the lines of the other joined cursors'
  // kinds it passes. False at the end of the file.
  bool pump(std::size_t id, std::string_view& line, long& line_number) {
    if (!reader_)
      reader_.emplace(file_, begin_, end_, first_line_,
                      std::min(kCursorBufferBytes, static_cast<std::size_t>(end_ - begin_) + 1),
                      /*strict_limit=*/true);
    std::string_view l;
    while (!reader_done_) {
      if (!reader_->next(l)) {
        reader_done_ = true;
        break;
      }
      if (l.empty()) continue;
      for (const KindReaders& readers : kinds_) {
        const std::string_view word = kKindWords[readers.kind];
        if (l[0] != word[0] || !has_kind(l, word)) continue;
        bool mine = false;
        for (std::size_t j : readers.ids) {
          if (j == id)
            mine = true;
          else
            enqueue(j, l);
        }
        if (mine) {
          line = l;
          line_number = reader_->line_number();
          return true;
        }
        break;
      }
    }
    return false;
  }

  std::shared_ptr<const OpenFile> file_;
  std::array<KindRange, kKindCount> ranges_;
  std::int64_t begin_ = -1;
  std::int64_t end_ = 0;
  long first_line_ = 0;
  std::optional<LineReader> reader_;
  bool reader_done_ = false;
  std::vector<Queue> queues_;        // by cursor id; a slot whose cursor left is used again
  std::vector<std::size_t> joined_;  // the ids of the cursors reading along
  struct KindReaders {
    std::size_t kind;
    std::vector<std::size_t> ids;
  };
  std::vector<KindReaders> kinds_;  // joined_ by kind (index_kinds())
  std::thread::id owner_;
  bool owner_set_ = false;
};

// The lines of one kind, in file order: from the shared read while it serves this cursor, else
// through a reader of its own.
class KindCursor {
 public:
  KindCursor(std::shared_ptr<const Shared> shared, std::size_t kind)
      : shared_(std::move(shared)), kind_(kind) {
    const KindRange& range = shared_->ranges[kind_];
    if (range.count > 0 && shared_->read) id_ = shared_->read->join(kind_);
  }
  ~KindCursor() {
    if (id_) shared_->read->leave(*id_);
  }
  KindCursor(const KindCursor&) = delete;
  KindCursor& operator=(const KindCursor&) = delete;

  bool next(std::string_view& line) {
    const KindRange& range = shared_->ranges[kind_];
    if (range.count == 0 || seen_ == range.count) {
      // Done: the shared read need not queue for this cursor any more, and may start again for others.
      if (id_) shared_->read->leave(*id_);
      id_.reset();
      return false;
    }
    if (id_) {
      SharedRead::Resume resume;
      const std::optional<bool> got = shared_->read->next(*id_, line, line_number_, resume);
      if (got) {
        if (!*got) {
          shared_->read->leave(*id_);
          id_.reset();
          return false;
        }
        ++seen_;
        return true;
      }
      id_.reset();
      open_reader(resume.offset, resume.line_number);
    } else if (!reader_) {
      open_reader(range.begin, range.first_line);
    }
    const std::string_view word = kKindWords[kind_];
    while (reader_->next(line)) {
      if (!has_kind(line, word)) continue;
      ++seen_;
      line_number_ = reader_->line_number();
      return true;
    }
    return false;
  }
  long line_number() const { return line_number_; }
  const Shared& shared() const { return *shared_; }

 private:
  void open_reader(std::int64_t from, long first_line) {
    const KindRange& range = shared_->ranges[kind_];
    const auto span = static_cast<std::size_t>(range.end - from);
    reader_.emplace(shared_->file, from, range.end, first_line, std::min(kCursorBufferBytes, span + 1),
                    /*strict_limit=*/true);
  }

  std::shared_ptr<const Shared> shared_;
  std::size_t kind_;
  std::optional<std::size_t> id_;  // in the shared read, while it serves this cursor
  std::optional<LineReader> reader_;
  long seen_ = 0;
  long line_number_ = 0;
};

class ChipCursor final : public RecordStream<ChipSample> {
 public:
  explicit ChipCursor(std::shared_ptr<const Shared> shared)
      : cursor_(std::move(shared), kind_index<ChipSample>) {
    const RecordingMeta& m = cursor_.shared().meta;
    units_ = m.units.size();
    diagnostics_ = m.diagnostics.size();
    values_.resize(units_ + diagnostics_ + m.counts.size());
  }

  bool next(ChipSample& out) override {
    std::string_view line;
    if (!cursor_.next(line)) return false;
    const Shared& shared = cursor_.shared();
    const long n = cursor_.line_number();
    Fields f(line, kind_index<ChipSample>, shared, n);
    TimeNs start = 0;
    TimeNs end = 0;
    const char* l = line.data();
    if (chip_times_layout(line) && times_.length == kTimeDigits &&
        same_bytes(l + kChipStartAt, times_.text.data(), kTimeDigits) && is_time_text(l + kChipEndAt))
        [[likely]] {
      // The writer's layout, starting where the line before ended: the start is that end, unread,
      // and the end is read in one go; the memo then holds it, as time() would leave it.
      start = times_.value;
      end = time_of_text(l + kChipEndAt);
      std::memcpy(times_.text.data(), l + kChipEndAt, kTimeDigits);
      times_.value = end;
      f.skip_to(l + kChipValuesAt);
    } else {
      start = f.time("start time", times_);
      end = f.time("end time", times_);
    }
    const char* p = f.position();
    const char* e = f.line_end();
    if (!read_writer_values(p, e, values_)) [[unlikely]]
      read_values(f, p, e);
    if (end < start) span_error(shared, n, start, end);
    order_.see(shared, kind_index<ChipSample>, n, start);
    const std::span<const double> all(values_);
    out.start_ns = start;
    out.end_ns = end;
    out.units = all.subspan(0, units_);
    out.diagnostics = all.subspan(units_, diagnostics_);
    out.counts = all.subspan(units_ + diagnostics_);
    return true;
  }

 private:
  // The general path: any numbers std::from_chars reads, any separators, and the messages for a
  // line that is wrong.
  void read_values(const Fields& f, const char* p, const char* e) {
    const Shared& shared = cursor_.shared();
    for (std::size_t i = 0; i < values_.size(); ++i) {
      const char* at = p;
      const NumStatus s = parse_field(p, e, values_[i]);
      if (s != NumStatus::ok) [[unlikely]] {
        if (s == NumStatus::missing) wrong_count(f, p, i);
        f.fail_number(s, at, "value of " + shared.chip_column_names[i], "a number");
      }
      if (std::isinf(values_[i])) [[unlikely]]
        f.fail("the value of " + shared.chip_column_names[i] +
               " is infinite; write nan for a value that could not be read");
    }
    while (p != e && is_separator(*p)) ++p;
    if (p != e) [[unlikely]]
      wrong_count(f, p, values_.size());
  }

  // `parsed` values were read before the line ended or before `p`, where more fields follow.
  [[noreturn]] void wrong_count(const Fields& f, const char* p, std::size_t parsed) const {
    std::size_t found = parsed;
    const char* e = f.line_end();
    while (true) {
      while (p != e && is_separator(*p)) ++p;
      if (p == e) break;
      ++found;
      while (p != e && !is_separator(*p)) ++p;
    }
    f.fail("the chip line has " + std::to_string(found) +
           " values after its times where the meta's columns need " + std::to_string(values_.size()));
  }

  KindCursor cursor_;
  TimeMemo times_;  // the previous line's end time
  std::size_t units_ = 0;
  std::size_t diagnostics_ = 0;
  std::vector<double> values_;
  OrderCheck order_;
};

// A stream whose records parse from a Fields reader with their kind's parse_fields().
template <typename Record>
class LineCursor final : public RecordStream<Record> {
 public:
  explicit LineCursor(std::shared_ptr<const Shared> shared)
      : cursor_(std::move(shared), kind_index<Record>) {}
  bool next(Record& out) override;

 private:
  KindCursor cursor_;
  OrderCheck order_;
};

void parse_fields(Fields& f, const Shared&, UtilSample& out) {
  out.ts_ns = f.time();
  out.pct = f.number("GPU-Util percent", /*nan_allowed=*/false);
  if (out.pct < 0 || out.pct > 100)
    f.fail("the GPU-Util percent " + number_text(out.pct) + " is outside 0..100");
  const std::string_view source = f.word("source");
  if (source == "samples")
    out.source = UtilSource::samples;
  else if (source == "polled")
    out.source = UtilSource::polled;
  else
    f.fail("the GPU-Util source '" + recfmt::excerpt(source) + "' is neither 'samples' nor 'polled'");
}

void parse_fields(Fields& f, const Shared&, ClockReading& out) {
  out.ts_ns = f.time();
  out.sm_mhz = f.number("SM clock", true);
  out.mem_mhz = f.number("memory clock", true);
  if (out.sm_mhz < 0 || out.mem_mhz < 0) f.fail("a clock is negative");
}

void parse_fields(Fields& f, const Shared&, ThrottleReading& out) {
  out.ts_ns = f.time();
  const std::string_view list = f.word("reasons");
  if (list == "?") {
    out.mask.reset();
    return;
  }
  if (list == "-") {
    out.mask = 0;
    return;
  }
  std::uint64_t mask = 0;
  std::size_t from = 0;
  while (from <= list.size()) {
    const std::size_t comma = std::min(list.find(',', from), list.size());
    const std::string_view name = list.substr(from, comma - from);
    if (name.empty()) f.fail("the throttle reasons '" + recfmt::excerpt(list) + "' hold an empty name");
    if (const auto bit = throttle_reason_bit(name)) {
      mask |= *bit;
    } else {
      std::uint64_t bits = 0;
      const char* end = name.data() + name.size();
      const bool hex = name.size() > 2 && name[0] == '0' && name[1] == 'x';
      const auto res = hex ? std::from_chars(name.data() + 2, end, bits, 16)
                           : std::from_chars_result{name.data(), std::errc::invalid_argument};
      if (!hex || res.ec != std::errc{} || res.ptr != end)
        f.fail("unknown throttle reason '" + recfmt::excerpt(name) +
               "'; known reasons are gpu_idle, applications_clocks, sw_power_cap, hw_slowdown, sync_boost, "
               "sw_thermal, hw_thermal, hw_power_brake, display_clocks, or other bits as 0x...");
      mask |= bits;
    }
    from = comma + 1;
  }
  out.mask = mask;
}

void parse_fields(Fields& f, const Shared& shared, PowerLimitReading& out) {
  out.ts_ns = f.time();
  out.limit_w = f.number("power limit", true);
  if (out.limit_w < 0) f.fail("the power limit is negative");
  // Before format 4 the line held the limit alone: draw and energy were not recorded.
  out.draw_w = std::numeric_limits<double>::quiet_NaN();
  out.energy_mj = std::numeric_limits<double>::quiet_NaN();
  if (shared.meta.format_version < 4) return;
  out.draw_w = f.number("power draw", true);
  if (out.draw_w < 0) f.fail("the power draw is negative");
  out.energy_mj = f.number("energy counter", true);
  if (out.energy_mj < 0) f.fail("the energy counter is negative");
}

void parse_fields(Fields& f, const Shared&, ProcessReading& out) {
  out.ts_ns = f.time();
  out.compute = f.small_integer("compute process count");
  out.graphics = f.small_integer("graphics process count");
  out.exited = f.small_integer("exited process count");
  if (out.compute < -1 || out.graphics < -1 || out.exited < 0)
    f.fail("process counts must be -1 (unreadable) or more, and the exited count 0 or more");
}

void parse_fields(Fields& f, const Shared&, HostStream& out) {
  out.ts_ns = f.time();
  out.id = f.integer("stream id");
  if (out.id < 0) f.fail("the host stream id " + std::to_string(out.id) + " is negative");
  const std::string_view name = f.word("metric name");
  const std::string_view type_word = f.word("metric type");
  const auto type = metrics::parse_metric_type(type_word);
  if (!type)
    f.fail("the metric type '" + recfmt::excerpt(type_word) + "' is not counter, ratio or throughput");
  auto parsed = metrics::parse_metric_name(name, *type);
  if (!parsed) f.fail(parsed.reason());
  const std::string_view unit_word = f.word("unit");
  const auto unit = metrics::parse_unit(unit_word);
  if (!unit)
    f.fail("the unit '" + recfmt::excerpt(unit_word) +
           "' is not one of count, bytes, bytes_per_second, pct, ratio, hz, cycles, requests, mhz, watts");
  const std::string_view scope_word = f.word("scope");
  const auto scope = metrics::parse_scope(scope_word);
  if (!scope)
    f.fail("the scope '" + recfmt::excerpt(scope_word) +
           "' is not system, cpu:N, device:NAME, process:PID or gpu:N");
  const double peak = f.number("peak", /*nan_allowed=*/true);
  out.descriptor = metrics::MetricDescriptor{};
  out.descriptor.name = *parsed;
  out.descriptor.type = *type;
  out.descriptor.unit = *unit;
  out.descriptor.scope = *scope;
  if (!std::isnan(peak)) {
    out.descriptor.peak = peak;
    if (f.position() != f.line_end() && !token_at(f.position(), f.line_end()).empty())
      f.fail("a host stream with a peak has no reason for lacking one; write the peak as nan");
  } else {
    out.descriptor.no_peak_reason = f.text("reason there is no peak");
  }
}

void parse_fields(Fields& f, const Shared&, HostTask& out) {
  out.ts_ns = f.time();
  out.pid = f.integer("pid");
  out.ppid = f.integer("parent pid");
  if (out.pid <= 0 || out.ppid < 0) f.fail("a pid must be above 0 and a parent's pid 0 or more");
  out.name = f.text("process name");
}

void parse_fields(Fields& f, const Shared&, GpuHolder& out) {
  out.ts_ns = f.time();
  out.pid = f.integer("pid");
  if (out.pid <= 0) f.fail("a pid must be above 0");
  const std::string_view w = f.word("role");
  const std::optional<HolderRole> role = holder_role_from_text(w);
  if (!role) f.fail("the holder role '" + recfmt::excerpt(w) + "' is none of command, diescope, other, gone");
  out.role = *role;
  out.name = f.text("process name");
  if (out.role == HolderRole::gone && !out.name.empty())
    f.fail("a process that left the lists carries no name");
}

void parse_fields(Fields& f, const Shared&, Mark& out) {
  out.ts_ns = f.time();
  const std::string_view w = f.word("start or stop");
  if (w != "start" && w != "stop")
    f.fail("the mark '" + recfmt::excerpt(w) + "' is neither 'start' nor 'stop'");
  out.kind = w == "start" ? MarkKind::start : MarkKind::stop;
}

void parse_fields(Fields& f, const Shared&, CountersEvent& out) {
  out.ts_ns = f.time();
  const std::string_view w = f.word("on or off");
  if (w != "on" && w != "off")
    f.fail("the counters state '" + recfmt::excerpt(w) + "' is neither 'on' nor 'off'");
  out.on = w == "on";
  out.reason = f.text("reason");
}

void parse_fields(Fields& f, const Shared&, Note& out) {
  out.ts_ns = f.time();
  out.topic = std::string(f.word("topic"));
  out.text = f.text("note text");
}

void parse_fields(Fields& f, const Shared&, ClockJump& out) {
  out.ts_ns = f.time();
  out.step_ns = f.integer("step", "a whole number of nanoseconds");
}

void parse_fields(Fields& f, const Shared&, RunEnd& out) {
  out.ts_ns = f.time();
  out.exit_code = f.small_integer("exit code");
  out.ending = parse_run_ending(f.text("description of how the run ended"));
}

template <typename Record>
bool LineCursor<Record>::next(Record& out) {
  std::string_view line;
  if (!cursor_.next(line)) return false;
  const long n = cursor_.line_number();
  Fields f(line, kind_index<Record>, cursor_.shared(), n);
  parse_fields(f, cursor_.shared(), out);
  f.finish();
  order_.see(cursor_.shared(), kind_index<Record>, n, out.ts_ns);
  return true;
}

class EngineCursor final : public RecordStream<EngineReading> {
 public:
  explicit EngineCursor(std::shared_ptr<const Shared> shared)
      : cursor_(std::move(shared), kind_index<EngineReading>) {
    values_.resize(cursor_.shared().meta.engines.size());
  }
  bool next(EngineReading& out) override {
    std::string_view line;
    if (!cursor_.next(line)) return false;
    const Shared& shared = cursor_.shared();
    const long n = cursor_.line_number();
    Fields f(line, kind_index<EngineReading>, shared, n);
    out.ts_ns = f.time();
    for (std::size_t i = 0; i < values_.size(); ++i) {
      if (token_at(f.position(), f.line_end()).empty())
        f.fail("the engine line has " + std::to_string(i) + " values where the meta lists " +
               std::to_string(values_.size()) + " engines");
      values_[i] = f.number("value of engine '" + shared.meta.engines[i].key + "'", true);
    }
    if (!token_at(f.position(), f.line_end()).empty())
      f.fail("the engine line has more values than the meta's " + std::to_string(values_.size()) +
             " engines");
    order_.see(shared, kind_index<EngineReading>, n, out.ts_ns);
    out.values = values_;
    return true;
  }

 private:
  KindCursor cursor_;
  std::vector<double> values_;
  OrderCheck order_;
};

class HostCursor final : public RecordStream<HostSample> {
 public:
  explicit HostCursor(std::shared_ptr<const Shared> shared)
      : cursor_(std::move(shared), kind_index<HostSample>) {}
  bool next(HostSample& out) override {
    std::string_view line;
    if (!cursor_.next(line)) return false;
    const Shared& shared = cursor_.shared();
    const long n = cursor_.line_number();
    Fields f(line, kind_index<HostSample>, shared, n);
    out.ts_ns = f.time();
    values_.clear();
    while (!token_at(f.position(), f.line_end()).empty()) {
      HostValue v;
      v.id = f.integer("host stream id");
      if (!shared.host_ids.contains(v.id))
        f.fail("host stream " + std::to_string(v.id) + " is not declared by any hstream line");
      if (!values_.empty() && v.id <= values_.back().id)
        f.fail("the host stream ids must ascend within a line (" + std::to_string(values_.back().id) +
               " then " + std::to_string(v.id) + ")");
      v.value = f.number("value of host stream " + std::to_string(v.id), /*nan_allowed=*/true);
      values_.push_back(v);
    }
    if (values_.empty()) f.fail("the host line has no values");
    order_.see(shared, kind_index<HostSample>, n, out.ts_ns);
    out.values = values_;
    return true;
  }

 private:
  KindCursor cursor_;
  std::vector<HostValue> values_;
  OrderCheck order_;
};

template <typename Record>
class EmptyStream final : public RecordStream<Record> {
 public:
  bool next(Record&) override { return false; }
};

// ---- opening: header, meta, side records and every line's kind and times -------------------------

[[noreturn]] void not_a_recording(const std::string& path, std::string_view first_line) {
  throw core::InputError(path, 1,
                         "not a diescope recording: the first line reads '" + recfmt::excerpt(first_line) +
                             "' where '" + std::string(kRecordingMagic) + " N' was expected (N from " +
                             std::to_string(core::kOldestRecordingFormatVersion) + " to " +
                             std::to_string(core::kRecordingFormatVersion) + ")",
                         "pass a recording written by diescope (a " + std::string(kRecordingExtension) +
                             " file); other tools can write one as " + kFormatDoc + " describes");
}

// Returns the format version line 1 names.
long check_first_line(const std::string& path, std::string_view line) {
  const std::string_view magic = kRecordingMagic;
  if (!has_kind(line, magic)) not_a_recording(path, line);
  const char* p = line.data() + magic.size();
  const char* e = line.data() + line.size();
  long version = 0;
  if (parse_field(p, e, version) != NumStatus::ok) not_a_recording(path, line);
  while (p != e && is_separator(*p)) ++p;
  if (p != e) not_a_recording(path, line);
  if (version < core::kOldestRecordingFormatVersion || version > core::kRecordingFormatVersion)
    throw core::InputError(path, 1,
                           "recording format version " + std::to_string(version) +
                               " is not supported; this diescope reads versions " +
                               std::to_string(core::kOldestRecordingFormatVersion) + " to " +
                               std::to_string(core::kRecordingFormatVersion),
                           version > core::kRecordingFormatVersion
                               ? "read it with the newer diescope that wrote it, or upgrade diescope"
                               : "read it with the older diescope that wrote it, or record the run again");
  return version;
}

// The first format version that has record kind `kind` (its index in RecordKinds).
int first_version_with(std::size_t kind) {
  const bool host =
      kind == kind_index<HostSample> || kind == kind_index<HostStream> || kind == kind_index<HostTask>;
  if (kind == kind_index<GpuHolder>) return 3;
  return host ? 2 : 1;
}

// The last chip line's times and the latest end, as text, while chip lines come in the writer's
// layout (docs/recording-format.md#reading-a-recording): 19 digits each, so their texts order as
// their numbers do.
struct ChipTimesText {
  bool active = false;
  std::array<char, kTimeDigits> start{};
  std::array<char, kTimeDigits> end{};
  std::array<char, kTimeDigits> latest{};  // the latest end since active
  long line = 0;

  // After the full read of chip line `n`: follows on by text when it is in the writer's layout.
  void start_from(std::string_view line_text, long n) {
    const char* l = line_text.data();
    if (!chip_times_layout(line_text) || !is_time_text(l + kChipStartAt) || !is_time_text(l + kChipEndAt))
      return;
    active = true;
    std::memcpy(start.data(), l + kChipStartAt, kTimeDigits);
    std::memcpy(end.data(), l + kChipEndAt, kTimeDigits);
    latest = end;
    line = n;
  }

  // Chip line `n` when it is in the writer's layout and keeps every rule its times have (digits, a
  // time's range, END at least START, STARTs not decreasing); false for anything else, which the
  // full read then reads (with its message for a line that breaks a rule).
  bool take(std::string_view line_text, long n) {
    if (!chip_times_layout(line_text)) return false;
    const char* s = line_text.data() + kChipStartAt;
    const char* e = line_text.data() + kChipEndAt;
    // Most often a sample starts where the one before ended: a time already checked, and not before
    // the previous start, which that end is not before.
    if (!same_bytes(s, end.data(), kTimeDigits) &&
        (!is_time_text(s) || compare_time_text(s, start.data()) < 0))
      return false;
    if (!is_time_text(e) || compare_time_text(e, s) < 0) return false;
    std::memcpy(start.data(), s, kTimeDigits);
    std::memcpy(end.data(), e, kTimeDigits);
    if (compare_time_text(e, latest.data()) > 0) std::memcpy(latest.data(), e, kTimeDigits);
    line = n;
    return true;
  }
};

class FileRecording final : public Recording {
 public:
  explicit FileRecording(const std::filesystem::path& path);

  const RecordingMeta& meta() const override { return shared_->meta; }
  const SideRecords& side() const override { return side_; }
  std::string name() const override { return shared_->file->path; }

 private:
  AnyStream open_stream(StreamTag kind) const override {
    return open_with(kind, [this]<typename Record>(std::type_identity<Record>) -> StreamPtr<Record> {
      if constexpr (std::is_same_v<Record, ChipSample>)
        return std::make_unique<ChipCursor>(shared_);
      else if constexpr (std::is_same_v<Record, EngineReading>)
        return std::make_unique<EngineCursor>(shared_);
      else if constexpr (std::is_same_v<Record, HostSample>)
        return std::make_unique<HostCursor>(shared_);
      else
        return std::make_unique<LineCursor<Record>>(shared_);
    });
  }
  void read_records(LineReader& reader, Shared& shared);
  // Reads one line of kind Record in the opening pass: a stream kind's times only (its cursor checks
  // the rest), a side kind's record whole. Returns the time that orders the kind; sets `latest` to
  // the latest time the line reaches.
  template <typename Record>
  TimeNs read_line(Fields& f, const Shared& shared, long line_number, long& end_line, TimeNs& latest);
  // The last chip line's end time, and the last time of another stream kind's line (read_line).
  TimeMemo chip_times_;
  TimeMemo other_times_;

  std::shared_ptr<const Shared> shared_;
  SideRecords side_;
};

std::shared_ptr<const OpenFile> open_file(const std::string& path, std::int64_t& size) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below); no effect on files.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR)
      throw core::InputError(
          path, 0, "no such file",
          "check the path; diescope run and diescope agent print where they write recordings");
    if (err == EACCES || err == EPERM)
      throw core::InputError(path, 0, std::string("cannot be read: ") + std::strerror(err),
                             "give yourself read permission (chmod u+r) or run as a user who can read it");
    throw core::InputError(path, 0, std::string("cannot be opened: ") + std::strerror(err),
                           "check the path and the file");
  }
  auto file = std::make_shared<const OpenFile>(path, fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    throw core::InputError(path, 0, std::string("cannot be read: ") + std::strerror(errno),
                           "check the path and the file");
  if (S_ISDIR(st.st_mode))
    throw core::InputError(
        path, 0, "is a directory, not a recording",
        "pass a recording file (" + std::string(kRecordingExtension) + ") inside it instead");
  if (!S_ISREG(st.st_mode))
    throw core::InputError(path, 0, "is not a regular file (a pipe or device cannot be read more than once)",
                           "save the recording to a file first and pass that file");
  if (st.st_size == 0)
    throw core::InputError(path, 0, "the file is empty, not a recording",
                           "pass a recording diescope wrote; an empty file means the writer never started");
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  size = st.st_size;
  return file;
}

FileRecording::FileRecording(const std::filesystem::path& path) {
  auto shared = std::make_shared<Shared>();
  std::int64_t size = 0;
  shared->file = open_file(path.string(), size);
  const std::string& name = shared->file->path;
  // The whole file as it is now; a line that is still being written is left for later readers.
  LineReader reader(shared->file, 0, size, 1,
                    std::min<std::size_t>(kCursorBufferBytes, static_cast<std::size_t>(size) + 1),
                    /*strict_limit=*/false);
  std::string_view line;
  if (!reader.next(line)) {
    // Not even one complete line: either a recording cut off at once, or something else.
    char head[64];
    const ssize_t n = ::pread(shared->file->fd, head, sizeof head, 0);
    const std::string_view start(head, n > 0 ? static_cast<std::size_t>(n) : 0);
    // Cut off while writing "diescope-recording 1\n"?
    bool cut_magic = false;
    for (int v = core::kOldestRecordingFormatVersion; v <= core::kRecordingFormatVersion; ++v) {
      const std::string magic_line = std::string(kRecordingMagic) + " " + std::to_string(v);
      cut_magic =
          cut_magic || (!start.empty() && std::string_view(magic_line).substr(0, start.size()) == start);
    }
    if (cut_magic)
      throw core::InputError(name, 1, "the recording was cut off in its first line",
                             "the writer stopped before it wrote anything usable; record the run again");
    not_a_recording(name, start);
  }
  const long version = check_first_line(name, line);
  if (!reader.next(line)) {
    throw core::InputError(name, 2,
                           reader.tail_bytes() > 0
                               ? "the recording was cut off in its meta line"
                               : "the recording ends after its first line; the meta line is missing",
                           "the writer stopped before it wrote anything usable; record the run again");
  }
  if (!has_kind(line, "meta"))
    throw core::InputError(name, 2,
                           "line 2 must be the meta line ('meta {...}'), not '" + recfmt::excerpt(line) + "'",
                           std::string("see ") + kFormatDoc + " for the meta line's fields");
  try {
    shared->meta = recfmt::meta_from_json(line.substr(4));
  } catch (const recfmt::MetaProblem& e) {
    throw core::InputError(
        name, 2, e.what(),
        std::string("the meta line must be one JSON object with every field ") + kFormatDoc + " lists");
  }
  if (shared->meta.format_version != version)
    throw core::InputError(name, 2,
                           "the meta's format_version " + std::to_string(shared->meta.format_version) +
                               " differs from line 1's version " + std::to_string(version),
                           "make the two versions agree");
  const RecordingMeta& m = shared->meta;
  for (const ColumnDef& c : m.units) shared->chip_column_names.push_back("unit '" + c.key + "'");
  for (const ColumnDef& c : m.diagnostics) shared->chip_column_names.push_back("diagnostic '" + c.key + "'");
  for (const ColumnDef& c : m.counts) shared->chip_column_names.push_back("count '" + c.key + "'");

  read_records(reader, *shared);
  for (const HostStream& h : side_.host_streams) {
    if (!shared->host_ids.insert(h.id).second)
      throw core::InputError(name, 0, "host stream " + std::to_string(h.id) + " is declared twice",
                             "give each hstream line its own id");
  }
  side_.truncated = reader.tail_bytes() > 0;
  side_.complete_lines = reader.line_number();
  shared->read = std::make_shared<SharedRead>(shared->file, shared->ranges);
  shared_ = std::move(shared);
}

void FileRecording::read_records(LineReader& reader, Shared& shared) {
  std::array<OrderCheck, kKindCount> order{};
  bool any_record = false;
  TimeNs last = shared.meta.start_ns;
  auto saw = [&](TimeNs ts) {
    last = any_record ? std::max(last, ts) : ts;
    any_record = true;
  };
  // Chip lines in the writer's layout after one read in full: their times checked by their text
  // (docs/recording-format.md#reading-a-recording), the numbers read only when a line of another
  // layout, or one that breaks a rule, goes through the full read (sync()) and at the end.
  constexpr std::size_t chip = kind_index<ChipSample>;
  ChipTimesText text;
  auto sync = [&] {
    if (!text.active) return;
    text.active = false;
    order[chip].any = true;
    order[chip].ts = time_of_text(text.start.data());
    order[chip].line = text.line;
    chip_times_.length = kTimeDigits;
    std::memcpy(chip_times_.text.data(), text.end.data(), kTimeDigits);
    chip_times_.value = time_of_text(text.end.data());
    saw(time_of_text(text.latest.data()));
  };
  long end_line = 0;
  std::string_view line;
  while (reader.next(line)) {
    const long n = reader.line_number();
    std::optional<std::size_t> kind;
    if (line.size() > 4 && starts_with_chip(line.data()) && is_separator(line[4])) [[likely]] {
      kind = chip;  // most lines: their kind without a search of the kinds' words
      if (text.active && text.take(line, n)) {
        KindRange& range = shared.ranges[chip];
        ++range.count;  // not the first: the line text.active stems from came before
        range.end = reader.offset_after();
        continue;
      }
      sync();
    } else {
      std::size_t word_end = 0;
      while (word_end < line.size() && !is_separator(line[word_end])) ++word_end;
      if (word_end == 0) {
        if (line.find_first_not_of(" \t") == std::string_view::npos) continue;  // blank line
        throw core::InputError(
            shared.file->path, n, "the line starts with a space or tab where its record kind should be",
            "start each record with its kind (chip, util, ...); correct or delete line " + std::to_string(n));
      }
      if (line[0] == '#') {
        continue;  // comment
      }
      kind = recfmt::kind_of_word(line.substr(0, word_end));
      if (!kind)
        throw core::InputError(
            shared.file->path, n,
            "unknown record kind '" + recfmt::excerpt(line.substr(0, word_end)) + "'; known kinds are " +
                known_kinds(),
            "the file may come from a newer diescope (upgrade) or was damaged; correct or delete line " +
                std::to_string(n));
    }
    const std::size_t k = *kind;
    if (first_version_with(k) > shared.meta.format_version)
      throw core::InputError(shared.file->path, n,
                             "a " + std::string(kKindWords[k]) + " record in a version " +
                                 std::to_string(shared.meta.format_version) + " recording; version " +
                                 std::to_string(first_version_with(k)) + " introduced that kind",
                             "write version " + std::to_string(first_version_with(k)) +
                                 " on line 1 and the meta's format_version (with the fields it needs), or "
                                 "delete line " +
                                 std::to_string(n));
    KindRange& range = shared.ranges[k];
    if (range.count++ == 0) {
      range.begin = reader.line_offset();
      range.first_line = n;
    }
    range.end = reader.offset_after();

    Fields f(line, *kind, shared, n);
    TimeNs ts = 0;
    TimeNs latest = 0;
    with_kind_at<RecordKinds>(*kind, [&]<typename Record>(std::type_identity<Record>) {
      ts = read_line<Record>(f, shared, n, end_line, latest);
    });
    order[k].see(shared, *kind, n, ts);
    saw(latest);
    if (k == chip) text.start_from(line, n);
  }
  sync();
  side_.last_ts_ns = last;
}

template <typename Record>
TimeNs FileRecording::read_line(Fields& f, const Shared& shared, long line_number, long& end_line,
                                TimeNs& latest) {
  if constexpr (std::is_same_v<Record, ChipSample>) {
    const TimeNs start = f.time("start time", chip_times_);
    const TimeNs end = f.time("end time", chip_times_);
    if (end < start) span_error(shared, line_number, start, end);
    latest = end;
    return start;
  } else if constexpr (is_stream_kind<Record>) {
    latest = f.time("time", other_times_);  // the cursor checks the rest of the line
    return latest;
  } else {
    Record record;
    parse_fields(f, shared, record);
    f.finish();
    latest = record.ts_ns;
    if constexpr (std::is_same_v<Record, RunEnd>) {
      if (side_.end)
        throw core::InputError(shared.file->path, line_number,
                               "a second end record (the first is on line " + std::to_string(end_line) + ")",
                               "a run ends once; delete one of the two end lines");
      end_line = line_number;
      side_.end = std::move(record);
    } else {
      side_.list<Record>().push_back(std::move(record));
    }
    return latest;
  }
}

}  // namespace

std::unique_ptr<Recording> open_recording(const std::filesystem::path& path) {
  return std::make_unique<FileRecording>(path);
}

}  // namespace diescope::recording
