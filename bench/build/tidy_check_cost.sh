#!/usr/bin/env bash
# Where clang-tidy's time goes: runs clang-tidy (the project's .clang-tidy) with its check profiler on
# the given source files and prints, per check, the CPU seconds summed over them and the share of all
# checks' time, largest first. Used to weigh a check's worth against CI's time goal
# (docs/building.md#compile-time).
#   bench/build/tidy_check_cost.sh BUILD_DIR FILE...   (BUILD_DIR holds compile_commands.json)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:?usage: bench/build/tidy_check_cost.sh BUILD_DIR FILE...}
shift
(($#)) || { echo "tidy_check_cost: name at least one source file, e.g. src/cli/cmd_run.cpp" >&2; exit 2; }
[ -f "$build/compile_commands.json" ] || { echo "tidy_check_cost: no $build/compile_commands.json; fix: cmake --preset ci" >&2; exit 2; }
profile=$(mktemp)
trap 'rm -f "$profile"' EXIT
for file in "$@"; do
  # The profile goes to stderr, one line per check: user, system, user+system, wall (each with a share), name.
  clang-tidy -p "$build" --quiet --enable-check-profile "$file" 2>&1 >/dev/null | awk '$NF ~ /^[a-z]+-[a-z0-9-]+$/ {gsub(/\([^)]*\)/, ""); print $3, $NF}' >>"$profile" || true
done
awk '{cpu[$2] += $1; total += $1}
     END {for (c in cpu) printf "%.2f\t%.1f%%\t%s\n", cpu[c], 100 * cpu[c] / total, c; printf "%.2f\t100%%\tall checks\n", total}' "$profile" |
  sort -t$'\t' -k1 -rn
