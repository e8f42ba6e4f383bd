#!/usr/bin/env bash
# What clang-tidy costs CI, and what a change of checks saves: runs clang-tidy (the project's
# .clang-tidy) over a random sample of the C++ files scripts/check-tidy.sh checks, two at a time as on
# CI's two cores, once as configured and once with CHECKS added to the configuration
# (clang-tidy --checks=CHECKS), and prints the CPU seconds (user + system) of each run
# (docs/building.md#compile-time).
#   bench/build/tidy_cpu_time.sh BUILD_DIR N SEED [CHECKS]   (BUILD_DIR holds compile_commands.json)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:?usage: bench/build/tidy_cpu_time.sh BUILD_DIR N SEED [CHECKS]}
n=${2:?usage: bench/build/tidy_cpu_time.sh BUILD_DIR N SEED [CHECKS]}
seed=${3:?usage: bench/build/tidy_cpu_time.sh BUILD_DIR N SEED [CHECKS]}
checks=${4:-}
[ -f "$build/compile_commands.json" ] || { echo "tidy_cpu_time: no $build/compile_commands.json; fix: cmake --preset ci" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "tidy_cpu_time: /usr/bin/time is missing; fix: apt-get install time" >&2; exit 2; }
files=$(python3 - "$build/compile_commands.json" "$n" "$seed" <<'PY'
import json, os, random, sys
root = os.getcwd() + "/"
seen = set()
for entry in json.load(open(sys.argv[1])):
    path = os.path.normpath(os.path.join(entry["directory"], entry["file"]))
    rel = path[len(root):] if path.startswith(root) else path
    if rel.startswith("src/") and rel.endswith(".cpp"):
        seen.add(rel)
pool = sorted(seen)
random.seed(int(sys.argv[3]))
print("\n".join(random.sample(pool, min(int(sys.argv[2]), len(pool)))))
PY
)
echo "files: $(echo "$files" | wc -l) of src/: $(echo "$files" | tr '\n' ' ')"
run() {
  local label=$1
  shift
  echo "$files" | /usr/bin/time -f "$label: %U+%S CPU-s, %e s wall" xargs -P 2 -n 1 clang-tidy -p "$build" --quiet "$@" \
    > /dev/null 2> "$tmp" || true
  tail -1 "$tmp"
}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
run "as configured"
[ -z "$checks" ] || run "with --checks=$checks" --checks="$checks"
