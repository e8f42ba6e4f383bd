// bf16 GEMM on the tensor cores through cuBLAS. cuBLAS is loaded at run time from the toolkit, so the
// other workloads start where it is missing and this one says exactly what is missing.
#include <dlfcn.h>
#include <link.h>

#include <cmath>
#include <cstring>
#include <vector>

#include <cublas_api.h>

#include "device.hpp"
#include "diescope/core/error.hpp"
#include "diescope/workloads/work.hpp"
#include "kernels.hpp"
#include "output.hpp"
#include "workloads.hpp"

#ifndef DIESCOPE_CUDA_LIBRARY_DIR
#define DIESCOPE_CUDA_LIBRARY_DIR "/usr/local/cuda/lib64"
#endif

namespace diescope::workloads::gpu {

namespace {

constexpr int kCalibrationCalls = 5;

// cublasGemmEx has C++ overloads, so its pointer type is spelled out (the 32-bit-index C entry point).
using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                    const void*, const void*, cudaDataType, int, const void*, cudaDataType,
                                    int, const void*, void*, cudaDataType, int, cublasComputeType_t,
                                    cublasGemmAlgo_t);

// The few cuBLAS entry points used, resolved from the shared library.
class Cublas {
 public:
  Cublas() {
    const std::string soname = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
    std::string tried;
    for (const std::string& candidate : {soname, std::string(DIESCOPE_CUDA_LIBRARY_DIR) + "/" + soname,
                                         std::string("/usr/local/cuda/lib64/") + soname,
                                         std::string("/usr/local/cuda/targets/x86_64-linux/lib/") + soname}) {
      library_ = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (library_ != nullptr) break;
      const char* why = ::dlerror();
      tried += "\n    " + candidate + ": " + (why != nullptr ? why : "not found");
    }
    if (library_ == nullptr) {
      throw core::DeviceError(
          "cuBLAS (" + soname + ") could not be loaded for the gemm workload; tried:" + tried,
          "install the CUDA " + std::to_string(CUBLAS_VER_MAJOR) +
              " toolkit's cuBLAS, or add the folder holding " + soname + " to LD_LIBRARY_PATH");
    }
    link_map* map = nullptr;
    if (::dlinfo(library_, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr)
      path_ = map->l_name;
    create = resolve<decltype(&cublasCreate_v2)>("cublasCreate_v2");
    destroy = resolve<decltype(&cublasDestroy_v2)>("cublasDestroy_v2");
    set_stream = resolve<decltype(&cublasSetStream_v2)>("cublasSetStream_v2");
    get_version = resolve<decltype(&cublasGetVersion_v2)>("cublasGetVersion_v2");
    gemm_ex = resolve<GemmExFn>("cublasGemmEx");
    status_name = resolve<decltype(&cublasGetStatusName)>("cublasGetStatusName");
  }
  ~Cublas() {
    if (library_ != nullptr) ::dlclose(library_);
  }
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  const std::string& path() const { return path_; }
  void check(cublasStatus_t status, const char* what) const {
    if (status == CUBLAS_STATUS_SUCCESS) return;
    throw core::DeviceError(
        std::string(what) + " failed (" + status_name(status) + ")",
        "check the GPU with nvidia-smi and that cuBLAS matches the driver's CUDA version");
  }

  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasGetVersion_v2) get_version = nullptr;
  GemmExFn gemm_ex = nullptr;
  decltype(&cublasGetStatusName) status_name = nullptr;

