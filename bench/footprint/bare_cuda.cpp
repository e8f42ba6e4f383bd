// A bare CUDA program: the memory any CUDA user pays. It creates the primary context of one GPU
// through the driver API, allocates 1 MiB on it, and holds both for --seconds while doing nothing;
// its RSS then is the peer of diescope's processes (bench/footprint/footprint.sh).
//
//   bare_cuda [--device 0] [--seconds 20]
#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

int main(int argc, char** argv) {
  int index = 0;
  double seconds = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--device"))
      index = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--seconds"))
      seconds = std::atof(argv[i + 1]);
    else {
      std::fprintf(stderr, "bare_cuda: unknown argument %s (see the header of bare_cuda.cpp)\n", argv[i]);
      return 2;
    }
  }
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUdeviceptr memory = 0;
  if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&device, index) != CUDA_SUCCESS ||
      cuDevicePrimaryCtxRetain(&context, device) != CUDA_SUCCESS ||
      cuCtxSetCurrent(context) != CUDA_SUCCESS || cuMemAlloc(&memory, 1 << 20) != CUDA_SUCCESS) {
    std::fprintf(stderr, "bare_cuda: could not create a context on GPU %d: check nvidia-smi -L\n", index);
    return 1;
  }
  std::printf("bare_cuda: context ready\n");
  std::fflush(stdout);
  usleep(static_cast<useconds_t>(seconds * 1e6));
  cuMemFree(memory);
  cuDevicePrimaryCtxRelease(device);
  return 0;
}
