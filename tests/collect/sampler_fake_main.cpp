// A stand-in for `diescope-cupti sample`: the fake sampler child, built without CUPTI so the CPU
// tests can drive the parent through crashes, errors and gaps.
#include "diescope/collect/sampler.hpp"

int main(int argc, char** argv) {
  return diescope::collect::fake_sampler_main(argc, argv);
}
