// Packed half precision (docs/roofline.md#packed-half-precision): the FP16 counters count thread
// instructions, and a packed HADD2, HMUL2 or HFMA2 does the work of two lanes; an HFMA2 may also be an
// add, a multiply or a move. The FLOPs each kernel's half-precision instructions do are read from its
// SASS (`cuobjdump -sass`); where they cannot be, the row's FP16 FLOPs stay a range.
#pragma once

#include <array>
#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "diescope/roofline/profile.hpp"
#include "diescope/roofline/table.hpp"

namespace diescope::roofline {

// The three instructions the FP16 counters count (smsp__sass_thread_inst_executed_op_h{add,mul,fma}).
enum class HalfOp { add, mul, fma };
inline constexpr std::size_t kHalfOps = 3;
// The most FLOPs one thread instruction can do: a packed FMA, two lanes of two.
inline constexpr int kMaxHalfFlop = 4;

// One SASS line's FP16 work (docs/roofline.md#packed-half-precision): which counter counts it, how
// many lanes it fills (2, or 1 when every register source broadcasts one half, `R2.H0_H0`, or the
// result is a 32-bit float) and the FLOPs it does: lanes x 2 for an FMA, lanes x 1 for an add, a
// multiply, or an HFMA2 that multiplies by one (`HFMA2.MMA R0, R1, 1, 1, R2`: an add) or adds zero
// (`HFMA2.MMA R0, R1, R2, -RZ`: a multiply), and 0 for the compiler's moves and conversions (a zero
// multiplicand or addend: `HFMA2.MMA R0, -RZ, RZ, 1, 1`, `HADD2.F32 R0, -RZ, R2.H0_H0`). False when
// the line is not HADD2, HMUL2 or HFMA2.
struct HalfInstruction {
  HalfOp op = HalfOp::add;
  int lanes = 2;
  int flop = 0;  // 0 to kMaxHalfFlop
};
bool classify_half_instruction(std::string_view sass_line, HalfInstruction& out);

// How many instructions of each op doing each number of FLOPs a function's SASS holds (static
// counts), in all and inside loops (between a backward branch and its target).
struct HalfForms {
  std::array<std::array<int, kMaxHalfFlop + 1>, kHalfOps> count{};
  std::array<std::array<int, kMaxHalfFlop + 1>, kHalfOps> in_loop{};
  bool any() const;
};
// `cuobjdump -sass` text -> each function's forms, by mangled name ("Function : NAME" lines).
std::map<std::string, HalfForms> half_forms_from_sass(std::string_view sass);

// A kernel name as ncu or the range library prints it ("(anonymous namespace)::hfma2(__half2 const*)",
// "void k<int>(int*)") or as SASS names it, demangled -> the bare function name ("hfma2", "k").
std::string bare_kernel_name(std::string_view name);

// The FLOPs per counted instruction of each op in one kernel: known when every form that does work
// does the same (low == high), else the range; moves count at the work's value, 0 when there is no work.
// Where loops hold forms of an op that do work, only the loops' forms are weighed (they run once per
// trip; the code around them once per thread).
struct HalfFlops {
  std::array<int, kHalfOps> low{}, high{};
  std::string why;  // empty when every op is known
};
HalfFlops half_flops_of(const HalfForms& forms);

// The SASS of each executable, keyed by bare kernel name (forms of same-named functions added up).
struct SassIndex {
  bool read = false;  // the disassembler ran on the executable
  std::string why;    // when not read: why
  std::map<std::string, HalfForms> by_name;
};
// Runs `cuobjdump -sass EXECUTABLE` (cuobjdump from PATH, else /usr/local/cuda/bin), its listing
// written to `listing`.
SassIndex read_sass(const std::filesystem::path& executable, const std::filesystem::path& listing);
SassIndex sass_index_from_text(std::string_view sass);

// Sets each row's FP16 FLOPs from its instruction counts and its kernel's lanes: a number where every
// op's lanes are known, else the range [1 lane, 2 lanes] with the reason (Row::fp16_flop_high,
// Row::fp16_why). `sass` is the index of the row's executable.
void apply_half_lanes(Row& row, const SassIndex& sass);
// For every row with FP16 instructions: the index of its executable from `executables` (executable
// name -> path), read once, its listing kept as DIR/<executable>.sass. Returns one line per row whose
// FP16 FLOPs stay a range: the range and why.
std::vector<std::string> apply_half_lanes(std::vector<Row>& rows,
                                          const std::map<std::string, std::filesystem::path>& executables,
                                          const std::filesystem::path& dir);

// Each target's name -> its executable's path (argv[0] found as execvp finds it).
std::map<std::string, std::filesystem::path> target_executables(const std::vector<Target>& targets);

}  // namespace diescope::roofline
