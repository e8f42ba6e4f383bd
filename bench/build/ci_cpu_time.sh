#!/usr/bin/env bash
# What each step of CI costs in CPU seconds: clones the repository at REV into a scratch folder, runs
# that clone's scripts/test.sh (what `.ci/run` runs) with no compiler cache, and writes
#   OUT/steps.tsv   cpu_s wall_s step, one line per step test.sh prints, plus the background work
#                   (what ran beside the steps and was not inside one) and the whole run
#   OUT/test.log    what test.sh printed (the step lines, the last failure if any)
# CPU seconds (user + system of every process a step waited for) rather than wall time, so that a
# machine shared with other builds moves the figures less; the wall seconds are printed for reference.
# A test.sh whose step() does not print CPU seconds (older commits) is given one that does.
#   bench/build/ci_cpu_time.sh REV OUT [SCRATCH]     (default SCRATCH: a new folder under /tmp)
set -euo pipefail
cd "$(dirname "$0")/../.."
rev=${1:?usage: bench/build/ci_cpu_time.sh REV OUT [SCRATCH]}
out=$(mkdir -p "${2:?usage: bench/build/ci_cpu_time.sh REV OUT [SCRATCH]}" && realpath "$2")
scratch=${3:-$(mktemp -d /tmp/ci-cpu-time.XXXXXX)}
command -v /usr/bin/time >/dev/null || { echo "ci_cpu_time: /usr/bin/time is missing; fix: apt-get install time" >&2; exit 2; }
git rev-parse --verify -q "$rev^{commit}" >/dev/null || { echo "ci_cpu_time: $rev is not a commit here; fix: pass a commit or branch of this repository" >&2; exit 2; }
rm -rf "$scratch"
git clone -q --no-local . "$scratch"
git -C "$scratch" checkout -q --detach "$rev"
cd "$scratch"
if ! grep -q 'CPU-s' scripts/test.sh; then
  # The step() of older commits prints wall seconds only: add the CPU seconds of what it waited for
  # (bash's `times`, whose second line sums the waited-for children; run without a subshell).
  python3 - scripts/test.sh <<'PY'
import re, sys
path = sys.argv[1]
text = open(path).read()
new = '''step() {
  local t=$SECONDS c0 c1
  times >"$TMPDIR_CPU/t"; c0=$(awk -f "$TMPDIR_CPU/cpu.awk" "$TMPDIR_CPU/t")
  "$@"
  times >"$TMPDIR_CPU/t"; c1=$(awk -f "$TMPDIR_CPU/cpu.awk" "$TMPDIR_CPU/t")
  echo "test.sh: '$*' took $((SECONDS - t)) s, $(awk -v a="$c0" -v b="$c1" 'BEGIN {printf "%.1f", b - a}') CPU-s ($((SECONDS - started)) s so far)"
}'''
text, n = re.subn(r"step\(\) \{\n.*?\n\}", new, text, count=1, flags=re.S)
if n != 1:
    sys.exit("ci_cpu_time: no step() in scripts/test.sh to patch")
open(path, "w").write(text)
PY
fi
export TMPDIR_CPU=$scratch/.cpu
mkdir -p "$TMPDIR_CPU"
# The second line of `times` is the children's user and system time, as 1m2.345s 0m0.678s.
cat >"$TMPDIR_CPU/cpu.awk" <<'AWK'
NR == 2 { s = 0; for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); s += p[1] * 60 + p[2] } printf "%.2f\n", s }
AWK
# No compiler cache: every compile is paid, as on a fresh CI machine.
unset CMAKE_CXX_COMPILER_LAUNCHER CMAKE_C_COMPILER_LAUNCHER CMAKE_CUDA_COMPILER_LAUNCHER
export CCACHE_DISABLE=1
rc=0
/usr/bin/time -f 'ci_cpu_time: whole run %U user %S system %e wall' -o "$out/total.txt" \
  bash scripts/test.sh >"$out/test.full.log" 2>&1 || rc=$?
grep -E '^test.sh:|ci_cpu_time' "$out/test.full.log" >"$out/test.log" || true
if ((rc)); then tail -60 "$out/test.full.log" >>"$out/test.log"; fi
rm -f "$out/test.full.log"
python3 - "$out" "$rev" "$(git rev-parse --short HEAD)" <<'PY'
import re, sys
out, rev, short = sys.argv[1:]
rows, cpu_sum = [], 0.0
for line in open(f"{out}/test.log"):
    m = re.match(r"test\.sh: '(.*)' took (\d+) s, ([0-9.]+) CPU-s", line)
    if m:
        rows.append((float(m.group(3)), int(m.group(2)), m.group(1)))
        cpu_sum += float(m.group(3))
t = re.search(r"whole run ([0-9.]+) user ([0-9.]+) system ([0-9.]+) wall", open(f"{out}/total.txt").read())
total, wall = float(t.group(1)) + float(t.group(2)), float(t.group(3))
with open(f"{out}/steps.tsv", "w") as f:
    f.write("cpu_s\twall_s\tstep\n")
    for cpu, w, step in rows:
        f.write(f"{cpu:.1f}\t{w}\t{step}\n")
    f.write(f"{total - cpu_sum:.1f}\t\tbackground work not inside a step\n")
    f.write(f"{total:.1f}\t{wall:.0f}\twhole run ({short})\n")
print(open(f"{out}/steps.tsv").read(), end="")
PY
echo "ci_cpu_time: test.sh exited $rc"
exit $rc
