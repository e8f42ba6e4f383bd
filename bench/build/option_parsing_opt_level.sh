#!/usr/bin/env bash
# What the optimisation level of the files that only parse command lines (CLI11) costs the CI build:
# each such file compiled with its configured command at -O2 and at -O1, one at a time, CPU seconds
# (user + system) from /usr/bin/time. Reads BUILD_DIR/compile_commands.json of a configured `ci` tree.
#   bench/build/option_parsing_opt_level.sh BUILD_DIR > table.tsv
set -euo pipefail
build=${1:?usage: bench/build/option_parsing_opt_level.sh BUILD_DIR}
[ -f "$build/compile_commands.json" ] || { echo "option_parsing_opt_level: no $build/compile_commands.json; configure first (cmake --preset ci)" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "option_parsing_opt_level: /usr/bin/time is missing; fix: apt-get install time" >&2; exit 2; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
python3 - "$build/compile_commands.json" > "$scratch/commands" <<'PY'
import json, re, sys
for e in json.load(open(sys.argv[1])):
    f = e["file"]
    if re.search(r"src/cli/[^/]+\.cpp$|src/harness/main\.cpp$|src/workloads/options\.cpp$|src/collect/cupti_host/commands\.cpp$", f):
        cmd = re.sub(r"^\S*ccache\s+", "", e["command"])
        cmd = re.sub(r"\s-O[0-3gs]\b", " ", cmd)               # the level is given below
        cmd = re.sub(r"\s-o\s+\S+", " -o OBJ", cmd)
        print(e["directory"] + "\t" + f + "\t" + cmd)
PY
printf 'file\tO2_cpu_s\tO1_cpu_s\n'
while IFS=$'\t' read -r dir file cmd; do
  row="${file#*src/}"
  for level in -O2 -O1; do
    (cd "$dir" && /usr/bin/time -f '%U %S' -o "$scratch/t" bash -c "${cmd/OBJ/$scratch/x.o} $level" > /dev/null)
    row="$row"$'\t'$(awk '{ printf "%.2f", $1 + $2 }' "$scratch/t")
  done
  printf '%s\n' "$row"
done < "$scratch/commands"
