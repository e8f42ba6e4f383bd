// stream_variants: how fast can a STREAM triad (a = b + s c over single-precision vectors) move
// bytes on this GPU? Times several kernel forms and grids with CUDA events (best of the repeats, L2
// flushed between repeats by a 256 MiB write) and prints one CSV row per form. It is the search
// behind the calibration's STREAM kernels (triad at 90% of the counter-implied DRAM peak:
// docs/calibration.md#the-step-kernels-calibrate_kernelscu);
// bench/calibrate/stream_forms.sh runs it.
//
//   stream_variants [elements=2^26] [repeats=20] [flush=read|write]
//
// flush=write is a 256 MiB memset before each repeat (diescope's cold timing did this until
// 2026-11-29); flush=read reads the same buffer instead, so the timed kernel does not also write back
// the flush's dirty lines.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CHECK(call)                                                                             \
  do {                                                                                          \
    cudaError_t e_ = (call);                                                                    \
    if (e_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorName(e_)); \
      std::exit(1);                                                                             \
    }                                                                                           \
  } while (0)

namespace {

enum class Hint { none, streaming, no_allocate, prefetch_256b };

template <Hint H>
__device__ __forceinline__ float4 load(const float4* p) {
  if constexpr (H == Hint::streaming) return __ldcs(p);
  if constexpr (H == Hint::prefetch_256b) {
    // The L2 prefetch-size qualifier exists from compute capability 8.0; before it the form is a
    // plain load (its rows then time the same kernel as the unhinted form).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    float4 v;
    asm volatile("ld.global.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p));
    return v;
#else
    return *p;
#endif
  }
  if constexpr (H == Hint::no_allocate) {
    float4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.f32 {%0,%1,%2,%3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p));
    return v;
  }
  return *p;
}

template <Hint H>
__device__ __forceinline__ void store(float4* p, float4 v) {
  if constexpr (H == Hint::none || H == Hint::prefetch_256b)
    *p = v;
  else
    __stcs(p, v);
}

__device__ __forceinline__ float4 triad(float4 b, float4 c, float s) {
  return make_float4(b.x + s * c.x, b.y + s * c.y, b.z + s * c.z, b.w + s * c.w);
}

// Grid-stride over the vectors, U float4 of each input in flight per thread before the stores.
template <int U, Hint H>
__global__ void triad_stride(float4* a, const float4* b, const float4* c, float s, unsigned long long n4) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (U - 1) * stride < n4; i += U * stride) {
    float4 vb[U], vc[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      vb[u] = load<H>(b + i + u * stride);
      vc[u] = load<H>(c + i + u * stride);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) store<H>(a + i + u * stride, triad(vb[u], vc[u], s));
  }
  for (; i < n4; i += stride) store<H>(a + i, triad(load<H>(b + i), load<H>(c + i), s));
}

// One pass, no loop: block k takes the contiguous chunk [k U T, (k+1) U T) of float4s (T threads),
// each thread U of them T apart. n4 must be a multiple of U T (true for the powers of two used here).
template <int U, Hint H>
__global__ void triad_chunk(float4* a, const float4* b, const float4* c, float s) {
  const unsigned long long base = static_cast<unsigned long long>(blockIdx.x) * U * blockDim.x + threadIdx.x;
  float4 vb[U], vc[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    vb[u] = load<H>(b + base + u * blockDim.x);
    vc[u] = load<H>(c + base + u * blockDim.x);
  }
#pragma unroll
  for (int u = 0; u < U; ++u) store<H>(a + base + u * blockDim.x, triad(vb[u], vc[u], s));
}

// For scale: the read-only and write-only rates of the same memory.
__global__ void read_only(const float4* b, unsigned long long n4, float* sink) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  float acc = 0;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n4;
       i += stride) {
    const float4 v = __ldcs(b + i);
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 12345.0f) *sink = acc;
}
__global__ void write_only(float4* a, unsigned long long n4) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n4;
       i += stride)
    __stcs(a + i, make_float4(1, 2, 3, 4));
}
__global__ void flush_read(const float4* p, unsigned long long n4, float* sink) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  float acc = 0;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n4;
       i += stride) {
    const float4 v = p[i];
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 12345.0f) *sink = acc;
}
__global__ void fill(float* p, unsigned long long n, float v) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    p[i] = v + 0.001f * static_cast<float>(i & 1023u);
}

