#!/usr/bin/env bash
# scripts/check-references.sh on throwaway git repositories: a clean one passes, and each kind of bad
# reference fails with its file:line and reason. The bad words, and the citations and paths that exist
# only in the throwaway repositories, are written in pieces ($D, $R) so that this file itself passes
# the check.
#
#   check_references_test.sh CHECK_SCRIPT
set -euo pipefail
check="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
failed=0
D=docs
R=bench/results

# A repository with a method document, a results file, and a README that cites both correctly.
# Anchors by hand: "How a report finds its calibration (`lookup.hpp`)" loses the backticks, the
# parentheses and the dot: how-a-report-finds-its-calibration-lookuphpp. The second "Limits" is limits-1.
make_repo() {
  local dir="$scratch/$1"
  mkdir -p "$dir/$D" "$dir/$R/run/2026-11-29-h200-cost"
  git -C "$dir" init -q --template=
  cat > "$dir/$D/method.md" <<'MD'
# Method
## The span
## How a report finds its calibration (`lookup.hpp`)
## Limits
```
## not a heading inside a fence
```
## Limits
See [the span](#the-span) and [limits](method.md#limits-1).
MD
  echo "raw" > "$dir/$R/run/2026-11-29-h200-cost/table.txt"
  cat > "$dir/README.md" <<MD
The span: $D/method.md#the-span; lookup: $D/method.md#how-a-report-finds-its-calibration-lookuphpp.
Figures in \`$R/run/2026-11-29-h200-cost/table.txt\` and $R/run/.
Results go in $R/<area>/<yyyy-mm-dd>-<gpu>-<what>/; a random seed 42 is fine.
MD
  echo "$dir"
}

# expect NAME WANT_RC [TEXT]: runs the check on repository NAME; the exit code must be WANT_RC and
# the output must contain TEXT.
expect() {
  local name="$1" want="$2" text="${3:-}" out rc=0
  out="$(bash "$check" "$scratch/$name" 2>&1)" || rc=$?
  if [[ "$rc" != "$want" ]]; then
    echo "FAIL $name: exit $rc, expected $want"; echo "$out"; failed=1; return
  fi
  if [[ -n "$text" && "$out" != *"$text"* ]]; then
    echo "FAIL $name: output lacks: $text"; echo "$out"; failed=1; return
  fi
  echo "ok   $name"
}

# add NAME FILE LINE...: writes the lines to FILE in a fresh clean repository and tracks it.
add() {
  local name="$1" file="$2" dir; shift 2
  dir="$(make_repo "$name")"
  mkdir -p "$dir/$(dirname "$file")"
  printf '%s\n' "$@" > "$dir/$file"
  git -C "$dir" add -A
}

dir="$(make_repo clean)"; git -C "$dir" add -A
# Untracked files are not read, and binary files are skipped.
printf 'see ../shar''ed/x\n' > "$dir/untracked.md"
printf 'bin\0ary ../shar''ed/x\n' > "$dir/blob.bin"; git -C "$dir" add blob.bin
expect clean 0 "no outside, occasion or broken references"

add outside src/a.cpp "// x" "// the rule (see ../shar""ed/DESIG""N.md)"
expect outside 1 "src/a.cpp:2: refers to the shared folder outside the repository"

add design $D/b.md "per DESIG""N.md"
expect design 1 "$D/b.md:1: cites the design note outside the repository"

add seed include/c.hpp "// thresholds (see""d 000, \"Coverage\")"
expect seed 1 "include/c.hpp:1: cites the method's source documents"

add seedname tests/d_test.cpp "TEST(Catalog, HostNamesUnderSee""d002) {}"
expect seedname 1 "tests/d_test.cpp:1: cites the method's source documents"

add issue src/h.cpp "// Each case of issu""e #15 is one test" "// the issu""e 20 s step (an issue rate, not a request) is fine"
expect issue 1 "src/h.cpp:1: names the issue that asked for something"

add issuename bench/j.sh "# (issu""e 5's triad goal)"
expect issuename 1 "bench/j.sh:1: names the issue that asked for something"

add methodseed $D/k.md "the method's see""d (Turing) had no table"
expect methodseed 1 "$D/k.md:1: cites the method's source documents (\"method's see""d\")"

# Saved program output keeps what the program printed then; its README may not.
add output $R/run/2026-11-29-h200-cost/calibration.json "{\"note\": \"the see""d's proxy\"}"
expect output 0

add occasion README.md "made in sessio""n 3, see the sessio""n-3 README"
expect occasion 1 "README.md:1: names the occasion that produced something"

add anchor src/e.cpp "// $D/method.md#the-spam says why"
expect anchor 1 "src/e.cpp:1: $D/method.md#the-spam: $D/method.md has no heading with anchor #the-spam"

add fenced src/f.cpp "// $D/method.md#not-a-heading-inside-a-fence"
expect fenced 1 "has no heading with anchor #not-a-heading-inside-a-fence"

add nodoc scripts/g.sh "# see $D/methods.md#the-span"
expect nodoc 1 "scripts/g.sh:1: $D/methods.md#the-span: $D/methods.md does not exist"

add rellink $D/h.md "[x](method.md#the-spam)"
expect rellink 1 "$D/h.md:1: method.md#the-spam: docs/method.md has no heading with anchor #the-spam"

add results bench/i.sh "# writes $R/run/2026-11-29-h200-costs/table.txt."
expect results 1 "bench/i.sh:1: $R/run/2026-11-29-h200-costs/table.txt does not exist"

exit "$failed"