 private:
  template <typename F>
  F resolve(const char* name) {
    void* symbol = ::dlsym(library_, name);
    if (symbol == nullptr) {
      throw core::DeviceError("cuBLAS at " + path_ + " has no " + name,
                              "install the CUDA " + std::to_string(CUBLAS_VER_MAJOR) + " toolkit's cuBLAS");
    }
    return reinterpret_cast<F>(symbol);
  }
  void* library_ = nullptr;
  std::string path_;
};

class Handle {
 public:
  explicit Handle(const Cublas& cublas) : cublas_(cublas) {
    cublas.check(cublas.create(&handle_), "creating a cuBLAS handle");
  }
  ~Handle() { cublas_.destroy(handle_); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  const Cublas& cublas_;
  cublasHandle_t handle_ = nullptr;
};

float bf16_to_float(std::uint16_t bits) {
  const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof f);
  return f;
}

std::vector<SmStamp> read_stamps(const DeviceBuffer& raw, int count) {
  std::vector<RawStamp> stamps(static_cast<std::size_t>(count));
  check(
      cudaMemcpy(stamps.data(), raw.as<RawStamp>(), stamps.size() * sizeof(RawStamp), cudaMemcpyDeviceToHost),
      "reading clock stamps");
  std::vector<SmStamp> out;
  out.reserve(stamps.size());
  for (const auto& s : stamps) out.push_back({static_cast<int>(s.smid), s.cycles, s.ns});
  return out;
}

// Checks sampled elements of C (column-major, m x n) against a double-precision dot product of the
// same bf16 inputs. bf16 output rounds to 2^-8 relative; fp32 accumulation adds far less.
void verify(const DeviceBuffer& a, const DeviceBuffer& b, const DeviceBuffer& c, std::int64_t m,
            std::int64_t n, std::int64_t k) {
  const std::size_t uk = static_cast<std::size_t>(k);
  std::vector<std::uint16_t> row(uk), column(uk);
  for (int s = 0; s < 8; ++s) {
    const std::int64_t i = (s * 7919 + 3) % m, j = (s * 104729 + 5) % n;
    check(cudaMemcpy2D(row.data(), 2, a.as<std::uint16_t>() + i, static_cast<std::size_t>(m) * 2, 2, uk,
                       cudaMemcpyDeviceToHost),
          "reading a row of A");
    check(cudaMemcpy(column.data(), b.as<std::uint16_t>() + j * k, uk * 2, cudaMemcpyDeviceToHost),
          "reading a column of B");
    std::uint16_t got_bits = 0;
    check(cudaMemcpy(&got_bits, c.as<std::uint16_t>() + i + j * m, 2, cudaMemcpyDeviceToHost),
          "reading an element of C");
    double ref = 0.0, magnitude = 0.0;
    for (std::size_t p = 0; p < uk; ++p) {
      const double term =
          static_cast<double>(bf16_to_float(row[p])) * static_cast<double>(bf16_to_float(column[p]));
      ref += term;
      magnitude += std::fabs(term);
    }
    const double got = bf16_to_float(got_bits);
    const double tolerance = std::ldexp(std::fabs(ref), -7) + 1e-5 * magnitude;
    if (!(std::fabs(got - ref) <= tolerance)) {
      throw core::DeviceError("the GEMM result is wrong at (" + std::to_string(i) + ", " + std::to_string(j) +
                                  "): " + std::to_string(got) + " where a double-precision reference gives " +
                                  std::to_string(ref),
                              "check that cuBLAS matches the driver; report this with the GPU model");
    }
  }
}

}  // namespace

