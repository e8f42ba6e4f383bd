// Shared pieces of the calibrate tests: an H200 report's units, calibration files built by hand,
// and scratch folders.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "diescope/calibrate/calibration_file.hpp"
#include "diescope/calibrate/device_protocol.hpp"
#include "diescope/calibrate/lookup.hpp"

namespace diescope::calibrate::test {

namespace fs = std::filesystem;

inline recording::ColumnDef unit_column(std::string key, std::string label, std::string counter) {
  recording::ColumnDef c;
  c.key = std::move(key);
  c.label = std::move(label);
  c.metric = counter;
  c.recipe = recording::UnitRecipe{recording::UnitRecipe::Combine::counter, {std::move(counter)}};
  return c;
}

// The units of an H200 report, as the Hopper table reads them (names shortened: only equality matters).
inline std::vector<recording::ColumnDef> h200_units() {
  return {unit_column("fp32", "FP32", "TPC.TriageCompute.sm__inst_executed_pipe_fma_realtime.avg.pct"),
          unit_column("tensor", "Tensor", "sm__pipe_tensor_cycles_active_realtime.avg.pct"),
          unit_column("fp64", "FP64", "TPC.TriageCompute.sm__pipe_fp64_cycles_active_realtime.avg.pct"),
          unit_column("ldst", "Load/store", "l1tex__data_pipe_lsu_wavefronts.avg.pct"),
          unit_column("l1_fill", "L1 fill",
                      "SM_A.TriageCompute.l1tex__m_xbar2l1tex_read_sectors_realtime.avg.pct"),
          unit_column("l2", "L2", "lts__t_bytes.avg.pct"),
          unit_column("dram", "DRAM", "dram__bytes.sum.pct_of_peak_sustained_elapsed")};
}

// An H200 as the device protocol sees it.
inline DeviceFacts h200_facts() {
  DeviceFacts f;
  f.gpu =
      recording::GpuIdentity{0, "GPU-0f0e", "NVIDIA H200", "GH100", "580.159.04", 90, 52'428'800, 132, ""};
  f.unit_table = "hopper-gh100";
  f.units = h200_units();
  return f;
}

inline CalibrationQuery h200_query(std::string driver = "580.159.04") {
  return CalibrationQuery{"NVIDIA H200", std::move(driver), 4, h200_units()};
}

inline const recording::ColumnDef& column_of(const std::string& key) {
  static const std::vector<recording::ColumnDef> units = h200_units();
  for (const recording::ColumnDef& c : units)
    if (c.key == key) return c;
  throw std::runtime_error("no unit " + key);
}

inline CalibratedUnit checked(const std::string& key, Verdict verdict, std::optional<double> ceiling) {
  const recording::ColumnDef& c = column_of(key);
  CalibratedUnit u;
  u.key = c.key;
  u.label = c.label;
  u.recipe = c.recipe;
  u.verdict = verdict;
  u.reason = "set by the test";
  u.ceiling_pct = ceiling;
  if (!ceiling) u.ceiling_reason = "no counted step at full load";
  return u;
}

// A full calibration of an H200 in which FP32 and DRAM passed (the method's checks).
inline CalibrationFile h200_file(std::string date = "2026-11-30T12:34:56Z", bool quick = false) {
  CalibrationFile f;
  f.schema = 3;
  f.method = 4;
  f.tool_version = "0.1.0";
  f.commit = "0123456789ab";
  f.date = std::move(date);
  f.quick = quick;
  f.gpu = CalibrationGpu{"NVIDIA H200", "580.159.04", "GH100", "GPU-0f0e", 90, 132, 52'428'800};
  f.unit_table = "hopper-gh100";
  f.units = {checked("fp32", Verdict::pass, 98.8), checked("dram", Verdict::pass, 82.0)};
  return f;
}

// A fresh, empty folder under the build tree for one test.
inline fs::path scratch(const std::string& name) {
  const fs::path dir =
      fs::path(DIESCOPE_BINARY_DIR) / "calibrate-test" / (name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

inline fs::path write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace diescope::calibrate::test
