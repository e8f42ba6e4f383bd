#include "diescope/roofline/ncu.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "diescope/calibrate/calibration_file.hpp"
#include "diescope/calibrate/lookup.hpp"
#include "diescope/collect/unit_tables.hpp"
#include "diescope/core/error.hpp"
#include "diescope/core/version.hpp"
#include "diescope/roofline/csv.hpp"
#include "internal.hpp"

namespace diescope::roofline {

namespace {

using detail::kNaN;
// docs/roofline.md#packed-half-precision: the lanes of a packed FP16 instruction (HADD2, HMUL2, HFMA2).
constexpr double kHalfLanesPerInstruction = 2;

// docs/roofline.md#flops: executed SASS thread instructions per precision; an FMA is two FLOPs.
struct ScalarRule {
  Precision precision;
  const char* add;
  const char* mul;
  const char* fma;
  const char* fma_peak;  // thread FMA instructions per cycle of the whole GPU
};
const ScalarRule kScalarRules[] = {
    {Precision::fp16, "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum",
     "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum",
     "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum",
     "sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained"},
    {Precision::fp32, "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
     "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
     "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
     "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained"},
    {Precision::fp64, "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum",
     "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum",
     "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
     "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained"},
};

// docs/roofline.md#tensor-flops: the tensor path's math operations are FLOPs one for one (a GEMM's
// 2·M·N·K, on the tiles it computes); the dense (sparsity off) warpgroup rate is the counter peak.
struct TensorRule {
  Precision precision;
  const char* ops;
  const char* peak;
};
const TensorRule kTensorRules[] = {
    {Precision::tensor_fp16, "sm__ops_path_tensor_src_fp16.sum",
     "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum.peak_sustained"},
    {Precision::tensor_bf16, "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
     "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained"},
    {Precision::tensor_tf32, "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
     "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum.peak_sustained"},
    {Precision::tensor_fp8, "sm__ops_path_tensor_src_fp8.sum",
     "sm__ops_path_tensor_src_fp8_sparsity_off.sum.peak_sustained"},
    {Precision::tensor_int8, "sm__ops_path_tensor_src_int8.sum",
     "sm__ops_path_tensor_op_igmma_src_int8_sparsity_off.sum.peak_sustained"},
    {Precision::tensor_fp64, "sm__ops_path_tensor_src_fp64.sum",
     "sm__ops_path_tensor_src_fp64.sum.peak_sustained"},
};

struct LevelRule {
  Level level;
  const char* bytes;
  const char* peak;   // bytes per cycle of the whole GPU
  const char* clock;  // that unit's cycles per second
};
const LevelRule kLevelRules[] = {
    {Level::dram, "dram__bytes.sum", "dram__bytes.sum.peak_sustained", "dram__cycles_elapsed.avg.per_second"},
    {Level::l2, "lts__t_bytes.sum", "lts__t_bytes.sum.peak_sustained", "lts__cycles_elapsed.avg.per_second"},
    {Level::l1, "l1tex__t_bytes.sum", "l1tex__t_bytes.sum.peak_sustained",
     "l1tex__cycles_elapsed.avg.per_second"},
};

constexpr const char* kDuration = "gpu__time_duration.sum";
constexpr const char* kSmClock = "sm__cycles_elapsed.avg.per_second";
constexpr const char* kTensorInst = "sm__inst_executed_pipe_tensor.sum";
constexpr const char* kGpuName = "device__attribute_display_name";
constexpr const char* kPushPop = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg";
constexpr const char* kStartEnd = "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg";

// A unit ncu prints -> the factor to the base unit (s, Hz, byte, count).
std::optional<double> unit_factor(std::string unit) {
  static const std::map<std::string, double> kFactors = {{"", 1},
                                                         {"inst", 1},
                                                         {"cycle", 1},
                                                         {"ns", 1e-9},
                                                         {"nsecond", 1e-9},
                                                         {"us", 1e-6},
                                                         {"usecond", 1e-6},
                                                         {"ms", 1e-3},
                                                         {"msecond", 1e-3},
                                                         {"s", 1},
                                                         {"second", 1},
                                                         {"hz", 1},
                                                         {"khz", 1e3},
                                                         {"mhz", 1e6},
                                                         {"ghz", 1e9},
                                                         {"byte", 1},
                                                         {"kbyte", 1e3},
                                                         {"mbyte", 1e6},
                                                         {"gbyte", 1e9},
                                                         {"tbyte", 1e12},
                                                         {"kinst", 1e3},
                                                         {"minst", 1e6},
                                                         {"ginst", 1e9},
                                                         {"inst/cycle", 1},
                                                         {"byte/cycle", 1},
                                                         {"kbyte/cycle", 1e3},
                                                         {"mbyte/cycle", 1e6},
                                                         {"kinst/cycle", 1e3},
                                                         {"minst/cycle", 1e6}};
  std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char c) { return std::tolower(c); });
  const auto it = kFactors.find(unit);
  if (it == kFactors.end()) return std::nullopt;
  return it->second;
}

