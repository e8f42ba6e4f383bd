// diescope-make-recording: writes synthetic recordings (synthetic.hpp) for tests, benchmarks and
// the bundled data/recordings/h200-probe-shape.dsrec. Not part of the diescope command line.
//
//   diescope-make-recording probe-shape OUT      the bundled recording's shape
//   diescope-make-recording long HOURS OUT       a long run: HOURS of 10 ms samples, 8 units
//   diescope-make-recording input-bound OUT      an input-bound training run with host streams
#include <cstdio>
#include <cstdlib>
#include <string>

#include "diescope/core/error.hpp"
#include "diescope/recording/synthetic.hpp"

int main(int argc, char** argv) {
  const std::string usage =
      "usage: diescope-make-recording probe-shape OUT\n"
      "       diescope-make-recording long HOURS OUT\n"
      "       diescope-make-recording input-bound OUT\n";
  try {
    const std::string what = argc > 1 ? argv[1] : "";
    if (what == "probe-shape" && argc == 3) {
      diescope::recording::write_synthetic_recording(argv[2], diescope::recording::h200_probe_shape_spec());
    } else if (what == "input-bound" && argc == 3) {
      diescope::recording::write_synthetic_recording(argv[2], diescope::recording::input_bound_spec());
    } else if (what == "long" && argc == 4) {
      char* end = nullptr;
      const double hours = std::strtod(argv[2], &end);
      if (end == argv[2] || *end != '\0' || !(hours > 0)) {
        std::fprintf(stderr, "diescope-make-recording: HOURS must be a number above 0\n%s", usage.c_str());
        return diescope::core::kExitUsage;
      }
      diescope::recording::write_synthetic_recording(argv[3], diescope::recording::long_run_spec(hours));
    } else {
      std::fputs(usage.c_str(), stderr);
      return diescope::core::kExitUsage;
    }
  } catch (const diescope::core::Error& e) {
    std::fprintf(stderr, "diescope-make-recording: error: %s\n  fix: %s\n", e.cause().c_str(),
                 e.fix().c_str());
    return e.exit_code();
  }
  return 0;
}
