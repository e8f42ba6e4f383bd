#!/usr/bin/env bash
# Installs every Debian package diescope's build and tests need on a new machine. Idempotent.
# The CUDA toolkit (nvcc 13.0, CUPTI) is expected under /usr/local/cuda, as on the build machines.
set -euo pipefail
packages=(
  cmake ninja-build g++ clang libclang-rt-14-dev      # build, and libFuzzer for the reader's fuzz target
  clang-format clang-tidy                              # CI's format and tidy checks (version 14 on Debian 12)
  nlohmann-json3-dev libcli11-dev libfmt-dev           # header-only: JSON, command line, formatting
  libsqlite3-dev sqlite3                               # agent: record store (its /metrics server is its own: docs/agent.md#metrics)
  libgtest-dev libgmock-dev libbenchmark-dev           # tests and benchmarks
  libbenchmark-tools python3 python3-jsonschema        # compare.py, report-schema validation
  python3-scipy python3-numpy                          # compare.py imports them (its U test)
  python3-pandas python3-matplotlib                    # the Python module's DataFrames and its plotting example
  prometheus                                           # agent end-to-end test scrapes with a real server
  tmux                                                 # top's tests drive it in a terminal and read the screen
  libgrpc++-dev protobuf-compiler-grpc                 # attribution: the kubelet's pod-resources client (gRPC)
  libprotobuf-dev protobuf-compiler
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