int run_gemm(const GemmOptions& options) {
  const DeviceInfo device = open_device(options.common.device);
  const Cublas cublas;
  const std::int64_t m = options.m, n = options.n, k = options.k;
  const std::uint64_t elements = static_cast<std::uint64_t>(m * k + k * n + m * n);
  std::size_t free_bytes = 0, total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), "reading free GPU memory");
  if (static_cast<double>(elements * 2) > 0.9 * static_cast<double>(free_bytes)) {
    throw core::UsageError("the matrices need " + std::to_string((elements * 2) >> 20) +
                               " MiB, more than the " + std::to_string(free_bytes >> 20) + " MiB free on " +
                               device.name,
                           "use smaller --m, --n and --k");
  }
  DeviceBuffer a(static_cast<std::size_t>(m * k) * 2, "allocating GEMM matrix A");
  DeviceBuffer b(static_cast<std::size_t>(k * n) * 2, "allocating GEMM matrix B");
  DeviceBuffer c(static_cast<std::size_t>(m * n) * 2, "allocating GEMM matrix C");
  DeviceBuffer stamps_before(static_cast<std::size_t>(device.sm_count) * sizeof(RawStamp),
                             "allocating clock stamps");
  DeviceBuffer stamps_after(static_cast<std::size_t>(device.sm_count) * sizeof(RawStamp),
                            "allocating clock stamps");
  Stream stream;
  // Random inputs: zeros would run faster than real data and hide unwritten output.
  check(launch_fill_bf16(a.get_void(), static_cast<std::uint64_t>(m * k), 1u, stream.get()), "filling A");
  check(launch_fill_bf16(b.get_void(), static_cast<std::uint64_t>(k * n), 2u, stream.get()), "filling B");
  check(launch_fill_bf16(c.get_void(), static_cast<std::uint64_t>(m * n), 3u, stream.get()), "filling C");
  const Handle handle(cublas);
  cublas.check(cublas.set_stream(handle.get(), stream.get()), "binding the cuBLAS handle to a stream");
  int version = 0;
  cublas.check(cublas.get_version(handle.get(), &version), "reading the cuBLAS version");
  const float alpha = 1.0f, beta = 0.0f;
  const int im = static_cast<int>(m), in = static_cast<int>(n), ik = static_cast<int>(k);
  auto gemm = [&] {
    cublas.check(cublas.gemm_ex(handle.get(), CUBLAS_OP_N, CUBLAS_OP_N, im, in, ik, &alpha, a.get_void(),
                                CUDA_R_16BF, im, b.get_void(), CUDA_R_16BF, ik, &beta, c.get_void(),
                                CUDA_R_16BF, im, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx (bf16 inputs, FP32 compute)");
  };

  // Setup: warm-up calls (cuBLAS picks and loads its kernel), then a timed few that size the window.
  gemm();
  gemm();
  Event e0, e1;
  e0.record(stream.get());
  for (int i = 0; i < kCalibrationCalls; ++i) gemm();
  e1.record(stream.get());
  const double per_call_s = elapsed_ms(e0, e1) / 1000.0 / kCalibrationCalls;
  const std::uint64_t calls = launches_to_fill(options.common.seconds, per_call_s);

  // The window. cuBLAS's kernels cannot time themselves, so a tiny kernel stamps each SM's cycle
  // counter and the global timer just before and just after it: cycles over nanoseconds between the
  // two stamps of one SM is that SM's mean clock over the window.
  print_measure_start();
  check(launch_clock_stamps(stamps_before.as<RawStamp>(), device.sm_count, stream.get()),
        "stamping the clock");
  e0.record(stream.get());
  for (std::uint64_t i = 0; i < calls; ++i) gemm();
  e1.record(stream.get());
  check(launch_clock_stamps(stamps_after.as<RawStamp>(), device.sm_count, stream.get()),
        "stamping the clock");
  const double seconds = elapsed_ms(e0, e1) / 1000.0;
  print_measure_stop();
  stream.synchronize("finishing the GEMM window");

  verify(a, b, c, m, n, k);
  const Rate mhz = clock_mhz_between(read_stamps(stamps_before, device.sm_count),
                                     read_stamps(stamps_after, device.sm_count));
  const double flops = gemm_flops(m, n, k) * static_cast<double>(calls);
  print_measure_flops(flops);
  const Rate per_sm = bf16_dense_flop_per_sm_per_cycle(device.cc_major, device.cc_minor);
  const double peak = per_sm.value * device.sm_count * mhz.value * 1e6;

  nlohmann::json result{{"workload", "gemm"}, {"schema", 1}, {"device", device_json(device)}};
  result["config"] = {{"m", m},
                      {"n", n},
                      {"k", k},
                      {"types", "A, B, C bf16; CUBLAS_COMPUTE_32F; column-major, no transposes"},
                      {"calls", calls},
                      {"cublas_version", version},
                      {"cublas_library", cublas.path()},
                      {"seconds_requested", options.common.seconds}};
  result["work"] = {
      {"flops_per_call", gemm_flops(m, n, k)}, {"flops", flops}, {"counted", "2 x m x n x k per call"}};
  result["time_s"] = seconds;
  nlohmann::json clock;
  put_rate(clock, "sm_mhz", mhz);
  clock["source"] =
      "clock64() over %globaltimer per SM, between a stamp kernel just before the window and one just "
      "after it, averaged over the SMs stamped both times";
  clock["rated_max_sm_mhz"] = device.rated_max_sm_clock_mhz;
  result["clock"] = clock;
  nlohmann::json figures;
  figures["tflops"] = flops / seconds / 1e12;
  put_rate(figures, "bf16_dense_flop_per_sm_per_cycle", per_sm);
  put_number(figures, "bf16_dense_peak_tflops_at_clock", peak / 1e12,
             per_sm.reason.empty() ? "the clock is unknown" : per_sm.reason);
  put_number(figures, "pct_of_bf16_dense_peak_at_clock", 100.0 * flops / seconds / peak,
             per_sm.reason.empty() ? "the clock is unknown" : per_sm.reason);
  result["result"] = figures;
  print_result(result);
  print_note(device.name + ": bf16 GEMM " + std::to_string(m) + "x" + std::to_string(n) + "x" +
             std::to_string(k) + ", " + std::to_string(calls) + " calls in " + std::to_string(seconds) +
             " s: " + std::to_string(flops / seconds / 1e12) + " TFLOP/s at " + std::to_string(mhz.value) +
             " MHz");
  return 0;
}

}  // namespace diescope::workloads::gpu