struct Timer {
  cudaEvent_t e0, e1;
  float* flush;
  size_t flush_bytes = size_t{256} << 20;
  bool read_flush = false;
  float* sink = nullptr;
  int blocks = 1056;
  explicit Timer(bool read) : read_flush(read) {
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    CHECK(cudaMalloc(&flush, flush_bytes));
    CHECK(cudaMemset(flush, 0, flush_bytes));
    CHECK(cudaMalloc(&sink, 4));
  }
  template <class F>
  double best_seconds(int repeats, F launch) {
    double best = 1e30;
    for (int r = 0; r < repeats + 1; ++r) {  // the first is a warm-up
      if (read_flush)
        flush_read<<<blocks, 256>>>(reinterpret_cast<const float4*>(flush), flush_bytes / 16, sink);
      else
        CHECK(cudaMemsetAsync(flush, r, flush_bytes));
      CHECK(cudaEventRecord(e0));
      launch();
      CHECK(cudaGetLastError());
      CHECK(cudaEventRecord(e1));
      CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, e0, e1));
      if (r > 0) best = std::min(best, ms / 1e3);
    }
    return best;
  }
};

}  // namespace

int main(int argc, char** argv) {
  const unsigned long long n = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : (1ull << 26);
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 20;
  const bool read_flush = argc > 3 && std::string(argv[3]) == "read";
  const unsigned long long n4 = n / 4;
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  float *a, *b, *c, *sink;
  CHECK(cudaMalloc(&a, n * 4));
  CHECK(cudaMalloc(&b, n * 4));
  CHECK(cudaMalloc(&c, n * 4));
  CHECK(cudaMalloc(&sink, 4));
  fill<<<sms * 8, 256>>>(a, n, 0.0f);
  fill<<<sms * 8, 256>>>(b, n, 1.0f);
  fill<<<sms * 8, 256>>>(c, n, 2.0f);
  CHECK(cudaDeviceSynchronize());
  auto* a4 = reinterpret_cast<float4*>(a);
  auto* b4 = reinterpret_cast<const float4*>(b);
  auto* c4 = reinterpret_cast<const float4*>(c);
  Timer timer(read_flush);
  const double triad_bytes = 3.0 * n * 4;
  std::printf("# %s, %d SMs, %llu elements per vector, best of %d, flush by %s\n", prop.name, sms, n, repeats,
              read_flush ? "read" : "write");
  std::printf("kernel,threads,blocks,per_sm,seconds,bytes,tb_per_s\n");
  auto row = [&](const std::string& name, int threads, long blocks, double seconds, double bytes) {
    std::printf("%s,%d,%ld,%.2f,%.9f,%.0f,%.4f\n", name.c_str(), threads, blocks,
                static_cast<double>(blocks) / sms, seconds, bytes, bytes / seconds / 1e12);
    std::fflush(stdout);
  };
  for (int threads : {256, 512, 1024}) {
    for (int per_sm : {1, 2, 4, 8}) {
      if (per_sm * threads > 2048) continue;
      const int blocks = sms * per_sm;
#define STRIDE(U, H, NAME)                                                                                 \
  row(NAME, threads, blocks,                                                                               \
      timer.best_seconds(repeats, [&] { triad_stride<U, H><<<blocks, threads>>>(a4, b4, c4, 0.5f, n4); }), \
      triad_bytes)
      STRIDE(2, Hint::none, "stride-u2");
      STRIDE(4, Hint::none, "stride-u4");
      STRIDE(4, Hint::streaming, "stride-u4-cs");
      STRIDE(8, Hint::streaming, "stride-u8-cs");
      STRIDE(4, Hint::no_allocate, "stride-u4-nc");
#undef STRIDE
    }
  }
  for (int threads : {64, 128, 256, 512, 1024}) {
#define CHUNK(U, H, NAME)                                                                               \
  do {                                                                                                  \
    const long blocks = static_cast<long>(n4 / (U * threads));                                          \
    row(NAME, threads, blocks,                                                                          \
        timer.best_seconds(repeats, [&] { triad_chunk<U, H><<<blocks, threads>>>(a4, b4, c4, 0.5f); }), \
        triad_bytes);                                                                                   \
  } while (0)
    CHUNK(1, Hint::none, "chunk-u1");
    CHUNK(2, Hint::none, "chunk-u2");
    CHUNK(4, Hint::none, "chunk-u4");
    CHUNK(4, Hint::streaming, "chunk-u4-cs");
    CHUNK(8, Hint::streaming, "chunk-u8-cs");
    CHUNK(4, Hint::no_allocate, "chunk-u4-nc");
    CHUNK(1, Hint::prefetch_256b, "chunk-u1-256B");
    CHUNK(2, Hint::prefetch_256b, "chunk-u2-256B");
#undef CHUNK
  }
  for (int per_sm : {2, 4, 8}) {
    const int blocks = sms * per_sm;
    row("read-only", 256, blocks,
        timer.best_seconds(repeats, [&] { read_only<<<blocks, 256>>>(b4, n4, sink); }), n * 4.0);
    row("write-only", 256, blocks, timer.best_seconds(repeats, [&] { write_only<<<blocks, 256>>>(a4, n4); }),
        n * 4.0);
  }
  row("cudaMemcpy", 0, 0,
      timer.best_seconds(repeats, [&] { CHECK(cudaMemcpyAsync(a, b, n * 4, cudaMemcpyDeviceToDevice)); }),
      2.0 * n * 4);
  return 0;
}
