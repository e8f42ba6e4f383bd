#!/usr/bin/env bash
# `diescope run` with the stand-in NVML library and the fake sampler child, recorded by two diescope
# builds, and their reports compared (docs/live-collection.md#what-was-decided-for-run). Live runs
# differ in their times, so two views of each report are compared: the figures (each GPU's steady
# window headline, whose chip units are held at a fixed level, and gpus.json's verdicts), exactly; and
# the shape (every field report.json has, and its notes with each number replaced by N, the tool's
# version left out), which shows the same fields, notes and wording. Any machine; no GPU.
#   bench/live/synthetic_run_reports.sh BEFORE_DIESCOPE AFTER_DIESCOPE FAKE_SAMPLER FAKE_NVML_DIR OUT
# FAKE_SAMPLER is the build's tests/collect/diescope_sampler_fake, FAKE_NVML_DIR its
# tests/rounds/fake-nvml. Writes OUT/summary.md; exits 1 when a case differs.
set -euo pipefail
(($# == 5)) || { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
before=$(realpath "$1"); after=$(realpath "$2"); fake=$(realpath "$3"); nvml=$(realpath "$4"); out=$5
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
steady="echo 'diescope: measure start'; sleep 1.2; echo 'diescope: measure stop'"
fast=(--interval-ms 10 --drain-ms 50 --window markers --host-interval-ms 0)  # no host probes: they read the host, not the build

sampler() {  # a DIESCOPE_CUPTI stand-in: the fake child with fixed unit levels and extra arguments
  local path=$work/$1.sh
  printf '#!/bin/sh\n[ "$1" = sample ] && shift\nexec "%s" "$@" --fake-level 0:60 --fake-level 1:20 %s\n' \
    "$fake" "$2" >"$path"
  chmod +x "$path"
  echo "$path"
}

# name | GPUs | sampler arguments | run flags
cases=(
  "two-gpus|2||"
  "one-gpu|1||--gpus 0"
  "duty|1||--duty 300/600"
  "source-pm|1||--source pm"
  "sampler-crash|1|--crash-after 40|"
  "source-gpm|1||--source gpm"
  "busy-then-gpm|1|--fail-with busy|--source auto"
)

view() {  # DIR -> the figures, the fields and the notes of every report in DIR
  python3 - "$1" <<'PY'
import json, os, re, sys
d = sys.argv[1]
if not os.path.isdir(d):
    print("run wrote no folder")
    sys.exit(0)
def paths(x, at=""):
    if isinstance(x, dict):
        for k, v in x.items():
            yield from paths(v, at + "/" + k)
    elif isinstance(x, list):
        for v in x:
            yield from paths(v, at + "[]")
    else:
        yield at
def masked(text):
    return re.sub(r"[0-9]+(\.[0-9]+)?", "N", text)
for name in sorted(os.listdir(d)):
    path = os.path.join(d, name, "report.json")
    if not os.path.isfile(path): continue
    r = json.load(open(path))
    r.get("tool", {}).pop("version", None)
    w = r["window"]["results"]["headline"] if r["window"].get("found") else None
    print(name, "figures", json.dumps(w, sort_keys=True))
    for p in sorted(set(paths(r))):
        print(name, "shape field", p)
    for n in r.get("notes", []):
        # Which chip samples straddle the run's ends depends on timing, not on the build.
        if "lie wholly outside the run" in n["text"]: continue
        print(name, "shape note", n["topic"], masked(n["text"]))
g = os.path.join(d, "gpus.json")
if os.path.isfile(g):
    s = json.load(open(g))
    print("gpus.json figures", json.dumps({k: s[k] for k in ("least_used_gpu", "most_used_gpu", "gap_points", "busy_gpus")}))
PY
}

status=0
{
  echo "# Synthetic runs: before and after"
  echo
  echo "| case | GPUs | flags | figures | shape |"
  echo "| --- | --- | --- | --- | --- |"
} >"$out/summary.md"
for c in "${cases[@]}"; do
  IFS='|' read -r name gpus sargs flags <<<"$c"
  wrapper=$(sampler "$name" "$sargs")
  for side in before after; do
    bin=$before; [ "$side" = after ] && bin=$after
    # shellcheck disable=SC2086
    (cd "$work" && LD_LIBRARY_PATH="$nvml${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" DIESCOPE_FAKE_NVML_GPUS=$gpus \
      DIESCOPE_FAKE_NVML_GPU_UTIL=97,88 DIESCOPE_CUPTI=$wrapper "$bin" run "${fast[@]}" $flags \
      --output "$name-$side" -- sh -c "$steady" >"$name-$side.out" 2>"$name-$side.err") || true
    view "$work/$name-$side" | sort -u >"$work/$name-$side.view"
  done
  fig=same; shp=same
  diff <(grep ' figures ' "$work/$name-before.view") <(grep ' figures ' "$work/$name-after.view") >/dev/null || { fig=DIFFERENT; status=1; }
  diff <(grep ' shape ' "$work/$name-before.view") <(grep ' shape ' "$work/$name-after.view") >"$work/$name.diff" || { shp=DIFFERENT; status=1; }
  echo "| $name | $gpus | \`$flags $sargs\` | $fig | $shp |" >>"$out/summary.md"
  grep ' figures ' "$work/$name-after.view" | sed "s/^/    $name: /" >>"$work/figures.txt"
  [ "$shp" = same ] || { echo "$name: the shapes differ:"; head -40 "$work/$name.diff"; echo; }
done
{
  echo
  echo "Each case's figures (after; the same before where the table says so):"
  echo
  cat "$work/figures.txt"
} >>"$out/summary.md"
cat "$out/summary.md"
exit $status
