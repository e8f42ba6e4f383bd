// diescope-cupti's host-only subcommands (they need CUPTI's library, not a GPU).
// Each takes argv starting at its own name and returns the process's exit code.
#pragma once

namespace diescope::collect::cupti_host {

int list_chips_main(int argc, char** argv);    // list-chips
int list_metrics_main(int argc, char** argv);  // list-metrics --chip CHIP [--kind counter|ratio|throughput]
int passes_main(int argc, char** argv);        // passes (--chip CHIP | --device N) [--each] METRIC...
int version_main(int argc, char** argv);       // version: CUPTI's API version
int device_chip_main(int argc,
                     char** argv);  // device-chip --device N: the GPU's CUPTI chip name (needs a GPU)

}  // namespace diescope::collect::cupti_host
