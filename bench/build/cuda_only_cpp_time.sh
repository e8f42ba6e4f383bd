#!/usr/bin/env bash
# What the C++ compiled only where CUDA is on costs: the C++ compiles of a build folder configured
# with CUDA (e.g. build/ci) that one configured without it (cmake --preset cpu-ci -DDIESCOPE_CUDA=OFF
# -B build/no-cuda) does not have, each run alone with /usr/bin/time, one line per file:
#   cpu_s  file          (test binaries' one-file unity sources are named by their build path)
# Writes nothing in the build folders (objects go to a scratch file).
#   bench/build/cuda_only_cpp_time.sh CUDA_BUILD_DIR NO_CUDA_BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
with=${1:?usage: bench/build/cuda_only_cpp_time.sh CUDA_BUILD_DIR NO_CUDA_BUILD_DIR}
without=${2:?usage: bench/build/cuda_only_cpp_time.sh CUDA_BUILD_DIR NO_CUDA_BUILD_DIR}
for b in "$with" "$without"; do
  [ -f "$b/compile_commands.json" ] || { echo "cuda_only_cpp_time: no $b/compile_commands.json; fix: configure it first" >&2; exit 2; }
done
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
python3 - "$with" "$without" "$scratch" <<'PY' >"$scratch/commands.tsv"
import json, os, re, sys
with_db, without_db, scratch = sys.argv[1:]
def key(e, build):
    path = os.path.normpath(os.path.join(e["directory"], e["file"]))
    # A unity source lives in its build folder: compare it by its place below the folder.
    return os.path.relpath(path, os.path.abspath(build)) if "/Unity/" in path else os.path.relpath(path)
have = {key(e, without_db) for e in json.load(open(os.path.join(without_db, "compile_commands.json")))}
for e in json.load(open(os.path.join(with_db, "compile_commands.json"))):
    k = key(e, with_db)
    if e["file"].endswith(".cu") or k in have:
        continue
    print(f"{e['directory']}\t{k}\t{re.sub(r' -o \S+', ' -o ' + scratch + '/x.o', e['command'])}")
PY
printf 'cpu_s\tfile\n'
while IFS=$'\t' read -r dir file cmd; do
  (cd "$dir" && /usr/bin/time -f '%U %S' -o "$scratch/t" bash -c "$cmd" >/dev/null 2>&1) || true
  printf '%s\t%s\n' "$(tail -1 "$scratch/t" | awk '{printf "%.1f", $1 + $2}')" "$file"
done <"$scratch/commands.tsv"
