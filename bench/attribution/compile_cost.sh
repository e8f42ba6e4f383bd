#!/usr/bin/env bash
# What attribution adds to CI's compile, in CPU seconds (user + system, the build's whole process tree),
# with ccache off: the gRPC part (protoc and grpc_cpp_plugin code generation, the generated code, the
# kubelet client library and the test kubelet), the attribution library, and its test binaries. Each
# is removed and built again in an already configured build; the rest of the tree is left as it is.
#
#   bench/attribution/compile_cost.sh BUILD_DIR    (e.g. build/ci, configured and built once)
set -euo pipefail
build=${1:?usage: compile_cost.sh BUILD_DIR}
export CCACHE_DISABLE=1
measure() { # measure NAME TARGET...: CPU seconds of building TARGETs after cleaning their outputs
  local name=$1
  shift
  local t
  t=$( { /usr/bin/time -f "%U %S %e" cmake --build "$build" --target "$@" > /dev/null; } 2>&1 | tail -1)
  read -r user sys wall <<< "$t"
  printf '%s\t%.1f\t%.1f\n' "$name" "$(echo "$user + $sys" | bc)" "$wall"
}
objects() { find "$@" -name '*.o' -delete; } # the objects of a target's folders (CMake's own files stay)
rm -rf "$build/src/attribution/proto"
objects "$build/src/attribution/CMakeFiles/diescope_podresources_proto.dir" \
  "$build/src/attribution/CMakeFiles/diescope_kubelet_client.dir" "$build/tests/attribution/CMakeFiles/diescope-test-kubelet.dir"
printf 'part\tcpu_s\twall_s\n'
measure grpc_codegen_client_test_kubelet diescope_kubelet_client diescope-test-kubelet
objects "$build/src/attribution/CMakeFiles/diescope_attribution.dir"
measure attribution_library diescope_attribution
objects "$build/tests/attribution/CMakeFiles"/attribution_*test.dir
measure attribution_tests attribution_test attribution_kubelet_no_client_test
