// A program with NVTX ranges for the ring tests (docs/agent.md#nvtx-in-captures): its NVTX calls go
// through NVTX's own loader (nvtx3, header-only), which loads the library NVTX_INJECTION64_PATH names.
// It writes, on its main thread and a second one:
//   main:   push "outer", push "inner", pop, pop, start "async", push "after", end (async), pop
//   second: push "worker" ... pop
// then prints "written" and waits until FILE (its only argument) exists, or 20 s, before it exits.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

#include <nvtx3/nvToolsExt.h>

namespace {

void pause_ms(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

}  // namespace

int main(int argc, char** argv) {
  nvtxRangePushA("outer");
  pause_ms(2);
  nvtxRangePushA("inner");
  pause_ms(2);
  nvtxRangePop();
  nvtxRangePop();
  const nvtxRangeId_t async = nvtxRangeStartA("async");
  nvtxRangePushA("after");
  pause_ms(2);
  nvtxRangeEnd(async);
  nvtxRangePop();
  std::thread worker([] {
    nvtxRangePushA("worker");
    pause_ms(1);
    nvtxRangePop();
  });
  worker.join();
  std::printf("written %d\n", static_cast<int>(::getpid()));
  std::fflush(stdout);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (argc > 1 && !std::filesystem::exists(argv[1]) && std::chrono::steady_clock::now() < until)
    pause_ms(10);
  return 0;
}
