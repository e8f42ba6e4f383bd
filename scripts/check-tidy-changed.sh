#!/usr/bin/env bash
# clang-tidy (scripts/check-tidy.sh's rules) over the C++ files a submission changed, which is what CI
# runs on every submission (scripts/test.sh); scripts/check-tidy.sh BUILD_DIR runs it over all of src/.
# What "changed" means (docs/building.md#clang-tidy-on-what-a-submission-changes), first that applies:
#   1. BASE, when given (a CI that knows the commit before the push passes it);
#   2. on a branch that has not landed (HEAD is not on origin/main): the merge base with origin/main;
#   3. the tag tidy-clean, where it is an ancestor of HEAD: the last commit the full run passed on;
#   4. HEAD~1, the commit before the last one landed (for a merge commit, its first parent: so the
#      whole merged branch is checked);
#   5. none of these (a one-commit or shallow clone): every file, as scripts/check-tidy.sh does.
# A changed .cpp of src/ is checked itself; a changed header of src/ or include/ is checked through
# the .cpp of src/ of the same name, else through the first .cpp of src/ that includes it. Files the
# build folder does not compile (the CUDA host code, when it was configured without nvcc) are checked
# in a folder configured with the ci preset (build/ci; configured here when missing). Where BUILD_DIR
# compiles src/ at -O1 (cpu-ci), the same sources are also compiled at -O2 for the warnings GCC gives
# only there (docs/building.md#where-each-check-runs).
#   scripts/check-tidy-changed.sh BUILD_DIR [BASE]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: scripts/check-tidy-changed.sh BUILD_DIR [BASE]}
base=${2:-}
if [ ! -f "$build/compile_commands.json" ]; then
  echo "check-tidy-changed: no $build/compile_commands.json; fix: configure first (cmake --preset cpu-ci)" >&2
  exit 2
fi
how="given"
if [ -z "$base" ]; then
  if git rev-parse -q --verify origin/main >/dev/null && ! git merge-base --is-ancestor HEAD origin/main; then
    base=$(git merge-base HEAD origin/main); how="merge base with origin/main"
  elif git rev-parse -q --verify 'tidy-clean^{commit}' >/dev/null && git merge-base --is-ancestor tidy-clean HEAD \
       && [ "$(git rev-parse tidy-clean)" != "$(git rev-parse HEAD)" ]; then
    base=tidy-clean; how="the tag tidy-clean"
  elif git rev-parse -q --verify 'HEAD~1^{commit}' >/dev/null; then
    base=HEAD~1; how="the previous landed commit"
  else
    echo "check-tidy-changed: no commit to compare with (a one-commit or shallow clone): checking every file"
    exec bash scripts/check-tidy.sh "$build"
  fi
fi
git rev-parse -q --verify "$base^{commit}" >/dev/null || {
  echo "check-tidy-changed: $base is not a commit here; fix: pass a commit, or fetch the history (git fetch --unshallow)" >&2
  exit 2
}
mapfile -t changed < <(git diff --name-only --diff-filter=d "$base" HEAD -- 'src/*.cpp' 'src/*.hpp' 'include/*.hpp' | sort)
# A build folder that compiles a part as one file lists one command per source in the database that
# scripts/tidy-database.sh writes for it.
db=$(bash scripts/tidy-database.sh "$build")
gpu_db=build/ci
if [ -f build/ci/compile_commands.json ]; then gpu_db=$(bash scripts/tidy-database.sh build/ci); fi
# Each changed file becomes the .cpp files that carry it, split by the build folder that compiles them.
mapfile -t plan < <(python3 - "$db/compile_commands.json" "$gpu_db/compile_commands.json" "${changed[@]}" <<'PY'
import json, os, re, subprocess, sys
root = os.getcwd() + "/"
def database(path):
    try:
        entries = json.load(open(path))
    except (FileNotFoundError, ValueError):
        return set()
    return {os.path.relpath(os.path.normpath(os.path.join(e["directory"], e["file"])), root) for e in entries}
cpu, gpu_path, changed = database(sys.argv[1]), sys.argv[2], sys.argv[3:]
sources = subprocess.run(["git", "ls-files", "src/*.cpp"], capture_output=True, text=True, check=True).stdout.split()
wanted = []
for f in changed:
    if f.endswith(".cpp"):
        wanted.append(f)
        continue
    stem = os.path.splitext(os.path.basename(f))[0]
    same = [s for s in sources if os.path.splitext(os.path.basename(s))[0] == stem]
    # The include spelling: diescope/<part>/<file> for a public header, the file name for an internal one.
    spelled = f[len("include/"):] if f.startswith("include/") else os.path.basename(f)
    pattern = re.compile(r'#include\s+[<"](?:[^">]*/)?' + re.escape(os.path.basename(f)) + r'[">]')
    users = [s for s in sources if spelled in open(s, errors="replace").read() and pattern.search(open(s, errors="replace").read())]
    pick = (same or users)[:1]
    wanted.extend(pick)
for f in sorted(set(wanted)):
    print(("cpu " if f in cpu else "gpu ") + f)
PY
)
cpu_files=(); gpu_files=()
for line in "${plan[@]}"; do
  case $line in cpu\ *) cpu_files+=("${line#cpu }") ;; gpu\ *) gpu_files+=("${line#gpu }") ;; esac
