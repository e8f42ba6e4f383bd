#include "diescope/roofline/half_lanes.hpp"

#include <cxxabi.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <chrono>
#include <fstream>
#include <iterator>

#include "diescope/core/child_process.hpp"
#include "diescope/roofline/profile.hpp"
#include "internal.hpp"

namespace diescope::roofline {

namespace {

using detail::kNaN;

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

// "-|R2.H0_H0|" -> "R2.H0_H0": the operand without its negation or absolute value.
std::string_view bare_operand(std::string_view op) {
  op = trim(op);
  while (!op.empty() && (op.front() == '-' || op.front() == '|' || op.front() == '!')) op.remove_prefix(1);
  while (!op.empty() && op.back() == '|') op.remove_suffix(1);
  return op;
}

bool is_zero_register(std::string_view op) {
  const std::string_view b = bare_operand(op);
  return b == "RZ" || starts_with(b, "RZ.");
}

// A register, uniform register or constant-bank operand (not an immediate).
bool is_register_like(std::string_view op) {
  const std::string_view b = bare_operand(op);
  if (b.empty()) return false;
  if (starts_with(b, "c[") || starts_with(b, "cx[")) return true;
  if (b.front() == 'R' || starts_with(b, "UR")) return true;
  return false;
}

// The half-selector of a register operand: ".H0_H0", ".H1_H1" broadcast one half into both lanes.
bool is_broadcast(std::string_view op) {
  const std::string_view b = bare_operand(op);
  return b.size() >= 6 && (b.substr(b.size() - 6) == ".H0_H0" || b.substr(b.size() - 6) == ".H1_H1");
}

// A source operand: a register (or constant) or an immediate, whose two halves SASS prints apart.
struct Operand {
  bool reg = true;
  std::string_view text;  // the register, or the immediate's low half
  std::string_view high;  // the immediate's high half
};

bool is_zero(const Operand& o) {
  if (o.reg) return is_zero_register(o.text);
  auto z = [](std::string_view v) { return v == "0" || v == "-0"; };
  return z(o.text) && z(o.high);
}

// Multiplying by it adds no FLOP: an immediate of 1 (or -1: a negation) in both halves.
bool is_unit(const Operand& o) {
  if (o.reg) return false;
  auto u = [](std::string_view v) { return v == "1" || v == "-1"; };
  return u(o.text) && u(o.high);
}

std::vector<std::string_view> split_operands(std::string_view s) {
  std::vector<std::string_view> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '[') ++depth;
    if (s[i] == ']') --depth;
    if (s[i] == ',' && depth == 0) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (start < s.size()) out.push_back(trim(s.substr(start)));
  return out;
}

}  // namespace