// "1,081,344" -> 1081344; "n/a" and "" -> NaN. nullopt when the text is not a number.
std::optional<double> parse_number(std::string_view text) {
  std::string s;
  for (char c : text)
    if (c != ',' && c != ' ') s += c;
  if (s.empty() || s == "n/a" || s == "N/A") return kNaN;
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    if (used != s.size()) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The quoted items of an NVTX cell, in order.
std::vector<std::string> quoted_items(std::string_view cell) {
  std::vector<std::string> items;
  std::size_t pos = 0;
  while ((pos = cell.find('"', pos)) != std::string_view::npos) {
    const std::size_t end = cell.find('"', pos + 1);
    if (end == std::string_view::npos) break;
    items.emplace_back(cell.substr(pos + 1, end - pos - 1));
    pos = end + 1;
  }
  return items;
}

// Drops `lead` ':'-fields at the front and the 6 payload/colour/message fields at the back.
std::string range_name(const std::string& item, int lead) {
  std::size_t start = 0;
  for (int i = 0; i < lead; ++i) {
    start = item.find(':', start);
    if (start == std::string::npos) return "";
    ++start;
  }
  std::size_t end = item.size();
  for (int i = 0; i < 6; ++i) {
    end = item.rfind(':', end - 1);
    if (end == std::string::npos || end < start) return "";
    if (i < 5 && end == 0) return "";
  }
  return item.substr(start, end - start);
}

}  // namespace

const std::vector<std::string>& ncu_metrics() {
  static const std::vector<std::string> metrics = [] {
    std::vector<std::string> m = {kDuration, kSmClock, kTensorInst};
    for (const auto& r : kScalarRules) m.insert(m.end(), {r.add, r.mul, r.fma, r.fma_peak});
    for (const auto& r : kTensorRules) m.insert(m.end(), {r.ops, r.peak});
    for (const auto& r : kLevelRules) m.insert(m.end(), {r.bytes, r.peak, r.clock});
    m.insert(m.end(), {"launch__grid_size", "launch__block_size"});
    return m;
  }();
  return metrics;
}

RawExport parse_raw_export(std::string_view text, const std::string& path) {
  RawExport raw;
  long line_no = 0;
  std::size_t pos = 0;
  bool have_header = false, have_units = false;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    const bool last = end == std::string_view::npos;
    if (last) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (!have_header) {
      if (line.rfind("\"ID\"", 0) != 0) continue;  // ncu's notes before the table
    }
    std::vector<std::string> fields;
    try {
      fields = split_csv_line(line);
    } catch (const std::invalid_argument& e) {
      throw core::InputError(
          path, line_no, e.what(),
          "export the report again: ncu --import R.ncu-rep --csv --page raw --print-units base");
    }
    if (!have_header) {
      raw.header = std::move(fields);
      have_header = true;
      continue;
    }
    if (fields.size() != raw.header.size())
      throw core::InputError(
          path, line_no,
          fmt::format("{} fields where the header has {} (a truncated or edited export?)", fields.size(),
                      raw.header.size()),
          "export the report again: ncu --import R.ncu-rep --csv --page raw --print-units base");
    if (!have_units) {
      raw.units = std::move(fields);
      have_units = true;
      continue;
    }
    raw.rows.push_back(std::move(fields));
    raw.row_lines.push_back(line_no);
  }
  if (!have_header)
    throw core::InputError(path, 0, "no Nsight Compute raw table in it (no header line starting with \"ID\")",
                           "give the output of: ncu --import R.ncu-rep --csv --page raw --print-units base");
  if (!have_units)
    throw core::InputError(
        path, line_no, "the table ends after its header (truncated?)",
        "export the report again: ncu --import R.ncu-rep --csv --page raw --print-units base");
  return raw;
}

std::vector<std::string> missing_metrics(const RawExport& raw, const std::vector<std::string>& asked) {
  std::vector<std::string> missing;
  for (const std::string& m : asked)
    if (std::find(raw.header.begin(), raw.header.end(), m) == raw.header.end()) missing.push_back(m);
  return missing;
}

std::string push_pop_region(std::string_view cell) {
  const auto items = quoted_items(cell);
  return items.empty() ? "" : range_name(items.back(), 1);
}

std::string start_end_region(std::string_view cell) {
  const auto items = quoted_items(cell);
  return items.empty() ? "" : range_name(items.back(), 2);
}

