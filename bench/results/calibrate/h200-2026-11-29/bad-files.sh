#!/usr/bin/env bash
# Bad calibration files, tried as a new user would: `diescope report` re-analyses the H200 run's
# recording (run2/run-ffma-gpu0.dsrec, a CPU-only step) once with each bad file named by
# --calibration, and once with a folder holding all of them. Each time the report is still written
# (exit 0) and its calibration block says which file and why. Output: bad-files.txt.
# Usage: bash bad-files.sh DIESCOPE_BINARY   (run from this folder)
set -u
DIESCOPE=${1:?give the diescope binary}
HERE=$(cd "$(dirname "$0")" && pwd)
GOOD=$HERE/run2/calibrations/GH100-580.159.04-20261129T174742Z-full.json
REC=$HERE/run2/run-ffma-gpu0.dsrec
W=$(mktemp -d)
mkdir -p "$W/bad"
head -c 554 "$GOOD" > "$W/bad/truncated.json"
{ cat "$GOOD"; head -c $((16 * 1024 * 1024)) /dev/zero | tr '\0' ' '; } > "$W/bad/over-16mb.json"
sed 's/"model": "NVIDIA H200"/"model": "NVIDIA H100 80GB HBM3"/' "$GOOD" > "$W/bad/other-gpu.json"
sed 's/"driver": "580.159.04"/"driver": "575.57.08"/' "$GOOD" > "$W/bad/other-driver.json"
sed 's/"schema": 3,/"schema": 2,/' "$GOOD" > "$W/bad/older-schema.json"
printf 'GH100 calibration, see the wiki\n' > "$W/bad/not-json.json"
cp "$REC" "$W/run.dsrec"
OUTF=$HERE/bad-files.txt
: > "$OUTF"
for f in truncated over-16mb other-gpu other-driver older-schema not-json; do
  rm -rf "$W/run.dsrec.report"
  "$DIESCOPE" report "$W/run.dsrec" --calibration "$W/bad/$f.json" --format json > "$W/stdout" 2> "$W/stderr"
  rc=$?
  python3 - "$f" "$rc" "$W/run.dsrec.report/report.json" "$(stat -c %s "$W/bad/$f.json")" >> "$OUTF" <<'PY'
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
rm -rf "$W/run.dsrec.report"
"$DIESCOPE" report "$W/run.dsrec" --calibration "$W/bad" --format json > "$W/stdout" 2> "$W/stderr"
rc=$?
python3 - "$rc" "$W/run.dsrec.report/report.json" >> "$OUTF" <<'PY'
import json, sys
rc, path = sys.argv[1:]
c = json.load(open(path))["calibration"]
print(f"folder of all six: exit {rc}, status {c['status']}, reason: {c['reason']}")
for p in c.get("passed_over", []):
    print(f"  passed over {p.get('name', p)}: {p.get('reason', '')}")
PY
# And the good file by name: found, partial.
rm -rf "$W/run.dsrec.report"
"$DIESCOPE" report "$W/run.dsrec" --calibration "$GOOD" --format json > "$W/stdout" 2> "$W/stderr"
python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['calibration']; print('the full calibration by name: status', c['status'], '-', c['reason'])" "$W/run.dsrec.report/report.json" >> "$OUTF"
rm -rf "$W"
cat "$OUTF"
