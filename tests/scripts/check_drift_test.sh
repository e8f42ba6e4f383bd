#!/usr/bin/env bash
# scripts/check-drift.sh on throwaway git repositories: a clean one passes, and each kind of drift
# (a bench/ script not listed, a listed script that is gone, a folder of src/ without its row, a row
# without its folder, a subfolder the row does not name, public headers without a row) fails with its
# file and reason.
#
#   check_drift_test.sh CHECK_SCRIPT
set -euo pipefail
check="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
failed=0
R=bench/results  # in pieces elsewhere: paths that exist only in the throwaway repositories

# A repository whose documents match it: two parts (collect with a subfolder gpm, cli without public
# headers), one bench area with a script and a program, and a top-level bench script.
make_repo() {
  local dir="$scratch/$1"
  mkdir -p "$dir/src/collect/gpm" "$dir/src/cli" "$dir/include/diescope/collect" "$dir/bench/run/stand_in" "$dir/$R/run/x"
  git -C "$dir" init -q --template=
  echo "int a;" > "$dir/src/collect/units.cpp"
  echo "int g;" > "$dir/src/collect/gpm/gpm.cpp"
  echo "int m;" > "$dir/src/cli/main.cpp"
  echo "#pragma once" > "$dir/include/diescope/collect/units.hpp"
  echo "echo" > "$dir/bench/run/cost.sh"
  echo "int p;" > "$dir/bench/run/probe.cpp"
  echo "echo" > "$dir/bench/run/stand_in/train.sh"
  echo "echo" > "$dir/bench/common.sh"
  echo "not a script: results are not listed" > "$dir/$R/run/x/table.py"
  cat > "$dir/README.md" <<'MD'
| part | public headers | what it holds |
| --- | --- | --- |
| `src/collect` | `include/diescope/collect` | unit tables, and NVML's GPM (`gpm`) |
| `src/cli` | | the command |
MD
  cat > "$dir/bench/README.md" <<'MD'
```
bench/
  common.sh    shared set-up
```
| area | what | scripts |
| --- | --- | --- |
| `run` | cost | `cost.sh` with `probe.cpp`; `stand_in/train.sh` stands in for training |
MD
  git -C "$dir" add -A
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

dir="$(make_repo clean)"
# An untracked script is not read.
echo "echo" > "$dir/bench/run/untracked.sh"
expect clean 0 "bench/README.md lists all 4 scripts; README's table of parts matches the 2 folders of src/"

dir="$(make_repo unlisted)"; echo "echo" > "$dir/bench/run/new.py"; git -C "$dir" add -A
expect unlisted 1 "bench/run/new.py: not listed in bench/README.md"

dir="$(make_repo gone)"; git -C "$dir" rm -q -f bench/run/cost.sh
expect gone 1 "bench/README.md: names \`cost.sh\`, which is not a script under bench/"

dir="$(make_repo norow)"; mkdir -p "$dir/src/top"; echo "int t;" > "$dir/src/top/top.cpp"; git -C "$dir" add -A
expect norow 1 "README.md: the table of parts has no row for src/top"

dir="$(make_repo nofolder)"; git -C "$dir" rm -q -r -f src/cli
expect nofolder 1 "README.md:4: the table of parts lists src/cli, which does not exist"

dir="$(make_repo subfolder)"; mkdir -p "$dir/src/collect/host"; echo "int h;" > "$dir/src/collect/host/h.cpp"; git -C "$dir" add -A
expect subfolder 1 "README.md:3: src/collect's row does not name its folder host"

dir="$(make_repo headers)"; mkdir -p "$dir/include/diescope/cli"; echo "#pragma once" > "$dir/include/diescope/cli/o.hpp"; git -C "$dir" add -A
expect headers 1 "README.md: include/diescope/cli is in no row of the table of parts"

dir="$(make_repo badheaders)"; sed -i 's#`include/diescope/collect`#`include/diescope/collector`#' "$dir/README.md"; git -C "$dir" add -A
expect badheaders 1 "src/collect's public headers are said to be in include/diescope/collector, which does not exist"

exit "$failed"
