// The cost of one NVTX range (a push and its pop) to the program that makes it
// (docs/agent.md#nvtx-in-captures): run once with NVTX_INJECTION64_PATH naming libdiescope-nvtx.so (each
// call timestamps into the ring) and once without (NVTX's loader finds no tool: the calls do nothing),
// by bench/agent/nvtx_ring_cost.sh. Batches of N ranges with a 20-byte name, timed by CLOCK_MONOTONIC;
// prints each batch's ns per range, then the median and the fastest.
//
//   nvtx_ring_cost [BATCHES=21] [RANGES_PER_BATCH=100000]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <nvtx3/nvToolsExt.h>

int main(int argc, char** argv) {
  const int batches = argc > 1 ? std::atoi(argv[1]) : 21;
  const long per_batch = argc > 2 ? std::atol(argv[2]) : 100000;
  if (batches < 1 || per_batch < 1) {
    std::fprintf(stderr, "usage: nvtx_ring_cost [BATCHES >= 1] [RANGES_PER_BATCH >= 1]\n");
    return 2;
  }
  nvtxRangePushA("warm-up");  // the loader's first call (it loads the tool, if any)
  nvtxRangePop();
  std::vector<double> ns;
  for (int b = 0; b < batches; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < per_batch; ++i) {
      nvtxRangePushA("forward-block-00017");
      nvtxRangePop();
    }
    const auto t1 = std::chrono::steady_clock::now();
    ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(per_batch));
    std::printf("batch %d: %.1f ns per range\n", b, ns.back());
  }
  std::sort(ns.begin(), ns.end());
  std::printf("median %.1f ns per range, fastest %.1f, slowest %.1f (%d batches of %ld)\n", ns[ns.size() / 2],
              ns.front(), ns.back(), batches, per_batch);
  return 0;
}
