#!/usr/bin/env bash
# The include graph of the parts, at a commit: for each part (src/<part> with include/diescope/<part>),
# the other parts whose public headers it includes, with how many #include lines; then, for each
# SYMBOL given, the files of src/ and include/ that name it outside comments (e.g. SamplerProcess:
# the places that build the sampler child; GpmSampler: the places that own the GPM switch).
#   bench/build/include_graph.sh [REV] [SYMBOL...]      REV defaults to HEAD
set -euo pipefail
cd "$(dirname "$0")/../.."
rev=${1:-HEAD}
shift || true
git rev-parse -q --verify "$rev^{commit}" >/dev/null || { echo "include_graph: $rev is not a commit here; fix: pass a commit or branch" >&2; exit 2; }
git ls-tree -r --name-only "$rev" -- src include/diescope | grep -E '\.(cpp|hpp|h|cu|cuh)$' >/tmp/include_graph.$$ || true
trap 'rm -f /tmp/include_graph.$$' EXIT
python3 - "$rev" /tmp/include_graph.$$ "$@" <<'PY'
import collections, re, subprocess, sys
rev, listing, symbols = sys.argv[1], sys.argv[2], sys.argv[3:]
files = [l.strip() for l in open(listing) if l.strip()]
def text(path):
    return subprocess.run(["git", "show", f"{rev}:{path}"], capture_output=True, text=True, errors="replace").stdout
def part_of(path):
    p = path.split("/")
    return p[1] if p[0] == "src" else p[2]
inc = re.compile(r'#include\s+[<"]diescope/([A-Za-z0-9_]+)/')
edges = collections.defaultdict(collections.Counter)
bodies = {}
for f in files:
    t = text(f)
    bodies[f] = t
    for m in inc.finditer(t):
        if m.group(1) != part_of(f):
            edges[part_of(f)][m.group(1)] += 1
print(f"## Which parts each part includes ({rev})\n")
print("| part | includes the public headers of (#include lines) |")
print("| --- | --- |")
for part in sorted({part_of(f) for f in files}):
    deps = ", ".join(f"{d} ({n})" for d, n in sorted(edges[part].items()))
    print(f"| {part} | {deps or '-'} |")
for symbol in symbols:
    word = re.compile(r"\b" + re.escape(symbol) + r"\b")
    where = []
    for f, t in sorted(bodies.items()):
        code = re.sub(r"//[^\n]*|/\*.*?\*/", "", t, flags=re.S)
        n = len(word.findall(code))
        if n:
            where.append(f"`{f}` ({n})")
    print(f"\n## Files that name {symbol} outside comments ({len(where)})\n")
    print("\n".join(f"- {w}" for w in where) or "- none")
PY
