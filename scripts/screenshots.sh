#!/usr/bin/env bash
# The pictures of README.md's "Try it without a GPU" and of docs/report.md and docs/roofline.md,
# taken in headless Chromium from what the commands of that section write (no GPU):
#   docs/images/try-report-top.png     report.html of the bundled ResNet-50 recording at 1400 px, its top
#   docs/images/try-report-800.png     the same at 800 px
#   docs/images/try-report-host.png    the input-bound recording's host section at 1400 px
#   docs/images/try-report-notes.png   ResNet-50's notes and terminal block at 1400 px
#   docs/images/try-roofline.png       roofline.svg of data/roofline/h200-workloads.csv
#   docs/images/try-top-once.png       `top --once --replay` of ResNet-50 (its steady window)
#   docs/images/report-power-1400.png  the clocks and power section of the ResNet-50 energy recording
#   docs/images/report-power-800.png   the same at 800 px
#
#   scripts/screenshots.sh [DIESCOPE]       (default build/release/bin/diescope)
set -euo pipefail
cd "$(dirname "$0")/.."
diescope=${1:-build/release/bin/diescope}
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || { echo "screenshots: no chromium on PATH; scripts/setup.sh installs Debian's chromium" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=docs/images

"$diescope" report data/recordings/h200/resnet50.dsrec --calibration data/calibrations --format html --output "$work/resnet50" >/dev/null
"$diescope" report data/recordings/h200/input-bound-2w.dsrec --calibration data/calibrations --format html --output "$work/input-bound" >/dev/null
"$diescope" roofline plot --from-csv data/roofline/h200-workloads.csv --output "$work/roofline" >/dev/null 2>&1
"$diescope" top --once --replay data/recordings/h200/resnet50.dsrec >"$work/top.txt"
"$diescope" report data/recordings/h200/resnet50-energy-steps.dsrec --format html --output "$work/energy" >/dev/null

# shot PAGE PNG WIDTH HEIGHT [SECTION]: the page's top, or from the heading with id SECTION on (what
# comes before it hidden, so the window starts there).
shot() {
  local page=$1 png=$2 width=$3 height=$4 section=${5:-}
  if [ -n "$section" ]; then
    sed "s|</style>|body > *:has(~ #$section){display:none}</style>|" "$page" >"$work/section.html"
    page="$work/section.html"
  fi
  "$browser" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$work/profile" --hide-scrollbars \
    --window-size="$width,$height" --screenshot="$png" "file://$(realpath "$page")" >/dev/null 2>&1
  [ -s "$png" ] || { echo "screenshots: Chromium wrote no $png" >&2; exit 1; }
  echo "wrote $png"
}
shot "$work/resnet50/report.html" "$out/try-report-top.png" 1400 1000
shot "$work/resnet50/report.html" "$out/try-report-800.png" 800 1300
shot "$work/input-bound/report.html" "$out/try-report-host.png" 1400 1000 host
shot "$work/resnet50/report.html" "$out/try-report-notes.png" 1400 900 notes
shot "$work/roofline/roofline.svg" "$out/try-roofline.png" 1000 640
shot "$work/energy/report.html" "$out/report-power-1400.png" 1400 420 clocks
shot "$work/energy/report.html" "$out/report-power-800.png" 800 560 clocks
bash bench/top/screen_png.sh "$work/top.txt" "$out/try-top-once.png" 120 14
echo "wrote $out/try-top-once.png"
