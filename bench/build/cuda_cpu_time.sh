#!/usr/bin/env bash
# What nvcc costs, file by file: compiles every CUDA file of a configured build folder (its
# compile_commands.json) alone, once for the architectures that folder was configured with and once
# per architecture list given, and prints CPU seconds (user + system), one line per file and list:
#   arch_list  cpu_s  exit  file
# A list's compile that fails is shown with its exit code (e.g. an instruction the architecture lacks).
#   bench/build/cuda_cpu_time.sh BUILD_DIR [ARCH_LIST...]      e.g. 90 "75;80;86;89;90;100;120"
# Builds nothing else and writes nothing in the build folder (objects go to a scratch folder).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:?usage: bench/build/cuda_cpu_time.sh BUILD_DIR [ARCH_LIST...]}
shift
[ -f "$build/compile_commands.json" ] || { echo "cuda_cpu_time: no $build/compile_commands.json; fix: configure a preset with CUDA first (cmake --preset ci)" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "cuda_cpu_time: /usr/bin/time is missing; fix: apt-get install time" >&2; exit 2; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
python3 - "$build/compile_commands.json" "$scratch" "$@" <<'PY' >"$scratch/commands.tsv"
import json, re, shlex, sys
db, scratch, lists = sys.argv[1], sys.argv[2], sys.argv[3:]
gen = re.compile(r"--generate-code=arch=compute_(\w+),code=\[[^\]]*\]")
for n, e in enumerate(sorted(json.load(open(db)), key=lambda e: e["file"])):
    if not e["file"].endswith(".cu"):
        continue
    cmd = re.sub(r" -o \S+", f" -o {scratch}/{n}.o", e["command"])
    # No compiler cache: the nvcc itself is timed.
    cmd = re.sub(r"^\S*ccache ", "", cmd)
    configured = ";".join(m.group(1) for m in gen.finditer(cmd)) or "as configured"
    print(f"{configured}\t{e['directory']}\t{e['file']}\t{cmd}")
    for arch_list in lists:
        archs = arch_list.split(";")
        # A file pinned to an arch-specific target (e.g. 90a) keeps it: its kernel exists there alone.
        if any(a.endswith("a") for a in gen.findall(cmd)):
            continue
        flags = " ".join(f"--generate-code=arch=compute_{a},code=[compute_{a},sm_{a}]" for a in archs)
        print(f"{arch_list}\t{e['directory']}\t{e['file']}\t{gen.sub('', cmd, count=0).replace(' -x cu', ' ' + flags + ' -x cu', 1)}")
PY
printf 'arch_list\tcpu_s\texit\tfile\n'
while IFS=$'\t' read -r archs dir file cmd; do
  rc=0
  (cd "$dir" && /usr/bin/time -f '%U %S' -o "$scratch/t" bash -c "$cmd" >"$scratch/log" 2>&1) || rc=$?
  cpu=$(tail -1 "$scratch/t" | awk '{printf "%.1f", $1 + $2}' 2>/dev/null || echo nan)
  printf '%s\t%s\t%s\t%s\n' "$archs" "$cpu" "$rc" "${file#$PWD/}"
done <"$scratch/commands.tsv"
