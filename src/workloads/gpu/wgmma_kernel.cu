// The tensor step's known work on Hopper: warpgroup MMAs (wgmma.mma_async m64n256k16, bf16 in, f32
// accumulators), the instruction Hopper's GEMMs run at the dense rate. mma.sync reaches only two
// thirds of that rate on GH100 (the first H200 calibration), so a check against the dense peak needs
// this form. This file is built for sm_90a alone: wgmma exists only in the arch-specific target.
#include "calibrate_kernels.hpp"

#include <cstdint>

#include "block_clock.cuh"

namespace diescope::workloads::gpu {

namespace {

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// Operand tiles in shared memory in the no-swizzle layout: 8x8 bf16 core matrices of 128 contiguous
// bytes, the two K halves of a 16-wide K slice LBO = 128 bytes apart, and neighbouring core matrices
// along M (or N) SBO = 256 bytes apart. The values are all 2^-7, so the accumulators stay finite.
constexpr int kTileA = 64 * 16;  // bf16 elements
constexpr int kTileB = 256 * 16;
constexpr std::uint64_t kLeadingByteOffset = 128;
constexpr std::uint64_t kStrideByteOffset = 256;

__device__ __forceinline__ std::uint64_t smem_descriptor(const void* tile) {
  const auto address = static_cast<std::uint64_t>(__cvta_generic_to_shared(tile));
  return ((address & 0x3FFFF) >> 4) | ((kLeadingByteOffset >> 4) << 16) | ((kStrideByteOffset >> 4) << 32);
  // Bits 62-63 (swizzle) stay 0: no swizzle; bits 49-51 (base offset) matter only when swizzled.
}

__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], std::uint64_t a, std::uint64_t b) {
  asm volatile(
      "{\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
      "%128, %129, 1, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]),
        "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
        "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]),
        "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]),
        "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]),
        "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]),
        "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]),
        "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]),
        "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]),
        "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]),
        "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]),
        "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]),
        "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]),
        "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]),
        "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(a), "l"(b));
}
#endif

// One block per SM (pinned by the dynamic shared-memory request, as every step kernel is), two
// warpgroups, each issuing kWgmmaPerTrip MMAs per trip into its own accumulators. One group stays in
// flight while the next is issued, as a GEMM's main loop keeps it, so the pipe does not drain per trip.
__global__ void __launch_bounds__(kWgmmaThreads, 1) wgmma_bf16_kernel(CalibArgs args) {
  BlockClock clock;
  clock.start();
  float sum = 0.0f;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __shared__ __align__(128) std::uint16_t tile_a[kTileA];
  __shared__ __align__(128) std::uint16_t tile_b[kTileB];
  for (int i = threadIdx.x; i < kTileA; i += blockDim.x) tile_a[i] = 0x3c00u;
  for (int i = threadIdx.x; i < kTileB; i += blockDim.x) tile_b[i] = 0x3c00u;
  // The tiles were written by ordinary stores; wgmma reads them through the async proxy.
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  const std::uint64_t a = smem_descriptor(tile_a), b = smem_descriptor(tile_b);
  float d[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) d[i] = 0.0f;
  for (int trip = 0; trip < args.iterations; ++trip) {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int r = 0; r < kWgmmaPerTrip; ++r) wgmma_m64n256k16(d, a, b);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#pragma unroll
  for (int i = 0; i < 128; ++i) sum += d[i];
#else
  __trap();  // built for sm_90a only; the host launches this kernel on compute capability 9.0 alone
#endif
  args.sink[static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x] = sum;
  __syncthreads();
  clock.stop(args.tally);
}

}  // namespace

cudaError_t wgmma_set_shared_bytes(std::size_t shared_bytes) {
  return cudaFuncSetAttribute(wgmma_bf16_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(shared_bytes));
}

cudaError_t wgmma_blocks_per_sm(int* blocks, std::size_t shared_bytes) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, wgmma_bf16_kernel, kWgmmaThreads,
                                                       shared_bytes);
}

cudaError_t launch_wgmma(const CalibArgs& args, int blocks, std::size_t shared_bytes, cudaStream_t stream) {
  wgmma_bf16_kernel<<<blocks, kWgmmaThreads, shared_bytes, stream>>>(args);
  return cudaGetLastError();
}

}  // namespace diescope::workloads::gpu