std::vector<Row> rows_from_export(const RawExport& raw, const std::string& executable,
                                  const std::string& path) {
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < raw.header.size(); ++i) col.emplace(raw.header[i], i);
  const std::string fix =
      "profile it with `diescope roofline profile`, which asks ncu for every metric the table reads "
      "(docs/roofline.md#metrics)";
  auto require = [&](const std::string& name) {
    const auto it = col.find(name);
    if (it == col.end())
      throw core::InputError(path, 1,
                             "column " + name + " is missing: the report was made without that metric", fix);
    return it->second;
  };
  auto optional_col = [&](const std::string& name) -> std::optional<std::size_t> {
    const auto it = col.find(name);
    if (it == col.end()) return std::nullopt;
    return it->second;
  };
  std::vector<std::optional<double>> factors(raw.header.size());
  auto factor = [&](std::size_t c) {
    if (!factors[c]) {
      const auto f = unit_factor(raw.units[c]);
      if (!f)
        throw core::InputError(
            path, 2, "unit \"" + raw.units[c] + "\" of " + raw.header[c] + " is not one diescope reads",
            "export with base units: ncu --import R.ncu-rep --csv --page raw --print-units base");
      factors[c] = *f;
    }
    return *factors[c];
  };

  const std::size_t c_id = require("ID"), c_kernel = require("Kernel Name"), c_duration = require(kDuration),
                    c_sm = require(kSmClock);
  const auto c_block = optional_col("Block Size"), c_grid = optional_col("Grid Size"),
             c_gpu = optional_col(kGpuName), c_push = optional_col(kPushPop),
             c_start = optional_col(kStartEnd), c_tensor_inst = optional_col(kTensorInst);
  for (const auto& r : kScalarRules) {
    require(r.add);
    require(r.mul);
    require(r.fma);
  }
  for (const auto& r : kLevelRules) require(r.bytes);

  std::vector<Row> rows;
  rows.reserve(raw.rows.size());
  for (std::size_t i = 0; i < raw.rows.size(); ++i) {
    const auto& f = raw.rows[i];
    const long line = raw.row_lines[i];
    auto number = [&](std::size_t c) {
      const auto v = parse_number(f[c]);
      if (!v)
        throw core::InputError(
            path, line, raw.header[c] + " is \"" + f[c] + "\", not a number",
            "export the report again: ncu --import R.ncu-rep --csv --page raw --print-units base");
      return *v * factor(c);
    };
    auto number_if = [&](const char* name) {
      const auto c = optional_col(name);
      return c ? number(*c) : kNaN;
    };
    Row row;
    row.executable = executable;
    row.kernel = f[c_kernel];
    const auto id = parse_number(f[c_id]);
    if (!id || !std::isfinite(*id))
      throw core::InputError(
          path, line, "ID is \"" + f[c_id] + "\", not a launch number",
          "export the report again: ncu --import R.ncu-rep --csv --page raw --print-units base");
    row.launch = static_cast<std::int64_t>(*id);
    if (c_block) row.block = f[*c_block];
    if (c_grid) row.grid = f[*c_grid];
    if (c_gpu) row.gpu = f[*c_gpu];
    // docs/roofline.md#regions: the launching thread's innermost push/pop range, else a start/end range.
    if (c_push) row.region = push_pop_region(f[*c_push]);
    if (row.region.empty() && c_start) row.region = start_end_region(f[*c_start]);
    row.duration_s = number(c_duration);
    row.sm_hz = number(c_sm);
    if (c_tensor_inst) row.tensor_inst = number(*c_tensor_inst);
    for (const auto& r : kScalarRules) {
      const double add = number(require(r.add)), mul = number(require(r.mul)), fma = number(require(r.fma));
      row.flop[index(r.precision)] = add + mul + 2.0 * fma;
      row.peak_flop_per_cycle[index(r.precision)] = 2.0 * number_if(r.fma_peak);
      if (r.precision != Precision::fp16) continue;
      // docs/roofline.md#packed-half-precision: the counters count thread instructions of one or two
      // lanes, and an HFMA2 may be an add or a multiply; until the kernel's SASS says which, the FLOPs
      // are the range [1 per instruction, 2 per add or multiply and 4 per HFMA2]. The peak is the
      // hardware's: every FP16 FMA instruction issued fills its two lanes.
      row.fp16_inst = {add, mul, fma};
      row.peak_flop_per_cycle[index(r.precision)] = 2.0 * kHalfLanesPerInstruction * number_if(r.fma_peak);
      row.flop[index(r.precision)] = add + mul + fma;
      if (add + mul + fma > 0) {
        row.fp16_flop_high = kHalfLanesPerInstruction * (add + mul + 2.0 * fma);
        row.fp16_why = "the kernel's SASS was not read";
      }
    }
    for (const auto& r : kTensorRules) {
      row.flop[index(r.precision)] = number_if(r.ops);
      row.peak_flop_per_cycle[index(r.precision)] = number_if(r.peak);
    }
    for (const auto& r : kLevelRules) {
      row.bytes[index(r.level)] = number(require(r.bytes));
      row.peak_bytes_per_cycle[index(r.level)] = number_if(r.peak);
      row.level_hz[index(r.level)] = number_if(r.clock);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

namespace {

// The SM clock of the judged step with the most SMs loaded (full load), from a unit's check.
double full_load_mhz(const calibrate::CalibratedUnit& u) {
  double mhz = kNaN;
  int most = -1;
  if (!u.check.is_object() || !u.check.contains("steps") || !u.check["steps"].is_array()) return mhz;
  for (const auto& s : u.check["steps"]) {
    if (!s.is_object() || s.value("role", "") != "judged") continue;
    const int sms = s.value("loaded_sms", 0);
    if (sms > most && s.contains("sm_clock_mhz") && s["sm_clock_mhz"].is_number()) {
      most = sms;
      mhz = s["sm_clock_mhz"].get<double>();
    }
  }
  return mhz;
}

}  // namespace

MeasuredCeilings ceilings_from_calibration_json(std::string_view text, const std::string& name) {
  MeasuredCeilings c;
  c.source = name;
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) {
    c.source = name + " is not JSON";
    return c;
  }
  calibrate::CalibrationFile file;
  try {
    file = calibrate::calibration_from_json(j);
  } catch (const std::exception& e) {
    c.source = name + " could not be read: " + e.what();
    return c;
  }
  c.found = true;
  for (const auto& u : file.units) {
    if (!u.ceiling_pct) continue;
    const double mhz = full_load_mhz(u);
    if (!std::isfinite(mhz)) continue;
    if (u.key == "fp32") {
      c.fp32_pct = u.ceiling_pct;
      c.fp32_mhz = mhz;
    } else if (u.key == "fp64") {
      c.fp64_pct = u.ceiling_pct;
      c.fp64_mhz = mhz;
    } else if (u.key == "tensor") {
      c.tensor_pct = u.ceiling_pct;
      c.tensor_mhz = mhz;
    }
  }
  const calibrate::ModelCeilings m = calibrate::model_ceilings(file.device_model);
  c.dram_bytes_per_s = m.dram_bytes_per_s;
  c.l2_bytes_per_s = m.cache_bytes_per_s;
  return c;
}

MeasuredCeilings find_measured_ceilings(const std::string& gpu_model, const std::string& driver,
                                        const std::optional<std::filesystem::path>& explicit_path) {
  std::string first_reason;
  for (const auto& table : collect::unit_tables()) {
    calibrate::CalibrationQuery q;
    q.gpu_model = gpu_model;
    q.driver = driver;
    q.method = core::kMethodVersion;
    q.units = table.units;
    const calibrate::CalibrationBlock block =
        calibrate::find_calibration(q, explicit_path, calibrate::default_calibration_dir());
    if (block.file) {
      std::ifstream in(block.file->path, std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      return ceilings_from_calibration_json(text.str(), block.file->name);
    }
    if (first_reason.empty()) first_reason = block.reason;
  }
  MeasuredCeilings none;
  none.source = first_reason.empty() ? std::string(calibrate::kNoCalibrationReason) : first_reason;
  return none;
}

void apply_ceilings(std::vector<Row>& rows, const MeasuredCeilings& c) {
  // docs/roofline.md#ceilings
  for (Row& r : rows) {
    r.calibration = c.source;
    if (!c.found) continue;
    auto set = [&](Precision p, const std::optional<double>& pct, double mhz) {
      if (pct) r.measured_flop_per_s[index(p)] = *pct / 100.0 * r.peak_flop_per_cycle[index(p)] * mhz * 1e6;
    };
    set(Precision::fp32, c.fp32_pct, c.fp32_mhz);
    set(Precision::fp64, c.fp64_pct, c.fp64_mhz);
    for (Precision p : kAllPrecisions)
      if (is_tensor(p)) set(p, c.tensor_pct, c.tensor_mhz);
    if (c.dram_bytes_per_s) r.measured_bytes_per_s[index(Level::dram)] = *c.dram_bytes_per_s;
    if (c.l2_bytes_per_s) r.measured_bytes_per_s[index(Level::l2)] = *c.l2_bytes_per_s;
  }
}

}  // namespace diescope::roofline
