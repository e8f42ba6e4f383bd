#!/usr/bin/env bash
# Lines per part: for each folder of src/, the lines of its sources (src/<part>), its public headers
# (include/diescope/<part>) and its tests (tests/<part>), counted over tracked files (git ls-files at
# REV; C++, CUDA, CMake, Python and shell), as a Markdown table with a total row.
#   bench/build/lines_per_part.sh [REV]      REV defaults to HEAD
set -euo pipefail
cd "$(dirname "$0")/../.."
rev=${1:-HEAD}
git rev-parse -q --verify "$rev^{commit}" >/dev/null || { echo "lines_per_part: $rev is not a commit here; fix: pass a commit or branch" >&2; exit 2; }
git ls-tree -r --name-only "$rev" -- src include/diescope tests | grep -E '\.(cpp|hpp|h|cu|cuh|txt|cmake|py|sh)$' |
  while read -r f; do printf '%s\t%s\n' "$(git show "$rev:$f" | wc -l)" "$f"; done |
  python3 -c '
import sys, collections
rows = collections.defaultdict(lambda: [0, 0, 0])
for line in sys.stdin:
    n, path = line.rstrip("\n").split("\t")
    p = path.split("/")
    if p[0] == "src" and len(p) > 2:
        rows[p[1]][0] += int(n)
    elif p[0] == "include" and len(p) > 3:
        rows[p[2]][1] += int(n)
    elif p[0] == "tests" and len(p) > 2:
        rows[p[1]][2] += int(n)
    elif p[0] == "tests":
        rows["(tests/ top level)"][2] += int(n)
print("| part | src/<part> | include/diescope/<part> | tests/<part> | all |")
print("| --- | ---: | ---: | ---: | ---: |")
total = [0, 0, 0]
for part in sorted(rows):
    s, i, t = rows[part]
    total = [total[0] + s, total[1] + i, total[2] + t]
    print(f"| {part} | {s} | {i} | {t} | {s + i + t} |")
print(f"| **all** | {total[0]} | {total[1]} | {total[2]} | {sum(total)} |")
'
