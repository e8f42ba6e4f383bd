// diescope-cupti: the one diescope executable that links CUPTI. The main `diescope` binary never
// does, so that it starts (and says why it cannot measure) on machines without CUDA; it runs this
// program as a child instead.
//
// Subcommands, each owned by the folder that implements it:
//   list-chips, list-metrics, passes,  src/collect/cupti_host/ (CUPTI host API, no GPU needed;
//   version, device-chip               device-chip and passes --device read a real GPU)
//   sample                             src/collect/pmsampling/: diescope::collect::sampler_main,
//                                      declared in include/diescope/collect/sampler.hpp and built into
//                                      the diescope_pmsampling library; present when that target exists
//                                      (CMake defines DIESCOPE_WITH_SAMPLER).
// Every entry point gets argv starting at its subcommand's name and returns the exit code.
#include <cstdio>
#include <cstring>

#include "commands.hpp"
#include "diescope/core/error.hpp"
#ifdef DIESCOPE_WITH_SAMPLER
#include "diescope/collect/sampler.hpp"
#endif

namespace {

struct Entry {
  const char* name;
  int (*run)(int, char**);
  const char* help;
};

constexpr Entry kEntries[] = {
    {"list-chips", diescope::collect::cupti_host::list_chips_main, "chips CUPTI's host API knows"},
    {"list-metrics", diescope::collect::cupti_host::list_metrics_main, "a chip's PM-sampling base metrics"},
    {"passes", diescope::collect::cupti_host::passes_main, "counter passes a metric set needs on a chip"},
    {"version", diescope::collect::cupti_host::version_main, "the CUPTI API version in use"},
    {"device-chip", diescope::collect::cupti_host::device_chip_main,
     "a GPU's CUPTI chip name (needs the GPU)"},
#ifdef DIESCOPE_WITH_SAMPLER
    {"sample", diescope::collect::sampler_main, "PM sampling on one GPU, streamed to the parent (internal)"},
#endif
};

int usage(FILE* to) {
  std::fprintf(
      to, "usage: diescope-cupti <subcommand> [options]   (--help after a subcommand for its options)\n");
  for (const auto& e : kEntries) std::fprintf(to, "  %-13s %s\n", e.name, e.help);
  return to == stdout ? 0 : diescope::core::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage(stderr);
  if (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) return usage(stdout);
  try {
    for (const auto& e : kEntries) {
      if (std::strcmp(argv[1], e.name) == 0) return e.run(argc - 1, argv + 1);
    }
  } catch (const diescope::core::Error& e) {
    std::fprintf(stderr, "diescope-cupti: error: %s\n", e.cause().c_str());
    if (!e.fix().empty()) std::fprintf(stderr, "  fix: %s\n", e.fix().c_str());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "diescope-cupti: internal error: %s\n", e.what());
    return diescope::core::kExitInternal;
  }
  std::fprintf(stderr, "diescope-cupti: error: unknown subcommand '%s'\n", argv[1]);
  return usage(stderr);
}
