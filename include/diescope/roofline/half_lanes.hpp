// Packed half precision (docs/roofline.md#packed-half-precision): the FP16 counters count thread
// instructions, and a packed HADD2, HMUL2 or HFMA2 does the work of two. How many lanes each kernel's
// half-precision instructions fill is read from its SASS (`cuobjdump -sass`); where it cannot be, the
// row's FP16 FLOPs stay a range.
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
// What one instruction does: both lanes (packed), one lane (both sources broadcast one half, e.g.
// `R2.H0_H0`), or no arithmetic (a multiplicand or an addend is RZ: the compiler's idioms for moving a
// constant, `HFMA2.MMA R0, -RZ, RZ, 1, 1`, and for converting a half to float, `HADD2.F32 R0, -RZ,
// R2.H0_H0`).
enum class HalfForm { packed, scalar, move };
inline constexpr std::size_t kHalfForms = 3;

// One SASS line's half-precision form; false when the line is not HADD2, HMUL2 or HFMA2.
struct HalfInstruction {
  HalfOp op = HalfOp::add;
  HalfForm form = HalfForm::packed;
};
bool classify_half_instruction(std::string_view sass_line, HalfInstruction& out);

// How many instructions of each op and form a function's SASS holds (static counts).
struct HalfForms {
  std::array<std::array<int, kHalfForms>, kHalfOps> count{};
  bool any() const;
};
// `cuobjdump -sass` text -> each function's forms, by mangled name ("Function : NAME" lines).
std::map<std::string, HalfForms> half_forms_from_sass(std::string_view sass);

// A kernel name as ncu or the range library prints it ("(anonymous namespace)::hfma2(__half2 const*)",
// "void k<int>(int*)") or as SASS names it, demangled -> the bare function name ("hfma2", "k").
std::string bare_kernel_name(std::string_view name);

// The lanes each op's instructions fill in one kernel, or why they are not known.
struct HalfLanes {
  std::array<int, kHalfOps> lanes{};  // 0, 1 or 2; -1: not known (the instructions may fill 1 or 2)
  std::string why;                    // empty when every op with instructions is known
};
// docs/roofline.md#packed-half-precision: per op, the lanes of the arithmetic forms present (packed 2,
// scalar 1); both present: not known; only moves: 0.
HalfLanes half_lanes_of(const HalfForms& forms);

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
