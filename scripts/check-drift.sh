#!/usr/bin/env bash
# Checks that the documents that list the repository's parts still match it:
#   1. bench/README.md names every script and program under bench/ (.sh, .py, .cpp, .cu outside
#      bench/results/), by its path below its area folder (`three_backends.sh`, `stand_in/train.sh`),
#      and every such name it gives exists;
#   2. README.md's table of parts (the rows that start with `src/<part>`) has one row per folder of
#      src/ and no other; each row's public-header folder, when it names one, exists; every
#      include/diescope/<part>/ has its row; and each row names every subfolder of its part in
#      backticks (`gpm`, `gpm/` or `src/collect/gpm`).
# The words that must not appear (other repositories, occasions, issue numbers, the method's source
# documents) are scripts/check-references.sh's. Prints `file: reason` and the fix for each failure
# and exits 1; prints one line and exits 0 when all is well.
#
#   scripts/check-drift.sh [REPO]     REPO defaults to the repository holding this script
#
# Only tracked files count (git ls-files). tests/scripts/check_drift_test.sh tests it on throwaway
# repositories.
set -euo pipefail
repo="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
if ! git -C "$repo" rev-parse --git-dir >/dev/null 2>&1; then
  echo "check-drift: $repo is not a git repository; fix: pass the repository's root folder" >&2
  exit 2
fi
exec "${PYTHON3:-python3}" - "$repo" <<'PY'
import os, re, subprocess, sys

repo = sys.argv[1]
files = [p for p in subprocess.run(["git", "-C", repo, "ls-files", "-z"], check=True,
                                   capture_output=True).stdout.decode().split("\0") if p]
present = [p for p in files if os.path.isfile(os.path.join(repo, p))]
failures = []


def read(path):
    try:
        return open(os.path.join(repo, path), encoding="utf-8", errors="replace").read()
    except FileNotFoundError:
        return None


# 1. bench/README.md and bench/'s scripts.
SCRIPT = re.compile(r"\.(sh|py|cpp|cu)$")
scripts = [p for p in present if p.startswith("bench/") and not p.startswith("bench/results/") and SCRIPT.search(p)]
if scripts:
    readme = read("bench/README.md")
    if readme is None:
        failures.append(("bench/README.md", "missing, while bench/ holds scripts",
                         "add bench/README.md with a line for each script saying what it measures"))
    else:
        named = set()
        for span in re.findall(r"`([^`\n]+)`", readme) + re.findall(r"^\s*(\S+)\s", readme, re.M):
            named.add(span.strip().rstrip("/"))
        for path in scripts:
            parts = path.split("/")
            short = "/".join(parts[2:]) if len(parts) > 2 else parts[1]  # below the area folder
            if not ({short, path, path[len("bench/"):]} & named):
                failures.append((path, "not listed in bench/README.md",
                                 f"add `{short}` to its area's row or to the list of scripts, with what it measures"))
        # Each script-like name in backticks must be a script under bench/ (other folders are not checked here).
        for span in sorted(named):
            if not SCRIPT.search(span) or span.startswith(("src/", "tests/", "scripts/", "docs/", "fuzz/", "examples/", "workloads/", "data/")):
                continue
            bare = span[len("bench/"):] if span.startswith("bench/") else span
            if not any(p == "bench/" + bare or p.endswith("/" + bare) for p in scripts):
                failures.append(("bench/README.md", f"names `{span}`, which is not a script under bench/",
                                 "remove it, or name the script that replaced it"))

# 2. README.md's table of parts.
readme = read("README.md") or ""
rows = {}
for lineno, line in enumerate(readme.splitlines(), 1):
    m = re.match(r"^\|\s*`src/([A-Za-z0-9_-]+)/?`\s*\|([^|]*)\|(.*)\|\s*$", line)
    if m:
        rows[m.group(1)] = (lineno, m.group(2).strip(), line)
src_parts = sorted({p.split("/")[1] for p in present if p.startswith("src/") and p.count("/") >= 2})
include_parts = sorted({p.split("/")[2] for p in present if p.startswith("include/diescope/") and p.count("/") >= 3})
if src_parts and not rows:
    failures.append(("README.md", "has no table of parts (rows starting with `src/<part>`)",
                     "add the table: | `src/<part>` | `include/diescope/<part>` | what it holds |"))
for part in src_parts:
    if rows and part not in rows:
        failures.append(("README.md", f"the table of parts has no row for src/{part}",
                         f"add | `src/{part}` | `include/diescope/{part}` | what it holds |"))
for part, (lineno, headers, line) in sorted(rows.items()):
    where = f"README.md:{lineno}"
    if part not in src_parts:
        failures.append((where, f"the table of parts lists src/{part}, which does not exist",
                         "remove the row, or name the folder that holds it now"))
        continue
    h = re.fullmatch(r"`(include/diescope/[A-Za-z0-9_-]+)/?`", headers)
    if headers and not h:
        failures.append((where, f"src/{part}'s public-header cell is not one `include/diescope/<part>`",
                         "write the folder in backticks, or leave the cell empty when the part has none"))
    elif h and not any(p.startswith(h.group(1) + "/") for p in present):
        failures.append((where, f"src/{part}'s public headers are said to be in {h.group(1)}, which does not exist",
                         "name the folder that holds them, or leave the cell empty"))
    spans = {s.strip().rstrip("/") for s in re.findall(r"`([^`]+)`", line)}
    subfolders = sorted({p.split("/")[2] for p in present
                         if p.startswith(f"src/{part}/") and p.count("/") >= 3})
    for sub in subfolders:
        if not ({sub, f"src/{part}/{sub}"} & spans):
            failures.append((where, f"src/{part}'s row does not name its folder {sub}",
                             f"say what src/{part}/{sub} holds, with `{sub}` in backticks"))
for part in include_parts:
    if rows and not any(re.fullmatch(rf"`include/diescope/{part}/?`", r[1]) for r in rows.values()):
        failures.append(("README.md", f"include/diescope/{part} is in no row of the table of parts",
                         f"name it in the row of the part that owns it"))

for where, reason, fix in failures:
    print(f"{where}: {reason}\n    fix: {fix}")
if failures:
    print(f"check-drift: {len(failures)} place(s) where the documents and the repository disagree", file=sys.stderr)
    sys.exit(1)
print(f"check-drift: bench/README.md lists all {len(scripts)} scripts; README's table of parts matches "
      f"the {len(src_parts)} folders of src/")
PY
