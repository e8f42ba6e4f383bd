#include "diescope/roofline/half_lanes.hpp"

#include <cxxabi.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <chrono>
#include <fstream>
#include <iterator>

#include "diescope/core/child_process.hpp"
#include "diescope/roofline/profile.hpp"

namespace diescope::roofline {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

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
  const bool f32_result = opcode.find(".F32") != std::string_view::npos;
  const std::vector<std::string_view> ops =
      split_operands(space == std::string_view::npos ? std::string_view() : s.substr(space + 1));
  if (ops.size() < 2) return false;
  const std::vector<std::string_view> src(ops.begin() + 1, ops.end());
  // No arithmetic: a zero multiplicand (FMA, MUL) or a zero addend (ADD) makes the result a copy.
  const std::size_t factors = out.op == HalfOp::add ? src.size() : std::min<std::size_t>(2, src.size());
  for (std::size_t i = 0; i < factors; ++i)
    if (is_zero_register(src[i])) {
      out.form = HalfForm::move;
      return true;
    }
  // One lane: a 32-bit float result, or every register source broadcasting one half and every
  // immediate pair equal (both lanes compute the same value).
  bool all_broadcast = true;
  std::vector<std::string_view> immediates;
  for (const std::string_view op : src) {
    if (is_register_like(op)) {
      if (!is_broadcast(op)) all_broadcast = false;
    } else {
      immediates.push_back(bare_operand(op));
    }
  }
  for (std::size_t i = 0; i + 1 < immediates.size(); i += 2)
    if (immediates[i] != immediates[i + 1]) all_broadcast = false;
  out.form = f32_result || all_broadcast ? HalfForm::scalar : HalfForm::packed;
  return true;
}

bool HalfForms::any() const {
  for (const auto& op : count)
    for (const int n : op)
      if (n > 0) return true;
  return false;
}

std::map<std::string, HalfForms> half_forms_from_sass(std::string_view sass) {
  std::map<std::string, HalfForms> out;
  HalfForms* current = nullptr;
  std::size_t pos = 0;
  while (pos < sass.size()) {
    std::size_t end = sass.find('\n', pos);
    if (end == std::string_view::npos) end = sass.size();
    const std::string_view line = trim(sass.substr(pos, end - pos));
    pos = end + 1;
    if (starts_with(line, "Function : ")) {
      current = &out[std::string(trim(line.substr(11)))];
      continue;
    }
    if (!current) continue;
    HalfInstruction h;
    if (classify_half_instruction(line, h))
      ++current->count[static_cast<std::size_t>(h.op)][static_cast<std::size_t>(h.form)];
  }
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

HalfLanes half_lanes_of(const HalfForms& forms) {
  HalfLanes l;
  static constexpr const char* kOpNames[] = {"HADD2", "HMUL2", "HFMA2"};
  for (std::size_t op = 0; op < kHalfOps; ++op) {
    const auto& n = forms.count[op];
    const bool packed = n[static_cast<std::size_t>(HalfForm::packed)] > 0;
    const bool scalar = n[static_cast<std::size_t>(HalfForm::scalar)] > 0;
    if (packed && scalar) {
      l.lanes[op] = -1;
      l.why += fmt::format("{}{} in both packed ({}) and one-lane ({}) forms", l.why.empty() ? "" : "; ",
                           kOpNames[op], n[static_cast<std::size_t>(HalfForm::packed)],
                           n[static_cast<std::size_t>(HalfForm::scalar)]);
    } else {
      l.lanes[op] = packed ? 2 : scalar ? 1 : 0;
    }
  }
  return l;
}

SassIndex sass_index_from_text(std::string_view sass) {
  SassIndex index;
  index.read = true;
  for (const auto& [mangled, forms] : half_forms_from_sass(sass)) {
    HalfForms& into = index.by_name[bare_kernel_name(mangled)];
    for (std::size_t op = 0; op < kHalfOps; ++op)
      for (std::size_t f = 0; f < kHalfForms; ++f) into.count[op][f] += forms.count[op][f];
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
  const double flop_per_lane[kHalfOps] = {1, 1, 2};
  double any = 0;
  for (const double v : inst)
    if (std::isfinite(v)) any += v;
  if (!(any > 0)) return;
  std::array<int, kHalfOps> lanes = {-1, -1, -1};
  std::string why;
  if (!sass.read) {
    why = sass.why;
  } else if (row.kernel.find(" kernels; most launched: ") != std::string::npos) {
    why = "the region launched several kernels, and the table names only one";
  } else {
    const auto it = sass.by_name.find(bare_kernel_name(row.kernel));
    if (it == sass.by_name.end()) {
      why = "no SASS for kernel " + bare_kernel_name(row.kernel) + " in the executable";
    } else {
      const HalfLanes l = half_lanes_of(it->second);
      lanes = l.lanes;
      why = l.why;
    }
  }
  double low = 0, high = 0;
  bool known = true;
  for (std::size_t op = 0; op < kHalfOps; ++op) {
    if (!std::isfinite(inst[op]) || inst[op] == 0) continue;
    if (lanes[op] < 0) {
      known = false;
      low += inst[op] * flop_per_lane[op];
      high += inst[op] * flop_per_lane[op] * 2;
    } else {
      low += inst[op] * flop_per_lane[op] * lanes[op];
      high += inst[op] * flop_per_lane[op] * lanes[op];
    }
  }
  row.flop[index(Precision::fp16)] = low;
  row.fp16_flop_high = known ? kNaN : high;
  row.fp16_why = known ? std::string() : why;
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
