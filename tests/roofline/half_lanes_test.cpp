// Packed half precision (docs/roofline.md#packed-half-precision): each SASS form's lanes and FLOPs, a
// kernel's FLOPs per op, and a row's FP16 FLOPs and peak, with every expected value worked out by hand.
#include "diescope/roofline/half_lanes.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "diescope/roofline/ncu.hpp"
#include "fixtures.hpp"

namespace diescope::roofline {
namespace {

HalfInstruction classify(const char* line) {
  HalfInstruction h;
  EXPECT_TRUE(classify_half_instruction(line, h)) << line;
  return h;
}

// FLOPs of one thread instruction: lanes x (2 for an FMA, 1 for an add or a multiply).
TEST(HalfLanes, PackedFormsFillTwoLanes) {
  const HalfInstruction fma =
      classify("        /*0150*/                   HFMA2 R4, R4, R5, R6 ;     /* 0x0 */");
  EXPECT_EQ(fma.op, HalfOp::fma);
  EXPECT_EQ(fma.lanes, 2);
  EXPECT_EQ(fma.flop, 4);
  EXPECT_EQ(classify("/*0160*/ HADD2 R8, R8, c[0x0][0x168] ;").flop, 2);
  EXPECT_EQ(classify("/*0170*/ @!P0 HMUL2 R9, R9, -R10.reuse ;").op, HalfOp::mul);
  EXPECT_EQ(classify("/*0170*/ @!P0 HMUL2 R9, R9, -R10.reuse ;").flop, 2);
  // One source broadcast, the others not: the two lanes differ, so both are work (the compiler packs
  // two scalar __half FMAs this way: `HFMA2 R4, R4, R5.reuse.H0_H0, R6.H1_H1`).
  EXPECT_EQ(classify("/*0180*/ HFMA2 R4, R4, R5.reuse.H0_H0, R6.H1_H1 ;").flop, 4);
  // An immediate with two different halves is two lanes.
  EXPECT_EQ(classify("/*0190*/ HADD2 R4, R4.H0_H0, 1, 2 ;").lanes, 2);
}

TEST(HalfLanes, BroadcastOrFloatResultFillsOneLane) {
  EXPECT_EQ(classify("/*0150*/ HFMA2 R4, R4.H0_H0, R5.H0_H0, R6.H0_H0 ;").flop, 2);
  EXPECT_EQ(classify("/*0150*/ HADD2 R4, R4.H1_H1, c[0x0][0x160].H0_H0 ;").flop, 1);
  EXPECT_EQ(classify("/*0150*/ HADD2 R4, R4.H0_H0, 2, 2 ;").flop, 1);
  EXPECT_EQ(classify("/*0150*/ HADD2.F32 R4, R4, R5 ;").flop, 1);
}

// The compiler moves adds and multiplies onto the FMA pipe (measured in the H200 check's SASS): the
// hfma counter counts them, but each lane does one FLOP.
TEST(HalfLanes, FmaFormsThatAddOrMultiply) {
  const HalfInstruction add = classify("/*01b0*/ HFMA2.MMA R15, R15, 1, 1, R4.reuse ;");
  EXPECT_EQ(add.op, HalfOp::fma);
  EXPECT_EQ(add.lanes, 2);
  EXPECT_EQ(add.flop, 2);  // x * 1 + a: two lanes of one add
  EXPECT_EQ(classify("/*01b0*/ HFMA2.MMA R15, R15, R4.reuse, -RZ ;").flop, 2);  // a * b + 0
  EXPECT_EQ(classify("/*01b0*/ HFMA2 R15, R15.H0_H0, R4.H0_H0, -RZ ;").flop, 1);
}

TEST(HalfLanes, ZeroOperandsAreMovesNotWork) {
  // The compiler's constant move and half-to-float conversion.
  EXPECT_EQ(classify("/*0090*/ @!PT HFMA2.MMA R5, -RZ, RZ, 0, 0 ;").flop, 0);
  EXPECT_EQ(classify("/*0090*/ HFMA2.MMA R5, -RZ, RZ, 1.875, -0.5 ;").flop, 0);
  EXPECT_EQ(classify("/*0090*/ HADD2.F32 R0, -RZ, R2.H0_H0 ;").flop, 0);
  EXPECT_EQ(classify("/*0090*/ HMUL2 R0, R2, 1, 1 ;").flop, 0);
  EXPECT_EQ(classify("/*0090*/ HFMA2 R0, R2, 1, 1, RZ ;").flop, 0);
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

TEST(HalfLanes, FormsPerFunctionAndFlopsPerOp) {
  const auto forms = half_forms_from_sass(kSass);
  ASSERT_EQ(forms.size(), 2u);
  const HalfForms& packed = forms.at("_Z5hfma2PK7__half2PS_S_S_i");
  EXPECT_EQ(packed.count[2][4], 2);  // fma, two lanes of FMA
  EXPECT_EQ(packed.count[2][0], 1);  // fma, a move
  EXPECT_EQ(packed.count[0][2], 1);  // add, two lanes
  const HalfFlops f = half_flops_of(packed);
  EXPECT_EQ(f.low[0], 2);
  EXPECT_EQ(f.high[0], 2);
  EXPECT_EQ(f.low[1], 0);  // no multiply
  EXPECT_EQ(f.low[2], 4);
  EXPECT_EQ(f.high[2], 4);
  EXPECT_TRUE(f.why.empty());
  // The scalar function's adds come in both forms: 1 or 2 FLOPs each.
  const HalfFlops s = half_flops_of(forms.at("_Z4hfmaPK6__halfPS_S_S_i"));
  EXPECT_EQ(s.low[2], 2);
  EXPECT_EQ(s.high[2], 2);
  EXPECT_EQ(s.low[0], 1);
  EXPECT_EQ(s.high[0], 2);
  EXPECT_EQ(s.why, "HADD2 instructions do different work (1 doing 1, 1 doing 2 FLOP)");
}

Row half_row(const std::string& kernel, double add, double mul, double fma) {
  Row r;
  r.kernel = kernel;
  r.fp16_inst = {add, mul, fma};
  return r;
}

TEST(HalfLanes, RowFlopsFromLanes) {
  const SassIndex sass = sass_index_from_text(kSass);
  // Packed: 1000 HFMA2 x 4 FLOP + 10 HADD2 x 2 FLOP = 4000 + 20.
  Row packed = half_row("hfma2(const __half2 *, __half2 *, __half2, __half2, int)", 10, 0, 1000);
  apply_half_lanes(packed, sass);
  EXPECT_DOUBLE_EQ(packed.flop[index(Precision::fp16)], 4020);
  EXPECT_TRUE(std::isnan(packed.fp16_flop_high));
  EXPECT_TRUE(packed.fp16_why.empty());
  // Scalar FMA known (2 FLOP), adds not: 1000 x 2 = 2000, plus 10 adds at 1 or 2: [2010, 2020].
  Row scalar = half_row("hfma(const __half *, __half *, __half, __half, int)", 10, 0, 1000);
  apply_half_lanes(scalar, sass);
  EXPECT_DOUBLE_EQ(scalar.flop[index(Precision::fp16)], 2010);
  EXPECT_DOUBLE_EQ(scalar.fp16_flop_high, 2020);
  EXPECT_EQ(scalar.fp16_why, "HADD2 instructions do different work (1 doing 1, 1 doing 2 FLOP)");
  // A kernel the listing lacks: adds 1 to 2, HFMA2 1 to 4: [10 + 1000, 20 + 4000].
  Row other = half_row("other(int)", 10, 0, 1000);
  apply_half_lanes(other, sass);
  EXPECT_DOUBLE_EQ(other.flop[index(Precision::fp16)], 1010);
  EXPECT_DOUBLE_EQ(other.fp16_flop_high, 4020);
  EXPECT_EQ(other.fp16_why, "no SASS for kernel other in the executable");
  // No listing at all: the reason is the reader's. 5 multiplies: [5, 10].
  SassIndex none;
  none.why = "no cuobjdump on this machine (the CUDA toolkit's) to read the kernels' SASS";
  Row unread = half_row("hfma2(int)", 0, 5, 0);
  apply_half_lanes(unread, none);
  EXPECT_DOUBLE_EQ(unread.flop[index(Precision::fp16)], 5);
  EXPECT_DOUBLE_EQ(unread.fp16_flop_high, 10);
  EXPECT_EQ(unread.fp16_why, none.why);
}

// The H200 check's hadd2 kernel, as its SASS has it: half of the adds are HADD2, half HFMA2.MMA x * 1 +
// a; per thread and iteration 4 of each counted (ncu's slope). Each does 2 FLOPs: 8 x 2 = 16 per
// iteration, where counting the HFMA2 as FMAs would give 4 x 2 + 4 x 4 = 24 (1.5 times the truth).
constexpr const char* kHadd2Sass = R"sass(
		Function : _ZN12_GLOBAL__N_15hadd2EPK7__half2PS0_S0_S0_i
        /*01b0*/                   HFMA2.MMA R15, R15, 1, 1, R4.reuse ;              /* 0x3c003c000f0f7835 */
        /*01e0*/                   HADD2 R17, R17, R4.reuse ;                        /* 0x0000000411117230 */
        /*04e0*/                   HFMA2.MMA R15, R15, 1, 1, R19 ;                   /* 0x3c003c000f0f7835 */
        /*0500*/                   HADD2 R15, R15, R21 ;                             /* 0x000000150f0f7230 */
)sass";

TEST(HalfLanes, AddsOnTheFmaPipeCountAsAdds) {
  const SassIndex sass = sass_index_from_text(kHadd2Sass);
  Row r =
      half_row("(anonymous namespace)::hadd2(const __half2 *, __half2 *, __half2, __half2, int)", 4, 0, 4);
  apply_half_lanes(r, sass);
  EXPECT_DOUBLE_EQ(r.flop[index(Precision::fp16)], 16);
  EXPECT_TRUE(std::isnan(r.fp16_flop_high));
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
  // [10 + 1000, 2 x (10 + 2 x 1000)] = [1010, 4020]; peak 8448 x 2 FLOP x 2 lanes = 33792 per cycle.
  EXPECT_DOUBLE_EQ(rows[0].flop[index(Precision::fp16)], 1010);
  EXPECT_DOUBLE_EQ(rows[0].fp16_flop_high, 4020);
  EXPECT_EQ(rows[0].fp16_why, "the kernel's SASS was not read");
  EXPECT_DOUBLE_EQ(rows[0].peak_flop_per_cycle[index(Precision::fp16)], 33792);
}

}  // namespace
}  // namespace diescope::roofline

