// The NVML adapter against a fake function table (no driver needed), and the real "no driver" path.
#include <cmath>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include "diescope/collect/nvml.hpp"
#include "nvml_fake.hpp"

namespace diescope::collect {
namespace {

namespace abi = nvml_abi;
using fake_nvml::fake_functions;
using fake_nvml::state;

TEST(NvmlAdapter, InitOnConstructionShutdownOnDestruction) {
  auto functions = fake_functions();
  {
    Nvml nvml(functions);
    EXPECT_EQ(state().init_calls, 1);
    EXPECT_EQ(state().shutdown_calls, 0);
  }
  EXPECT_EQ(state().shutdown_calls, 1);
}

TEST(NvmlAdapter, InitFailureNamesCallCodeAndFix) {
  auto functions = fake_functions();
  state().init_result = abi::kErrorDriverNotLoaded;
  try {
    Nvml nvml(functions);
    FAIL() << "expected NvmlError";
  } catch (const NvmlError& e) {
    EXPECT_EQ(e.code(), abi::kErrorDriverNotLoaded);
    EXPECT_EQ(e.code_name(), "NVML_ERROR_DRIVER_NOT_LOADED");
    EXPECT_NE(e.cause().find("Driver Not Loaded"), std::string::npos) << e.cause();
    EXPECT_NE(e.fix().find("kernel driver"), std::string::npos) << e.fix();
    EXPECT_EQ(e.exit_code(), core::kExitDevice);
  }
}

TEST(NvmlAdapter, NoGpuAndBadIndexAreClearDeviceErrors) {
  auto functions = fake_functions();
  Nvml nvml(functions);
  state().devices = 0;
  try {
    nvml.device(0);
    FAIL();
  } catch (const core::DeviceError& e) {
    EXPECT_NE(e.cause().find("no NVIDIA GPU"), std::string::npos) << e.cause();
  }
  state().devices = 2;
  try {
    nvml.device(5);
    FAIL();
  } catch (const core::DeviceError& e) {
    EXPECT_NE(e.cause().find("GPU index 5 does not exist: NVML lists 2 GPUs (indexes 0 to 1)"),
              std::string::npos)
        << e.cause();
    EXPECT_NE(e.fix().find("nvidia-smi -L"), std::string::npos);
  }
  EXPECT_NO_THROW(nvml.device(1));
}

// The stand-in host of two GPUs the multi-GPU tests use (docs/method.md#several-gpus): each GPU
// answers for itself, by its own handle.
TEST(NvmlAdapter, TwoGpusAnswerForThemselves) {
  Nvml nvml(fake_functions());
  state().devices = 2;
  state().gpu_util_by_device[1] = 0;  // GPU 1 idle; GPU 0 keeps util.gpu, 97
  EXPECT_EQ(nvml.device_count(), 2);
  EXPECT_EQ(nvml.device(0).identity().uuid, "GPU-00000000-1111-2222-3333-444444444444");
  EXPECT_EQ(nvml.device(1).identity().uuid, "GPU-00000000-1111-2222-3333-444444444441");
  EXPECT_DOUBLE_EQ(nvml.device(0).polled_gpu_util().value, 97.0);
  EXPECT_DOUBLE_EQ(nvml.device(1).polled_gpu_util().value, 0.0);
  // An idle GPU's engines read 0; the busy one's video decoder keeps the table's 12%.
  const NvmlEngine nvdec{"nvdec", "Video decoder", "nvdec__utilization.pct"};
  EXPECT_DOUBLE_EQ(nvml.device(0).engine_utilization(nvdec).value, 12.0);
  EXPECT_DOUBLE_EQ(nvml.device(1).engine_utilization(nvdec).value, 0.0);
}

TEST(NvmlAdapter, FailedCallThrowsWithCallFileLineAndVendorName) {
  auto functions = fake_functions();
  functions->name = [](abi::Device, char*, unsigned) -> abi::Return { return abi::kErrorUnknown; };
  Nvml nvml(functions);
  try {
    nvml.device(0).identity();
    FAIL();
  } catch (const NvmlError& e) {
    EXPECT_NE(e.call().find("fn().name("), std::string::npos) << e.call();
    EXPECT_NE(e.location().find("nvml.cpp:"), std::string::npos) << e.location();
    EXPECT_EQ(e.code_name(), "NVML_ERROR_UNKNOWN");
    EXPECT_NE(e.cause().find("Unknown Error"), std::string::npos) << e.cause();
  }
}

TEST(NvmlAdapter, Identity) {
  auto functions = fake_functions();
  Nvml nvml(functions);
  recording::GpuIdentity id = nvml.device(0).identity();
  EXPECT_EQ(id.index, 0);
  EXPECT_EQ(id.model, "NVIDIA H200");
  EXPECT_EQ(id.uuid, "GPU-00000000-1111-2222-3333-444444444444");
  EXPECT_EQ(id.driver, "580.159");
  EXPECT_EQ(id.compute_capability, 90);  // 9*10 + 0
  EXPECT_EQ(id.l2_bytes, 0);             // NVML does not say: unknown
  EXPECT_EQ(id.sm_count, 0);
}

TEST(NvmlAdapter, ClocksPowerAndReasons) {
  auto functions = fake_functions();
  Nvml nvml(functions);
  NvmlDevice device = nvml.device(0);
  recording::ClockReading clocks = device.clocks(42);
  EXPECT_EQ(clocks.ts_ns, 42);
  EXPECT_EQ(clocks.sm_mhz, 1980);
  EXPECT_EQ(clocks.mem_mhz, 3201);
  EXPECT_EQ(device.power_limit(1).limit_w, 700.0);  // 700000 mW / 1000
  EXPECT_EQ(device.throttle_reasons(1).mask, std::optional<std::uint64_t>(recording::throttle_sw_power_cap));

  state().clock_result = abi::kErrorNotSupported;
  NvmlReading sm = device.sm_clock_mhz();
  EXPECT_TRUE(std::isnan(sm.value));  // unreadable is NaN, never 0
  EXPECT_EQ(sm.why, "not supported on this GPU");
  EXPECT_TRUE(std::isnan(device.clocks(1).mem_mhz));
}

TEST(NvmlAdapter, OptionalCallsAbsentGiveNaNOrNullopt) {
  auto functions = fake_functions();
  functions->clock_event_reasons = nullptr;
  functions->enforced_power_limit = nullptr;
  functions->compute_processes = nullptr;
  functions->compute_capability = nullptr;
  Nvml nvml(functions);
  NvmlDevice device = nvml.device(0);
  EXPECT_FALSE(device.throttle_reasons(1).mask.has_value());
  EXPECT_TRUE(std::isnan(device.power_limit(1).limit_w));
  EXPECT_EQ(device.processes(1).compute, -1);
  EXPECT_EQ(device.identity().compute_capability, 0);
}

TEST(NvmlAdapter, EnginesTheChipHasAndTheirReadings) {
  auto functions = fake_functions();
  Nvml nvml(functions);
  NvmlDevice device = nvml.device(0);
  // nvenc answers NOT_SUPPORTED (an H200 has no encoder), nvdec and nvjpg answer.
  std::vector<NvmlEngine> engines = device.engines();
  ASSERT_EQ(engines.size(), 2u);
  EXPECT_EQ(engines[0].key, "nvdec");
  EXPECT_EQ(engines[1].key, "nvjpg");
  EXPECT_EQ(device.engine_utilization(engines[0]).value, 12);
  EXPECT_EQ(device.engine_utilization(engines[1]).value, 0);  // idle is a real 0

  // An engine the chip has whose read fails later is NaN with the reason.
  state().engines["nvdec"] = {abi::kErrorUnknown, 0};
  NvmlReading failed = device.engine_utilization(engines[0]);
  EXPECT_TRUE(std::isnan(failed.value));
  EXPECT_NE(failed.why.find("NVML_ERROR_UNKNOWN"), std::string::npos);

  std::vector<recording::ColumnDef> columns = device.engine_columns();
  ASSERT_EQ(columns.size(), 2u);  // nvdec still counts as present: only NOT_SUPPORTED removes it
  EXPECT_EQ(columns[0].source, recording::UnitSource::nvml_engine);
  EXPECT_FALSE(columns[0].counted_by_gpu_util);
  EXPECT_EQ(columns[1].metric, "nvjpg__utilization.pct");
}

TEST(NvmlAdapter, ProcessCountsAreDistinctPids) {
  auto functions = fake_functions();
  Nvml nvml(functions);
  NvmlDevice device = nvml.device(0);
  EXPECT_EQ(device.processes(1).compute, 0);
  state().compute_pids = {100, 200, 200, 300};  // 3 distinct holders
  state().graphics_pids = {7};
  recording::ProcessReading r = device.processes(5);
  EXPECT_EQ(r.ts_ns, 5);
  EXPECT_EQ(r.compute, 3);
  EXPECT_EQ(r.graphics, 1);
  state().graphics_result = abi::kErrorNoPermission;
  EXPECT_EQ(device.processes(6).graphics, -1);  // unreadable, not "none"
}

TEST(NvmlAdapter, ProcessIdsAreBothListsDistinctAndAscending) {
  auto functions = fake_functions();
  Nvml nvml(functions);
  NvmlDevice device = nvml.device(0);
  ASSERT_TRUE(device.process_ids().has_value());
  EXPECT_TRUE(device.process_ids()->empty());  // read, and nothing holds the GPU
  state().compute_pids = {300, 100, 300};
  state().graphics_pids = {7, 100};
  EXPECT_EQ(device.process_ids(), (std::optional<std::vector<unsigned>>{{7, 100, 300}}));
  state().graphics_result = abi::kErrorNoPermission;  // one list unreadable: the other still counts
  EXPECT_EQ(device.process_ids(), (std::optional<std::vector<unsigned>>{{100, 300}}));
  functions->compute_processes = nullptr;
  EXPECT_FALSE(device.process_ids().has_value());  // neither list: not known, not "none"
}

TEST(NvmlAdapter, PowerDrawInWattsOrNaNWithTheReason) {
  auto functions = fake_functions();
  Nvml nvml(functions);
  NvmlDevice device = nvml.device(0);
  EXPECT_EQ(device.power_draw_w().value, 331.5);  // 331500 mW / 1000
  state().draw_result = abi::kErrorNotSupported;
  const NvmlReading failed = device.power_draw_w();
  EXPECT_TRUE(std::isnan(failed.value));
  EXPECT_EQ(failed.why, "not supported on this GPU");  // why_not()'s words for NOT_SUPPORTED
  functions->power_usage = nullptr;
  EXPECT_NE(device.power_draw_w().why.find("nvmlDeviceGetPowerUsage"), std::string::npos);
}

TEST(NvmlAdapter, PowerRecordHoldsLimitDrawAndEnergyEachNaNWhenUnreadable) {
  auto functions = fake_functions();
  Nvml nvml(functions);
  NvmlDevice device = nvml.device(0);
  state().energy_mj = 123'456'789;
  const recording::PowerLimitReading r = device.power_limit(42);
  EXPECT_EQ(r.ts_ns, 42);
  EXPECT_EQ(r.limit_w, 700.0);          // 700000 mW / 1000
  EXPECT_EQ(r.draw_w, 331.5);           // 331500 mW / 1000
  EXPECT_EQ(r.energy_mj, 123456789.0);  // millijoules as NVML gives them
  state().draw_result = abi::kErrorNotSupported;
  state().energy_result = abi::kErrorNotSupported;
  const recording::PowerLimitReading none = device.power_limit(43);
  EXPECT_EQ(none.limit_w, 700.0);
  EXPECT_TRUE(std::isnan(none.draw_w));
  EXPECT_TRUE(std::isnan(none.energy_mj));
  functions->total_energy = nullptr;  // an older driver without the counter
  EXPECT_TRUE(std::isnan(device.power_limit(44).energy_mj));
}

TEST(NvmlAdapter, EnergyAsAFieldValueReadsTheSameCounterApartFromTheCall) {
  auto functions = fake_functions();
  Nvml nvml(functions);
  NvmlDevice device = nvml.device(0);
  // Two different values, so that each read shows which way it came.
  state().energy_mj = 111'000;
  state().field_energy_mj = 222'000;
  EXPECT_EQ(device.total_energy_mj_by_field().why, "the driver lacks nvmlDeviceGetFieldValues");
  functions->field_values = fake_nvml::fake_field_values;
  EXPECT_EQ(device.total_energy_mj_by_field().value, 222000.0);
  // What the power record holds stays the call's.
  EXPECT_EQ(device.total_energy_mj().value, 111000.0);
  EXPECT_EQ(device.power_limit(42).energy_mj, 111000.0);
  EXPECT_EQ(state().field_calls, 1);
  // The field not answered, or the whole call failing: NaN with the reason.
  state().field_energy_result = abi::kErrorNotSupported;
  const NvmlReading field = device.total_energy_mj_by_field();
  EXPECT_TRUE(std::isnan(field.value));
  EXPECT_EQ(field.why, "not supported on this GPU");
  state().field_energy_result = abi::kSuccess;
  state().fields_result = abi::kErrorNotSupported;
  EXPECT_EQ(device.total_energy_mj_by_field().why, "not supported on this GPU");
}

TEST(NvmlAdapter, SamplesConvertMicrosecondsToNanosecondsAndKeepWholePercents) {
  auto functions = fake_functions();
  Nvml nvml(functions);
  NvmlDevice device = nvml.device(0);
  // Timestamps as the H200 probe printed them (microseconds since the epoch).
  state().samples = {fake_nvml::util_sample(1795959362782163, 0),
                     fake_nvml::util_sample(1795959362582009, 98)};
  UtilSamplesRead read = device.gpu_util_samples(0);
  ASSERT_EQ(read.status, UtilSamplesRead::Status::ok);
  ASSERT_EQ(read.samples.size(), 2u);
  // Sorted oldest first; 1795959362582009 us * 1000 = 1795959362582009000 ns.
  EXPECT_EQ(read.samples[0].ts_ns, 1795959362582009000);
  EXPECT_EQ(read.samples[0].pct, 98);
  EXPECT_EQ(read.samples[0].source, recording::UtilSource::samples);
  EXPECT_EQ(read.newest_us, 1795959362782163u);

  // Only newer than last seen; none newer is "none", not a failure.
  EXPECT_EQ(device.gpu_util_samples(read.newest_us).status, UtilSamplesRead::Status::none);

  // A driver that reports the value as a double.
  state().sample_type = abi::kValueDouble;
  state().samples = {abi::Sample{1000, {}}};
  state().samples[0].sampleValue.dVal = 42.5;
  EXPECT_EQ(device.gpu_util_samples(0).samples.at(0).pct, 42.5);
}

TEST(NvmlAdapter, SamplesCallMissingOrNotSupportedIsUnsupported) {
  auto functions = fake_functions();
  functions->samples = nullptr;
  Nvml nvml(functions);
  EXPECT_EQ(nvml.device(0).gpu_util_samples(0).status, UtilSamplesRead::Status::unsupported);

  auto with_call = fake_functions();
  Nvml nvml2(with_call);
  state().sample_results = {abi::kErrorNotSupported};
  EXPECT_EQ(nvml2.device(0).gpu_util_samples(0).status, UtilSamplesRead::Status::unsupported);
  state().sample_results = {abi::kErrorTimeout};
  UtilSamplesRead failed = nvml2.device(0).gpu_util_samples(0);
  EXPECT_EQ(failed.status, UtilSamplesRead::Status::failed);
  EXPECT_NE(failed.error.find("NVML_ERROR_TIMEOUT"), std::string::npos) << failed.error;
}

// This machine's real loader: where there is no driver, load() must say so and how to fix it.
TEST(NvmlAdapter, NoDriverGivesClearError) {
  if (void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(h);
    GTEST_SKIP() << "libnvidia-ml.so.1 is installed here; the no-driver path needs a machine without it";
  }
  if (void* h = dlopen("/usr/local/nvidia/lib64/libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(h);
    GTEST_SKIP() << "libnvidia-ml.so.1 is installed under /usr/local/nvidia/lib64";
  }
  try {
    auto nvml = Nvml::load();
    FAIL() << "load() succeeded without a driver";
  } catch (const core::DeviceError& e) {
    EXPECT_NE(e.cause().find("libnvidia-ml.so.1 not found"), std::string::npos) << e.cause();
    EXPECT_NE(e.fix().find("install the NVIDIA driver"), std::string::npos) << e.fix();
    EXPECT_NE(e.fix().find("LD_LIBRARY_PATH"), std::string::npos) << e.fix();
    EXPECT_EQ(e.exit_code(), core::kExitDevice);
  }
}

}  // namespace
}  // namespace diescope::collect
