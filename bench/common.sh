# shellcheck shell=bash
# Shared set-up for the measurement scripts under bench/ that run on a GPU machine. Sourced, not run,
# after `set -euo pipefail` and a `cd` to the repository root:
#   . bench/common.sh
# shellcheck disable=SC2034  # BIN, OUT and WORK are for the scripts that source this file

# bench_bin NAME...: BIN is "$BUILD/bin" (BUILD defaults to build/release), each NAME must be in it;
# BIN goes first on PATH and CUDA's and CUPTI's libraries onto LD_LIBRARY_PATH.
bench_bin() {
  local build=${BUILD:-build/release} name
  [ -d "$build/bin" ] || { echo "$(basename "$0"): no $build/bin; build first (cmake --preset release), or set BUILD" >&2; exit 2; }
  BIN=$(cd "$build/bin" && pwd)
  for name in "$@"; do
    [ -x "$BIN/$name" ] || { echo "$(basename "$0"): no $BIN/$name; build the $name target first" >&2; exit 2; }
  done
  export PATH="$BIN:$PATH"
  export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
}

# bench_out DIR: creates DIR and sets OUT to its absolute path.
bench_out() {
  mkdir -p "$1"
  OUT=$(cd "$1" && pwd)
}

# bench_work NAME: WORK is a folder for the raw outputs that do not belong in bench/results (the
# recordings, full logs, reports): $WORK if set, else a new temporary folder. It is kept, and named
# at the end of the run.
bench_work() {
  WORK=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/diescope-$1.XXXXXX")}
  mkdir -p "$WORK"
  WORK=$(cd "$WORK" && pwd)
  trap 'echo "raw outputs kept in $WORK"' EXIT
}

# bench_gpu_env: the date, the GPU, its driver, clocks, power limit and persistence mode, and the
# diescope version, on stdout. Clocks and limits are read, never set.
bench_gpu_env() {
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.limit,persistence_mode --format=csv 2>&1 || true
  if command -v diescope >/dev/null; then diescope --version 2>&1 || true; fi
}

# pm_and_gpm_runs NAME STDERR_LINES COMMAND...: `diescope run --source pm`, then `--source gpm`, with
# window markers over COMMAND (each under a 45 s timeout), into WORK/NAME-pm and WORK/NAME-gpm; each
# run's headline and the last STDERR_LINES of its stderr go onto OUT/vs-pm/headlines.txt. Calls
# `stamp` (the script's own progress line) before each run when the script defines one.
pm_and_gpm_runs() {
  local name=$1 tail_n=$2 source
  shift 2
  mkdir -p "$OUT/vs-pm"
  for source in pm gpm; do
    if declare -F stamp > /dev/null; then stamp "$name --source $source"; fi
    timeout 45 diescope run --source "$source" --window markers --output "$WORK/$name-$source" -- "$@" \
      > "$WORK/$name-$source.stdout" 2> "$WORK/$name-$source.stderr" < /dev/null
    echo "rc $?" >> "$WORK/$name-$source.stderr"
    { echo "## $name --source $source"; grep -v '^{' "$WORK/$name-$source.stdout" | tail -25
      tail -"$tail_n" "$WORK/$name-$source.stderr"; } >> "$OUT/vs-pm/headlines.txt"
  done
}

# bench_step NAME SECONDS CMD...: CMD under a time limit (killed 5 s after it if it ignores the TERM),
# its output to $out/NAME.txt with its exit status and wall time appended; one line on stdout.
bench_step() {
  local name=$1 limit=$2
  shift 2
  local t0 t1 rc
  t0=$(date +%s.%N)
  timeout -k 5 "$limit" "$@" > "$out/$name.txt" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  echo "== exit $rc, $(python3 -c "print(f'{$t1-$t0:.1f}')") s wall" >> "$out/$name.txt"
  echo "$name: exit $rc ($(tail -1 "$out/$name.txt"))"
}

# bench_bin_dir SCRIPT BIN OUT_DIR FILE...: the start of a script that is given a folder of binaries
# (built elsewhere and carried to the GPU machine) and an output folder. Sets bin and out (absolute;
# out is created) and work (a new temporary folder); each FILE must be in bin. Stops unless a GPU
# answers; puts CUDA's and CUPTI's libraries onto LD_LIBRARY_PATH; writes OUT_DIR/env.txt (the date,
# the GPU, its driver, clocks and power limit, ncu's version). Clocks and limits are read, never set.
bench_bin_dir() {
  local script=$1 f
  bin=$(cd "${2:?usage: $script BIN OUT_DIR}" && pwd) || exit 2
  out=${3:?usage: $script BIN OUT_DIR}
  shift 3
  for f in "$@"; do
    [ -e "$bin/$f" ] || { echo "$script: missing $bin/$f" >&2; exit 2; }
  done
  nvidia-smi > /dev/null 2>&1 || { echo "$script: no GPU here (nvidia-smi failed): run it on a GPU machine" >&2; exit 2; }
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  work=$(mktemp -d)
  export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
  {
    date -u
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit --format=csv
    ncu --version | tail -1
  } > "$out/env.txt" 2>&1
}