bool classify_half_instruction(std::string_view line, HalfInstruction& out) {
  // "/*0150*/   @!P0 HFMA2.MMA R5, -RZ, RZ, 0, 0 ;   /* 0x... */"
  std::string_view s = trim(line);
  if (starts_with(s, "/*")) {
    const std::size_t end = s.find("*/");
    if (end == std::string_view::npos) return false;
    s = trim(s.substr(end + 2));
  }
  if (!s.empty() && s.front() == '@') {  // a predicate guard
    const std::size_t space = s.find(' ');
    if (space == std::string_view::npos) return false;
    s = trim(s.substr(space));
  }
  const std::size_t semi = s.find(';');
  if (semi == std::string_view::npos) return false;
  s = s.substr(0, semi);
  const std::size_t space = s.find(' ');
  const std::string_view opcode = s.substr(0, space);
  const std::string_view base = opcode.substr(0, opcode.find('.'));
  if (base == "HADD2")
    out.op = HalfOp::add;
  else if (base == "HMUL2")
    out.op = HalfOp::mul;
  else if (base == "HFMA2")
    out.op = HalfOp::fma;
  else
    return false;
  const std::vector<std::string_view> tokens =
      split_operands(space == std::string_view::npos ? std::string_view() : s.substr(space + 1));
  if (tokens.size() < 2) return false;
  // The sources, with an immediate's two halves ("1, 1") taken together as one operand.
  std::vector<Operand> src;
  for (std::size_t i = 1; i < tokens.size(); ++i) {
    if (is_register_like(tokens[i])) {
      src.push_back({true, bare_operand(tokens[i]), {}});
    } else if (i + 1 < tokens.size() && !is_register_like(tokens[i + 1])) {
      src.push_back({false, bare_operand(tokens[i]), bare_operand(tokens[i + 1])});
      ++i;
    } else {
      src.push_back({false, bare_operand(tokens[i]), bare_operand(tokens[i])});
    }
  }
  // One lane: a 32-bit float result, or every register source broadcasting one half (RZ is zero in
  // both) and every immediate's halves equal (both lanes compute the same value).
  bool one_lane = opcode.find(".F32") != std::string_view::npos;
  if (!one_lane) {
    one_lane = true;
    for (const Operand& o : src)
      if (o.reg ? !is_broadcast(o.text) && !is_zero_register(o.text) : o.text != o.high) one_lane = false;
  }
  out.lanes = one_lane ? 1 : 2;
  auto zero = [&](std::size_t k) { return k < src.size() && is_zero(src[k]); };
  auto unit = [&](std::size_t k) { return k < src.size() && is_unit(src[k]); };
  int flop_per_lane = 1;
  if (out.op == HalfOp::add) {
    if (zero(0) || zero(1)) flop_per_lane = 0;  // x + 0: a move or a conversion
  } else if (out.op == HalfOp::mul) {
    if (zero(0) || zero(1) || unit(0) || unit(1)) flop_per_lane = 0;  // x * 0, x * 1
  } else {
    const bool times_one = unit(0) || unit(1), plus_zero = zero(2);
    if (zero(0) || zero(1) || (times_one && plus_zero))
      flop_per_lane = 0;  // c moved, or x * 1 + 0
    else if (times_one || plus_zero)
      flop_per_lane = 1;  // an add (x * 1 + c) or a multiply (a * b + 0)
    else
      flop_per_lane = 2;
  }
  out.flop = flop_per_lane * out.lanes;
  return true;
}

bool HalfForms::any() const {
  for (const auto& op : count)
    for (const int n : op)
      if (n > 0) return true;
  return false;
}

