// Two correctly rounded ways to turn a number's digits (an integer m below 2^53) and a negative power
// of ten (-k, k from 1 to 22) into a double, as the recording reader must for a chip line's values
// (docs/recording-format.md#reading-a-recording): the division m / 10^k by the exact power (Clinger's
// fast path, what the reader does), and the Eisel-Lemire 128-bit multiply that std::from_chars uses.
// Checks both against std::from_chars on random values (the division where m is at most 2^53), then times
// each on the same values: CPU seconds for ROUNDS of 50 x 2^20 values, mantissas of up to 7 digits and powers
// 1 to 4 (the shapes the writer prints most). Prints one line per round; exits 1 if a value differs.
//
//   decimal_to_double [CHECKED_VALUES] [ROUNDS]      default 20000000 and 3
#include <array>
#include <bit>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <vector>

namespace {

__extension__ using Wide = unsigned __int128;  // GCC and Clang's 128-bit integer

struct U128 {
  std::uint64_t hi, lo;
};

// 5^-k as fast_float tabulates it for k up to 27: floor(2^(z + 127) / 5^k) + 1, z the least with
// 2^z >= 5^k (so the value lies in [2^127, 2^128)); k = 0 is 2^127.
constexpr std::array<U128, 23> make_table() {
  std::array<U128, 23> t{};
  for (int k = 0; k <= 22; ++k) {
    Wide p = 1;
    for (int i = 0; i < k; ++i) p *= 5;
    int z = 0;
    while ((static_cast<Wide>(1) << z) < p) ++z;
    Wide q = 0, r = 0;
    for (int bit = z + 127; bit >= 0; --bit) {  // long division of 2^(z + 127) by p, bit by bit
      r = (r << 1) | (bit == z + 127 ? 1 : 0);
      q <<= 1;
      if (r >= p) {
        r -= p;
        q |= 1;
      }
    }
    if (k > 0) q += 1;
    t[static_cast<std::size_t>(k)] = {static_cast<std::uint64_t>(q >> 64), static_cast<std::uint64_t>(q)};
  }
  return t;
}
constexpr std::array<U128, 23> kFivePowers = make_table();

constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                             1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

// m / 10^k by Eisel-Lemire (fast_float's compute_float for binary64), m from 1 to 2^53.
inline double eisel_lemire(std::uint64_t m, int k) {
  const int q = -k;
  const int lz = std::countl_zero(m);
  m <<= lz;
  const U128& power = kFivePowers[static_cast<std::size_t>(k)];
  const Wide first = static_cast<Wide>(m) * power.hi;
  auto hi = static_cast<std::uint64_t>(first >> 64);
  auto lo = static_cast<std::uint64_t>(first);
  constexpr std::uint64_t kPrecisionMask = ~std::uint64_t{0} >> 55;
  if ((hi & kPrecisionMask) == kPrecisionMask) {
    const auto second = static_cast<std::uint64_t>((static_cast<Wide>(m) * power.lo) >> 64);
    lo += second;
    if (second > lo) ++hi;
  }
  const int upper = static_cast<int>(hi >> 63);
  const int shift = upper + 9;
  std::uint64_t mantissa = hi >> shift;
  int power2 = (((152170 + 65536) * q) >> 16) + 63 + upper - lz + 1023;
  if (lo <= 1 && q >= -4 && (mantissa & 3) == 1 && (mantissa << shift) == hi) mantissa &= ~std::uint64_t{1};
  mantissa += mantissa & 1;
  mantissa >>= 1;
  if (mantissa >= (std::uint64_t{2} << 52)) {
    mantissa = std::uint64_t{1} << 52;
    ++power2;
  }
  mantissa &= ~(std::uint64_t{1} << 52);
  return std::bit_cast<double>(mantissa | (static_cast<std::uint64_t>(power2) << 52));
}

double from_chars_of(std::uint64_t m, int k) {
  char buf[48];
  char* p = std::to_chars(buf, buf + 24, m).ptr;
  *p++ = 'e';
  *p++ = '-';
  p = std::to_chars(p, buf + sizeof buf, k).ptr;
  double v = 0;
  std::from_chars(buf, p, v);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  const long checked = argc > 1 ? std::atol(argv[1]) : 20000000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  std::mt19937_64 rng(42);
  long bad = 0;
  for (long i = 0; i < checked; ++i) {
    const int k = 1 + static_cast<int>(rng() % 22);
    std::uint64_t limit = 1;
    for (int d = 1 + static_cast<int>(rng() % 16); d > 0; --d) limit *= 10;
    const std::uint64_t m = 1 + rng() % limit;
    const double want = from_chars_of(m, k);
    const double a = eisel_lemire(m, k);
    // The division is exact-input (and so correctly rounded) for m up to 2^53 alone, where the reader
    // takes it.
    const bool exact_input = m <= (std::uint64_t{1} << 53);
    const double b = exact_input ? static_cast<double>(m) / kPow10[k] : want;
    if (a != want || b != want) {
      if (bad < 10)
        std::printf("differs: %llue-%d from_chars %.17g eisel-lemire %.17g division %.17g\n",
                    static_cast<unsigned long long>(m), k, want, a, b);
      ++bad;
    }
  }
  std::printf(
      "checked against std::from_chars: %ld values (mantissas of 1 to 16 digits, powers 1e-1 to 1e-22), %ld "
      "differ\n",
      checked, bad);
  std::vector<std::uint64_t> ms(std::size_t{1} << 20);
  std::vector<int> ks(ms.size());
  for (std::size_t i = 0; i < ms.size(); ++i) {
    ms[i] = 1 + rng() % 10000000;
    ks[i] = 1 + static_cast<int>(rng() % 4);
  }
  std::vector<double> out(ms.size());
  for (int round = 0; round < rounds; ++round) {
    const std::clock_t t0 = std::clock();
    for (int rep = 0; rep < 50; ++rep) {
      for (std::size_t i = 0; i < ms.size(); ++i) out[i] = eisel_lemire(ms[i], ks[i]);
      asm volatile("" : : "r"(out.data()) : "memory");
    }
    const std::clock_t t1 = std::clock();
    for (int rep = 0; rep < 50; ++rep) {
      for (std::size_t i = 0; i < ms.size(); ++i) out[i] = static_cast<double>(ms[i]) / kPow10[ks[i]];
      asm volatile("" : : "r"(out.data()) : "memory");
    }
    const std::clock_t t2 = std::clock();
    std::printf("round %d: CPU s for %zu values: eisel-lemire %.3f, division %.3f\n", round + 1,
                50 * ms.size(), static_cast<double>(t1 - t0) / CLOCKS_PER_SEC,
                static_cast<double>(t2 - t1) / CLOCKS_PER_SEC);
  }
  return bad == 0 ? 0 : 1;
}
