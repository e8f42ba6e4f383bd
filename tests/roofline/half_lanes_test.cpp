// Packed half precision (docs/roofline.md#packed-half-precision): each SASS form's lanes, a kernel's
// lanes per op, and a row's FP16 FLOPs and peak, with every expected value worked out by hand.
#include "diescope/roofline/half_lanes.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "diescope/roofline/ncu.hpp"

namespace diescope::roofline {
namespace {

HalfInstruction classify(const char* line) {
  HalfInstruction h;
  EXPECT_TRUE(classify_half_instruction(line, h)) << line;
  return h;
}

TEST(HalfLanes, PackedFormsFillTwoLanes) {
  const HalfInstruction fma =
      classify("        /*0150*/                   HFMA2 R4, R4, R5, R6 ;     /* 0x0 */");
  EXPECT_EQ(fma.op, HalfOp::fma);
  EXPECT_EQ(fma.form, HalfForm::packed);
  EXPECT_EQ(classify("/*0160*/ HADD2 R8, R8, c[0x0][0x168] ;").form, HalfForm::packed);
  EXPECT_EQ(classify("/*0170*/ @!P0 HMUL2 R9, R9, -R10 ;").op, HalfOp::mul);
  EXPECT_EQ(classify("/*0170*/ @!P0 HMUL2 R9, R9, -R10 ;").form, HalfForm::packed);
  // One source broadcast, the other not: the two lanes differ, so both are work.
  EXPECT_EQ(classify("/*0180*/ HFMA2 R4, R4.H0_H0, R5, R6 ;").form, HalfForm::packed);
  // An immediate pair with two values is two lanes.
  EXPECT_EQ(classify("/*0190*/ HADD2 R4, R4.H0_H0, 1, 2 ;").form, HalfForm::packed);
}

TEST(HalfLanes, BroadcastOrFloatResultFillsOneLane) {
  EXPECT_EQ(classify("/*0150*/ HFMA2 R4, R4.H0_H0, R5.H0_H0, R6.H0_H0 ;").form, HalfForm::scalar);
  EXPECT_EQ(classify("/*0150*/ HADD2 R4, R4.H1_H1, c[0x0][0x160].H0_H0 ;").form, HalfForm::scalar);
  EXPECT_EQ(classify("/*0150*/ HADD2 R4, R4.H0_H0, 1, 1 ;").form, HalfForm::scalar);
  EXPECT_EQ(classify("/*0150*/ HADD2.F32 R4, R4, R5 ;").form, HalfForm::scalar);
}

TEST(HalfLanes, ZeroOperandsAreMovesNotWork) {
  // The compiler's constant move and half-to-float conversion.
  EXPECT_EQ(classify("/*0090*/ @!PT HFMA2.MMA R5, -RZ, RZ, 0, 0 ;").form, HalfForm::move);
  EXPECT_EQ(classify("/*0090*/ HADD2.F32 R0, -RZ, R2.H0_H0 ;").form, HalfForm::move);
  // A zero addend of an FMA leaves a multiply: still work.
  EXPECT_EQ(classify("/*0090*/ HFMA2 R0, R2, R3, -RZ ;").form, HalfForm::packed);
}

TEST(HalfLanes, OtherInstructionsAreNotHalf) {
  HalfInstruction h;
  EXPECT_FALSE(classify_half_instruction("/*0090*/ FFMA R0, R2, R3, R4 ;", h));
  EXPECT_FALSE(classify_half_instruction("/*0090*/ HSETP2.GT.AND P0, PT, R2, R3, PT ;", h));
  EXPECT_FALSE(classify_half_instruction("Function : _Z5hfma2P7__half2", h));
}

TEST(HalfLanes, BareKernelNames) {
  EXPECT_EQ(bare_kernel_name("_ZN12_GLOBAL__N_15hfma2EPK7__half2PS0_S0_S0_i"), "hfma2");
  EXPECT_EQ(
      bare_kernel_name("(anonymous namespace)::hfma2(const __half2 *, __half2 *, __half2, __half2, int)"),
      "hfma2");
  EXPECT_EQ(bare_kernel_name("void ns::k<int, (bool)1>(int *)"), "k");
  EXPECT_EQ(bare_kernel_name("hadd2"), "hadd2");
}

// Two functions: a packed FMA loop with a constant move, and a scalar one.
constexpr const char* kSass = R"sass(
	code for sm_90
		Function : _Z5hfma2PK7__half2PS_S_S_i
	.headerflags	@"EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                  /* 0x00000a00ff017b82 */
        /*0010*/                   HFMA2.MMA R7, -RZ, RZ, 0, 0 ;            /* 0x0 */
        /*0020*/                   HFMA2 R4, R4, R5, R6 ;                  /* 0x0 */
        /*0030*/                   HFMA2 R8, R8, R5, R6 ;                  /* 0x0 */
        /*0040*/                   HADD2 R4, R4, R8 ;                      /* 0x0 */
		..........
		Function : _Z4hfmaPK6__halfPS_S_S_i
        /*0000*/                   HFMA2 R4, R4.H0_H0, R5.H0_H0, R6.H0_H0 ;  /* 0x0 */
        /*0010*/                   HADD2 R4, R4.H0_H0, R8.H0_H0 ;            /* 0x0 */
        /*0020*/                   HADD2 R9, R9, R10 ;                       /* 0x0 */
)sass";

TEST(HalfLanes, FormsPerFunctionAndLanesPerOp) {
  const auto forms = half_forms_from_sass(kSass);
  ASSERT_EQ(forms.size(), 2u);
  const HalfForms& packed = forms.at("_Z5hfma2PK7__half2PS_S_S_i");
  EXPECT_EQ(packed.count[2][0], 2);  // fma packed
  EXPECT_EQ(packed.count[2][2], 1);  // fma move
  EXPECT_EQ(packed.count[0][0], 1);  // add packed
  const HalfLanes l = half_lanes_of(packed);
  EXPECT_EQ(l.lanes[0], 2);
  EXPECT_EQ(l.lanes[1], 0);
  EXPECT_EQ(l.lanes[2], 2);
  EXPECT_TRUE(l.why.empty());
  // The scalar function's adds come in both forms: not known.
  const HalfLanes s = half_lanes_of(forms.at("_Z4hfmaPK6__halfPS_S_S_i"));
  EXPECT_EQ(s.lanes[2], 1);
  EXPECT_EQ(s.lanes[0], -1);
  EXPECT_EQ(s.why, "HADD2 in both packed (1) and one-lane (1) forms");
}

Row half_row(const std::string& kernel, double add, double mul, double fma) {
  Row r;
  r.kernel = kernel;
  r.fp16_inst = {add, mul, fma};
  return r;
}

TEST(HalfLanes, RowFlopsFromLanes) {
  const SassIndex sass = sass_index_from_text(kSass);
  // Packed: 1000 HFMA2 x 2 lanes x 2 FLOP + 10 HADD2 x 2 lanes x 1 FLOP = 4000 + 20.
  Row packed = half_row("hfma2(const __half2 *, __half2 *, __half2, __half2, int)", 10, 0, 1000);
  apply_half_lanes(packed, sass);
  EXPECT_DOUBLE_EQ(packed.flop[index(Precision::fp16)], 4020);
  EXPECT_TRUE(std::isnan(packed.fp16_flop_high));
  EXPECT_TRUE(packed.fp16_why.empty());
  // Scalar FMA known (1 lane), adds not: 1000 x 1 x 2 = 2000, plus 10 adds at 1 or 2 lanes: [2010, 2020].
  Row scalar = half_row("hfma(const __half *, __half *, __half, __half, int)", 10, 0, 1000);
  apply_half_lanes(scalar, sass);
  EXPECT_DOUBLE_EQ(scalar.flop[index(Precision::fp16)], 2010);
  EXPECT_DOUBLE_EQ(scalar.fp16_flop_high, 2020);
  EXPECT_EQ(scalar.fp16_why, "HADD2 in both packed (1) and one-lane (1) forms");
  // A kernel the listing lacks: [1 lane, 2 lanes] = [10 + 2000, 20 + 4000].
  Row other = half_row("other(int)", 10, 0, 1000);
  apply_half_lanes(other, sass);
  EXPECT_DOUBLE_EQ(other.flop[index(Precision::fp16)], 2010);
  EXPECT_DOUBLE_EQ(other.fp16_flop_high, 4020);
  EXPECT_EQ(other.fp16_why, "no SASS for kernel other in the executable");
  // No listing at all: the reason is the reader's.
  SassIndex none;
  none.why = "no cuobjdump on this machine (the CUDA toolkit's) to read the kernels' SASS";
  Row unread = half_row("hfma2(int)", 0, 5, 0);
  apply_half_lanes(unread, none);
  EXPECT_DOUBLE_EQ(unread.flop[index(Precision::fp16)], 5);
  EXPECT_DOUBLE_EQ(unread.fp16_flop_high, 10);
  EXPECT_EQ(unread.fp16_why, none.why);
}

// An export row with the FP16 counters: the FLOPs before the SASS is read are the range, and the
// peak has two lanes per FMA instruction.
TEST(HalfLanes, ExportRowIsARangeAndPeakHasTwoLanes) {
  RawExport raw;
  raw.header = {"ID", "Kernel Name"};
  for (const auto& m : ncu_metrics())
    if (m.rfind("launch__", 0) != 0) raw.header.push_back(m);
  raw.units.assign(raw.header.size(), "");
  std::vector<std::string> row = {"1", "hfma2(int)"};
  for (std::size_t i = 2; i < raw.header.size(); ++i) {
    const std::string& h = raw.header[i];
    if (h == "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum")
      row.push_back("1000");
    else if (h == "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum")
      row.push_back("10");
    else if (h == "sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained")
      row.push_back("8448");
    else
      row.push_back("0");
  }
  raw.rows.push_back(row);
  raw.row_lines.push_back(3);
  const std::vector<Row> rows = rows_from_export(raw, "half", "test.csv");
  ASSERT_EQ(rows.size(), 1u);
  // [10 + 2 x 1000, 2 x (10 + 2 x 1000)] = [2010, 4020]; peak 8448 x 2 FLOP x 2 lanes = 33792 per cycle.
  EXPECT_DOUBLE_EQ(rows[0].flop[index(Precision::fp16)], 2010);
  EXPECT_DOUBLE_EQ(rows[0].fp16_flop_high, 4020);
  EXPECT_EQ(rows[0].fp16_why, "the kernel's SASS was not read");
  EXPECT_DOUBLE_EQ(rows[0].peak_flop_per_cycle[index(Precision::fp16)], 33792);
}

}  // namespace
}  // namespace diescope::roofline