namespace {

// "/*03e0*/ ..." -> 0x3e0; nullopt without an address.
std::optional<long> sass_address(std::string_view line) {
  if (!starts_with(line, "/*")) return std::nullopt;
  const std::size_t end = line.find("*/");
  if (end == std::string_view::npos) return std::nullopt;
  try {
    return std::stol(std::string(line.substr(2, end - 2)), nullptr, 16);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// "@P1 BRA 0x1b0 ;" -> 0x1b0: a branch's target; nullopt for another instruction.
std::optional<long> branch_target(std::string_view line) {
  const std::size_t bra = line.find(" BRA ");
  if (bra == std::string_view::npos) return std::nullopt;
  std::string_view rest = trim(line.substr(bra + 5));
  if (!starts_with(rest, "0x")) return std::nullopt;
  try {
    return std::stol(std::string(rest.substr(2, rest.find_first_of(" ;") - 2)), nullptr, 16);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

struct Pending {
  long address = -1;
  HalfInstruction h;
};

// Counts a function's instructions, and those inside a loop: between a backward branch's target and
// the branch (a branch to itself, the trap after EXIT, is no loop).
void finish_function(HalfForms& into, const std::vector<Pending>& found,
                     const std::vector<std::pair<long, long>>& loops) {
  for (const Pending& p : found) {
    const auto op = static_cast<std::size_t>(p.h.op);
    const auto flop = static_cast<std::size_t>(p.h.flop);
    ++into.count[op][flop];
    for (const auto& [from, to] : loops)
      if (p.address >= from && p.address <= to) {
        ++into.in_loop[op][flop];
        break;
      }
  }
}

}  // namespace

std::map<std::string, HalfForms> half_forms_from_sass(std::string_view sass) {
  std::map<std::string, HalfForms> out;
  HalfForms* current = nullptr;
  std::vector<Pending> found;
  std::vector<std::pair<long, long>> loops;
  std::size_t pos = 0;
  while (pos < sass.size()) {
    std::size_t end = sass.find('\n', pos);
    if (end == std::string_view::npos) end = sass.size();
    const std::string_view line = trim(sass.substr(pos, end - pos));
    pos = end + 1;
    if (starts_with(line, "Function : ")) {
      if (current) finish_function(*current, found, loops);
      found.clear();
      loops.clear();
      current = &out[std::string(trim(line.substr(11)))];
      continue;
    }
    if (!current) continue;
    const std::optional<long> address = sass_address(line);
    if (const auto target = branch_target(line); target && address && *target < *address)
      loops.emplace_back(*target, *address);
    HalfInstruction h;
    if (classify_half_instruction(line, h)) found.push_back({address.value_or(-1), h});
  }
  if (current) finish_function(*current, found, loops);
  return out;
}

std::string bare_kernel_name(std::string_view name) {
  std::string text(trim(name));
  if (starts_with(text, "_Z")) {
    int status = 0;
    const std::unique_ptr<char, void (*)(void*)> d(
        abi::__cxa_demangle(text.c_str(), nullptr, nullptr, &status), std::free);
    if (status == 0 && d) text = d.get();
  }
  // Cut the parameter list: the last '(' at template depth 0 that is not "(anonymous namespace)".
  int angle = 0;
  std::size_t cut = text.size();
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<') ++angle;
    if (c == '>') --angle;
    if (c == '(' && angle == 0 && text.compare(i, 20, "(anonymous namespace") != 0) {
      cut = i;
      break;
    }
  }
  std::string head = text.substr(0, cut);
  // Drop template arguments, then everything up to the last "::" and a leading return type.
  std::string flat;
  angle = 0;
  for (const char c : head) {
    if (c == '<') ++angle;
    if (angle == 0) flat += c;
    if (c == '>') --angle;
  }
  const std::size_t colons = flat.rfind("::");
  if (colons != std::string::npos) flat = flat.substr(colons + 2);
  const std::size_t space = flat.rfind(' ');
  if (space != std::string::npos) flat = flat.substr(space + 1);
  return std::string(trim(flat));
}

HalfFlops half_flops_of(const HalfForms& forms) {
  HalfFlops f;
  static constexpr const char* kOpNames[] = {"HADD2", "HMUL2", "HFMA2"};
  for (std::size_t op = 0; op < kHalfOps; ++op) {
    // The loops' forms where the loops hold any that do work: they run once per trip, the rest once.
    bool looped = false;
    for (int flop = 1; flop <= kMaxHalfFlop; ++flop)
      looped = looped || forms.in_loop[op][static_cast<std::size_t>(flop)] > 0;
    const auto& counts = looped ? forms.in_loop[op] : forms.count[op];
    int low = 0, high = 0;
    std::string forms_seen;
    for (int flop = 1; flop <= kMaxHalfFlop; ++flop) {
      const int n = counts[static_cast<std::size_t>(flop)];
      if (n == 0) continue;
      if (low == 0) low = flop;
      high = flop;
      forms_seen += fmt::format("{}{} doing {}", forms_seen.empty() ? "" : ", ", n, flop);
    }
    f.low[op] = low;
    f.high[op] = high;
    if (low != high)
      f.why += fmt::format("{}{} instructions{} do different work ({} FLOP)", f.why.empty() ? "" : "; ",
                           kOpNames[op], looped ? " in loops" : "", forms_seen);
  }
  return f;
}

SassIndex sass_index_from_text(std::string_view sass) {
  SassIndex index;
  index.read = true;
  for (const auto& [mangled, forms] : half_forms_from_sass(sass)) {
    HalfForms& into = index.by_name[bare_kernel_name(mangled)];
    for (std::size_t op = 0; op < kHalfOps; ++op)
      for (std::size_t f = 0; f <= kMaxHalfFlop; ++f) {
        into.count[op][f] += forms.count[op][f];
        into.in_loop[op][f] += forms.in_loop[op][f];
      }
  }
  return index;
}

SassIndex read_sass(const std::filesystem::path& executable, const std::filesystem::path& listing) {
  SassIndex index;
  std::string tool = core::find_executable("cuobjdump");
  if (tool.empty()) tool = core::find_executable("/usr/local/cuda/bin/cuobjdump");
  if (tool.empty()) {
    index.why = "no cuobjdump on this machine (the CUDA toolkit's) to read the kernels' SASS";
    return index;
  }
  const ProfileOutcome out =
      run_profiler({tool, "-sass", executable.string()}, listing, std::chrono::seconds(120));
  std::ifstream in(listing);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!out.ok || text.find("Function : ") == std::string::npos) {
    index.why = "cuobjdump found no SASS in " + executable.filename().string() +
                " (its kernels may live in a library it loads)";
    return index;
  }
  return sass_index_from_text(text);
}

void apply_half_lanes(Row& row, const SassIndex& sass) {
  const std::array<double, kHalfOps> inst = row.fp16_inst;
  double any = 0;
  for (const double v : inst)
    if (std::isfinite(v)) any += v;
  if (!(any > 0)) return;
  // Without the SASS: an add or a multiply does 1 or 2 FLOPs, an HFMA2 1 (one lane of an add or a
  // multiply) to 4 (two lanes of FMA).
  HalfFlops f;
  f.low = {1, 1, 1};
  f.high = {2, 2, kMaxHalfFlop};
  if (!sass.read) {
    f.why = sass.why;
  } else if (row.kernel.find(" kernels; most launched: ") != std::string::npos) {
    f.why = "the region launched several kernels, and the table names only one";
  } else {
    const auto it = sass.by_name.find(bare_kernel_name(row.kernel));
    if (it == sass.by_name.end())
      f.why = "no SASS for kernel " + bare_kernel_name(row.kernel) + " in the executable";
    else
      f = half_flops_of(it->second);
  }
  double low = 0, high = 0;
  for (std::size_t op = 0; op < kHalfOps; ++op) {
    if (!std::isfinite(inst[op])) continue;
    low += inst[op] * f.low[op];
    high += inst[op] * f.high[op];
  }
  row.flop[index(Precision::fp16)] = low;
  row.fp16_flop_high = high > low ? high : kNaN;
  row.fp16_why = high > low ? f.why : std::string();
}

std::vector<std::string> apply_half_lanes(std::vector<Row>& rows,
                                          const std::map<std::string, std::filesystem::path>& executables,
                                          const std::filesystem::path& dir) {
  std::map<std::string, SassIndex> read;
  std::vector<std::string> ranges;
  for (Row& r : rows) {
    bool any = false;
    for (const double v : r.fp16_inst) any = any || (std::isfinite(v) && v > 0);
    if (!any) continue;
    auto it = read.find(r.executable);
    if (it == read.end()) {
      const auto path = executables.find(r.executable);
      SassIndex index;
      if (path == executables.end())
        index.why = "the executable of " + r.executable + " is not known here";
      else
        index = read_sass(path->second, dir / (r.executable + ".sass"));
      it = read.emplace(r.executable, std::move(index)).first;
    }
    apply_half_lanes(r, it->second);
    if (!std::isnan(r.fp16_flop_high))
      ranges.push_back(
          fmt::format("{}: {}{}: fp16 work between {:.4g} and {:.4g} FLOP: {} "
                      "(docs/roofline.md#packed-half-precision)",
                      r.executable, bare_kernel_name(r.kernel), r.region.empty() ? "" : " [" + r.region + "]",
                      r.flop[index(Precision::fp16)], r.fp16_flop_high, r.fp16_why));
  }
  return ranges;
}

}  // namespace diescope::roofline

namespace diescope::roofline {

std::map<std::string, std::filesystem::path> target_executables(const std::vector<Target>& targets) {
  std::map<std::string, std::filesystem::path> out;
  for (const Target& t : targets) {
    if (t.argv.empty()) continue;
    const std::string path = core::find_executable(t.argv.front());
    if (!path.empty()) out.emplace(t.name, path);
  }
  return out;
}

}  // namespace diescope::roofline