done
echo "check-tidy-changed: ${#changed[@]} C++ files changed since $(git rev-parse --short "$base") ($how); checking ${#plan[@]} sources"
status=0
run() {  # run BUILD FILE...: clang-tidy over the files, findings printed, status kept
  local b=$1 log
  shift
  (($#)) || return 0
  log=$(mktemp)
  if ! printf '%s\n' "$@" | xargs -P "$(nproc)" -n 1 clang-tidy -p "$b" --quiet >"$log" 2>/dev/null; then
    grep -E "(warning|error):" "$log" | sort -u >&2 || cat "$log" >&2
    status=1
  fi
  rm -f "$log"
}
run "$db" "${cpu_files[@]}"
if ((${#gpu_files[@]})); then
  if [ ! -f build/ci/compile_commands.json ]; then
    cmake --preset ci >/dev/null || { echo "check-tidy-changed: ${gpu_files[*]} need the ci preset (nvcc), which did not configure" >&2; exit 2; }
  fi
  run "$(bash scripts/tidy-database.sh build/ci)" "${gpu_files[@]}"
fi
# A build folder that compiles src/ below -O2 (the cpu-ci preset: -O1) misses the warnings GCC gives
# only at -O2 (docs/building.md#where-each-check-runs): the same files are compiled again here at -O2,
# with the same flags otherwise (warnings are errors), into nothing.
o2_status=0
mapfile -t o2 < <(python3 - "$db/compile_commands.json" "${cpu_files[@]}" <<'PY'
import json, os, re, shlex, sys
root = os.getcwd() + "/"
wanted = set(sys.argv[2:])
for e in json.load(open(sys.argv[1])):
    rel = os.path.relpath(os.path.normpath(os.path.join(e["directory"], e["file"])), root)
    cmd = e.get("command")
    if rel not in wanted or not cmd or " -O1 " not in cmd:
        continue
    cmd = re.sub(r" -MD -MT \S+ -MF \S+", "", cmd.replace(" -O1 ", " -O2 "))
    cmd = re.sub(r" -o \S+", " -o /dev/null", cmd)
    print(f"cd {shlex.quote(e['directory'])} && {cmd}")
PY
)
if ((${#o2[@]})); then
  log=$(mktemp)
  printf '%s\0' "${o2[@]}" | xargs -0 -P "$(nproc)" -n 1 bash -c >"$log" 2>&1 || o2_status=1
  if ((o2_status)); then
    grep -E "(warning|error):" "$log" | sort -u >&2 || cat "$log" >&2
    echo "check-tidy-changed: at -O2 GCC warns about the above (CI's build compiles at -O1); fix them" >&2
  fi
  rm -f "$log"
  echo "check-tidy-changed: ${#o2[@]} files compiled at -O2$( ((o2_status)) || echo ' without a warning')"
fi
if ((status)); then
  echo "check-tidy-changed: clang-tidy found the above; fix them (or, for a false positive, a NOLINT(check) with a reason)" >&2
  exit 1
fi
((o2_status)) && exit 1
echo "check-tidy-changed: ${#plan[@]} files clean"