namespace diescope::roofline {
namespace {

// The H200 check (bench/results/roofline/2026-12-02-h200-packed-half/): half_kernels.cu's four kernels
// as ncu counted them and as cuobjdump listed their SASS. Each kernel's FP16 FLOPs by hand, per thread
// (270,336 threads, 4,096 iterations of 8 chains): hfma2 4,096 x 8 x 4 + 7 x 2 (the packed reduction)
// = 131,086; hfma 4,096 x 8 x 2 + 7 = 65,543; hadd2 4,096 x 8 x 2 + 7 x 2 = 65,550; hmul2 the same.
TEST(HalfLanes, H200KernelsAgainstTheirHandCount) {
  std::vector<Row> rows = test::fixture_rows("h200-half_kernels.raw.csv", "half_kernels");
  ASSERT_EQ(rows.size(), 4u);
  const SassIndex sass = sass_index_from_text(test::read_file(test::fixture_path("h200-half_kernels.sass")));
  const double threads = 270336;
  const std::map<std::string, double> hand = {{"hfma2", 131086 * threads},
                                              {"hfma", 65543 * threads},
                                              {"hadd2", 65550 * threads},
                                              {"hmul2", 65550 * threads}};
  for (Row& r : rows) {
    const std::string name = bare_kernel_name(r.kernel);
    ASSERT_TRUE(hand.contains(name)) << r.kernel;
    apply_half_lanes(r, sass);
    EXPECT_TRUE(std::isnan(r.fp16_flop_high)) << name << ": " << r.fp16_why;
    EXPECT_NEAR(r.flop[index(Precision::fp16)] / hand.at(name), 1.0, 0.01) << name;
    // The peak: 16,896 HFMA2 thread instructions per cycle x 2 lanes x 2 FLOPs, twice FP32's 33,792.
    EXPECT_DOUBLE_EQ(r.peak_flop_per_cycle[index(Precision::fp16)], 67584);
    EXPECT_DOUBLE_EQ(r.peak_flop_per_cycle[index(Precision::fp16)],
                     2 * r.peak_flop_per_cycle[index(Precision::fp32)]);
  }
}

}  // namespace
}  // namespace diescope::roofline
