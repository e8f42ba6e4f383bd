#!/usr/bin/env bash
# Bad calibration files, tried as a new user would: `diescope report` re-analyses an H200 recording
# once with each bad file named by --calibration (cut at byte 554, over 16 MB, another GPU model,
# another driver, an older schema, not JSON), once with a folder holding all six, and once with the
# good file. Each time the report must still be written (exit 0) and its calibration block must say
# which file and why. Runs on any CPU machine (no GPU). Writes OUT_DIR/bad-files.txt.
#
#   bench/calibrate/bad_files.sh OUT_DIR [CALIBRATION_JSON] [RECORDING]     BUILD=build/release (diescope)
#   defaults: bench/results/calibrate/2026-11-29-h200-mma-sync/calibration-full.json and
#   data/recordings/h200/gemm-final-table.dsrec (the same GPU model, driver and unit table)
set -euo pipefail
out_dir=${1:?usage: bench/calibrate/bad_files.sh OUT_DIR [CALIBRATION_JSON] [RECORDING]   (BUILD=build folder)}
cd "$(dirname "$0")/../.."
good=$(realpath "${2:-bench/results/calibrate/2026-11-29-h200-mma-sync/calibration-full.json}")
recording=$(realpath "${3:-data/recordings/h200/gemm-final-table.dsrec}")
diescope=${BUILD:-build/release}/bin/diescope
[ -x "$diescope" ] || { echo "bad_files: no $diescope; build the diescope target first, or set BUILD" >&2; exit 2; }
mkdir -p "$out_dir"
out="$(cd "$out_dir" && pwd)/bad-files.txt"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bad"
head -c 554 "$good" > "$work/bad/truncated.json"
{ cat "$good"; head -c $((16 * 1024 * 1024)) /dev/zero | tr '\0' ' '; } > "$work/bad/over-16mb.json"
sed 's/"model": "NVIDIA H200"/"model": "NVIDIA H100 80GB HBM3"/' "$good" > "$work/bad/other-gpu.json"
sed 's/"driver": "580.159.04"/"driver": "575.57.08"/' "$good" > "$work/bad/other-driver.json"
sed 's/"schema": 3,/"schema": 2,/' "$good" > "$work/bad/older-schema.json"
printf 'GH100 calibration, see the wiki\n' > "$work/bad/not-json.json"
cp "$recording" "$work/run.dsrec"
# report CALIBRATION: re-analyses the recording with it; prints the exit code.
report() {
  local rc=0
  rm -rf "$work/run.dsrec.report"
  "$diescope" report "$work/run.dsrec" --calibration "$1" --format json > "$work/stdout" 2> "$work/stderr" || rc=$?
  echo "$rc"
}
: > "$out"
for f in truncated over-16mb other-gpu other-driver older-schema not-json; do
  rc=$(report "$work/bad/$f.json")
  python3 - "$f" "$rc" "$work/run.dsrec.report/report.json" "$(stat -c %s "$work/bad/$f.json")" >> "$out" <<'PY'
import json, sys
name, rc, path, size = sys.argv[1:]
try:
    c = json.load(open(path))["calibration"]
    print(f"{name} ({size} bytes): exit {rc}, report written, status {c['status']}, reason: {c['reason']}")
except Exception as e:
    print(f"{name} ({size} bytes): exit {rc}, no report: {e}")
PY
done
# A folder holding every bad file: all passed over, each with its reason.
rc=$(report "$work/bad")
python3 - "$rc" "$work/run.dsrec.report/report.json" >> "$out" <<'PY'
import json, sys
rc, path = sys.argv[1:]
c = json.load(open(path))["calibration"]
print(f"folder of all six: exit {rc}, status {c['status']}, reason: {c['reason']}")
for p in c.get("passed_over", []):
    print(f"  passed over {p.get('name', p)}: {p.get('reason', '')}")
PY
# And the good file by name: found, partial.
report "$good" > /dev/null
python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['calibration']; print('the full calibration by name: status', c['status'], '-', c['reason'])" \
  "$work/run.dsrec.report/report.json" >> "$out"
sed -i "s#$work/#\$W/#g" "$out"   # the temporary folder, as $W
cat "$out"
