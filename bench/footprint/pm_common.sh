# Sourced by pm_interval_check.sh and pm_hold_check.sh (docs/footprint.md#the-decode-image): what both
# read the same way.

# pm_check_settings: bin (BIN's folder, default build/release/bin), seconds (PM_SECONDS, default 60)
# and work (WORK, default a new temporary folder, made), as both scripts take them.
pm_check_settings() {
  bin=$(cd "${BIN:-build/release/bin}" && pwd)
  seconds=${PM_SECONDS:-60}
  work=${WORK:-$(mktemp -d)}
  mkdir -p "$work"
}

# held_out_notes WORK OUT: the sampler and timing-total notes (the first 12) and the chip line count of
# each held-out recording footprint.sh's heldout section left under WORK, into OUT/recording-notes.txt.
held_out_notes() {
  local rec
  for rec in "$1"/heldout-*/gpu0.dsrec; do
    [ -f "$rec" ] || continue
    echo "# $(basename "$(dirname "$rec")")"
    awk '$1 == "note" && ($3 == "sampler" || $3 == "timing-total") {n++; if (n <= 12) print}
         $1 == "chip" {c++} END {print "chip lines " c}' "$rec"
  done > "$2/recording-notes.txt"
}

# hopper_metrics BIN: the Hopper unit table's metric names, comma-separated, as `diescope units` lists
# them (what diescope-cupti sample and pm_minimal are given).
hopper_metrics() {
  "$1/diescope" units | awk '/^[^ ]/ {on = ($1 == "hopper-gh100")} on && /__/ {for (i = 1; i <= NF; i++) if ($i ~ /__/) {print $i; break}}' | paste -sd,
}
