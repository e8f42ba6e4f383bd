#!/usr/bin/env bash
# Runs clang-tidy (14, the project's .clang-tidy) over every C++ source of the product (src/) and the
# headers they include from the project, using a build folder's compile_commands.json. Any finding
# fails (WarningsAsErrors). Tests, examples and benchmarks are left out to keep CI under its time
# goal; run it on them with: scripts/check-tidy.sh BUILD_DIR 'tests/|examples/|bench/'
#   scripts/check-tidy.sh BUILD_DIR [PATH_REGEX]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: scripts/check-tidy.sh BUILD_DIR [PATH_REGEX]}
regex=${2:-src/}
if [ ! -f "$build/compile_commands.json" ]; then
  echo "check-tidy: no $build/compile_commands.json; fix: configure first (cmake --preset ci)" >&2
  exit 2
fi
# A build folder that compiles a part as one file lists one command per source in the database that
# scripts/tidy-database.sh writes for it.
db=$(bash scripts/tidy-database.sh "$build")
# CUDA sources are compiled by nvcc; clang-tidy reads only the C++ ones.
mapfile -t files < <(python3 - "$db/compile_commands.json" "$regex" <<'PY'
import json, os, re, sys
root = os.getcwd() + "/"
for entry in json.load(open(sys.argv[1])):
    path = os.path.normpath(os.path.join(entry["directory"], entry["file"]))
    rel = path[len(root):] if path.startswith(root) else path
    if rel.endswith(".cpp") and re.match(sys.argv[2], rel):
        print(rel)
PY
)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
printf '%s\n' "${files[@]}" | xargs -P "$(nproc)" -n 1 clang-tidy -p "$db" --quiet >"$log" 2>/dev/null || status=$?
if ((status)); then
  grep -E "(warning|error):" "$log" | sort -u >&2 || cat "$log" >&2
  echo "check-tidy: clang-tidy found the above in ${#files[@]} files; fix them (or, for a false positive, a NOLINT(check) with a reason)" >&2
  exit 1
fi
echo "check-tidy: ${#files[@]} files clean"
